package pin_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/internal/shape"
)

func TestCapWithPolicy(t *testing.T) {
	policy := func(tool string) shape.Policy {
		switch tool {
		case "Bash":
			return shape.Policy{MaxBytes: 200, Spec: cut.Spec{Keep: cut.KeepHeadTail}}
		case "api":
			return shape.Policy{MaxBytes: 200, Spec: cut.Spec{Keep: cut.KeepJSON}}
		}
		return shape.Bytes(200)
	}
	log := strings.Repeat("ok\n", 100) + "FAIL: TestX"
	doc := "{\n" + strings.Repeat(`  "k": "v",`+"\n", 20) + `  "last": 1` + "\n}"
	wantLog, _ := cut.Cut(log, 200, cut.Spec{Keep: cut.KeepHeadTail})
	wantDoc, _ := cut.Cut(doc, 200, cut.Spec{Keep: cut.KeepJSON})
	wantHead, _ := cut.Head(log, 200)
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
			h := pin.Cap(nil, pin.WithPolicy(policy))(returning(chain.Result{Content: ptr(tt.content)}))
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

// TestCapWithPolicyFitsFree checks that a result within its limit costs no
// allocation, with a policy as without.
func TestCapWithPolicyFitsFree(t *testing.T) {
	policy := func(string) shape.Policy { return shape.Policy{MaxBytes: 200, Spec: cut.Spec{Keep: cut.KeepHeadTail}} }
	content := strings.Repeat("x", 100)
	in := chain.Result{Content: &content}
	h := pin.Cap(nil, pin.WithPolicy(policy))(returning(in))
	call := chain.Call{Tool: "Bash"}
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { h(ctx, call) }); n != 0 {
		t.Errorf("a result that fits: %v allocations, want 0", n)
	}
}

// TestWithFits checks that content within the bound skips the policy's
// lookup, and that content over it is still held to its policy.
func TestWithFits(t *testing.T) {
	looked := 0
	policy := func(string) shape.Policy { looked++; return shape.Bytes(100) }
	h := pin.Cap(nil, pin.WithPolicy(policy), pin.WithFits(100))(
		func(_ context.Context, call chain.Call) chain.Result {
			s := strings.Repeat("x", len(call.ID))
			return chain.Result{Content: &s}
		})
	if res := h(context.Background(), chain.Call{ID: strings.Repeat("a", 100)}); len(*res.Content) != 100 || looked != 0 {
		t.Errorf("content within the bound: %d bytes, %d lookups", len(*res.Content), looked)
	}
	if res := h(context.Background(), chain.Call{ID: strings.Repeat("a", 101)}); len(*res.Content) > 100 || looked != 1 {
		t.Errorf("content over the bound: %d bytes, %d lookups", len(*res.Content), looked)
	}
}
