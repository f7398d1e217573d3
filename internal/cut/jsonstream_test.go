package cut_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

// jsonSpecs are the JSON specs the streamed cut is compared under: the
// fallback decides what an invalid document or one with no valid form
// becomes.
func jsonSpecs() []cut.Spec {
	return []cut.Spec{
		{Keep: cut.KeepJSON},
		{Keep: cut.KeepJSON, Fallback: cut.KeepHeadTail},
		{Keep: cut.KeepJSON, Fallback: cut.KeepHeadTail, KeepLines: []*regexp.Regexp{regexp.MustCompile(`error`)}},
	}
}

// randomJSON returns a JSON document that exercises what a streamed cut
// must get right where a write splits it: strings with escapes, surrogate
// pairs (and lone ones), multi-byte and invalid UTF-8, numbers of every
// form, literals, keys a pointer escapes, nesting and whitespace.
func randomJSON(rng *rand.Rand) string {
	var b strings.Builder
	ws := func() {
		// Every form a streamed Writer keeps whitespace in (see
		// jsonStream.ws): spaces, a newline and spaces or tabs as
		// encoders indent, and any other run.
		switch rng.IntN(8) {
		case 0:
			b.WriteString(" ")
		case 1:
			b.WriteString("\n  \t\r")
		case 2:
			b.WriteString("\n" + strings.Repeat(" ", rng.IntN(9)))
		case 3:
			b.WriteString("\n" + strings.Repeat("\t", rng.IntN(4)))
		case 4:
			b.WriteString(strings.Repeat(" ", rng.IntN(200)))
		}
	}
	pieces := []string{"a", "hello world ", `\n`, `\"`, `\\`, `\/`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\uDC00x`,
		"é", "😀", "\xff", "\xe2\x82", "error", strings.Repeat("x", 40), `\t\b\f\r`}
	str := func() {
		b.WriteByte('"')
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		b.WriteByte('"')
	}
	numbers := []string{"0", "-0", "7", "-12", "3.25", "-0.5e+10", "1E5", "6.02e-23", "123456789012345678901234567890", "0.0"}
	var value func(depth int)
	value = func(depth int) {
		ws()
		k := rng.IntN(10)
		if depth > 6 {
			k = rng.IntN(5)
		}
		switch k {
		case 0, 1:
			str()
		case 2:
			b.WriteString(numbers[rng.IntN(len(numbers))])
		case 3:
			b.WriteString([]string{"true", "false", "null"}[rng.IntN(3)])
		case 4:
			b.WriteString("[]")
		case 5, 6:
			b.WriteByte('[')
			for i := range rng.IntN(8) {
				if i > 0 {
					ws()
					b.WriteByte(',')
				}
				value(depth + 1)
			}
			ws()
			b.WriteByte(']')
		default:
			b.WriteByte('{')
			for i := range rng.IntN(6) {
				if i > 0 {
					b.WriteByte(',')
				}
				ws()
				if rng.IntN(4) == 0 {
					b.WriteString([]string{`"a/b"`, `"~x"`, `"k\u002f"`, `"\ud83d\ude00"`}[rng.IntN(4)])
				} else {
					fmt.Fprintf(&b, `"k%d"`, i)
				}
				ws()
				b.WriteByte(':')
				value(depth + 1)
			}
			ws()
			b.WriteByte('}')
		}
		ws()
	}
	value(0)
	return b.String()
}

// breakJSON returns doc made invalid, or most often still valid, in one of
// the ways a streamed validator could get wrong.
func breakJSON(rng *rand.Rand, doc string) string {
	i := rng.IntN(len(doc) + 1)
	switch rng.IntN(6) {
	case 0:
		return doc[:i] // cut short
	case 1:
		const bytes = "\x01 ,:]}[{\"\\0-.eE+tfnx"
		return doc[:i] + string(bytes[rng.IntN(len(bytes))]) + doc[i:]
	case 2:
		if i < len(doc) {
			return doc[:i] + doc[i+1:]
		}
	case 3:
		return doc + []string{" ", "1", "{}", ",", "\n\t"}[rng.IntN(5)]
	}
	return doc
}

// checkStreamed writes in to a Writer at limit in pieces from rng, and
// compares its ResultAt at the smaller limit at, then its Result (which
// ends it), with Cut of the whole input: output and figures.
func checkStreamed(t *testing.T, name, in string, limit, at int, spec cut.Spec, rng *rand.Rand, most int) {
	t.Helper()
	fixed, replaced := cut.ReplaceInvalid(in) // a Writer cuts the text as decoded
	w := cut.NewWriter(limit, spec)
	writeChunks(t, w, in, rng, most)
	// The head window is the input's first limit+4 bytes as written, its
	// whitespace too, whether the Writer holds it as it came or compacted
	// in its JSON stream; the bytes the Replacer still holds (the input
	// has not ended: at most 3, which may become three U+FFFD) are not in
	// it yet.
	want := fixed[:min(len(fixed), limit+4)]
	if got := w.Prefix(); !strings.HasPrefix(want, got) || len(got) < len(want)-9 {
		t.Fatalf("%s, limit %d, pieces up to %d: Prefix is not the input's first bytes (-want +got):\n%s", name, limit, most, cmp.Diff(want, got))
	}
	for i, l := range []int{at, limit} {
		if i == 0 && l < limit && !cut.RecordsAll(fixed, limit, spec) {
			// The Writer let go of lines a cut at the smaller limit may
			// rescue (see Writer.ResultAt), whatever the strategy: the
			// fallback of a streamed document is that Writer's.
			continue
		}
		want, wantSt := cut.Cut(fixed, l, spec)
		wantSt.Replaced = replaced
		var got string
		var st cut.Stats
		if i == 0 {
			got, st = w.ResultAt(l)
		} else {
			got, st = w.Result() // last: it may cut in the Writer's storage
		}
		if got != want {
			t.Fatalf("%s, limit %d of %d, pieces up to %d: Writer differs from Cut (-want +got):\n%s", name, l, limit, most, cmp.Diff(want, got))
		}
		if diff := cmp.Diff(wantSt, st); diff != "" {
			t.Fatalf("%s, limit %d of %d, pieces up to %d: figures (-want +got):\n%s", name, l, limit, most, diff)
		}
	}
}

// TestJSONWriterMatchesCut: a KeepJSON Writer cuts a document longer than
// its limit as it streams; whatever the document and however it is split,
// its output and figures are Cut's on the whole.
func TestJSONWriterMatchesCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 400 {
		doc := randomJSON(rng)
		if i%2 == 1 {
			doc = breakJSON(rng, doc)
		}
		for _, spec := range jsonSpecs() {
			for range 3 {
				limit := rng.IntN(len(doc) + 8)
				at := rng.IntN(limit + 1)
				checkStreamed(t, fmt.Sprintf("document %d (valid %v)", i, json.Valid([]byte(doc))), doc, limit, at, spec, rng, 1+rng.IntN(40))
			}
		}
	}
}

// TestJSONWriterMatchesCutLarge compares the streamed cut with Cut on real
// documents of 100 KB to several MB, documents nested as deep as
// json.Valid accepts and one level deeper, and long strings of escapes,
// at limits that cut them anywhere.
func TestJSONWriterMatchesCutLarge(t *testing.T) {
	docs := realDocuments(t)
	docs["deep arrays"] = deepArrays(maxJSONDepth)
	docs["deep objects"] = deepObjects(maxJSONDepth)
	docs["too deep"] = deepArrays(maxJSONDepth + 1)
	docs["escapes"] = `{"s":"` + strings.Repeat(`\ud83d\ude00\n\u00e9é`, 20000) + `"}`
	docs["numbers"] = "[" + strings.Repeat("-12.5e+3, 0, ", 20000) + "1]"
	// Runs of whitespace longer than a stream holds as bytes (wsRunMax),
	// in each form it keeps them in; and the same document made invalid
	// at its end, whose head window is then given back as written.
	ws := "[" + strings.Repeat(" ", 9000) + "1," + strings.Repeat("\r\n\t ", 3000) + "2," +
		strings.Repeat("\n"+strings.Repeat(" ", 5000), 3) + "3," + strings.Repeat("\n"+strings.Repeat("\t", 4500), 2) + "4]"
	docs["whitespace"] = ws
	docs["whitespace, invalid at the end"] = ws + "x"
	rng := rand.New(rand.NewPCG(7, 8))
	for name, doc := range docs {
		for _, limit := range []int{100, 65536, len(doc) / 3, len(doc) - 10} {
			// The head fallback, and head_tail with keep_lines: the
			// strategies a streamed document falls back to.
			for _, spec := range []cut.Spec{jsonSpecs()[0], jsonSpecs()[2]} {
				checkStreamed(t, name, doc, limit, limit-rng.IntN(limit/2+1), spec, rng, 1+rng.IntN(1<<16))
			}
		}
	}
}

// TestJSONWriterHoldsLimit: a KeepJSON Writer given a document tens of
// times its limit allocates memory bounded by the limit, not by the
// document, and still cuts it as Cut does.
func TestJSONWriterHoldsLimit(t *testing.T) {
	const limit = 64 << 10
	doc := packageLock(12000) // about 3 MB, within JSONMaxInput (8 MiB)
	if len(doc) < 40*limit || len(doc) > cut.JSONMaxInput(limit) {
		t.Fatalf("the document is %d bytes: want 40 times the limit, within JSONMaxInput", len(doc))
	}
	spec := cut.Spec{Keep: cut.KeepJSON}
	const piece = 32 << 10
	w := cut.NewWriter(limit, spec)
	written, _ := allocated(func() {
		for p := doc; len(p) > 0; p = p[min(piece, len(p)):] {
			_, _ = w.WriteString(p[:min(piece, len(p))])
		}
	})
	// The head window, grown by doubling to limit+16 bytes and compacted
	// there into the prefix, the whitespace it had, and the validator's
	// stack: about twice the limit (12 MB when the Writer held the
	// document within JSONMaxInput; 4 times the limit with the window and
	// the prefix apart).
	t.Logf("writing %d bytes at limit %d allocated %d bytes", len(doc), limit, written)
	if most := uint64(3 * limit); written > most {
		t.Errorf("writing %d bytes at limit %d allocated %d bytes, want at most %d", len(doc), limit, written, most)
	}
	want, wantSt := cut.Cut(doc, limit, spec)
	var got string
	var st cut.Stats
	// The cut is made in the prefix: what it allocates is its figures.
	cutBytes, _ := allocated(func() { got, st = w.Result() })
	t.Logf("the cut allocated %d bytes", cutBytes)
	if most := uint64(limit / 8); cutBytes > most {
		t.Errorf("the cut at limit %d allocated %d bytes, want at most %d", limit, cutBytes, most)
	}
	if got != want {
		t.Errorf("Writer differs from Cut (-want +got):\n%s", cmp.Diff(want, got))
	}
	if diff := cmp.Diff(wantSt, st); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
	if len(st.Levels) == 0 {
		t.Errorf("figures %+v: want a structural cut", st)
	}
}

// FuzzJSONWriter checks that a KeepJSON Writer's Result, and its ResultAt
// at a smaller limit, are Cut's of the whole input, for any input (JSON or
// not) written in random pieces.
func FuzzJSONWriter(f *testing.F) {
	f.Add(`{"a":[1,2,3,{"b":"ccccccccccccccccccccccccccccccccccccccccc"}],"d":null}`, 40, 30, uint8(0), uint64(1))
	f.Add(`[ "\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00\u00e9é\n" , -0.5e+10, true ]`, 45, 44, uint8(2), uint64(2))
	f.Add(`{"a/b": {"~": [[["xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]]], "n": 1E5}}`, 50, 20, uint8(0), uint64(3))
	f.Add(`{"s":"`+strings.Repeat("\xff", 60)+`","t":[1,2]}`, 100, 90, uint8(2), uint64(4))
	f.Add("[1, 2, 3, 01]", 5, 5, uint8(0), uint64(5))
	f.Add(`{"k": "v"} x`, 3, 3, uint8(0), uint64(6))
	f.Fuzz(func(t *testing.T, in string, limit, at int, fallback uint8, seed uint64) {
		if limit < 0 {
			limit = -limit
		}
		limit %= len(in) + 8
		if at < 0 {
			at = -at
		}
		at %= limit + 1
		specs := jsonSpecs()
		spec := specs[int(fallback)%len(specs)]
		rng := rand.New(rand.NewPCG(seed, 0))
		checkStreamed(t, "input", in, limit, at, spec, rng, 1+int(seed%64))
	})
}

// TestJSONWriterResultStaysPut: Result cuts a JSON document in the
// Writer's own storage; nothing is asked of the Writer after it, but if
// something is (Prefix, ResultAt), the string Result returned stays what
// it was, and the later answers are still right.
func TestJSONWriterResultStaysPut(t *testing.T) {
	doc := `{"a": "` + strings.Repeat("x", 200) + `", "b": [1, 2, 3]}`
	spec := cut.Spec{Keep: cut.KeepJSON}
	w := cut.NewWriter(100, spec)
	if _, err := w.WriteString(doc); err != nil {
		t.Fatal(err)
	}
	got, _ := w.Result()
	want, _ := cut.Cut(doc, 100, spec)
	kept := strings.Clone(got)
	if got != want {
		t.Fatalf("Result differs from Cut (-want +got):\n%s", cmp.Diff(want, got))
	}
	if p := w.Prefix(); p != doc[:104] {
		t.Errorf("Prefix after Result (-want +got):\n%s", cmp.Diff(doc[:104], p))
	}
	at, _ := w.ResultAt(60)
	if want60, _ := cut.Cut(doc, 60, spec); at != want60 {
		t.Errorf("ResultAt(60) after Result (-want +got):\n%s", cmp.Diff(want60, at))
	}
	if got != kept {
		t.Errorf("Result's string changed after Prefix and ResultAt (-before +after):\n%s", cmp.Diff(kept, got))
	}
}

// TestJSONWriterHoldsWhitespaceOnce: a head window that is one long run of
// whitespace is kept in its compact form, not held as bytes beside it.
func TestJSONWriterHoldsWhitespaceOnce(t *testing.T) {
	const limit = 256 << 10
	doc := "[" + strings.Repeat(" ", 4*limit) + "1]"
	spec := cut.Spec{Keep: cut.KeepJSON}
	w := cut.NewWriter(limit, spec)
	written, _ := allocated(func() {
		for p := doc; len(p) > 0; p = p[min(32<<10, len(p)):] {
			_, _ = w.WriteString(p[:min(32<<10, len(p))])
		}
	})
	// The held document, grown by doubling to limit+16 bytes: about twice
	// the limit allocated in all, the whitespace a few bytes a 4 KiB part.
	if most := uint64(5 * limit / 2); written > most {
		t.Errorf("writing %d bytes at limit %d allocated %d bytes, want at most %d", len(doc), limit, written, most)
	}
	if p, want := w.Prefix(), doc[:limit+4]; p != want {
		t.Errorf("Prefix is not the input's first bytes (-want +got):\n%.300s", cmp.Diff(want, p))
	}
	want, _ := cut.Cut(doc, limit, spec)
	if got, _ := w.Result(); got != want {
		t.Errorf("Writer differs from Cut (-want +got):\n%.300s", cmp.Diff(want, got))
	}
}
