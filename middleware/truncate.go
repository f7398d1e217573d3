package middleware

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The marker is markerPrefix + N + markerSuffix, appended after the kept
// content. Its own bytes count against the limit.
const (
	markerPrefix = "\n[truncated: "
	markerSuffix = " bytes dropped, refine your query]"
	markerFixed  = len(markerPrefix) + len(markerSuffix)
)

// Marker returns the text Truncate appends when it drops n bytes:
// "\n[truncated: n bytes dropped, refine your query]".
func Marker(n int) string {
	return markerPrefix + strconv.Itoa(n) + markerSuffix
}

// MarkerLen returns len(Marker(n)) without building it.
func MarkerLen(n int) int {
	return markerFixed + digits(n)
}

// Truncate caps content at limit bytes, marker included.
//
// When len(content) <= limit, content is returned unchanged and dropped is 0;
// this costs O(1) and allocates nothing. Otherwise Truncate keeps the longest
// prefix content[:k] that, followed by [Marker](len(content)-k), fits in
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
// returns it unchanged. Truncation is not an error.
func Truncate(content string, limit int) (capped string, dropped int) {
	if len(content) <= limit {
		return content, 0
	}
	return cut(content, len(content), limit)
}

// cut truncates content of total bytes, of which head holds the first ones:
// at least min(total, limit+utf8.UTFMax), enough to find a character boundary
// at any cut point. It requires total > limit.
func cut(head string, total, limit int) (string, int) {
	if limit <= 0 {
		return "", total
	}
	k := cutPoint(total, limit)
	if k < 0 {
		// No room for the marker: a bare cut is the only way to stay within
		// the limit.
		k = floorCharBoundary(head, limit)
		return strings.Clone(head[:k]), total - k
	}
	k = floorCharBoundary(head, k)
	dropped := total - k

	var num [20]byte
	digitsN := strconv.AppendInt(num[:0], int64(dropped), 10)
	var b strings.Builder
	b.Grow(k + markerFixed + len(digitsN))
	b.WriteString(head[:k])
	b.WriteString(markerPrefix)
	b.Write(digitsN)
	b.WriteString(markerSuffix)
	return b.String(), dropped
}

// cutPoint returns the largest k in [0, limit) with
// k + MarkerLen(n-k) <= limit, or -1 when even k = 0 does not fit.
// It requires n > limit > 0.
//
// f(k) = k + digits(n-k) never decreases as k grows, and falls by at most 1
// when k falls by 1. So when f(k) overshoots the budget by d, no k' in
// (k-d, k] can fit, and stepping down by d never skips the answer. The loop
// runs at most once per digit of n.
func cutPoint(n, limit int) int {
	budget := limit - markerFixed
	k := budget - 1 // one digit is the fewest a marker has
	for k >= 0 {
		over := k + digits(n-k) - budget
		if over <= 0 {
			return k
		}
		k -= over
	}
	return -1
}

// floorCharBoundary returns the largest index i <= k such that content[:i]
// does not end inside a valid multi-byte UTF-8 sequence. It looks back at most
// utf8.UTFMax-1 bytes, so it is O(1); bytes that are not part of a valid
// sequence count as characters of their own. It requires 0 <= k <= len(content).
func floorCharBoundary(content string, k int) int {
	if k >= len(content) {
		return len(content)
	}
	for i := k; i >= 0 && i > k-utf8.UTFMax; i-- {
		if !utf8.RuneStart(content[i]) {
			continue
		}
		if i == k {
			return k
		}
		// content[i] starts a sequence; if it is valid and runs past k, the
		// cut at k would split it.
		r, size := utf8.DecodeRuneInString(content[i:])
		if r != utf8.RuneError || size > 1 {
			if i+size > k {
				return i
			}
		}
		return k
	}
	return k
}

// digits returns the number of decimal digits of n >= 0.
func digits(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}
