package middleware

import "github.com/toolcap/toolcap/cut"

// Truncate caps content at limit bytes, marker included: the head rule,
// [cut.Head].
//
// When len(content) <= limit, content is returned unchanged and dropped is 0;
// this costs O(1) and allocates nothing. Otherwise Truncate keeps the longest
// prefix content[:k] that, followed by [cut.Marker](len(content)-k), fits in
// limit bytes, and returns that with dropped = len(content)-k. The cut never
// splits a multi-byte UTF-8 character of valid input; invalid bytes are
// treated as single bytes. Building the result costs O(limit) and one
// allocation, whatever the length of content.
//
// When limit is too small to hold even the marker, the content is cut to at
// most limit bytes (nothing when limit <= 0) with no marker, so the output
// never exceeds limit. Configurations validated by package manifest never get
// there.
//
// Truncate is idempotent: its output is within limit, so truncating it again
// returns it unchanged. Truncation is not an error. Other strategies (head
// and tail, JSON) and token limits are [shape.Text]'s; [WithPolicy] gives
// the cap a tool's.
func Truncate(content string, limit int) (capped string, dropped int) {
	return cut.Head(content, limit)
}
