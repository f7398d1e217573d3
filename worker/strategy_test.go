package worker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/worker"
)

// TestStrategyFromManifest checks that the cap and the ceiling cut each
// tool with the strategy its manifest entry names, and report the figures.
func TestStrategyFromManifest(t *testing.T) {
	m, err := manifest.Load(context.Background(), manifest.Bytes("toolcap.toml", []byte(`
[worker.tool_output.per_tool]
Bash = { max_bytes = 1024, keep = "head_tail", keep_lines = ['^error'] }
Read = 1024
`)))
	if err != nil {
		t.Fatal(err)
	}
	log := strings.Repeat("ok\n", 1000) + "error: x\n" + strings.Repeat("ok\n", 1000) + "FAIL: TestX"
	// A middleware that doubles the content makes the ceiling cut again,
	// with the same strategy.
	double := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			if call.ID == "grow" {
				s := *res.Content + *res.Content
				res.Content = &s
			}
			return res
		}
	}
	w := newWorker(t, []worker.Tool{text("Bash", log), text("Read", log)}, worker.WithPolicies(policytest.Of(t, m)), worker.WithMiddleware(double))
	res := w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: "Bash"}, {ID: "2", Tool: "Read"}, {ID: "grow", Tool: "Bash"}})
	p, err := m.Limits().Policies()
	if err != nil {
		t.Fatal(err)
	}
	spec := p.For("Bash").Spec
	wantBash, st := cut.Cut(log, 1024, spec)
	wantRead, _ := cut.Cut(log, 1024, cut.Spec{})
	if diff := cmp.Diff(wantBash, *res[0].Content); diff != "" {
		t.Errorf("Bash mismatch (-want +got):\n%s", diff)
	}
	if !strings.Contains(*res[0].Content, "\nerror: x\n") || !strings.HasSuffix(*res[0].Content, "FAIL: TestX") {
		t.Errorf("Bash lost its error line or its tail")
	}
	if diff := cmp.Diff(wantRead, *res[1].Content); diff != "" {
		t.Errorf("Read mismatch (-want +got):\n%s", diff)
	}
	tr, _ := res[0].Truncation()
	want := chain.Truncation{Limit: 1024, OriginalBytes: len(log), KeptBytes: st.Kept, DroppedBytes: st.Dropped, Strategy: "head_tail"}
	if diff := cmp.Diff(want, tr); diff != "" {
		t.Errorf("Truncation() mismatch (-want +got):\n%s", diff)
	}
	grown := wantBash + wantBash
	wantCeil, cst := cut.Cut(grown, 1024, spec)
	if diff := cmp.Diff(wantCeil, *res[2].Content); diff != "" {
		t.Errorf("ceiling mismatch (-want +got):\n%s", diff)
	}
	if c, ok := res[2].Ceiling(); !ok || c.Strategy != "head_tail" || c.DroppedBytes != cst.Dropped {
		t.Errorf("Ceiling() = %+v, %v", c, ok)
	}
}
