package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/cut"
	"github.com/toolcap/toolcap/middleware"
)

func TestCapWithSpecs(t *testing.T) {
	specs := func(tool string) cut.Spec {
		switch tool {
		case "Bash":
			return cut.Spec{Keep: cut.KeepHeadTail}
		case "api":
			return cut.Spec{Keep: cut.KeepJSON}
		}
		return cut.Spec{}
	}
	limits := func(string) int { return 200 }
	log := strings.Repeat("ok\n", 100) + "FAIL: TestX"
	doc := "{\n" + strings.Repeat(`  "k": "v",`+"\n", 20) + `  "last": 1` + "\n}"
	wantLog, _ := cut.Cut(log, 200, cut.Spec{Keep: cut.KeepHeadTail})
	wantDoc, _ := cut.Cut(doc, 200, cut.Spec{Keep: cut.KeepJSON})
	wantHead, _ := middleware.Truncate(log, 200)
	tests := []struct {
		name    string
		tool    string
		content string
		want    string
		trunc   chain.Truncation
		ok      bool
	}{
		{"head_tail", "Bash", log, wantLog,
			chain.Truncation{Limit: 200, OriginalBytes: 311, KeptBytes: 148, DroppedBytes: 163, Strategy: "head_tail"}, true},
		{"json compacted", "api", doc, wantDoc,
			chain.Truncation{Limit: 200, OriginalBytes: 255, KeptBytes: 255, Strategy: "json", Compacted: true}, true},
		{"head: the figures of earlier versions", "Read", log, wantHead,
			chain.Truncation{Limit: 200, OriginalBytes: 311, KeptBytes: 150, DroppedBytes: 161}, true},
		{"fits", "Bash", "ok\n", "ok\n", chain.Truncation{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := middleware.Cap(limits, middleware.WithSpecs(specs))(returning(chain.Result{Content: ptr(tt.content)}))
			res := h(context.Background(), chain.Call{Tool: tt.tool})
			if diff := cmp.Diff(tt.want, *res.Content); diff != "" {
				t.Errorf("content mismatch (-want +got):\n%s", diff)
			}
			tr, ok := res.Truncation()
			if diff := cmp.Diff(tt.trunc, tr); diff != "" || ok != tt.ok {
				t.Errorf("Truncation() = _, %v; mismatch (-want +got):\n%s", ok, diff)
			}
		})
	}
}

// TestCapWithSpecsFitsFree checks that a result within its limit costs no
// allocation, with specs as without.
func TestCapWithSpecsFitsFree(t *testing.T) {
	specs := func(string) cut.Spec { return cut.Spec{Keep: cut.KeepHeadTail} }
	content := strings.Repeat("x", 100)
	in := chain.Result{Content: &content}
	h := middleware.Cap(func(string) int { return 200 }, middleware.WithSpecs(specs))(returning(in))
	call := chain.Call{Tool: "Bash"}
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { h(ctx, call) }); n != 0 {
		t.Errorf("a result that fits: %v allocations, want 0", n)
	}
}

// TestCutterBeatsSpecs checks that a custom Cutter, its own strategy, wins.
func TestCutterBeatsSpecs(t *testing.T) {
	cutter := func(content string, limit int) (string, int) { return "cut", len(content) - 3 }
	specs := func(string) cut.Spec { return cut.Spec{Keep: cut.KeepHeadTail} }
	h := middleware.Cap(func(string) int { return 10 }, middleware.WithCutter(cutter), middleware.WithSpecs(specs))(
		returning(chain.Result{Content: ptr(strings.Repeat("x", 50))}))
	if got := *h(context.Background(), chain.Call{}).Content; got != "cut" {
		t.Errorf("content %q, want the Cutter's", got)
	}
}
