package tiktoken_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/tiktoken"
	"github.com/toolcap/toolcap/worker"
)

// TestWorkerExactTokens is the path a program takes: a manifest with
// default_max_tokens = 4000 and tokenizer = "o200k_base", the tokenizer it
// names from tiktoken.New, a worker. Each sample, a tool's result, reaches
// the history at 3,900 to 4,000 o200k tokens with one token marker whose N
// is exact, and figures that say so.
func TestWorkerExactTokens(t *testing.T) {
	var tools []worker.Tool
	var calls []chain.Call
	var contents []string
	for _, s := range samples {
		for _, tool := range []string{"Read", "Bash"} {
			content := readSample(t, s.file)
			name := tool + "_" + s.name
			tools = append(tools, worker.Func(name, func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
				return worker.ToolOutput{Content: &content}, nil
			}))
			calls = append(calls, chain.Call{ID: name, Tool: name})
			contents = append(contents, content)
		}
	}
	// Bytes never cut (1 MiB each); the Bash tools keep head_tail.
	per := map[string]manifest.ToolEntry{}
	for _, c := range calls {
		e := manifest.ToolEntry{MaxBytes: 1 << 20}
		if c.Tool[:4] == "Bash" {
			e.Strategy = manifest.Strategy{Keep: cut.KeepHeadTail}
		}
		per[c.Tool] = e
	}
	m, err := manifest.Load(context.Background(), manifest.Bytes("toolcap.toml", []byte("[worker.tool_output]\ndefault_max_tokens = 4000\ntokenizer = \"o200k_base\"\n")),
		manifest.Overrides("test", manifest.ToolOutputLimits{PerTool: per}))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tiktoken.New(m.Limits().TokenizerName())
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(tools, worker.WithPolicies(policytest.Of(t, m)), worker.WithTokenizer(tok))
	if err != nil {
		t.Fatal(err)
	}
	results := w.ExecuteTools(context.Background(), calls)
	for i, r := range results {
		t.Run(calls[i].Tool, func(t *testing.T) {
			out := *r.Content
			if n := tok.Count(out); n > 4000 || n < 3900 {
				t.Errorf("%d tokens reach the history, want 3,900 to 4,000", n)
			}
			headTail := calls[i].Tool[:4] == "Bash"
			before, n, after, ok := splitTokenMarker(out, headTail)
			if !ok {
				t.Fatalf("no token marker; ends %q", out[max(0, len(out)-100):])
			}
			kept := tok.Count(before)
			if headTail {
				kept += tok.Count(after)
			}
			total := tok.Count(contents[i])
			tr, _ := r.Truncation()
			got := []int{n, tr.DroppedTokens, tr.OriginalTokens, tr.LimitTokens}
			want := []int{total - kept, total - kept, total, 4000}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("[marker N, DroppedTokens, OriginalTokens, LimitTokens] (-want +got):\n%s", diff)
			}
			if tr.Unit != string(cut.UnitTokens) {
				t.Errorf("Unit = %q", tr.Unit)
			}
		})
	}
}

// TestWorkerCalibrated: a worker counting with the core's calibrated
// estimate, told after each of ten requests what the provider billed for
// it (here: the exact o200k count of a chunk of the samples), holds every
// sample within its token limit by the exact count.
func TestWorkerCalibrated(t *testing.T) {
	exact := mustNew(t, tiktoken.O200kBase)
	var tools []worker.Tool
	var calls []chain.Call
	var texts []string
	for _, s := range samples {
		content := readSample(t, s.file)
		texts = append(texts, content)
		tools = append(tools, worker.Func(s.name, func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			return worker.ToolOutput{Content: &content}, nil
		}))
		calls = append(calls, chain.Call{ID: s.name, Tool: s.name})
	}
	m, err := manifest.Load(context.Background(), manifest.Bytes("toolcap.toml", []byte("[worker.tool_output]\ndefault_max_bytes = 1048576\ndefault_max_tokens = 4000\n")))
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(tools, worker.WithPolicies(policytest.Of(t, m)))
	if err != nil {
		t.Fatal(err)
	}
	for i, size := range chunkSizes {
		ch := chunkOf(texts[i%len(texts)], i, size)
		w.Observe(len(ch), exact.Count(ch))
	}
	for i, r := range w.ExecuteTools(context.Background(), calls) {
		if n := exact.Count(*r.Content); n > 4000 {
			t.Errorf("%s: %d exact tokens reach the history, over the limit of 4000", calls[i].Tool, n)
		}
		if tr, ok := r.Truncation(); !ok || tr.Unit != string(cut.UnitTokens) {
			t.Errorf("%s: figures %+v, want a cut by tokens", calls[i].Tool, tr)
		}
	}
}
