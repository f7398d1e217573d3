package cut_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

// testLog is a 200,000-line go test log: "ok 1" to "ok 199999", then
// "FAIL: TestX"; with errorAt > 0, an "error: x" line follows "ok errorAt".
func testLog(errorAt int) string {
	var b strings.Builder
	for i := 1; i < 200000; i++ {
		fmt.Fprintf(&b, "ok %d\n", i)
		if i == errorAt {
			b.WriteString("error: x\n")
		}
	}
	b.WriteString("FAIL: TestX")
	return b.String()
}

func TestHeadTailLog(t *testing.T) {
	keep := []*regexp.Regexp{regexp.MustCompile(`(?i)\b(error|fail|panic)\b`)}
	type outcome struct {
		Len                 int
		Head, Tail, Rescued bool
		Markers             int
		DroppedIsUnseen     bool
	}
	tests := []struct {
		name string
		in   string
		spec cut.Spec
		want outcome
	}{
		{"head_tail", testLog(0), cut.Spec{Keep: cut.KeepHeadTail},
			outcome{Len: 16384, Head: true, Tail: true, Markers: 1, DroppedIsUnseen: true}},
		// The rescued line's 9 bytes shift the line ends: one byte of the
		// limit has no whole line to fill it.
		{"keep_lines rescues the error", testLog(100000), cut.Spec{Keep: cut.KeepHeadTail, KeepLines: keep},
			outcome{Len: 16383, Head: true, Tail: true, Rescued: true, Markers: 1, DroppedIsUnseen: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, st := cut.Cut(tt.in, 16384, tt.spec)
			if msg := check(tt.in, 16384, tt.spec, out, st); msg != "" {
				t.Fatal(msg)
			}
			got := outcome{
				Len:     len(out),
				Head:    strings.HasPrefix(out, "ok 1\nok 2\n"),
				Tail:    strings.HasSuffix(out, "\nok 199999\nFAIL: TestX"),
				Rescued: strings.Contains(out, "]\nerror: x\nok "),
				Markers: len(markerRE.FindAllString(out, -1)),
				// N is the input's length less every byte of it shown.
				DroppedIsUnseen: st.Dropped == len(tt.in)-(len(out)-cut.MarkerLen(st.Dropped)-1),
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Cut() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeadTail(t *testing.T) {
	lines := func(n int, f string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, f, i)
		}
		return b.String()
	}
	keep := func(p ...string) []*regexp.Regexp {
		res, err := cut.CompileKeepLines(p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	tests := []struct {
		name  string
		in    string
		limit int
		spec  cut.Spec
		want  string
	}{
		{"fits: unchanged", "a\nb\n", 4, cut.Spec{Keep: cut.KeepHeadTail}, "a\nb\n"},
		{"lines snap on both sides", lines(40, "line %02d\n"), 200, cut.Spec{Keep: cut.KeepHeadTail},
			// Lines of 8 bytes leave 6 of the 200 unused.
			"line 00\nline 01\nline 02\nline 03\nline 04\nline 05\nline 06\nline 07\nline 08\n" +
				"[truncated: 177 bytes dropped, refine your query]\n" +
				"line 31\nline 32\nline 33\nline 34\nline 35\nline 36\nline 37\nline 38\nline 39\n"},
		{"no newline: hard cuts fill the limit", strings.Repeat("x", 1000), 200, cut.Spec{Keep: cut.KeepHeadTail},
			strings.Repeat("x", 75) + "\n[truncated: 851 bytes dropped, refine your query]\n" + strings.Repeat("x", 74)},
		{"tail_share 0.8", strings.Repeat("x", 1000), 200, cut.Spec{Keep: cut.KeepHeadTail, TailShare: 0.8},
			strings.Repeat("x", 30) + "\n[truncated: 851 bytes dropped, refine your query]\n" + strings.Repeat("x", 119)},
		{"never splits a character", strings.Repeat("é", 500), 200, cut.Spec{Keep: cut.KeepHeadTail},
			strings.Repeat("é", 37) + "\n[truncated: 852 bytes dropped, refine your query]\n" + strings.Repeat("é", 37)},
		{"keep_lines rescues in order", lines(20, "ok %02d\n") + "panic: a\n" + lines(20, "ok %02d\n") + "error: b\n" + lines(30, "ok %02d\n"),
			200, cut.Spec{Keep: cut.KeepHeadTail, KeepLines: keep(`panic`, `error`)},
			"ok 00\nok 01\nok 02\nok 03\nok 04\nok 05\nok 06\nok 07\nok 08\nok 09\nok 10\n" +
				"[truncated: 289 bytes dropped, refine your query]\n" +
				"panic: a\nerror: b\n" +
				"ok 19\nok 20\nok 21\nok 22\nok 23\nok 24\nok 25\nok 26\nok 27\nok 28\nok 29\n"},
		{"limit too small for a marker line: the head rule", strings.Repeat("x", 100), 40, cut.Spec{Keep: cut.KeepHeadTail},
			strings.Repeat("x", 40)},
		{"negative limit", "abc", -1, cut.Spec{Keep: cut.KeepHeadTail}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := cut.Cut(tt.in, tt.limit, tt.spec)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Cut() mismatch (-want +got):\n%s", diff)
			}
			if msg := check(tt.in, tt.limit, tt.spec, got, st); msg != "" {
				t.Error(msg)
			}
		})
	}
}

// TestHeadTailReadsOnlyWindows checks that a head_tail cut of text whose
// windows are valid reads only them, wherever the tail window's edge falls
// in a multi-byte character: an invalid byte in the dropped middle then
// counts as it is (Original is the input's length, nothing Replaced),
// which a cut that read the whole input would count as a U+FFFD.
func TestHeadTailReadsOnlyWindows(t *testing.T) {
	const limit = 200
	for _, unit := range []string{"é", "敏", "🦊"} {
		for pad := range len(unit) {
			// The tail window, the last limit+4 bytes, starts pad bytes
			// further into the run of unit.
			in := strings.Repeat("a", 500) + "\xff" + strings.Repeat("a", 500) +
				strings.Repeat(unit, 300/len(unit)) + strings.Repeat("z", pad)
			t.Run(fmt.Sprintf("%s/pad=%d", unit, pad), func(t *testing.T) {
				out, st := cut.Cut(in, limit, cut.Spec{Keep: cut.KeepHeadTail})
				got := struct{ Original, Replaced int }{st.Original, st.Replaced}
				want := struct{ Original, Replaced int }{len(in), 0}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Cut() figures mismatch (-want +got):\n%s", diff)
				}
				if msg := check(in, limit, cut.Spec{Keep: cut.KeepHeadTail}, out, st); msg != "" {
					t.Error(msg)
				}
			})
		}
	}
}
