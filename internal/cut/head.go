package cut

import (
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Head caps content at limit bytes, marker included, keeping its start: the
// rule of the head strategy, and of middleware.Truncate.
//
// When len(content) <= limit and content is valid UTF-8, it is returned
// unchanged and dropped is 0; this costs O(1) and allocates nothing when
// even 3*len(content) <= limit, and a pass over content otherwise.
// Otherwise Head keeps the longest prefix content[:k] that, followed by
// [Marker](len(content)-k), fits in limit bytes, and returns that with
// dropped = len(content)-k. The cut never splits a multi-byte UTF-8
// character. Building the result costs O(limit) and one allocation,
// whatever the length of content.
//
// Content that is not valid UTF-8 where Head reads it (all of it within the
// limit, its first limit+4 bytes otherwise) is measured and cut as the
// client decodes it, as [Cut] cuts it: each invalid byte replaced by U+FFFD
// first, dropped counting bytes of the replaced text. Such content within
// the limit may then come back replaced with dropped == 0. Bytes past that
// window are never read, and count as they are.
//
// When limit is too small to hold even the marker, the content is cut to at
// most limit bytes (nothing when limit <= 0) with no marker, so the output
// never exceeds limit. Head is idempotent: its output is within limit, so
// cutting it again returns it unchanged.
func Head(content string, limit int) (capped string, dropped int) {
	if unread(len(content), limit) {
		return content, 0
	}
	return headChecked(content, limit)
}

// headChecked is Head for content that may be invalid UTF-8.
func headChecked(content string, limit int) (string, int) {
	if !windowsValid(content, limit, Spec{}) {
		out, st := cutInvalid(content, limit, Spec{})
		return out, st.Dropped
	}
	if len(content) <= limit {
		return content, 0
	}
	return headOver(content, limit)
}

// headOver is Head for content over the limit, out of line so that Head's
// test of the common case inlines into its callers.
func headOver(content string, limit int) (string, int) {
	if limit <= 0 {
		return "", len(content)
	}
	k := headPoint(content, len(content), limit)
	dropped := len(content) - k
	if k+MarkerLen(dropped) > limit {
		return strings.Clone(content[:k]), dropped
	}
	b := make([]byte, 0, k+MarkerLen(dropped))
	b = append(b, content[:k]...)
	b = appendMarker(b, dropped)
	return unsafe.String(unsafe.SliceData(b), len(b)), dropped
}

// HeadBytes is [Head] for content of total bytes of which buf holds the
// first ones, at least min(total, limit+4) (4 is utf8.UTFMax: enough to
// find a character boundary at any cut point). It cuts buf in place and
// returns the result, which shares buf's storage, and the bytes dropped.
// It is for content too large to hold whole, such as a command's output
// read from a pipe: read its first limit+4 bytes, count the rest.
//
// Bytes of buf that are not valid UTF-8 are replaced by U+FFFD, and
// counted as such, as [Head] does (the result is then a new slice, not
// buf); bytes past buf, which HeadBytes never sees, are counted as they
// are. A caller that can read every byte, once, and wants them all counted
// as the client decodes them writes them to a [Writer].
func HeadBytes(buf []byte, total, limit int) (capped []byte, dropped int) {
	held := buf[:min(len(buf), max(total, 0))]
	valid := held
	if total > len(held) {
		// The held bytes may end inside a character the rest completes.
		valid = held[:incompleteTail(held)]
	}
	if !unread(len(held), limit) && !utf8.Valid(valid) {
		return headBytesInvalid(held, total, limit)
	}
	return headBytes(buf, total, limit)
}

// headBytesInvalid is HeadBytes for a buf that holds invalid UTF-8.
func headBytesInvalid(held []byte, total, limit int) ([]byte, int) {
	w := NewWriter(limit, Spec{})
	w.fix.Write(held, w.put)
	if unseen := total - len(held); unseen > 0 {
		// The head window is full; the rest, and what the Replacer
		// holds, are counted as they are.
		w.n += unseen + w.fix.nc
		w.fix.nc = 0
	}
	out, st := w.Result()
	return []byte(out), st.Dropped
}

// headBytes is HeadBytes for valid UTF-8.
func headBytes(buf []byte, total, limit int) (capped []byte, dropped int) {
	if total <= limit {
		return buf[:min(len(buf), total)], 0
	}
	if limit <= 0 {
		return buf[:0], total
	}
	k := headPoint(buf, total, limit)
	dropped = total - k
	if k+MarkerLen(dropped) > limit {
		return buf[:k], dropped
	}
	return appendMarker(buf[:k], dropped), dropped
}

// headPoint returns where the head rule cuts content of total > limit > 0
// bytes, of which s holds at least the first min(total, limit+4): the
// largest character boundary k with k + MarkerLen(total-k) <= limit, or,
// when the marker cannot fit, the largest boundary k <= limit (a bare cut).
func headPoint[T string | []byte](s T, total, limit int) int {
	k := markerPoint(total, limit)
	if k < 0 {
		// No room for the marker: a bare cut is the only way to stay
		// within the limit.
		return floorCharBoundary(s, limit)
	}
	return floorCharBoundary(s, k)
}

// markerPoint returns the largest k in [0, limit) with
// k + MarkerLen(n-k) <= limit, or -1 when even k = 0 does not fit. It
// requires n > limit.
//
// f(k) = k + digits(n-k) never decreases as k grows, and falls by at most 1
// when k falls by 1. So when f(k) overshoots the budget by d, no k' in
// (k-d, k] can fit, and stepping down by d never skips the answer. The loop
// runs at most once per digit of n. Moving k further down (to a character
// boundary) keeps it within the limit for the same reason.
func markerPoint(n, limit int) int {
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
