package mcpproxy_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/mcpproxy"
)

// The proxy writes a text it cut as encoding/json (and so the MCP SDKs)
// would, byte for byte: its own writer streams a text of many megabytes
// without a copy of it encoded, and must not change a byte of what a
// client reads or of what the tests of the relay compare.
func TestJSONTextAsEncodingJSON(t *testing.T) {
	var every strings.Builder
	for c := range 256 {
		every.WriteByte(byte(c)) // every byte: controls, HTML characters, invalid UTF-8
	}
	for _, tc := range []struct {
		name string
		s    string
	}{
		{"empty", ""},
		{"plain", "plain text, nothing to escape"},
		{"every byte", every.String()},
		{"escapes", "\"quoted\" back\\slash\ttab\nnewline\r\b\f\x00\x1f\x7f"},
		{"html", "<b>&amp;</b> a/b"},
		{"line separators", "a\u2028b\u2029c"},
		{"multi-byte", "é 日本 ✓ 😀 \ufffd"},
		{"invalid UTF-8", "a\xffb\xc3(c\xe2\x82d\xf0\x9f\x98"},
		{"a truncated character at the end", "end\xe6\x97"},
		{"surrogate halves", "\xed\xa0\x80\xed\xbf\xbf"},
		{"long", strings.Repeat("line \"quoted\" \\ é 日本\tend\n", 10_000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(tc.s)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), mcpproxy.JSONText(tc.s)); diff != "" {
				t.Errorf("JSONText(%.40q) (-want +got):\n%s", tc.s, diff)
			}
		})
	}
}

func FuzzJSONText(f *testing.F) {
	f.Add("a\u2028<b>\xff\"\\\n")
	f.Add(string(utf8.AppendRune(nil, utf8.MaxRune)))
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := mcpproxy.JSONText(s); got != string(want) {
			t.Errorf("JSONText(%q) = %s, want %s", s, got, want)
		}
	})
}
