package cut_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

// markLast is a ResultRestAt mark that names a read from where the cut's
// last plain marker starts, as package rest names one.
func markLast(out string, st cut.Stats) (cut.Found, cut.Rest, bool) {
	ms := cut.FindMarkers(out)
	if !st.Changed() || len(ms) == 0 || ms[len(ms)-1].Rest != nil {
		return cut.Found{}, cut.Rest{}, false
	}
	f := ms[len(ms)-1]
	return f, cut.Rest{Tool: "read", Args: `{"ref":"r","offset":` + strings.Repeat("9", 1+f.Start%7) + `}`}, true
}

// ResultRestAt is ResultAt with the read added to its marker, as WithRest
// adds it, for every strategy and limit, however the calls follow one
// another: a cut the head rule made in the Writer's window, the read
// added there, is undone by the next call, which cuts the input as it
// was written.
func TestWriterResultRestAt(t *testing.T) {
	inputs := map[string]string{
		"log":         testLog(100000)[:120000] + "FAIL: TestX\n",
		"one line":    strings.Repeat("é", 5000),
		"json":        `{"a":[` + strings.Repeat(`{"k":"error v"},`, 2000) + `1]}`,
		"binary":      string([]byte{0xff, '\n', 0xe2, 0x82, '\n'}) + strings.Repeat("\xf0\x9f\x98\n", 1000),
		"within":      strings.Repeat("a", 4000),
		"just over":   strings.Repeat("b", 4097),
		"marker only": strings.Repeat("c", 100000),
	}
	never := func(string, cut.Stats) (cut.Found, cut.Rest, bool) { return cut.Found{}, cut.Rest{}, false }
	rng := rand.New(rand.NewPCG(5, 6))
	for name, in := range inputs {
		for si, spec := range streamSpecs() {
			w := cut.NewWriter(4096, spec)
			writeChunks(t, w, in, rng, 3000)
			for _, limit := range []int{4096, 4000, 2500, 4096, 333, 60, 40, 1, 0, 9000, 4000} {
				plain, wantSt := cut.Cut(in, min(limit, 4096), spec)
				want, wantOK := plain, false
				if f, r, ok := markLast(plain, wantSt); ok {
					want, wantOK = cut.WithRest(plain, f, r), true
				}
				got, st, ok := w.ResultRestAt(limit, markLast)
				if diff := cmp.Diff(want, got); diff != "" || ok != wantOK {
					t.Fatalf("%s, spec %d, ResultRestAt(%d): ok %v, want %v; (-want +got):\n%s", name, si, limit, ok, wantOK, diff)
				}
				if diff := cmp.Diff(wantSt, st); diff != "" {
					t.Fatalf("%s, spec %d, ResultRestAt(%d): figures (-want +got):\n%s", name, si, limit, diff)
				}
				// A mark that declines leaves the plain cut.
				if got, _, ok := w.ResultRestAt(limit, never); ok || got != plain {
					t.Fatalf("%s, spec %d, ResultRestAt(%d) declined: ok %v, %d bytes, want the plain cut's %d", name, si, limit, ok, len(got), len(plain))
				}
				// And the Writer cuts its input as written afterwards.
				if got, _ := w.ResultAt(limit); got != plain {
					t.Fatalf("%s, spec %d, ResultAt(%d) after ResultRestAt differs from Cut:\n%s", name, si, limit, cmp.Diff(plain, got))
				}
				if _, _, ok := w.ResultRestAt(limit, markLast); ok != wantOK {
					t.Fatalf("%s, spec %d, ResultRestAt(%d) again: ok %v", name, si, limit, ok)
				}
			}
			if got, _ := w.Result(); got != mustCut(in, 4096, spec) {
				t.Fatalf("%s, spec %d: Result after ResultRestAt differs from Cut", name, si)
			}
		}
	}
}

func mustCut(in string, limit int, spec cut.Spec) string {
	out, _ := cut.Cut(in, limit, spec)
	return out
}

// The head rule's cut with the read is built in the Writer's head window:
// a cut of a large limit allocates no output of its size.
func TestWriterResultRestAtInPlace(t *testing.T) {
	const limit = 8 << 20
	in := strings.Repeat("0123456789abcde\n", (limit+limit/2)/16)
	w := cut.NewWriter(limit, cut.Spec{})
	if _, err := w.WriteString(in); err != nil {
		t.Fatal(err)
	}
	var got string
	b, _ := allocated(func() { got, _, _ = w.ResultRestAt(limit-100, markLast) })
	plain, st := cut.Cut(in, limit-100, cut.Spec{})
	f, r, _ := markLast(plain, st)
	if want := cut.WithRest(plain, f, r); got != want {
		t.Fatalf("the cut in place: %d bytes, want %d", len(got), len(want))
	}
	// What is allocated is the bytes set aside and the read's text,
	// nothing of the limit's size.
	if b > 1<<20 {
		t.Errorf("the cut allocated %d bytes, want far less than the %d it keeps", b, limit)
	}
}
