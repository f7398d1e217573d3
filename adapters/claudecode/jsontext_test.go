package claudecode_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/adapters/claudecode"
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
