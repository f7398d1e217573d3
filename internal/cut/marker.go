package cut

import (
	"strconv"
	"unicode/utf8"
)

// The marker is markerPrefix + N + markerSuffix. Its own bytes count
// against the limit, wherever it stands.
const (
	markerPrefix = "\n[truncated: "
	markerSuffix = " bytes dropped, refine your query]"
	markerFixed  = len(markerPrefix) + len(markerSuffix)
)

// Marker returns the text a cut adds when it drops n bytes:
// "\n[truncated: n bytes dropped, refine your query]". Every strategy uses
// it; [KeepHeadTail] follows it with a newline, so that it stands on a line of
// its own.
func Marker(n int) string {
	return markerPrefix + strconv.Itoa(n) + markerSuffix
}

// MarkerLen returns len(Marker(n)) without building it.
func MarkerLen(n int) int {
	return markerFixed + digits(n)
}

func appendMarker(b []byte, n int) []byte {
	b = append(b, markerPrefix...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, markerSuffix...)
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

// FloorCharBoundary returns the largest index i <= k such that s[:i] does
// not end inside a valid multi-byte UTF-8 sequence: where a cut of s at k
// bytes may fall, as Rust's str::floor_char_boundary finds it. It looks
// back at most 3 bytes, so it is O(1); bytes that are not valid UTF-8
// count as characters of their own. A k below 0 gives 0, a k past the end
// of s gives len(s).
//
// It is the one boundary search of toolcap, exported for the front ends
// that shorten a name or a note (package shape clips names with it).
func FloorCharBoundary(s string, k int) int {
	if k <= 0 {
		return 0
	}
	return floorCharBoundary(s, k)
}

// floorCharBoundary returns the largest index i <= k such that s[:i] does
// not end inside a valid multi-byte UTF-8 sequence. It looks back at most
// utf8.UTFMax-1 bytes, so it is O(1); bytes that are not part of a valid
// sequence count as characters of their own. It requires 0 <= k; a k past
// the end of s gives len(s).
func floorCharBoundary[T string | []byte](s T, k int) int {
	if k >= len(s) {
		return len(s)
	}
	for i := k; i >= 0 && i > k-utf8.UTFMax; i-- {
		if !utf8.RuneStart(s[i]) {
			continue
		}
		if i == k {
			return k
		}
		// s[i] starts a sequence; if it is valid and runs past k, a cut at
		// k would split it.
		r, size := decodeRune(s[i:])
		if r != utf8.RuneError || size > 1 {
			if i+size > k {
				return i
			}
		}
		return k
	}
	return k
}

// ceilCharBoundary returns the smallest index i >= k such that s[i:] does
// not start inside a valid multi-byte UTF-8 sequence: the start of a tail.
// It is O(1), like floorCharBoundary.
func ceilCharBoundary[T string | []byte](s T, k int) int {
	if k <= 0 {
		return 0
	}
	if k >= len(s) {
		return len(s)
	}
	b := floorCharBoundary(s, k)
	if b == k {
		return k
	}
	// s[b:] holds a valid sequence that runs past k: start after it.
	_, size := decodeRune(s[b:])
	return b + size
}

func decodeRune[T string | []byte](s T) (rune, int) {
	// Both conversions are free for the few bytes a rune needs: the
	// compiler does not allocate for a string(b) that does not escape.
	return utf8.DecodeRuneInString(string(s[:min(len(s), utf8.UTFMax)]))
}

// MarkerLine returns [Marker](n) without its leading newline: the marker as
// a line of its own, such as the last of a list of file names cut between
// lines, or an element of its own at the end of a cut array.
func MarkerLine(n int) string {
	return Marker(n)[1:]
}

// IsMarkerLine reports whether s is a [MarkerLine].
func IsMarkerLine(s string) bool {
	if len(s) <= markerFixed-1 || s[:len(markerPrefix)-1] != markerPrefix[1:] {
		return false
	}
	head, _, ok := SplitMarker("\n" + s)
	return ok && head == ""
}
