package shape_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// words counts a token per space-separated field and per space: at most one
// token per byte, as a cut.Counter must.
type words struct{}

func (words) Count(s string) int { return len(strings.Fields(s)) + strings.Count(s, " ") }

func testLog() string {
	var b strings.Builder
	for i := range 400 {
		if i == 200 {
			b.WriteString("--- FAIL: TestMiddle\n")
			continue
		}
		b.WriteString("ok  \tpkg/sub")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\t0.01s\n")
	}
	return b.String()
}

func TestText(t *testing.T) {
	log := testLog()
	headTail := cut.Spec{Keep: cut.KeepHeadTail, KeepLines: []*regexp.Regexp{regexp.MustCompile(`FAIL`)}}
	tests := []struct {
		name string
		in   string
		p    shape.Policy
	}{
		{"head", log, shape.Bytes(1000)},
		{"head_tail and keep_lines", log, shape.Policy{MaxBytes: 1000, Spec: headTail}},
		{"json", `{"a":"` + strings.Repeat("v", 3000) + `"}`, shape.Policy{MaxBytes: 500, Spec: cut.Spec{Keep: cut.KeepJSON}}},
		{"tokens", strings.Repeat("word ", 1000), shape.Policy{MaxBytes: 4096, MaxTokens: 300, Counter: words{}}},
		{"tokens and head_tail", log, shape.Policy{MaxBytes: 8000, MaxTokens: 400, Counter: words{}, Spec: headTail}},
		{"a token limit without a counter is not held", strings.Repeat("word ", 100), shape.Policy{MaxBytes: 4096, MaxTokens: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, tr, changed := shape.Text(tt.in, tt.p)
			// The one rule: exactly package cut's cut under the policy.
			var want string
			var st cut.Stats
			if tt.p.HoldsTokens() {
				want, st = cut.CutTokens(tt.in, tt.p.MaxBytes, tt.p.MaxTokens, tt.p.Counter, tt.p.Spec)
			} else {
				want, st = cut.Cut(tt.in, tt.p.MaxBytes, tt.p.Spec)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Text() mismatch with package cut (-want +got):\n%s", diff)
			}
			if changed != st.Changed() {
				t.Errorf("changed = %v, want %v", changed, st.Changed())
			}
			if diff := cmp.Diff(shape.Figures(st, tt.p), tr); changed && diff != "" {
				t.Errorf("figures mismatch (-want +got):\n%s", diff)
			}
			if err := capcheck.Text(tt.in, got, tt.p); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestTextFitsFree(t *testing.T) {
	s := strings.Repeat("x", 100)
	p := shape.Policy{MaxBytes: 200, MaxTokens: 150, Counter: words{}, Spec: cut.Spec{Keep: cut.KeepHeadTail}}
	if n := testing.AllocsPerRun(100, func() { shape.Text(s, p) }); n != 0 {
		t.Errorf("a text that fits: %v allocations, want 0", n)
	}
	if out, tr, changed := shape.Text(s, p); out != s || changed || tr != (chain.Truncation{}) {
		t.Errorf("Text() of a text that fits = %q, %+v, %v", out, tr, changed)
	}
}

func TestRecut(t *testing.T) {
	in := strings.Repeat("abcdefghij", 100)
	first, _, _ := shape.Text(in, shape.Bytes(500))
	grown := "note: " + first // a middleware prepended a line
	got, tr, changed := shape.Recut(grown, shape.Bytes(500))
	if !changed {
		t.Fatalf("Recut() did not cut %d bytes to 500", len(grown))
	}
	if n := len(cut.FindMarkers(got)); n != 1 {
		t.Errorf("%d markers after a recut, want 1: %q", n, got)
	}
	// One marker counting all the model does not see of the grown text.
	if err := capcheck.Text("note: "+in, got, shape.Bytes(500)); err != nil {
		t.Error(err)
	}
	if tr.OriginalBytes != len("note: "+in) {
		t.Errorf("OriginalBytes = %d, want %d", tr.OriginalBytes, len("note: "+in))
	}
}

func TestFigures(t *testing.T) {
	st := cut.Stats{Original: 10, Kept: 4, Dropped: 6, Strategy: cut.KeepHeadTail, Unit: cut.UnitTokens, OriginalTokens: 5, KeptTokens: 2, DroppedTokens: 3}
	got := shape.Figures(st, shape.Policy{MaxBytes: 100, MaxTokens: 40, Counter: words{}})
	want := chain.Truncation{Limit: 100, OriginalBytes: 10, KeptBytes: 4, DroppedBytes: 6, Strategy: "head_tail",
		LimitTokens: 40, Unit: "tokens", OriginalTokens: 5, KeptTokens: 2, DroppedTokens: 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Figures() mismatch (-want +got):\n%s", diff)
	}
	// A head cut records no strategy, and a token limit no counter holds is not recorded.
	got = shape.Figures(cut.Stats{Original: 10, Kept: 4, Dropped: 6, Strategy: cut.KeepHead}, shape.Policy{MaxBytes: 100, MaxTokens: 40})
	want = chain.Truncation{Limit: 100, OriginalBytes: 10, KeptBytes: 4, DroppedBytes: 6}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Figures() of a head cut mismatch (-want +got):\n%s", diff)
	}
}

func TestLogFields(t *testing.T) {
	tr := chain.Truncation{Limit: 100, OriginalBytes: 300, KeptBytes: 50, DroppedBytes: 250, Strategy: "head_tail", LimitTokens: 40, Batch: true}
	got := shape.LogFields("Bash", "call-1", tr)
	want := []any{"tool", "Bash", "call_id", "call-1", "original_bytes", 300, "kept_bytes", 50, "dropped_bytes", 250,
		"limit", 100, "strategy", "head_tail", "limit_tokens", 40, "batch", true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LogFields() mismatch (-want +got):\n%s", diff)
	}
	if got := shape.LogFields("Glob", "", chain.Truncation{Limit: 1}); len(got) != 10 || got[2] != "original_bytes" {
		t.Errorf("LogFields() without a call id = %v", got)
	}
}
