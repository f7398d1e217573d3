package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/worker"
)

// cap cuts with each tool's strategy exactly as a worker built from the
// same layers does, for inputs much larger than the limit (read in
// pieces by the streaming cut).
func TestCapStrategiesMatchWorker(t *testing.T) {
	m := writeFile(t, t.TempDir(), "m.toml", `
[worker.tool_output]
default_max_bytes = 4096
default_keep = "head_tail"
[worker.tool_output.per_tool]
Bash = { max_bytes = 2048, keep_lines = ['(?i)\b(error|fail)\b'], tail_share = 0.3 }
api = { keep = "json", fallback = "head_tail" }
Read = { keep = "head" }
`)
	env := []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Glob__KEEP=json"}
	var log strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&log, "ok %d\n", i)
		if i == 50000 {
			log.WriteString("error: disk full\n")
		}
	}
	log.WriteString("FAIL: TestX\n")
	var doc strings.Builder
	doc.WriteString(`{"items": [`)
	for i := range 20000 {
		fmt.Fprintf(&doc, `{"id": %d, "name": "item %d"}, `, i, i)
	}
	doc.WriteString(`{"id": -1}]}`)
	outputs := map[string]string{"log": log.String(), "doc": doc.String()}

	loaded, err := manifest.Load(context.Background(), manifest.File(m), manifest.Environ(env))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"Bash", "api", "Read", "Glob", "other"}
	for oname, output := range outputs {
		var ts []worker.Tool
		var calls []chain.Call
		for _, name := range names {
			ts = append(ts, worker.Func(name, func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
				s := output
				return worker.ToolOutput{Content: &s}, nil
			}))
			calls = append(calls, chain.Call{ID: name, Tool: name})
		}
		w, err := worker.New(ts, worker.WithPolicies(policytest.Of(t, loaded)))
		if err != nil {
			t.Fatal(err)
		}
		results := w.ExecuteTools(t.Context(), calls)
		for i, name := range names {
			got := runWith(t, env, strings.NewReader(output), "cap", "--tool", name, "--manifest", m)
			if got.code != exitOK {
				t.Fatalf("cap --tool %s: exit %d; stderr:\n%s", name, got.code, got.stderr)
			}
			if diff := cmp.Diff(*results[i].Content, got.stdout); diff != "" {
				t.Errorf("%s: cap --tool %s differs from the worker's result (-worker +cap):\n%s", oname, name, diff)
			}
		}
	}
	// What the strategies do to the log, spelled out.
	got := runWith(t, env, strings.NewReader(log.String()), "cap", "--tool", "Bash", "--manifest", m)
	if !strings.HasPrefix(got.stdout, "ok 0\n") || !strings.HasSuffix(got.stdout, "FAIL: TestX\n") ||
		!strings.Contains(got.stdout, "]\nerror: disk full\n") || len(got.stdout) > 2048 {
		t.Errorf("Bash: %d bytes, want head, rescued error line and tail within 2048", len(got.stdout))
	}
}

func TestCapKeepFlag(t *testing.T) {
	input := strings.Repeat("line\n", 10000) + "FAIL: TestX"
	tests := []struct {
		name string
		args []string
		want func() string
	}{
		{"head_tail", []string{"--keep", "head_tail"}, func() string {
			s, _ := cut.Cut(input, 16384, cut.Spec{Keep: cut.KeepHeadTail})
			return s
		}},
		{"head", []string{"--keep", "head"}, func() string {
			s, _ := cut.Head(input, 16384)
			return s
		}},
		{"json on text falls back to head", []string{"--keep", "json"}, func() string {
			s, _ := cut.Head(input, 16384)
			return s
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, nil, strings.NewReader(input), append([]string{"cap", "--tool", "Bash"}, tt.args...)...)
			if got.code != exitOK || got.stderr != "" {
				t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
			}
			if diff := cmp.Diff(tt.want(), got.stdout); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	got := runWith(t, nil, strings.NewReader(input), "cap", "--tool", "Bash", "--keep", "tail")
	if got.code != exitUsage || got.stdout != "" || !strings.Contains(got.stderr, `unknown strategy "tail"`) {
		t.Errorf("--keep tail: exit %d, stdout %d bytes, stderr %q; want %d, nothing, the value named", got.code, len(got.stdout), got.stderr, exitUsage)
	}
}
