package cut_test

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

// streamSpecs are the specs the streaming tests compare with Cut.
func streamSpecs() []cut.Spec {
	keep := []*regexp.Regexp{regexp.MustCompile(`(?i)\b(error|fail|panic)\b`), regexp.MustCompile(`^x`)}
	return []cut.Spec{
		{},
		{Keep: cut.KeepHeadTail},
		{Keep: cut.KeepHeadTail, TailShare: 0.3},
		{Keep: cut.KeepHeadTail, KeepLines: keep},
		{Keep: cut.KeepJSON},
		{Keep: cut.KeepJSON, Fallback: cut.KeepHeadTail, KeepLines: keep},
	}
}

// writeChunks writes s to w in pieces of random lengths up to most.
func writeChunks(t testing.TB, w *cut.Writer, s string, rng *rand.Rand, most int) {
	for len(s) > 0 {
		k := min(len(s), 1+rng.IntN(most))
		var err error
		if rng.IntN(2) == 0 {
			_, err = w.Write([]byte(s[:k]))
		} else {
			_, err = w.WriteString(s[:k])
		}
		if err != nil {
			t.Fatal(err)
		}
		s = s[k:]
	}
}

func TestWriterMatchesCut(t *testing.T) {
	inputs := map[string]string{
		"log":        testLog(100000)[:120000] + "FAIL: TestX\n",
		"log errors": strings.Repeat("ok\nerror: a\nx\n", 2000),
		"one line":   strings.Repeat("é", 5000),
		"short":      "error: a\nb\n",
		"json":       `{"a":[` + strings.Repeat(`{"k":"error v"},`, 2000) + `1]}`,
		"not json":   `{"a":[` + strings.Repeat("error\n", 2000),
		"binary":     string([]byte{0xff, '\n', 0xe2, 0x82, '\n'}) + strings.Repeat("\xf0\x9f\x98\n", 1000),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for name, in := range inputs {
		for si, spec := range streamSpecs() {
			for _, limit := range []int{0, 60, 200, 1000, 4096} {
				want, wantSt := cut.Cut(in, limit, spec)
				for _, most := range []int{1, 7, 100, 5000, len(in)} {
					if most == 1 && len(in) > 20000 {
						continue // byte by byte: the short inputs cover it
					}
					w := cut.NewWriter(limit, spec)
					writeChunks(t, w, in, rng, most)
					got, st := w.Result()
					if got != want {
						t.Fatalf("%s, spec %d, limit %d, pieces up to %d: Writer differs from Cut:\n%s", name, si, limit, most, cmp.Diff(want, got))
					}
					if diff := cmp.Diff(wantSt, st); diff != "" {
						t.Fatalf("%s, spec %d, limit %d: figures mismatch (-want +got):\n%s", name, si, limit, diff)
					}
				}
			}
		}
	}
}

func TestWriterAfterResult(t *testing.T) {
	w := cut.NewWriter(100, cut.Spec{})
	w.Result()
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after Result: no error")
	}
}

// TestWriterJSONBound checks that JSON longer than JSONMaxInput is cut as
// text, by Cut and by a Writer alike.
func TestWriterJSONBound(t *testing.T) {
	limit := 1000
	in := "[" + strings.Repeat(`"abcdefgh",`, cut.JSONMaxInput(limit)/11+1) + "1]"
	spec := cut.Spec{Keep: cut.KeepJSON}
	want, st := cut.Cut(in, limit, spec)
	if st.Strategy != cut.KeepHead {
		t.Errorf("JSON over JSONMaxInput cut with %q, want head", st.Strategy)
	}
	w := cut.NewWriter(limit, spec)
	writeChunks(t, w, in, rand.New(rand.NewPCG(3, 4)), 1<<16)
	if got, _ := w.Result(); got != want {
		t.Error("Writer differs from Cut past JSONMaxInput")
	}
}

// TestWriterResultAt checks that a Writer cuts what it holds at any limit
// up to its own as Cut cuts the whole content at that limit, so that a
// stream can be cut to a token limit as a string held whole is.
func TestWriterResultAt(t *testing.T) {
	inputs := map[string]string{
		"log":             testLog(100000)[:120000] + "FAIL: TestX\n",
		"log errors":      strings.Repeat("ok\nerror: a\nx\n", 2000),
		"failures spread": strings.Repeat(strings.Repeat("ok  \tpkg/a/b\t0.01s\n", 40)+"--- FAIL: TestY\n", 200),
		"one line":        strings.Repeat("é", 5000),
		"json":            `{"a":[` + strings.Repeat(`{"k":"error v"},`, 2000) + `1]}`,
		"binary":          string([]byte{0xff, '\n', 0xe2, 0x82, '\n'}) + strings.Repeat("\xf0\x9f\x98\n", 1000),
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for name, in := range inputs {
		for si, spec := range streamSpecs() {
			w := cut.NewWriter(4096, spec)
			writeChunks(t, w, in, rng, 3000)
			for _, limit := range []int{4096, 4000, 2500, 1000, 333, 128, 60, 0, 9000} {
				want, wantSt := cut.Cut(in, min(limit, 4096), spec)
				got, st := w.ResultAt(limit)
				if got != want {
					t.Fatalf("%s, spec %d, ResultAt(%d) differs from Cut:\n%s", name, si, limit, cmp.Diff(want, got))
				}
				if diff := cmp.Diff(wantSt, st); diff != "" {
					t.Fatalf("%s, spec %d, ResultAt(%d): figures mismatch (-want +got):\n%s", name, si, limit, diff)
				}
			}
		}
	}
}

// TestWriterResultTokens checks that a stream too long to be tokenized
// whole is cut by its token limit byte for byte as CutTokens cuts it.
func TestWriterResultTokens(t *testing.T) {
	in := strings.Repeat(strings.Repeat("ok  \tpkg/a/b\t0.01s coverage 80%\n", 40)+"--- FAIL: TestY\n", 200)
	rng := rand.New(rand.NewPCG(5, 6))
	for si, spec := range streamSpecs() {
		for _, maxTokens := range []int{300, 1000, 2500} {
			if len(in) <= cut.TokenWindow(maxTokens) {
				t.Fatalf("input of %d bytes is within the token window of %d tokens", len(in), maxTokens)
			}
			want, wantSt := cut.CutTokens(in, 12000, maxTokens, words{}, spec)
			w := cut.NewWriter(12000, spec)
			writeChunks(t, w, in, rng, 5000)
			got, st := w.ResultTokens(maxTokens, words{})
			if got != want {
				t.Fatalf("spec %d, %d tokens: ResultTokens differs from CutTokens:\n%s", si, maxTokens, cmp.Diff(want, got))
			}
			if diff := cmp.Diff(wantSt, st); diff != "" {
				t.Fatalf("spec %d, %d tokens: figures mismatch (-want +got):\n%s", si, maxTokens, diff)
			}
			if n := (words{}).Count(got); n > maxTokens {
				t.Errorf("spec %d: %d tokens, over %d", si, n, maxTokens)
			}
		}
	}
}

// TestWriterResultAtRescueBound pins the one way ResultAt may differ from
// Cut: at 256 bytes a Writer keeps matching lines of up to 64 bytes until
// they pass 64, so a 64-byte error line followed by a 49-byte one stops
// its rule at the second; at 247 bytes Cut rescues only lines of up to 61
// and takes the second, which the Writer no longer has. Its cut must still
// be a head_tail cut within the limit, with figures that add up, and Cut's
// exactly once the smaller limit no longer needs that line.
func TestWriterResultAtRescueBound(t *testing.T) {
	spec := cut.Spec{Keep: cut.KeepHeadTail, KeepLines: []*regexp.Regexp{regexp.MustCompile(`error`)}}
	filler := strings.Repeat("ok "+strings.Repeat("-", 26)+"\n", 12) // 360 bytes
	in := filler + "error " + strings.Repeat("a", 57) + "\n" + "error " + strings.Repeat("b", 42) + "\n" + filler + filler
	if cut.RecordsAll(in, 256, spec) {
		t.Fatal("the Writer's rule keeps every line of the case: it shows no exception")
	}
	w := cut.NewWriter(256, spec)
	writeChunks(t, w, in, rand.New(rand.NewPCG(7, 8)), 50)

	want, wantSt := cut.Cut(in, 247, spec)
	if wantSt.Rescued != 1 || !strings.Contains(want, "error bbb") {
		t.Fatalf("Cut at 247 rescues %d lines, want the 49-byte one: %q", wantSt.Rescued, want)
	}
	got, st := w.ResultAt(247)
	if got == want || st.Rescued != 0 {
		// Not an error of the cut, but the case no longer shows the
		// exception: the test must be given one that does.
		t.Fatalf("ResultAt(247) rescued %d lines, the same cut as Cut: the case no longer needs a line the Writer let go", st.Rescued)
	}
	if len(got) > 247 || st.Strategy != cut.KeepHeadTail || st.Kept+st.Dropped != st.Original || !strings.Contains(got, cut.Marker(st.Dropped)) {
		t.Fatalf("ResultAt(247) = %q (%+v): not a head_tail cut within 247 bytes", got, st)
	}
	for _, limit := range []int{256, 128} { // its own, and one that rescues none
		want, wantSt := cut.Cut(in, limit, spec)
		got, st := w.ResultAt(limit)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ResultAt(%d) differs from Cut (-want +got):\n%s", limit, diff)
		}
		if diff := cmp.Diff(wantSt, st); diff != "" {
			t.Errorf("ResultAt(%d) figures (-want +got):\n%s", limit, diff)
		}
	}
}
