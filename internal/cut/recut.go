package cut

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// SplitMarker splits a text that ends in a truncation marker ([Marker]) into
// what it kept and the count the marker gives, and reports false for a text
// that does not end in one.
func SplitMarker(text string) (head string, dropped int, ok bool) {
	const prefix = "\n[truncated: "
	i := strings.LastIndex(text, prefix)
	if i < 0 {
		return "", 0, false
	}
	rest := text[i+len(prefix):]
	j := strings.IndexByte(rest, ' ')
	if j <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest[:j])
	if err != nil || n < 0 || text[i:] != Marker(n) {
		return "", 0, false
	}
	return text[:i], n, true
}

// Recut cuts text to at most limit bytes when text may be the output of an
// earlier cut, so that the result still carries one marker, whose count
// adds what the earlier cut dropped to what this one drops: it stays the
// number of bytes of the original the model does not see.
//
// A text ending in a marker (a head cut, or a JSON document the json
// strategy cut) is cut again the same way: a document as a document, a text
// by keeping less of its head. A text with a head_tail marker between its
// head and its tail gives up room from both sides (its lines are not snapped
// again, nor are lines rescued again). Any other text is cut with spec, as
// [Cut] cuts it. Text within limit is returned unchanged.
//
// A marker that names a read of the rest ([RestMarker]) keeps naming it,
// from an offset moved back by what this cut gives up before the marker,
// so that the read never skips a byte the model has not seen.
//
// Text that is not valid UTF-8 is recut as the client decodes it: each
// invalid byte replaced by U+FFFD first (here in a copy of the whole
// text), every figure counting the replaced text. Unlike [Cut], which reads
// only the windows of a head or head_tail cut and counts the bytes past
// valid windows as they are, Recut reads the whole text, so an invalid byte
// past them counts as decoded (as a [Writer] counts it).
func Recut(text string, limit int, spec Spec) (string, Stats) {
	if unread(len(text), limit) {
		return text, Stats{Original: len(text), Kept: len(text)}
	}
	fixed, replaced := ReplaceInvalid(text)
	out, st := recutValid(fixed, limit, spec)
	st.Replaced = replaced
	return out, st
}

// recutValid is Recut for text known to be valid UTF-8.
func recutValid(text string, limit int, spec Spec) (string, Stats) {
	if len(text) <= limit {
		return text, Stats{Original: len(text), Kept: len(text)}
	}
	if out, st, ok := recutRest(text, limit, func(plain string, l int, _ string) (string, Stats) {
		return recutPlain(plain, l, spec)
	}); ok {
		return out, st
	}
	return recutPlain(text, limit, spec)
}

// recutPlain is Recut of a text whose marker names no read.
func recutPlain(text string, limit int, spec Spec) (string, Stats) {
	if len(text) <= limit {
		return text, Stats{Original: len(text), Kept: len(text)}
	}
	limit = max(limit, 0)
	head, dropped, ok := SplitMarker(text)
	if !ok {
		if out, st, ok := recutHeadTail(text, limit); ok {
			return out, st
		}
		return cutValid(text, limit, spec)
	}
	total := len(head) + dropped
	if len(head) > 0 && (head[0] == '{' || head[0] == '[') && json.Valid([]byte(head)) {
		if doc, _, ok := jsonValue([]byte(head), limit-MarkerLen(total), false); ok {
			kept := len(doc)
			return string(doc) + Marker(total-kept), Stats{Original: total, Kept: kept, Dropped: total - kept, Strategy: KeepJSON}
		}
	}
	k := limit - MarkerLen(total)
	if k < 0 {
		// No room for a marker: a bare cut, as Head makes.
		k = floorCharBoundary(text, limit)
		return strings.Clone(text[:k]), Stats{Original: total, Kept: min(k, len(head)), Dropped: total - min(k, len(head)), Strategy: KeepHead}
	}
	// k + MarkerLen(total-k) never decreases as k grows; the marker's digits
	// can shrink by a few as k grows, so try a little further.
	k = min(k, len(head))
	for k < len(head) && k+1+MarkerLen(total-k-1) <= limit {
		k++
	}
	k = floorCharBoundary(head, k)
	return head[:k] + Marker(total-k), Stats{Original: total, Kept: k, Dropped: total - k, Strategy: KeepHead}
}

// headTailMarker finds the marker a head_tail cut puts on a line of its own
// between the head and the tail.
// Compiled at its first use, not at start-up (see jsonStringMarker).
var headTailMarker = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\n\[truncated: (\d+) bytes dropped, refine your query\]\n`)
})

// recutHeadTail is Recut for a text a head_tail cut made: the head and the
// tail each give up about half of what has to go. It reports false for a
// text without such a marker, or a limit too small for the marker and a
// byte.
func recutHeadTail(text string, limit int) (string, Stats, bool) {
	m := headTailMarker().FindStringSubmatchIndex(text)
	if m == nil {
		return "", Stats{}, false
	}
	n, err := strconv.Atoi(text[m[2]:m[3]])
	if err != nil {
		return "", Stats{}, false
	}
	head, tail := text[:m[0]], text[m[1]:]
	total := len(head) + len(tail) + n
	// The marker of the whole drop on its own line: at most this long.
	room := limit - MarkerLen(total) - 1
	if room < 1 {
		return "", Stats{}, false
	}
	h := floorCharBoundary(head, min(len(head), (room+1)/2))
	t := min(len(tail), room-h)
	start := len(tail) - t
	for start < len(tail) && !utf8.RuneStart(tail[start]) {
		start++
	}
	kept := h + len(tail) - start
	out := head[:h] + Marker(total-kept) + "\n" + tail[start:]
	return out, Stats{Original: total, Kept: kept, Dropped: total - kept, Strategy: KeepHeadTail}, true
}
