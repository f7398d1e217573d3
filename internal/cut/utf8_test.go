package cut_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

func TestReplaceInvalid(t *testing.T) {
	tests := []struct {
		name, in, want string
		replaced       int
	}{
		{"empty", "", "", 0},
		{"valid", "héllo 🦊", "héllo 🦊", 0},
		{"one byte", "\xff", "\uFFFD", 1},
		{"each byte of a run", "a\xff\xfeb", "a\uFFFD\uFFFDb", 2},
		// Each byte of a sequence cut short is its own U+FFFD, as
		// encoding/json and a range loop decode it.
		{"sequence cut short", "x\xe2\x82", "x\uFFFD\uFFFD", 2},
		{"surrogate encoded", "\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD", 3},
		{"U+FFFD itself", "\uFFFD", "\uFFFD", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := cut.ReplaceInvalid(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ReplaceInvalid(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			if n != tt.replaced {
				t.Errorf("ReplaceInvalid(%q) replaced %d, want %d", tt.in, n, tt.replaced)
			}
			// The rule is Go's decoding of a string, byte by byte.
			if decoded := string([]rune(tt.in)); got != decoded {
				t.Errorf("ReplaceInvalid(%q) = %q, []rune decodes %q", tt.in, got, decoded)
			}
		})
	}
}

// TestReplacerPieces checks that a Replacer fed any split of a text gives
// what ReplaceInvalid gives for the whole: a sequence split across writes
// is held, not replaced.
func TestReplacerPieces(t *testing.T) {
	inputs := []string{
		"héllo wörld 🦊🐕 敏捷的",
		"a\xff\xfeb\xe2\x82c\xf0\x9f\x98",
		strings.Repeat("é\xff🦊", 50),
		"\xf0\x9f\x98\x80\xf0\x9f\x98",
	}
	for _, in := range inputs {
		want, wantN := cut.ReplaceInvalid(in)
		for split := 0; split <= len(in); split++ {
			for split2 := split; split2 <= len(in); split2++ {
				var r cut.Replacer
				var got []byte
				emit := func(b []byte) { got = append(got, b...) }
				r.Write([]byte(in[:split]), emit)
				r.Write([]byte(in[split:split2]), emit)
				r.Write([]byte(in[split2:]), emit)
				r.Flush(emit)
				if string(got) != want || r.Replaced() != wantN {
					t.Fatalf("%q split at %d, %d: %q (%d replaced), want %q (%d)", in, split, split2, got, r.Replaced(), want, wantN)
				}
			}
		}
	}
}

// TestCutInvalidUTF8 is issue 22's first case and its neighbours: the limit
// holds in UTF-8 bytes of what the client decodes, and the figures count
// that text, whatever the strategy.
func TestCutInvalidUTF8(t *testing.T) {
	type want struct {
		Out                             string
		Original, Kept, Dropped, Replac int
	}
	ff := strings.Repeat("\xff", 100_000)
	// 5,443 U+FFFD, 16,329 bytes, before a 53-byte marker: 16,382 bytes.
	repl := strings.Repeat("\uFFFD", 5443)
	tests := []struct {
		name  string
		in    string
		limit int
		spec  cut.Spec
		want  want
	}{
		{
			name: "100,000 0xFF at 16,384", in: ff, limit: 16384,
			want: want{Out: repl + cut.Marker(300_000-16_329), Original: 300_000, Kept: 16_329, Dropped: 300_000 - 16_329, Replac: 100_000},
		},
		{
			name: "within the limit, replaced to fit", in: "ok\xff", limit: 8,
			want: want{Out: "ok\uFFFD", Original: 5, Kept: 5, Replac: 1},
		},
		{
			name: "within the limit by bytes, over it decoded", in: strings.Repeat("\xff", 40), limit: 100,
			// 100 - 49 bytes of marker: 17 U+FFFD.
			want: want{Out: strings.Repeat("\uFFFD", 17) + cut.Marker(69), Original: 120, Kept: 51, Dropped: 69, Replac: 40},
		},
		{
			name: "mixed valid and invalid", in: strings.Repeat("é\xffa", 40), limit: 80,
			// "é\xffa" decodes to 6 bytes; 80-50 = 30 bytes of head.
			want: want{Out: strings.Repeat("é\uFFFDa", 5) + cut.Marker(210), Original: 240, Kept: 30, Dropped: 210, Replac: 40},
		},
		{
			name: "invalid byte at the cut point", in: strings.Repeat("a", 29) + "\xff" + strings.Repeat("b", 100), limit: 80,
			// The U+FFFD would end at byte 32, past the head's 30: it is
			// dropped whole, never split.
			want: want{Out: strings.Repeat("a", 29) + cut.Marker(103), Original: 132, Kept: 29, Dropped: 103, Replac: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, st := cut.Cut(tt.in, tt.limit, tt.spec)
			got := want{Out: out, Original: st.Original, Kept: st.Kept, Dropped: st.Dropped, Replac: st.Replaced}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Cut mismatch (-want +got):\n%s", diff)
			}
			if len(out) > tt.limit || !utf8.ValidString(out) {
				t.Errorf("Cut gave %d bytes at limit %d, valid UTF-8 %v", len(out), tt.limit, utf8.ValidString(out))
			}
			head, dropped := cut.Head(tt.in, tt.limit)
			if head != out || dropped != st.Dropped {
				t.Errorf("Head = %.80q, %d; Cut = %.80q, %d", head, dropped, out, st.Dropped)
			}
		})
	}
}

// TestCutInvalidUTF8Strategies checks every strategy, the token cut, the
// recut and a Writer fed in pieces (so that sequences split across writes)
// on invalid input: within the limit as decoded, valid UTF-8, figures that
// add up in the decoded measure.
func TestCutInvalidUTF8Strategies(t *testing.T) {
	inputs := map[string]string{
		"all 0xFF":   strings.Repeat("\xff", 100_000),
		"mixed":      strings.Repeat("line é\xff\xfe ok\nFAIL \xe2\x82 🦊\n", 2000),
		"json":       `{"a":"` + strings.Repeat("x\xffé", 3000) + `","b":[1,2,3]}`,
		"split seqs": strings.Repeat("🦊", 5000) + "\xf0\x9f",
	}
	specs := map[string]cut.Spec{
		"head":      {},
		"head_tail": {Keep: cut.KeepHeadTail, KeepLines: fuzzKeep},
		"json":      {Keep: cut.KeepJSON},
	}
	for iname, in := range inputs {
		fixed, replaced := cut.ReplaceInvalid(in)
		for sname, spec := range specs {
			for _, limit := range []int{100, 1000, 16384, len(in) + 10} {
				out, st := cut.Cut(in, limit, spec)
				wantOut, wantSt := cut.Cut(fixed, limit, spec)
				wantSt.Replaced = replaced
				// A head cut never reads past its window: the 2 invalid
				// bytes at the end of "split seqs" count as they are.
				unseen := iname == "split seqs" && sname == "head" && limit < len(in)
				if unseen {
					_, wantSt = cut.Cut(in[:len(in)-2], limit, spec)
					wantSt.Original, wantSt.Dropped = len(in), wantSt.Dropped+2
					wantOut, _ = cut.Cut(in[:len(in)-2]+"xx", limit, spec) // the marker counts the 2
				}
				if out != wantOut {
					t.Errorf("%s, %s, %d: Cut differs from Cut of the replaced text", iname, sname, limit)
				}
				if diff := cmp.Diff(wantSt, st); diff != "" {
					t.Errorf("%s, %s, %d: Stats mismatch (-want +got):\n%s", iname, sname, limit, diff)
				}
				if len(out) > limit || !utf8.ValidString(out) || (!unseen && st.Kept+st.Dropped != len(fixed)) {
					t.Errorf("%s, %s, %d: %d bytes, valid %v, figures %+v for %d decoded bytes", iname, sname, limit, len(out), utf8.ValidString(out), st, len(fixed))
				}
				if unseen {
					continue // the Writer reads every byte, and counts these as decoded
				}
				w := cut.NewWriter(limit, spec)
				rng := rand.New(rand.NewPCG(uint64(limit), 7))
				for rest := in; len(rest) > 0; {
					n := min(len(rest), 1+rng.IntN(9))
					_, _ = w.WriteString(rest[:n])
					rest = rest[n:]
				}
				if wout, wst := w.Result(); wout != out || wst.Replaced != replaced || wst.Dropped != st.Dropped {
					t.Errorf("%s, %s, %d: Writer %.60q (%+v), Cut %.60q", iname, sname, limit, wout, wst, out)
				}
				rout, rst := cut.Recut(in, limit, spec)
				if len(rout) > limit || !utf8.ValidString(rout) || rst.Replaced != replaced {
					t.Errorf("%s, %s, %d: Recut %d bytes, valid %v, %+v", iname, sname, limit, len(rout), utf8.ValidString(rout), rst)
				}
				tout, tst := cut.CutTokens(in, limit, limit/2, byteCounter{}, spec)
				if len(tout) > limit || !utf8.ValidString(tout) || tst.Replaced != replaced {
					t.Errorf("%s, %s, %d: CutTokens %d bytes, valid %v, %+v", iname, sname, limit, len(tout), utf8.ValidString(tout), tst)
				}
			}
		}
	}
}

// byteCounter counts a token per 2 bytes: a Counter simple enough to see.
type byteCounter struct{}

func (byteCounter) Count(s string) int { return (len(s) + 1) / 2 }

// TestHeadBytesInvalid checks HeadBytes on a buffer that holds invalid
// UTF-8: the bytes it holds are replaced and counted decoded, the bytes
// past it as they are.
func TestHeadBytesInvalid(t *testing.T) {
	tests := []struct {
		name         string
		buf          string
		total, limit int
		want         string
		wantDropped  int
	}{
		{"whole, fits decoded", "ab\xff", 3, 8, "ab\uFFFD", 0},
		{"whole, over decoded", strings.Repeat("\xff", 30), 30, 60, strings.Repeat("\uFFFD", 3) + cut.Marker(81), 81},
		{"head of a longer text", strings.Repeat("\xff", 64), 1000, 60, strings.Repeat("\uFFFD", 3) + cut.Marker(3*64-9+1000-64), 3*64 - 9 + 1000 - 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, dropped := cut.HeadBytes([]byte(tt.buf), tt.total, tt.limit)
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("HeadBytes mismatch (-want +got):\n%s", diff)
			}
			if dropped != tt.wantDropped {
				t.Errorf("HeadBytes dropped %d, want %d", dropped, tt.wantDropped)
			}
		})
	}
}

// TestValidUTF8NoAllocs checks that valid UTF-8 costs no allocation more
// than before issue 22: none when it fits, one for a cut.
func TestValidUTF8NoAllocs(t *testing.T) {
	fits := strings.Repeat("é", 4000) // 8,000 bytes: over a third of the limit
	over := strings.Repeat("é", 40000)
	if n := testing.AllocsPerRun(20, func() { cut.Cut(fits, 16384, cut.Spec{}) }); n != 0 {
		t.Errorf("Cut of valid text within the limit: %v allocations, want 0", n)
	}
	if n := testing.AllocsPerRun(20, func() { cut.Head(over, 16384) }); n != 1 {
		t.Errorf("Head of valid text over the limit: %v allocations, want 1", n)
	}
	w := cut.NewWriter(16384, cut.Spec{})
	p := []byte(over)
	if n := testing.AllocsPerRun(20, func() { _, _ = w.Write(p[1:4097]) }); n != 0 {
		t.Errorf("Writer.Write of valid text split inside characters: %v allocations, want 0", n)
	}
}
