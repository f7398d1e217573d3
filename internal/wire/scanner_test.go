package wire_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/wire"
)

func scanner(s string, size int) *wire.Scanner {
	return wire.NewScanner(bufio.NewReaderSize(strings.NewReader(s), size))
}

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"plain"`, "plain"},
		{`"a\nb\t\"c\"\\d\/"`, "a\nb\t\"c\"\\d/"},
		{`"\u00e9\u65e5"`, "é日"},
		{`"\ud83d\ude00!"`, "😀!"},
		{`"\ud83d!"`, "\ufffd!"},
		{`"\ude00"`, "\ufffd"},
		{`"` + strings.Repeat(`x\n`, 10000) + `"`, strings.Repeat("x\n", 10000)},
	} {
		for _, size := range []int{16, 4096} { // escapes across the buffer's end, and not
			var got bytes.Buffer
			n, err := scanner(tc.in, size).String(func(b []byte) { got.Write(b) })
			if err != nil {
				t.Fatalf("String(%.40q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got.String()); diff != "" || n != int64(len(tc.want)) {
				t.Errorf("String(%.40q) size %d: n %d (-want +got):\n%s", tc.in, size, n, diff)
			}
		}
	}
}

func TestSyntaxErrors(t *testing.T) {
	for _, in := range []string{`{"a":}`, `{"a":1`, "{\"a\":\n1}", `["x",]`, `"\q"`, "\"a\x01\"", `{"a":tru}`, `-`} {
		if err := scanner(in+"\n", 4096).Skip(); err == nil {
			t.Errorf("Skip(%q) = nil, want an error", in)
		}
	}
}

// FuzzScanner checks the scanner against encoding/json: a value is read
// past (and captured byte for byte) exactly when it is valid JSON, and a
// string decodes to what encoding/json decodes it to.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":"c\n"}],"d":null}`, `"\ud83d\ude00"`, `[true,false,-1.5e3]`, `"x\u00"`} {
		f.Add(s)
	}
	// At the nesting bound and one past it, which encoding/json shares.
	f.Add(strings.Repeat("[", wire.MaxDepth) + strings.Repeat("]", wire.MaxDepth))
	f.Add(strings.Repeat("[", wire.MaxDepth+1) + strings.Repeat("]", wire.MaxDepth+1))
	f.Fuzz(func(t *testing.T, in string) {
		if strings.ContainsRune(in, '\n') {
			return // a newline ends a message
		}
		valid := json.Valid([]byte(in))
		sc := scanner(in+"\n", 16)
		raw, ok, err := sc.Capture(1 << 20)
		if err == nil {
			err = sc.EndMessage()
		}
		if valid != (err == nil) {
			t.Fatalf("json.Valid = %v, scanner error %v", valid, err)
		}
		if !valid {
			return
		}
		if !ok || string(raw) != strings.Trim(in, " \t\r") {
			t.Errorf("Capture = %q, want %q", raw, in)
		}
		var want string
		if strings.HasPrefix(strings.TrimLeft(in, " \t\r"), `"`) && json.Unmarshal([]byte(in), &want) == nil && utf8.ValidString(want) {
			var got bytes.Buffer
			if _, err := scanner(in+"\n", 16).String(func(b []byte) { got.Write(b) }); err != nil {
				t.Fatal(err)
			}
			if got.String() != want && utf8.Valid(got.Bytes()) {
				t.Errorf("String = %q, encoding/json %q", got.String(), want)
			}
		}
	})
}

// TestStringInvalidUTF8 checks that String decodes invalid UTF-8 as
// encoding/json does, each invalid byte a U+FFFD, also when a sequence is
// split across the reader's buffers, and counts the decoded bytes (issue
// 22: the proxy measures a text as the client will decode it).
func TestStringInvalidUTF8(t *testing.T) {
	for _, in := range []string{
		"\"" + strings.Repeat("\xff", 1000) + "\"",
		"\"ok \xe2\x82 \xf0\x9f\x98\x80 \xed\xa0\x80 end\xf0\x9f\"",
		"\"" + strings.Repeat("é\xff🦊\\n", 300) + "\"",
	} {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("encoding/json refuses %.40q: %v", in, err)
		}
		for _, size := range []int{16, 17, 19, 4096} {
			var got bytes.Buffer
			n, err := scanner(in, size).String(func(b []byte) { got.Write(b) })
			if err != nil {
				t.Fatalf("String(%.40q): %v", in, err)
			}
			if diff := cmp.Diff(want, got.String()); diff != "" || n != int64(len(want)) {
				t.Errorf("String(%.40q) size %d: n %d, want %d (-want +got):\n%s", in, size, n, len(want), diff)
			}
			if !utf8.Valid(got.Bytes()) {
				t.Errorf("String(%.40q) size %d: invalid UTF-8 out", in, size)
			}
		}
	}
}
