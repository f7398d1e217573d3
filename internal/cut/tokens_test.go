package cut_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

// words is a Counter shaped like a BPE tokenizer's count without its
// vocabulary: a run of letters is one token per up to four of its bytes,
// any other character one token per character. It is not additive across
// a cut inside a run, as real tokenizers are not.
type words struct{}

func (words) Count(s string) int {
	n, run := 0, 0
	flush := func() {
		n += (run + 3) / 4
		run = 0
	}
	for _, r := range s {
		if unicode.IsLetter(r) && r < utf8.RuneSelf {
			run++
			continue
		}
		flush()
		n++
	}
	flush()
	return n
}

// tokenMarkerRE finds a token marker and its N.
var tokenMarkerRE = regexp.MustCompile(`\n\[truncated: (\d+) tokens dropped, refine your query\]`)

// checkTokens returns what is wrong with out, the token cut of in: the
// properties every such cut has.
func checkTokens(c cut.Counter, in string, maxBytes, maxTokens int, spec cut.Spec, out string, st cut.Stats) string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	// Issue 22: the limits hold in what the client decodes (see check).
	if len(in) <= min(maxBytes, maxTokens)/3 {
		if out != in || st.Changed() {
			fail("input within a third of both limits changed")
		}
		return strings.Join(errs, "; ")
	}
	in, replaced := cut.ReplaceInvalid(in)
	if st.Replaced != replaced || !utf8.ValidString(out) {
		fail("%d bytes replaced, figures say %d; output valid UTF-8: %v", replaced, st.Replaced, utf8.ValidString(out))
	}
	if len(out) > max(maxBytes, 0) {
		fail("output of %d bytes over the byte limit %d", len(out), maxBytes)
	}
	if got := c.Count(out); got > maxTokens {
		fail("output of %d tokens over the token limit %d", got, maxTokens)
	}
	if len(in) <= maxBytes && c.Count(in) <= maxTokens && (out != in || st.Changed() != (replaced > 0)) {
		fail("input within both limits changed")
	}
	if st.Original != len(in) || st.Kept+st.Dropped != st.Original {
		fail("byte figures %+v do not add up for %d bytes", st, len(in))
	}
	if utf8.ValidString(in) && !utf8.ValidString(out) {
		fail("a character was split")
	}
	if again, st2 := cut.CutTokens(out, maxBytes, maxTokens, c, spec); again != out || st2.Changed() {
		fail("not idempotent (%d to %d bytes)", len(out), len(again))
	}
	m := tokenMarkerRE.FindAllStringSubmatchIndex(out, -1)
	switch {
	case st.Unit == cut.UnitTokens:
		if len(m) != 1 {
			fail("%d token markers in a cut by tokens", len(m))
			break
		}
		n, _ := strconv.Atoi(out[m[0][2]:m[0][3]])
		before, after := out[:m[0][0]], strings.TrimPrefix(out[m[0][1]:], "\n")
		kept := c.Count(before)
		if after != "" {
			kept += c.Count(after)
		}
		want := max(1, c.Count(in)-kept)
		if n != want || st.DroppedTokens != n || st.OriginalTokens != c.Count(in) || st.KeptTokens+st.DroppedTokens != st.OriginalTokens {
			fail("token marker N %d, want %d; figures %+v", n, want, st)
		}
		if len(in) > cut.TokenWindow(maxTokens) {
			fail("a token marker for an input longer than the window")
		}
	case len(m) > 0 && !strings.Contains(in, "tokens dropped"):
		fail("a token marker in a cut by bytes")
	}
	return strings.Join(errs, "; ")
}

func TestCutTokens(t *testing.T) {
	var lines strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&lines, "ok %d github.com/toolcap/toolcap/pkg%d 0.0%ds\n", i, i%7, i%10)
	}
	lines.WriteString("FAIL: TestX\n")
	log := lines.String()
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 2000)
	cjk := strings.Repeat("ツールの出力が大きすぎると、次のリクエストがレート制限を超えてしまう。", 250)
	doc := `{"items":[` + strings.Repeat(`{"name":"alpha","value":12345,"tags":["a","b","c"]},`, 1500) + `{"name":"end"}]}`
	keep := []*regexp.Regexp{regexp.MustCompile(`FAIL`)}

	tests := []struct {
		name                string
		in                  string
		maxBytes, maxTokens int
		spec                cut.Spec
		unit                cut.Unit // of the marker
	}{
		{"log head by tokens", log, 1 << 20, 4000, cut.Spec{}, cut.UnitTokens},
		{"log head_tail by tokens", log, 1 << 20, 4000, cut.Spec{Keep: cut.KeepHeadTail}, cut.UnitTokens},
		{"log head_tail keep_lines", log, 1 << 20, 3000, cut.Spec{Keep: cut.KeepHeadTail, KeepLines: keep}, cut.UnitTokens},
		{"prose by tokens", prose[:30000], 1 << 20, 1000, cut.Spec{}, cut.UnitTokens},
		{"cjk by tokens", cjk, 1 << 20, 1000, cut.Spec{}, cut.UnitTokens},
		{"json by tokens", doc, 1 << 20, 3000, cut.Spec{Keep: cut.KeepJSON}, cut.UnitTokens},
		{"bytes cut first", prose, 4096, 4000, cut.Spec{}, cut.UnitBytes},
		{"past the window: byte marker", strings.Repeat(prose, 4), 1 << 22, 1000, cut.Spec{}, cut.UnitBytes},
		{"fits both", "hello world", 100, 100, cut.Spec{}, cut.UnitBytes},
		{"fits bytes, not tokens", prose[:3000], 4096, 200, cut.Spec{}, cut.UnitTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, st := cut.CutTokens(tt.in, tt.maxBytes, tt.maxTokens, words{}, tt.spec)
			if msg := checkTokens(words{}, tt.in, tt.maxBytes, tt.maxTokens, tt.spec, out, st); msg != "" {
				t.Fatalf("%s\noutput %.300q", msg, out)
			}
			if diff := cmp.Diff(tt.unit, st.Unit); diff != "" {
				t.Errorf("unit (-want +got):\n%s", diff)
			}
			// The budget is used: a cut by tokens keeps all but a sliver.
			if st.Unit == cut.UnitTokens {
				if got := (words{}).Count(out); got < tt.maxTokens*97/100 {
					t.Errorf("output of %d tokens wastes the limit of %d", got, tt.maxTokens)
				}
			}
		})
	}
}

// TestCutTokensBytesFirst: when the byte limit cuts, the output is Cut's.
func TestCutTokensBytesFirst(t *testing.T) {
	in := strings.Repeat("lorem ipsum dolor ", 5000)
	for _, spec := range []cut.Spec{{}, {Keep: cut.KeepHeadTail}} {
		want, wst := cut.Cut(in, 8192, spec)
		got, gst := cut.CutTokens(in, 8192, 1<<20, words{}, spec)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s output (-want +got):\n%s", spec.Keep, diff)
		}
		if diff := cmp.Diff(wst, gst); diff != "" {
			t.Errorf("%s figures (-want +got):\n%s", spec.Keep, diff)
		}
	}
}

// TestCutTokensNoCounter: without a counter or a token limit, CutTokens is Cut.
func TestCutTokensNoCounter(t *testing.T) {
	in := strings.Repeat("x", 1000)
	want, _ := cut.Cut(in, 200, cut.Spec{})
	for _, got := range []string{
		first(cut.CutTokens(in, 200, 0, words{}, cut.Spec{})),
		first(cut.CutTokens(in, 200, 50, nil, cut.Spec{})),
	} {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
}

func first(s string, _ cut.Stats) string { return s }

func TestTokenMarker(t *testing.T) {
	for _, n := range []int{0, 9, 10, 12345} {
		m := cut.TokenMarker(n)
		if diff := cmp.Diff("\n[truncated: "+strconv.Itoa(n)+" tokens dropped, refine your query]", m); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if len(m) != cut.TokenMarkerLen(n) {
			t.Errorf("TokenMarkerLen(%d) = %d, len %d", n, cut.TokenMarkerLen(n), len(m))
		}
	}
	if diff := cmp.Diff([]string{"bytes", "tokens"}, []string{cut.UnitBytes.String(), cut.UnitTokens.String()}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// FuzzCutTokens checks every property of a token cut with the words
// counter: both limits hold, N exact, idempotent, no split character.
func FuzzCutTokens(f *testing.F) {
	f.Add("ok 1\nok 2\nerror: x\nok 3\nFAIL: TestX", 200, 30, uint8(0))
	f.Add(strings.Repeat("The quick brown fox. ", 50), 4096, 64, uint8(1))
	f.Add(`{"a":[1,2,3,{"b":"cccccccccccccccccccccccccccccccc"}],"d":null}`+strings.Repeat(" ", 100), 500, 20, uint8(2))
	// Issue 22: invalid UTF-8 counts as the U+FFFD the client decodes.
	f.Add(strings.Repeat("\xff", 5000), 4096, 1000, uint8(0))
	f.Add(strings.Repeat("word \xe2\x82 ", 300), 1000, 100, uint8(1))
	f.Fuzz(func(t *testing.T, in string, maxBytes, maxTokens int, keep uint8) {
		maxBytes, maxTokens = maxBytes%8192, maxTokens%2048
		if maxTokens < 16 || maxBytes < 128 {
			t.Skip() // below what a manifest accepts: no room for the marker
		}
		spec := cut.Spec{Keep: []cut.Keep{cut.KeepHead, cut.KeepHeadTail, cut.KeepJSON}[keep%3]}
		out, st := cut.CutTokens(in, maxBytes, maxTokens, words{}, spec)
		if msg := checkTokens(words{}, in, maxBytes, maxTokens, spec, out, st); msg != "" {
			t.Fatalf("bytes %d tokens %d %s: %s\noutput %q", maxBytes, maxTokens, spec.Keep, msg, out)
		}
	})
}

// TestRecutTokens: a text an earlier cut made keeps one marker, in bytes,
// its count the bytes of the original the output does not show.
func TestRecutTokens(t *testing.T) {
	orig := strings.Repeat("alpha beta gamma delta ", 2000) // 46,000 bytes
	for _, spec := range []cut.Spec{{}, {Keep: cut.KeepHeadTail}} {
		t.Run(string(spec.Keep), func(t *testing.T) {
			first, _ := cut.Cut(orig, 16384, spec)
			out, st := cut.RecutTokens(first, 16384, 1000, words{}, spec)
			if got := (words{}).Count(out); got > 1000 || got < 970 {
				t.Errorf("%d tokens, want 970 to 1000", got)
			}
			if c := len(markerRE.FindAllString(out, -1)); c != 1 || len(tokenMarkerRE.FindAllString(out, -1)) != 0 {
				t.Errorf("%d byte markers in %.200q", c, out)
			}
			m := markerRE.FindStringSubmatch(out)
			n, _ := strconv.Atoi(m[1])
			if diff := cmp.Diff(len(orig), st.Original); diff != "" || n != st.Dropped || st.Kept+st.Dropped != len(orig) {
				t.Errorf("figures %+v, marker %d; original (-want +got):\n%s", st, n, diff)
			}
		})
	}
	// A text without a marker is cut as CutTokens cuts it.
	plain := orig[:20000]
	want, _ := cut.CutTokens(plain, 16384, 1000, words{}, cut.Spec{})
	if got, _ := cut.RecutTokens(plain, 16384, 1000, words{}, cut.Spec{}); got != want {
		t.Errorf("RecutTokens of a plain text differs from CutTokens")
	}
}

// TestRecutTokensKeepsTokenMarker: a text a token limit cut, cut again
// smaller, keeps one token marker whose N is still the tokens of the
// original less those of what the output shows.
func TestRecutTokensKeepsTokenMarker(t *testing.T) {
	prose := strings.Repeat("alpha beta gamma delta. ", 400)
	doc := `{"items":[` + strings.Repeat(`"alpha beta gamma",`, 300) + `"last"]}`
	tests := []struct {
		name string
		in   string
		spec cut.Spec
	}{
		{"head", prose, cut.Spec{}},
		{"head_tail", prose, cut.Spec{Keep: cut.KeepHeadTail}},
		{"json", doc, cut.Spec{Keep: cut.KeepJSON}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, st := cut.CutTokens(tt.in, 8000, 400, words{}, tt.spec)
			if st.Unit != cut.UnitTokens {
				t.Fatalf("the first cut counts %q, want tokens", st.Unit)
			}
			for _, limit := range []int{len(first), len(first) / 2, 150} {
				got, st2 := cut.RecutTokens(first, limit, 400, words{}, tt.spec)
				ms := cut.FindMarkers(got)
				if len(got) > limit || len(ms) != 1 || ms[0].Unit != cut.UnitTokens {
					t.Fatalf("limit %d: %d bytes, markers %+v: %q", limit, len(got), ms, got)
				}
				kept := (words{}).Count(got[:ms[0].Start])
				if rest := got[ms[0].End:]; rest != "" {
					kept += (words{}).Count(rest[1:])
				}
				if want := (words{}).Count(tt.in) - kept; ms[0].N != want || (got != first && st2.DroppedTokens != want) {
					t.Errorf("limit %d: N %d (figures %d), want %d", limit, ms[0].N, st2.DroppedTokens, want)
				}
				if tt.spec.Keep == cut.KeepJSON && !json.Valid([]byte(got[:ms[0].Start])) {
					t.Errorf("limit %d: the document part is not JSON: %q", limit, got)
				}
			}
		})
	}
}
