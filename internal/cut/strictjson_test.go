package cut_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

// strictJSON returns what a strict decoder would refuse in b, or "": b
// must be json.Valid, and no \u escape in it may be a lone surrogate (a
// high one, \uD800-\uDBFF, not followed by a low one, \uDC00-\uDFFF, or a
// low one not preceded by a high one). encoding/json accepts lone
// surrogates and decodes them as U+FFFD; stricter decoders refuse the
// whole document, so a cut that splits a pair breaks them.
func strictJSON(b []byte) string {
	if !json.Valid(b) {
		return "not valid JSON"
	}
	inString := false
	for i := 0; i < len(b); i++ {
		switch {
		case !inString:
			inString = b[i] == '"'
		case b[i] == '"':
			inString = false
		case b[i] == '\\':
			if b[i+1] != 'u' {
				i++
				continue
			}
			r := hex4(b[i+2 : i+6])
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return fmt.Sprintf("lone low surrogate %s at offset %d", b[i:i+6], i)
			case r >= 0xD800 && r <= 0xDBFF:
				if i+12 > len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
					return fmt.Sprintf("lone high surrogate %s at offset %d", b[i:i+6], i)
				}
				if lo := hex4(b[i+8 : i+12]); lo < 0xDC00 || lo > 0xDFFF {
					return fmt.Sprintf("lone high surrogate %s at offset %d", b[i:i+6], i)
				}
				i += 11
			default:
				i += 5
			}
		}
	}
	return ""
}

// hex4 decodes the 4 hex digits of a \u escape of a valid document.
func hex4(h []byte) rune {
	v, _ := strconv.ParseUint(string(h), 16, 32)
	return rune(v)
}

// escapeJSON returns s as a JSON string token with every character
// outside printable ASCII written as a \u escape (astral characters as a
// surrogate pair) and the short escapes for quote, backslash and the
// common controls: the densest use of escapes a real encoder makes.
func escapeJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r >= 0x20 && r < 0x7F:
			b.WriteRune(r)
		case r >= 0x10000:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// cutKept returns the content a cut string token kept before its marker
// (as written, quotes excluded), or ok == false when tok has no marker.
func cutKept(tok string) (string, bool) {
	m := strings.Index(tok, `\n[truncated: `)
	if m < 0 {
		return "", false
	}
	return tok[1:m], true
}

// emojis is the case: a JSON string of n 😀, each written as the
// escaped surrogate pair \ud83d\ude00 (12 bytes).
func emojis(n int) string { return `"` + strings.Repeat(`\ud83d\ude00`, n) + `"` }

// TestJSONCutKeepsEscapesWhole cuts strings made of one kind of escape at
// every limit, with the json strategy and JSONValue: every output passes
// the strict check, and what a cut string kept is whole escapes (a
// multiple of the escape's length), both halves of a pair or neither.
func TestJSONCutKeepsEscapesWhole(t *testing.T) {
	tests := []struct {
		name string
		unit string // one escape, repeated to make the string
	}{
		{"newline", `\n`},
		{"quote", `\"`},
		{"backslash", `\\`},
		{"BMP character", `\u00e9`},
		{"surrogate pair", `\ud83d\ude00`},
		{"surrogate pair in upper case", `\uD83D\uDE00`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			str := `"` + strings.Repeat(tt.unit, 40) + `"`
			for _, doc := range []string{str, `[` + str + `]`, `{"k":` + str + `}`} {
				for limit := 2; limit <= len(doc); limit++ {
					out, st := cut.Cut(doc, limit, cut.Spec{Keep: cut.KeepJSON})
					if st.Strategy == cut.KeepJSON {
						d, _, _ := splitDocument(out, st)
						checkEscapesWhole(t, fmt.Sprintf("Cut(%s, %d)", doc[:12], limit), d, tt.unit)
					}
					if v, _, ok := cut.JSONValue([]byte(doc), limit); ok {
						checkEscapesWhole(t, fmt.Sprintf("JSONValue(%s, %d)", doc[:12], limit), string(v), tt.unit)
					}
				}
			}
		})
	}
}

// checkEscapesWhole checks one output of TestJSONCutKeepsEscapesWhole.
func checkEscapesWhole(t *testing.T, what, doc, unit string) {
	t.Helper()
	if msg := strictJSON([]byte(doc)); msg != "" {
		t.Fatalf("%s: %s\noutput %s", what, msg, doc)
	}
	i := strings.IndexByte(strings.TrimPrefix(doc, `{"k"`), '"')
	if i < 0 {
		return // the string was dropped whole
	}
	i += len(doc) - len(strings.TrimPrefix(doc, `{"k"`))
	kept, ok := cutKept(doc[i:])
	if !ok {
		return // the string was kept whole
	}
	if len(kept)%len(unit) != 0 || kept != strings.Repeat(unit, len(kept)/len(unit)) {
		t.Fatalf("%s: kept %q, not whole escapes %s", what, kept, unit)
	}
}

// TestJSONCutSurrogatePair pins the cut of the case where it used
// to fall inside a pair (limits 106 to 111 of 10 pairs kept 4 pairs and a
// lone \ud83d): the pair is dropped whole and counted in N.
func TestJSONCutSurrogatePair(t *testing.T) {
	doc := emojis(10) // 122 bytes
	tests := []struct {
		limit int
		want  string
	}{
		{limit: 105, want: `"` + strings.Repeat(`\ud83d\ude00`, 4) + `\n[truncated: 72 bytes dropped, refine your query]"`},
		{limit: 106, want: `"` + strings.Repeat(`\ud83d\ude00`, 4) + `\n[truncated: 72 bytes dropped, refine your query]"`},
		{limit: 108, want: `"` + strings.Repeat(`\ud83d\ude00`, 4) + `\n[truncated: 72 bytes dropped, refine your query]"`},
		{limit: 111, want: `"` + strings.Repeat(`\ud83d\ude00`, 4) + `\n[truncated: 72 bytes dropped, refine your query]"`},
		{limit: 112, want: `"` + strings.Repeat(`\ud83d\ude00`, 5) + `\n[truncated: 60 bytes dropped, refine your query]"`},
	}
	for _, tt := range tests {
		got, st, ok := cut.JSONValue([]byte(doc), tt.limit)
		if !ok {
			t.Fatalf("JSONValue(10 pairs, %d) not ok", tt.limit)
		}
		if diff := cmp.Diff(tt.want, string(got)); diff != "" {
			t.Errorf("JSONValue(10 pairs, %d) (-want +got):\n%s", tt.limit, diff)
		}
		if st.Kept+st.Dropped != len(doc) || st.Kept != len(got) {
			t.Errorf("JSONValue(10 pairs, %d): figures %+v for %d of %d bytes", tt.limit, st, len(got), len(doc))
		}
	}
}

// TestJSONCutEscapeEdges pins cuts next to escapes that only look like
// pairs: a lone surrogate of the input is one 6-byte escape, kept as
// written (the cut does not repair input); an escaped backslash before
// "u" is a 2-byte escape and ordinary text; a high surrogate followed by
// a BMP escape is not a pair.
func TestJSONCutEscapeEdges(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		limit int
		want  string
	}{
		{
			name:  "lone high surrogate of the input kept whole",
			doc:   `"ab\ud83dcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"`,
			limit: 60,
			want:  `"ab\ud83d\n[truncated: 60 bytes dropped, refine your query]"`,
		},
		{
			name:  "lone high surrogate of the input not split",
			doc:   `"abc\ud83dcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"`,
			limit: 60,
			want:  `"abc\n[truncated: 66 bytes dropped, refine your query]"`,
		},
		{
			name:  "escaped backslash before u is not an escape",
			doc:   `"\\ud83d\\ude00xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"`,
			limit: 60,
			want:  `"\\ud83d\n[truncated: 70 bytes dropped, refine your query]"`,
		},
		{
			name:  "high surrogate before a BMP escape is not a pair",
			doc:   `"a\ud83d\u00e9xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"`,
			limit: 60,
			want:  `"a\ud83d\n[truncated: 73 bytes dropped, refine your query]"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, ok := cut.JSONValue([]byte(tt.doc), tt.limit)
			if !ok {
				t.Fatalf("JSONValue(%s, %d) not ok", tt.doc, tt.limit)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("JSONValue(%s, %d) (-want +got):\n%s", tt.doc, tt.limit, diff)
			}
		})
	}
}

// TestJSONCutLoneSurrogateOffsets is the figure: a string of many
// escaped pairs cut at every limit (every offset within a pair, many
// times over) leaves no lone surrogate, with the json strategy, with
// JSONValue and with JSONValue inside an object, the proxy's
// structuredContent path.
func TestJSONCutLoneSurrogateOffsets(t *testing.T) {
	doc := emojis(200)
	wrapped := `{"result":` + doc + `}`
	var lone, total int
	for limit := 60; limit < len(doc); limit++ {
		outs := []string{}
		if out, st := cut.Cut(doc, limit, cut.Spec{Keep: cut.KeepJSON}); st.Strategy == cut.KeepJSON {
			d, _, _ := splitDocument(out, st)
			outs = append(outs, d)
		}
		if v, _, ok := cut.JSONValue([]byte(doc), limit); ok {
			outs = append(outs, string(v))
		}
		if v, _, ok := cut.JSONValue([]byte(wrapped), limit); ok {
			outs = append(outs, string(v))
		}
		for _, o := range outs {
			total++
			if strictJSON([]byte(o)) != "" {
				lone++
			}
		}
	}
	t.Logf("%d of %d cuts leave a lone surrogate", lone, total)
	if lone != 0 {
		t.Errorf("%d of %d cuts of a string of escaped surrogate pairs leave a lone surrogate", lone, total)
	}
}

// TestStrictJSON checks the strict check itself, so that a property built
// on it can fail.
func TestStrictJSON(t *testing.T) {
	tests := []struct {
		doc  string
		want bool // accepted
	}{
		{`"\ud83d\ude00"`, true},
		{`"\uD83D\uDE00 \u00e9 \\ud83d \" \n"`, true},
		{`["\ud83d"]`, false},
		{`"\ud83d\n"`, false},
		{`"\ud83d\u00e9"`, false},
		{`"\ude00"`, false},
		{`"\ude00\ud83d"`, false},
		{`"\\\ud83d"`, false},
		{`{"a":`, false},
	}
	for _, tt := range tests {
		if got := strictJSON([]byte(tt.doc)) == ""; got != tt.want {
			t.Errorf("strictJSON(%s) accepts %v, want %v", tt.doc, got, tt.want)
		}
	}
}

// FuzzJSONStrict cuts documents whose strings a dense escaper wrote (every
// non-ASCII character a \u escape, astral ones a surrogate pair) at every
// kind of limit, and decodes every output strictly: no lone surrogate,
// json.Valid, within the limit.
func FuzzJSONStrict(f *testing.F) {
	f.Add("😀😀😀😀😀😀😀😀😀😀😀😀", 70, uint8(0))
	f.Add("a😀b😀\"😀\\😀\n😀é😀é😀é😀é😀", 90, uint8(1))
	f.Add("ééééééééééé😀😀😀😀😀😀😀", 101, uint8(2))
	f.Fuzz(func(t *testing.T, s string, limit int, shape uint8) {
		limit %= 1024
		str := escapeJSON(s)
		var doc string
		switch shape % 3 {
		case 0:
			doc = str
		case 1:
			doc = `[` + str + `,` + str + `]`
		default:
			doc = `{"a":{"b":` + str + `},"c":[` + str + `]}`
		}
		if !utf8.ValidString(doc) || strictJSON([]byte(doc)) != "" {
			t.Fatalf("the escaper wrote a document a strict decoder refuses: %s", doc)
		}
		out, st := cut.Cut(doc, limit, cut.Spec{Keep: cut.KeepJSON})
		if st.Strategy == cut.KeepJSON && st.Changed() {
			d, _, _ := splitDocument(out, st)
			if msg := strictJSON([]byte(d)); msg != "" {
				t.Fatalf("Cut at %d: %s\noutput %s", limit, msg, out)
			}
		}
		if v, _, ok := cut.JSONValue([]byte(doc), limit); ok {
			if msg := strictJSON(v); msg != "" || len(v) > limit {
				t.Fatalf("JSONValue at %d: %d bytes, %s\noutput %s", limit, len(v), msg, v)
			}
		}
	})
}
