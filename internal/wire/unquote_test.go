package wire_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/wire"
)

// stringSeeds are JSON strings, with what follows them, that hold every
// kind of unit at every place in a word: escapes, surrogate pairs whole,
// split and alone, invalid UTF-8 and sequences cut short, control bytes,
// and strings that are not JSON.
var stringSeeds = []string{
	`""`, `"plain"`, `"a\nb\tc\r\"d\\e\/f\bg\fh"`, `"\u00e9\u4e2d\u2713"`, `"\ud83d\ude00!"`,
	`"\ud83d"`, `"\ude00x"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, `"\ud83dx\ude00"`, `"\ud83d\u"`,
	"\"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\"", "\"bad \xff byte\"", "\"cut \xe2\x82\"", "\"cut \xf0\x9f\x98\"",
	"\"\xed\xa0\x80 \xc0\xaf\"", `"\u12"`, `"\uZZZZ"`, `"\x"`, "\"tab\there\"", `"end\"`, `"a\\"x`,
	"\"0123456789abcde\x1f0123\"", "\"01234567\x7f89abcdef\x80\"", `"0123456789abcdefg\\0123\u00e9"`,
	`"` + strings.Repeat(`x\n`, 3000) + `"`, `"` + strings.Repeat("日本\\\"", 2000) + `"`,
}

// decoded is what a decoder made of a string: its text (none when it was
// an error), whether it was an error, and where the string ended (the
// index past its quote, -1 for none found).
type decoded struct {
	text string
	bad  bool
	end  int
}

// unquoted decodes the string that starts data in memory: its end found
// by StringEnd, its bytes by Unquote.
func unquoted(data []byte) decoded {
	end, _ := wire.StringEnd(data[1:], 0)
	if end < 0 {
		return decoded{end: -1}
	}
	s, err := wire.Unquote(data[:end+2])
	if err != nil {
		return decoded{bad: true, end: end + 2}
	}
	return decoded{s, false, end + 2}
}

// inPieces decodes it with a StringDecoder, handed data in pieces of the
// given sizes, in turn, buffering at most buf bytes.
func inPieces(data []byte, sizes []int, buf int) decoded {
	var out []byte
	d := wire.NewStringDecoder(func(p []byte) { out = append(out, p...) }, buf)
	for k, off := 0, 1; off < len(data); k++ {
		piece := data[off:min(off+max(sizes[k%len(sizes)], 1), len(data))]
		if end := d.Write(piece); end >= 0 {
			d.Flush()
			if d.Err() != nil {
				return decoded{bad: true, end: off + end + 1} // a text undefined
			}
			return decoded{string(out), false, off + end + 1}
		}
		off += len(piece)
	}
	return decoded{end: -1}
}

// checkDecoders holds the decoders to each other on data, which starts
// with a quote: the in-memory decoding and the one in pieces find the
// same end and decode the same text (or fail both); where the string
// ends there, encoding/json decodes it alike, and so does the Scanner.
func checkDecoders(t *testing.T, data []byte, sizes []int) {
	t.Helper()
	whole := unquoted(data)
	for _, buf := range []int{1, 7, 1 << 16} {
		if got := inPieces(data, sizes, buf); got != whole {
			t.Fatalf("%q in pieces of %v, buffer %d: %+v; whole %+v", data, sizes, buf, got, whole)
		}
	}
	if whole.end < 0 {
		return
	}
	raw := data[:whole.end]
	var want string
	if err := json.Unmarshal(raw, &want); (err != nil) != whole.bad || err == nil && want != whole.text {
		t.Fatalf("%q: Unquote %+v, encoding/json %q, %v", raw, whole, want, err)
	}
	if whole.bad && !errors.Is(wireErr(raw), wire.ErrNotString) {
		t.Errorf("%q: the error does not wrap ErrNotString", raw)
	}
	if bytes.IndexByte(raw, '\n') >= 0 {
		return // the Scanner reads a line
	}
	var got bytes.Buffer
	_, err := scanner(string(raw)+"\n", 16).String(func(b []byte) { got.Write(b) })
	if (err != nil) != whole.bad || err == nil && got.String() != whole.text {
		t.Errorf("%q: Scanner.String %q, %v; Unquote %+v", raw, got.String(), err, whole)
	}
}

func wireErr(raw []byte) error {
	_, err := wire.Unquote(raw)
	return err
}

func TestStringDecoders(t *testing.T) {
	for _, s := range stringSeeds {
		for _, sizes := range [][]int{{1}, {2}, {3}, {5, 1}, {7, 13}, {1 << 20}} {
			checkDecoders(t, []byte(s+`,"next":"\"1"`), sizes)
		}
	}
}

// FuzzStringDecoders: whatever the bytes, the three decoders and
// encoding/json agree.
func FuzzStringDecoders(f *testing.F) {
	for _, s := range stringSeeds {
		if len(s) > 100 {
			continue // a long seed slows every run down
		}
		f.Add([]byte(s+`,"x":1`), uint8(1), uint8(5))
		f.Add([]byte(s), uint8(7), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, a, b uint8) {
		if len(data) == 0 || data[0] != '"' {
			return
		}
		checkDecoders(t, data, []int{int(a), int(b)})
	})
}

// UnquoteTo decodes into dst when the string fits in it as written, and
// says how much of it it used; a string that does not fit goes elsewhere,
// and dst is not written past the string's length.
func TestUnquoteTo(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
		dst       int
		used      int
	}{
		{`"a\nb"`, "a\nb", 16, 3},
		{`"plain"`, "plain", 16, 5},
		{`"plain"`, "plain", 2, 0},
		{`"a\u00e9"`, "aé", 7, 3},
		{`"a\u00e9"`, "aé", 6, 0},
		{"\"\xff\xff\"", "\ufffd\ufffd", 16, 0}, // longer decoded than written
	} {
		dst := bytes.Repeat([]byte{'#'}, tc.dst)
		s, used, err := wire.UnquoteTo(dst, []byte(tc.raw))
		if err != nil || s != tc.want || used != tc.used {
			t.Errorf("UnquoteTo(%d bytes, %q) = %q, %d, %v; want %q, %d", tc.dst, tc.raw, s, used, err, tc.want, tc.used)
		}
		if n := len(tc.raw) - 2; n < tc.dst && strings.Trim(string(dst[n:]), "#") != "" {
			t.Errorf("UnquoteTo(%d bytes, %q) wrote past the string's length: %q", tc.dst, tc.raw, dst)
		}
	}
	for _, raw := range []string{``, `"`, `x`, `"a"b`, `"a`} {
		if _, err := wire.Unquote([]byte(raw)); !errors.Is(err, wire.ErrNotString) {
			t.Errorf("Unquote(%q) = %v, want ErrNotString", raw, err)
		}
	}
}

// BenchmarkUnquote times the hook's decoding of a text of 1 MiB, held
// (Unquote) and in pieces of 64 KiB (StringDecoder): lines with an
// escaped newline every 16 bytes, and the fault server's mixed text.
func BenchmarkUnquote(b *testing.B) {
	for _, tc := range []struct{ name, text string }{
		{"lines", `"` + strings.Repeat(`0123456789abcde\n`, 1<<16) + `"`},
		{"mixed", mixedText(b, 1<<20)},
	} {
		raw := []byte(tc.text)
		b.Run("Unquote/"+tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := wire.Unquote(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Pieces/"+tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				d := wire.NewStringDecoder(func(p []byte) { n += len(p) }, 64<<10)
				for off := 1; off < len(raw); off += 64 << 10 {
					if d.Write(raw[off:min(off+64<<10, len(raw))]) >= 0 {
						d.Flush()
					}
				}
				if d.Err() != nil || n != d.Len() {
					b.Fatalf("decoded %d bytes, error %v", n, d.Err())
				}
			}
		})
	}
}
