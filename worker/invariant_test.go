package worker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/tokens"
	"github.com/toolcap/toolcap/worker"
)

// TestInvariants runs outputs of every kind through a worker under every
// kind of policy and checks each result with the invariant checker every
// front end's tests share: within the limit (and the token limit), at most
// one marker, N exact. A middleware that grows one result makes the ceiling
// cut, and the same holds of what it gives.
func TestInvariants(t *testing.T) {
	var log strings.Builder
	for i := range 3000 {
		if i%500 == 250 {
			fmt.Fprintf(&log, "--- FAIL: TestCase%d\n", i)
		}
		fmt.Fprintf(&log, "ok  \tpkg/sub%d\t0.%03ds\n", i%37, i%1000)
	}
	doc := `{"items":[` + strings.Repeat(`{"name":"ü-item","path":"/a/b/c"},`, 2000) + `{"last":true}]}`
	outputs := map[string]string{
		"log":     log.String(),
		"json":    doc,
		"unicode": strings.Repeat("日本語のテキスト🙂 ", 3000),
		"binary":  strings.Repeat("\xff\xfe\x00a\n\xe2\x82", 5000),
		"short":   "fits",
	}
	policies := map[string]string{
		"head":              `1024`,
		"head_tail":         `{ max_bytes = 2048, keep = "head_tail", tail_share = 0.4, keep_lines = ['FAIL'] }`,
		"json":              `{ max_bytes = 1500, keep = "json", fallback = "head_tail" }`,
		"tokens":            `{ max_bytes = 8192, max_tokens = 300 }`,
		"tokens, head_tail": `{ max_bytes = 8192, max_tokens = 500, keep = "head_tail", keep_lines = ['FAIL'] }`,
	}
	for pname, entry := range policies {
		var doc strings.Builder
		doc.WriteString("[worker.tool_output.per_tool]\n")
		var tools []worker.Tool
		var calls []chain.Call
		for oname, out := range outputs {
			name := "t_" + oname
			fmt.Fprintf(&doc, "%s = %s\n", name, entry)
			tools = append(tools, text(name, out))
			calls = append(calls, chain.Call{ID: oname, Tool: name}, chain.Call{ID: "grow " + oname, Tool: name})
		}
		m, err := manifest.Load(context.Background(), manifest.Bytes("toolcap.toml", []byte(doc.String())))
		if err != nil {
			t.Fatal(err)
		}
		grow := func(next chain.Handler) chain.Handler {
			return func(ctx context.Context, call chain.Call) chain.Result {
				res := next(ctx, call)
				if strings.HasPrefix(call.ID, "grow ") && res.Content != nil {
					s := "note from a middleware\n" + *res.Content + strings.Repeat(" padding", 400)
					res.Content = &s
				}
				return res
			}
		}
		tz := tokens.NewCalibrated()
		w := newWorker(t, tools, worker.WithPolicies(policytest.Of(t, m)), worker.WithMiddleware(grow), worker.WithTokenizer(tz))
		policiesOf, err := m.Policies()
		if err != nil {
			t.Fatal(err)
		}
		results := w.ExecuteTools(context.Background(), calls)
		for i, res := range results {
			call := calls[i]
			p := policiesOf.WithCounter(tz).For(call.Tool)
			in := outputs[strings.TrimPrefix(call.ID, "grow ")]
			if strings.HasPrefix(call.ID, "grow ") {
				// The ceiling cut what the middleware made of the cap's
				// output: its marker counts bytes of that.
				capped, _, _ := shape.Text(in, p)
				in = "note from a middleware\n" + capped + strings.Repeat(" padding", 400)
				if _, ok := res.Ceiling(); !ok {
					t.Errorf("%s, %s: the ceiling did not cut %d bytes", pname, call.ID, len(in))
				}
			}
			if err := capcheck.Text(in, *res.Content, p); err != nil {
				t.Errorf("%s, %s: %v", pname, call.ID, err)
			}
		}
	}
}
