package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/logtest"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/worker"
)

// globTool returns a tool named Glob whose content is n numbered paths.
func globTool(n int) (worker.Tool, string) {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "internal/service/%05d/handler_test.go\n", i)
	}
	out := b.String()
	return worker.Func("Glob", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		s := out
		return worker.ToolOutput{Summary: "paths", Content: &s}, nil
	}), out
}

// follow reads a kept output through the worker, from offset 0, following
// each page's marker, and returns the pages without their markers.
func follow(t *testing.T, ctx context.Context, w *worker.Worker, tool string, args string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; ; i++ {
		if i > 10000 {
			t.Fatal("no end after 10000 pages")
		}
		res := w.ExecuteTools(ctx, []chain.Call{{ID: fmt.Sprint("r", i), Tool: tool, Args: json.RawMessage(args)}})[0]
		if res.IsError() {
			t.Fatalf("%s %s: error %s", tool, args, *res.Content)
		}
		page := *res.Content
		if len(page) > w.Limit(tool) {
			t.Fatalf("page of %d bytes over the read tool's limit %d", len(page), w.Limit(tool))
		}
		ms := cut.FindMarkers(page)
		if len(ms) == 0 {
			b.WriteString(page)
			return b.String()
		}
		if len(ms) != 1 || ms[0].Rest == nil || ms[0].Rest.Tool != tool {
			t.Fatalf("page ends in %+v, want one marker naming %s", ms, tool)
		}
		b.WriteString(page[:ms[0].Start])
		args = ms[0].Rest.Args
	}
}

func TestWorkerKeepsTheRest(t *testing.T) {
	glob, full := globTool(4000) // about 156 KB
	w, err := worker.New([]worker.Tool{glob}, worker.WithRest(rest.NewMemory(rest.Config{})))
	if err != nil {
		t.Fatal(err)
	}
	ctx := rest.WithScope(context.Background(), "conversation-1")
	res := w.ExecuteTools(ctx, []chain.Call{{ID: "1", Tool: "Glob"}})[0]
	out := *res.Content
	if len(out) > manifest.DefaultMaxBytes {
		t.Fatalf("%d bytes, over the limit", len(out))
	}
	tr, ok := res.Truncation()
	if !ok || tr.Ref == "" {
		t.Fatalf("figures %+v: no ref", tr)
	}
	ms := cut.FindMarkers(out)
	if len(ms) != 1 || ms[0].Rest == nil {
		t.Fatalf("markers %+v, want one naming the read", ms)
	}
	wantArgs := fmt.Sprintf(`{"ref":%q,"offset":%d}`, tr.Ref, tr.Resume)
	if diff := cmp.Diff(cut.Rest{Tool: rest.DefaultTool, Args: wantArgs}, *ms[0].Rest); diff != "" {
		t.Errorf("marker's read (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(full[:tr.Resume], out[:ms[0].Start]); diff != "" {
		t.Errorf("shown head (-want +got):\n%s", diff)
	}
	// The model follows the marker with the read tool, from 0.
	if got := follow(t, ctx, w, rest.DefaultTool, fmt.Sprintf(`{"ref":%q}`, tr.Ref)); got != full {
		t.Errorf("pages from 0: %d bytes, want the tool's %d", len(got), len(full))
	}
	// Another scope cannot read it, and gets the unknown-ref error.
	other := w.ExecuteTools(rest.WithScope(context.Background(), "conversation-2"),
		[]chain.Call{{ID: "2", Tool: rest.DefaultTool, Args: json.RawMessage(wantArgs)}})[0]
	want := fmt.Sprintf("toolcap_read: ref %q: expired or unknown; run the tool again", tr.Ref)
	if !other.IsError() || *other.Content != want {
		t.Errorf("read from another scope: %q (error %v), want the error %q", *other.Content, other.IsError(), want)
	}
}

func TestWorkerReadTool(t *testing.T) {
	glob, _ := globTool(10)
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{Rest: &manifest.RestConfig{Tool: "more"}}}
	w, err := worker.New([]worker.Tool{glob}, worker.WithPolicies(policytest.Of(t, m)), worker.WithRest(rest.NewMemory(rest.Config{})))
	if err != nil {
		t.Fatal(err)
	}
	d, ok := w.ReadTool()
	if !ok || d.Name != "more" || !json.Valid(d.InputSchema) {
		t.Errorf("ReadTool() = %+v, %v; want the tool named more", d, ok)
	}
	// A client runs the read tool without asking only when it is marked
	// read-only and closed-world (Codex, issue 41).
	var hints map[string]any
	if err := json.Unmarshal(d.Annotations, &hints); err != nil {
		t.Fatalf("ReadTool().Annotations %s: %v", d.Annotations, err)
	}
	wantHints := map[string]any{"title": d.Title, "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
	if diff := cmp.Diff(wantHints, hints); diff != "" || d.Title == "" {
		t.Errorf("ReadTool() annotations (-want +got):\n%s", diff)
	}
	w2, err := worker.New([]worker.Tool{glob})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w2.ReadTool(); ok {
		t.Error("a worker without a store has a read tool")
	}
	// Without a store the read tool is an unknown tool.
	res := w2.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: rest.DefaultTool, Args: json.RawMessage(`{}`)}})[0]
	if !res.IsError() || !strings.HasPrefix(*res.Content, "unknown tool") {
		t.Errorf("read without a store: %q", *res.Content)
	}
	// A program's tool of the read tool's name is an error.
	clash := worker.Func(rest.DefaultTool, func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		return worker.ToolOutput{}, nil
	})
	if _, err := worker.New([]worker.Tool{clash}, worker.WithRest(rest.NewMemory(rest.Config{}))); err == nil ||
		!strings.Contains(err.Error(), "read tool") {
		t.Errorf("a tool named %s beside WithRest: error %v", rest.DefaultTool, err)
	}
}

func TestWorkerKeepRestOff(t *testing.T) {
	glob, _ := globTool(4000)
	off := false
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{
		PerTool: map[string]manifest.ToolEntry{"Glob": {KeepRest: &off}},
	}}
	w, err := worker.New([]worker.Tool{glob}, worker.WithPolicies(policytest.Of(t, m)), worker.WithRest(rest.NewMemory(rest.Config{})))
	if err != nil {
		t.Fatal(err)
	}
	res := w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: "Glob"}})[0]
	tr, _ := res.Truncation()
	if tr.Ref != "" || !strings.HasSuffix(*res.Content, cut.Marker(tr.DroppedBytes)) {
		t.Errorf("keep_rest = false: ref %q, content ends %q; want the plain marker", tr.Ref, (*res.Content)[len(*res.Content)-60:])
	}
}

func TestWorkerBatchKeepsTheRest(t *testing.T) {
	glob, full := globTool(4000)
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{BatchMaxBytes: 8192}}
	w, err := worker.New([]worker.Tool{glob}, worker.WithPolicies(policytest.Of(t, m)), worker.WithRest(rest.NewMemory(rest.Config{})))
	if err != nil {
		t.Fatal(err)
	}
	ctx := rest.WithScope(context.Background(), "c")
	res := w.ExecuteTools(ctx, []chain.Call{{ID: "1", Tool: "Glob"}, {ID: "2", Tool: "Glob"}})
	for i, r := range res {
		tr, _ := r.Truncation()
		if len(*r.Content) > 4096 || tr.Ref == "" || !tr.Batch {
			t.Fatalf("result %d: %d bytes, figures %+v; want a batch share with a ref", i, len(*r.Content), tr)
		}
		if got := follow(t, ctx, w, rest.DefaultTool, fmt.Sprintf(`{"ref":%q,"offset":%d}`, tr.Ref, tr.Resume)); got != full[tr.Resume:] {
			t.Errorf("result %d: the read from %d gives %d bytes, want %d", i, tr.Resume, len(got), len(full)-tr.Resume)
		}
	}
}

func TestWorkerReadToolLimit(t *testing.T) {
	glob, full := globTool(4000)
	var buf bytes.Buffer
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{
		PerTool: map[string]manifest.ToolEntry{rest.DefaultTool: {MaxBytes: 32768}},
	}}
	w, err := worker.New([]worker.Tool{glob}, worker.WithPolicies(policytest.Of(t, m)),
		worker.WithRest(rest.NewMemory(rest.Config{})), worker.WithLogger(logtest.New(&buf, hclog.Warn)))
	if err != nil {
		t.Fatal(err)
	}
	if lines := logtest.Lines(t, &buf); len(lines) != 0 {
		t.Errorf("the read tool's per_tool entry warned: %v", lines)
	}
	ctx := rest.WithScope(context.Background(), "c")
	tr, _ := w.ExecuteTools(ctx, []chain.Call{{ID: "1", Tool: "Glob"}})[0].Truncation()
	page := w.ExecuteTools(ctx, []chain.Call{{ID: "2", Tool: rest.DefaultTool,
		Args: json.RawMessage(fmt.Sprintf(`{"ref":%q,"offset":%d}`, tr.Ref, tr.Resume))}})[0]
	ms := cut.FindMarkers(*page.Content)
	if len(*page.Content) != 32768 || len(ms) != 1 || !strings.HasPrefix(full[tr.Resume:], (*page.Content)[:ms[0].Start]) {
		t.Errorf("a page at the read tool's 32768-byte limit: %d bytes, markers %+v", len(*page.Content), ms)
	}
}
