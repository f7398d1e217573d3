package cut_test

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

func TestSpecValidate(t *testing.T) {
	re := regexp.MustCompile("x")
	many := make([]*regexp.Regexp, cut.MaxKeepLines+1)
	for i := range many {
		many[i] = re
	}
	tests := []struct {
		name string
		spec cut.Spec
		want string
	}{
		{"zero", cut.Spec{}, ""},
		{"full", cut.Spec{Keep: cut.KeepJSON, TailShare: 0.3, KeepLines: []*regexp.Regexp{re}, Fallback: cut.KeepHeadTail}, ""},
		{"unknown keep", cut.Spec{Keep: "tail"}, `keep: unknown strategy "tail" (want "head", "head_tail" or "json")`},
		{"json fallback", cut.Spec{Fallback: cut.KeepJSON}, `fallback "json": the fallback of json is a text strategy, "head" or "head_tail"`},
		{"unknown fallback", cut.Spec{Fallback: "x"}, `fallback: unknown strategy "x" (want "head" or "head_tail")`},
		{"tail_share 1", cut.Spec{TailShare: 1}, "tail_share 1: must be above 0 and below 1"},
		{"tail_share negative", cut.Spec{TailShare: -0.1}, "tail_share -0.1: must be above 0 and below 1"},
		{"too many patterns", cut.Spec{KeepLines: many}, "keep_lines: 9 patterns: at most 8"},
		{"nil pattern", cut.Spec{KeepLines: []*regexp.Regexp{nil}}, "keep_lines: pattern 0 is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := tt.spec.Validate(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileKeepLines(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		want     string
	}{
		{"none", nil, ""},
		{"two", []string{`(?i)\berror\b`, `^FAIL`}, ""},
		{"bad", []string{"ok", "(x"}, "pattern 1 \"(x\": error parsing regexp: missing closing ): `(x`"},
		{"empty", []string{""}, "pattern 0 is empty: it would match every line"},
		{"too many", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, "9 patterns: at most 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cut.CompileKeepLines(tt.patterns)
			got := ""
			if err != nil {
				got = err.Error()
			} else if len(res) != len(tt.patterns) {
				t.Errorf("%d regexps for %d patterns", len(res), len(tt.patterns))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CompileKeepLines() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInvalidSpecStillCuts checks that Cut keeps its promises for a spec
// that does not validate: the limit holds, nothing panics.
func TestInvalidSpecStillCuts(t *testing.T) {
	in := testLog(0)[:100000]
	for _, spec := range []cut.Spec{{Keep: "tail"}, {Keep: cut.KeepHeadTail, TailShare: 7}, {Keep: cut.KeepJSON, Fallback: cut.KeepJSON}} {
		out, st := cut.Cut(in, 1000, spec)
		if len(out) > 1000 || st.Dropped == 0 || st.Kept+st.Dropped != len(in) {
			t.Errorf("spec %+v: %d bytes, figures %+v", spec, len(out), st)
		}
	}
}
