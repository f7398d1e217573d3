package middleware_test

import (
	"testing"
	"unicode/utf8"

	"github.com/toolcap/toolcap/middleware"
)

// FuzzTruncate checks every property of the truncation rule against the
// brute-force reference, for any bytes and any limit.
func FuzzTruncate(f *testing.F) {
	f.Add("hello, world", 5)
	f.Add("aé日😀aé日😀aé日😀aé日😀aé日😀aé日😀aé日😀aé日😀aé日😀aé日😀aé日😀aé日😀", 60)
	f.Add("\xff\xfe\x80\x80\xf0\x9f\x98", 50)
	f.Add("", -1)
	f.Fuzz(func(t *testing.T, content string, limit int) {
		capped, dropped := middleware.Truncate(content, limit)
		checkTruncation(t, content, limit, capped, dropped)
		if utf8.ValidString(content) && !utf8.ValidString(capped) {
			t.Fatalf("valid input %q gave invalid output %q", content, capped)
		}
	})
}
