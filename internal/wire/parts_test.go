package wire_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/wire"
)

// split cuts s into parts of size bytes (the last shorter), as a copy in
// chunks holds a message.
func split(s string, size int) [][]byte {
	var parts [][]byte
	for len(s) > 0 {
		n := min(size, len(s))
		parts = append(parts, []byte(s[:n]))
		s = s[n:]
	}
	return parts
}

// stringOf is what String hands on for the string at the start of s,
// however s ends.
func stringOf(s string) string {
	var got strings.Builder
	_, _ = scanner(s, 16).String(func(b []byte) { got.Write(b) })
	return got.String()
}

// partsOf is what DecodeParts hands on for the string at offset at of s,
// held in parts of size bytes.
func partsOf(s string, at int64, size int) string {
	var got strings.Builder
	wire.DecodeParts(split(s, size), at, func(b []byte) { got.Write(b) })
	return got.String()
}

// DecodeParts decodes the copy of a string as String decoded it when it
// was read, to its end or to wherever the copy ends, however it is cut
// into parts: the relay decodes a text again from the copy it held (issue
// 23), and the text must be the one it counted.
func TestDecodePartsAsString(t *testing.T) {
	written, _ := teeText(40_000)
	for _, tc := range []struct {
		name, in string
	}{
		{"plain", `"plain"`},
		{"simple escapes", `"a\nb\t\"c\"\\d\/\b\f\r"`},
		{"u escapes", `"\u00e9\u65e5\u2713 x"`},
		{"a surrogate pair", `"a\ud83d\ude00b"`},
		{"a lone high surrogate", `"a\ud83dxyzabcdef"`},
		{"a lone low surrogate", `"a\ude00b"`},
		{"a high surrogate before a non-surrogate", `"\ud83d\u0041z"`},
		{"two high surrogates", `"\ud83d\ud83d\ude00"`},
		{"a high surrogate at the end", `"\ud83d"`},
		{"a high surrogate and a quote", `"\ud83d\""`},
		{"multi-byte characters", `"é日本😀"`},
		{"members after it", `"ab\n",  "x": "y"}`},
		{"long runs", written},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, size := range []int{1, 2, 3, 5, 7, 13, 4096, 5000, len(tc.in)} {
				// Cut at every point, as the copy is when a result is
				// found over its limit part way through its text.
				step := max(1, len(tc.in)/300)
				for k := 1; k <= len(tc.in); k += step {
					in := tc.in[:k]
					if !utf8.ValidString(in) {
						// Inside a character: String replaces what it
						// holds of it at the end, which a relay cutting
						// a copy never counted (it was not handed on).
						continue
					}
					if diff := cmp.Diff(stringOf(in), partsOf(in, 0, size)); diff != "" {
						t.Fatalf("the first %d bytes in parts of %d (-String +DecodeParts):\n%s", k, size, diff)
					}
				}
				// From an offset past the start of the message.
				in := `{"text":` + tc.in
				if diff := cmp.Diff(stringOf(tc.in), partsOf(in, 8, size)); diff != "" {
					t.Fatalf("%.40q at offset 8 in parts of %d (-String +DecodeParts):\n%s", tc.in, size, diff)
				}
			}
		})
	}
}

// An offset past the parts, or not at a string, hands on nothing.
func TestDecodePartsNoString(t *testing.T) {
	for _, at := range []int64{1, 5, 100} {
		if got := partsOf(`"abc"`, at, 2); got != "" {
			t.Errorf("at %d: got %q, want nothing", at, got)
		}
	}
}

func FuzzDecodeParts(f *testing.F) {
	f.Add(`"a\ud83d\ude00b\n\u00e9"`, 3, 10)
	f.Add(`"\ud83d\ud83d\ude00"`, 1, 7)
	f.Add(`"x\u12"`, 2, 6)
	f.Fuzz(func(t *testing.T, in string, size, k int) {
		if !strings.HasPrefix(in, `"`) || size <= 0 || k < 0 || k > len(in) || !utf8.ValidString(in[:k]) {
			// DecodeParts starts at the quote, and passes invalid UTF-8 on as
			// it is (String replaces it).
			return
		}
		in = in[:k]
		if diff := cmp.Diff(stringOf(in), partsOf(in, 0, size)); diff != "" {
			t.Fatalf("%q in parts of %d (-String +DecodeParts):\n%s", in, size, diff)
		}
	})
}
