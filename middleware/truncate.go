package middleware

import "github.com/toolcap/toolcap/internal/cut"

// Truncate caps content at limit bytes, marker included: the head rule.
//
// When len(content) <= limit and content is valid UTF-8, content is returned
// unchanged and dropped is 0; this costs O(1) and allocates nothing when
// even 3*len(content) <= limit. Otherwise Truncate keeps the longest prefix
// content[:k] that, followed by the marker for len(content)-k, fits in limit
// bytes, and returns that with dropped = len(content)-k. The cut never
// splits a multi-byte UTF-8 character. Building the result costs O(limit)
// and one allocation, whatever the length of content.
//
// Content that is not valid UTF-8 is measured and cut as the client
// decodes it: each invalid byte replaced by U+FFFD, 3 bytes, first. Such
// content may come back changed although its length is within the limit:
// Truncate("\xffabc", 4) is "\uFFFDa" with dropped 2, as a client would
// show 6 bytes.
//
// When limit is too small to hold even the marker, the content is cut to at
// most limit bytes (nothing when limit <= 0) with no marker, so the output
// never exceeds limit. Configurations validated by package manifest never get
// there.
//
// Truncate is idempotent: its output is within limit, so truncating it again
// returns it unchanged. Truncation is not an error. Other strategies (head
// and tail, JSON) and token limits are [shape.Text]'s; [Pinned] holds each
// tool to its whole policy.
func Truncate(content string, limit int) (capped string, dropped int) {
	return cut.Head(content, limit)
}
