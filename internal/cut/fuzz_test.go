package cut_test

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/cut"
)

var fuzzKeep = []*regexp.Regexp{regexp.MustCompile(`(?i)\b(error|fail|panic)\b`)}

// FuzzHeadTail checks every property of a head_tail cut: never over the
// limit, never a split character, N exact, idempotent, the output a head of
// the input, the marker line, rescued lines of the input and a tail of it,
// and a Writer fed in random pieces gives the same.
func FuzzHeadTail(f *testing.F) {
	f.Add("ok 1\nok 2\nerror: x\nok 3\nFAIL: TestX", 60, uint8(50), true, uint64(1))
	f.Add("ééééééééééééééééééééééééééééééééééééééééééééé\n\n\n\xff\xfe", 64, uint8(10), false, uint64(2))
	// Issue 22: invalid UTF-8 counts as the U+FFFD the client decodes.
	f.Add(strings.Repeat("\xff", 300), 200, uint8(50), false, uint64(3))
	f.Add("error \xe2\x82\n"+strings.Repeat("ok \xf0\x9f\x98\xff\n", 30), 150, uint8(30), true, uint64(4))
	f.Fuzz(func(t *testing.T, in string, limit int, share uint8, lines bool, seed uint64) {
		limit %= 4096
		spec := cut.Spec{Keep: cut.KeepHeadTail, TailShare: float64(share%99+1) / 100}
		if lines {
			spec.KeepLines = fuzzKeep
		}
		out, st := cut.Cut(in, limit, spec)
		if msg := check(in, limit, spec, out, st); msg != "" {
			t.Fatalf("limit %d: %s\noutput %q", limit, msg, out)
		}
		w := cut.NewWriter(limit, spec)
		writeChunks(t, w, in, rand.New(rand.NewPCG(seed, 0)), 1+int(seed%64))
		if got, _ := w.Result(); got != streamCut(in, limit, spec) {
			t.Fatalf("Writer %q, Cut %q", got, streamCut(in, limit, spec))
		}
	})
}

// FuzzJSON checks the json strategy: the document part is always
// json.Valid (and passes strictJSON when the input does: no lone
// surrogate), the marker's N is the input's length less the document's,
// the limit holds, idempotent; and JSONValue's output is valid and within
// the limit whenever it says ok.
func FuzzJSON(f *testing.F) {
	f.Add(`{"a":[1,2,3,{"b":"ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"}],"d":null}`, 80, uint64(1))
	f.Add(`["\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9", "\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\"]`, 70, uint64(2))
	f.Add(`{"s":"`+strings.Repeat("\xff", 200)+`","t":[1,2]}`, 150, uint64(4))
	// Issue 22: a cut inside an escaped surrogate pair left a lone \ud83d.
	f.Add(`{"s":"`+strings.Repeat(`\ud83d\ude00`, 10)+`"}`, 114, uint64(3))
	f.Fuzz(func(t *testing.T, in string, limit int, seed uint64) {
		limit %= 4096
		spec := cut.Spec{Keep: cut.KeepJSON}
		out, st := cut.Cut(in, limit, spec)
		if msg := check(in, limit, spec, out, st); msg != "" {
			t.Fatalf("limit %d: %s\noutput %q", limit, msg, out)
		}
		if v, vst, ok := cut.JSONValue([]byte(in), limit); ok {
			if len(v) > limit || !jsonValid(v) || vst.Kept+vst.Dropped != len(in) {
				t.Fatalf("JSONValue: %d bytes at limit %d, valid %v, figures %+v", len(v), limit, jsonValid(v), vst)
			}
			if msg := strictJSON(v); msg != "" && strictJSON([]byte(in)) == "" {
				t.Fatalf("JSONValue at limit %d, of a strict input: %s\noutput %s", limit, msg, v)
			}
		}
		if st.Strategy == cut.KeepJSON && strictJSON([]byte(in)) == "" {
			if d, _, _ := splitDocument(out, st); strictJSON([]byte(d)) != "" {
				t.Fatalf("limit %d, of a strict input: %s\noutput %s", limit, strictJSON([]byte(d)), out)
			}
		}
		w := cut.NewWriter(limit, spec)
		writeChunks(t, w, in, rand.New(rand.NewPCG(seed, 0)), 1+int(seed%64))
		if got, _ := w.Result(); got != streamCut(in, limit, spec) {
			t.Fatalf("Writer %q, Cut %q", got, streamCut(in, limit, spec))
		}
	})
}

// FuzzResultAt checks that a Writer cuts what it holds at any limit up to
// its own exactly as Cut cuts the whole content at that limit, for every
// strategy, fed in random pieces: what makes a streamed text and a held one
// come out the same under a token limit.
func FuzzResultAt(f *testing.F) {
	f.Add("ok 1\nok 2\nerror: x\nok 3\nFAIL: TestX\n", 200, 60, uint8(3), uint64(1))
	f.Add("ééééééééééééééé\n\n\nerror \xff\xfe\nok\n", 120, 64, uint8(1), uint64(2))
	f.Add(`{"a":[1,2,3,{"b":"error cccccccccccccccccccccc"}],"d":null}`, 100, 70, uint8(4), uint64(3))
	f.Fuzz(func(t *testing.T, in string, limit, at int, spec uint8, seed uint64) {
		specs := streamSpecs()
		s := specs[int(spec)%len(specs)]
		limit %= 2048
		at %= 2048
		w := cut.NewWriter(limit, s)
		writeChunks(t, w, in, rand.New(rand.NewPCG(seed, 0)), 1+int(seed%64))
		fixed, _ := cut.ReplaceInvalid(in) // a Writer replaces what Cut may pass unread
		want, wantSt := cut.Cut(fixed, min(at, limit), s)
		got, st := w.ResultAt(at)
		if at < limit && !cut.RecordsAll(fixed, limit, s) {
			// The Writer let go of lines a cut at the smaller limit may
			// rescue (see Writer.ResultAt): it only stays within it.
			if len(got) > max(at, 0) || st.Kept+st.Dropped != st.Original {
				t.Fatalf("limit %d, at %d, spec %d: ResultAt %q (%+v) over the limit", limit, at, spec, got, st)
			}
			return
		}
		if got != want || st.Dropped != wantSt.Dropped || st.Kept != wantSt.Kept {
			t.Fatalf("limit %d, at %d, spec %d: ResultAt %q (%+v), Cut %q (%+v)", limit, at, spec, got, st, want, wantSt)
		}
	})
}

// streamCut is what a Writer fed in with limit and spec gives: Cut of the
// input with its invalid bytes replaced. It is Cut of the input itself
// except for input that fits at 3 bytes a byte, which Cut passes on unread.
func streamCut(in string, limit int, spec cut.Spec) string {
	fixed, _ := cut.ReplaceInvalid(in)
	out, _ := cut.Cut(fixed, limit, spec)
	return out
}
