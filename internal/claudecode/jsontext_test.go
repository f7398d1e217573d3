package claudecode_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/claudecode"
)

// unquoteSeeds are JSON strings with every escape, surrogate pairs whole,
// split and alone, invalid UTF-8, and strings that are not JSON strings.
var unquoteSeeds = []string{
	`""`, `"plain"`, `"a\nb\tc\r\"d\\e\/f\bg\fh"`, `"\u00e9\u4e2d"`, `"h\u00e9llo w\u00f6rld"`,
	`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00x"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, `"\ud83dx\ude00"`,
	"\"caf\xc3\xa9\"", "\"bad \xff byte\"", "\"cut \xe2\x82\"", `"\u12"`, `"\uZZZZ"`, `"\x"`, `"a"b"`,
	"\"tab\there\"", `"end\"`, `"`, `x`, `"unterminated`, `"a\\"`,
	// Longer than the eight bytes plainRun looks at at once, with the
	// byte that ends a run at each place in a word.
	`"0123456789abcdef\"0123456789\u00e9abcdef"`, "\"0123456789abcdef\u00e90123456789\"",
	"\"0123456789abcde\x1f0123456789\"", `"0123456789abcdefg\\0123456789"`, "\"0123456789a\"bcdef\"",
	"\"01234567\x7f89abcdef\x80\"",
}

// TestUnquote holds unquote to encoding/json on each seed: the same text,
// or an error both ways.
func TestUnquote(t *testing.T) {
	for _, raw := range unquoteSeeds {
		t.Run(raw, func(t *testing.T) { checkUnquote(t, []byte(raw)) })
	}
}

// FuzzUnquote holds unquote to encoding/json on any input.
func FuzzUnquote(f *testing.F) {
	for _, raw := range unquoteSeeds {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkUnquote(t, raw) })
}

func checkUnquote(t *testing.T, raw []byte) {
	t.Helper()
	if len(bytes.TrimSpace(raw)) != len(raw) {
		return // unquote takes the string's bytes alone, as a split gives them
	}
	var want string
	wantErr := json.Unmarshal(raw, &want)
	if wantErr == nil && (len(raw) == 0 || raw[0] != '"') {
		return // null decodes to "" without an error: not a string
	}
	got, err := claudecode.Unquote(raw)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("Unquote(%q) error = %v, encoding/json's = %v", raw, err, wantErr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Unquote(%q) mismatch (-want +got):\n%s", raw, diff)
	}
}

// The streaming decoder decodes a string handed to it in pieces of any
// sizes as unquote decodes it whole, and finds its end where the split of
// a payload in memory finds it.
func FuzzDecodeInPieces(f *testing.F) {
	for _, raw := range unquoteSeeds {
		f.Add([]byte(raw+`,"next":1`), uint8(1), uint8(5))
		f.Add([]byte(raw), uint8(7), uint8(3))
	}
	f.Add([]byte(`"\ud83d\ude00\ud83d\ude00\\\\\"\u00e9"x`), uint8(2), uint8(11))
	f.Fuzz(func(t *testing.T, data []byte, a, b uint8) { checkDecodeInPieces(t, data, []int{int(a), int(b)}) })
}

func TestDecodeInPieces(t *testing.T) {
	for _, raw := range unquoteSeeds {
		for _, sizes := range [][]int{{1}, {2}, {3}, {5, 1}, {7, 13}, {1 << 20}} {
			checkDecodeInPieces(t, []byte(raw+`,"next":"\"1"`), sizes)
		}
	}
}

func checkDecodeInPieces(t *testing.T, data []byte, sizes []int) {
	t.Helper()
	got, end, err := claudecode.DecodeInPieces(data, sizes)
	_, heldEnd, _, heldErr := claudecode.SkipStreamed(data, len(data))
	stringEnd := -1
	if len(data) > 0 && data[0] == '"' && (heldErr == nil || heldEnd > 0) {
		stringEnd = heldEnd
	}
	if heldErr != nil {
		stringEnd = -1
	}
	if end != stringEnd {
		if len(data) > 0 && data[0] == '"' {
			t.Fatalf("DecodeInPieces(%q, %v) ends at %d, the split at %d (%v)", data, sizes, end, heldEnd, heldErr)
		}
		return
	}
	if end < 0 {
		return
	}
	want, wantErr := claudecode.Unquote(data[:end])
	if (err != nil) != (wantErr != nil) || err == nil && got != want {
		t.Fatalf("DecodeInPieces(%q, %v) = %q, %v; unquote = %q, %v", data, sizes, got, err, want, wantErr)
	}
}

// The streaming reader finds the end of a value, read in pieces of any
// size, where skipValue finds it in a payload in memory, or fails where it
// fails.
func FuzzSkipStreamed(f *testing.F) {
	for _, seed := range []string{
		`"a\"b"`, `{"a":[1,2,{"b":"]}"}]}`, `[1,2]]`, `{]`, `123`, `-0.5e+10,`, `01`, `1.e5`, `true}`, `tru`, `nul`,
		`nullx`, `{"a":"\\"}`, `"\\\\"x`, `{"a":tru{e}}`, `[`, `"abc`, ` 1`, `"` + string(rune(0x80)) + `"`,
	} {
		f.Add([]byte(seed), uint8(1))
		f.Add([]byte(seed), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, size uint8) {
		streamed, held, streamedErr, heldErr := claudecode.SkipStreamed(data, int(size))
		if (streamedErr != nil) != (heldErr != nil) || heldErr == nil && streamed != held {
			t.Fatalf("SkipStreamed(%q, %d) = %d, %v; skipValue = %d, %v", data, size, streamed, streamedErr, held, heldErr)
		}
	})
}
