package cut

import (
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Stats are the figures of one cut, in bytes of the input as the cut read
// it. For valid UTF-8 (nearly every text) that is simply bytes of the
// input. A head or head_tail cut (without KeepLines) over the limit reads
// only the windows it can show, the first limit+4 bytes and for head_tail
// the last ones: when they are valid UTF-8, the bytes past them count as
// they are, invalid or not, and are never read. Content with an invalid
// byte in a window, and content a cut reads whole (json, KeepLines, or
// within limit+4), is read whole: each byte of it that is not valid UTF-8
// counts as the 3 bytes of the U+FFFD that replaces it (see Replaced), as
// the client decodes it. Content short enough to fit even at 3 bytes a
// byte is returned unread, its figures its length.
type Stats struct {
	// Original is the length of the input (once invalid bytes are
	// replaced).
	Original int
	// Kept is how much of the input the output shows: Original - Dropped.
	// For a JSON document that was compacted, whitespace between tokens
	// counts as shown; for a structural cut, Kept is the length of the
	// output's document part (see [JSONValue]).
	Kept int
	// Dropped is the number the marker reports: the bytes of the input the
	// output does not show. 0 when the input was returned unchanged or only
	// compacted.
	Dropped int
	// Strategy is the strategy that made the output: the spec's, or for
	// JSON that could not be cut as JSON its Fallback. Empty when the input
	// fitted and was returned unchanged.
	Strategy Keep
	// Compacted reports that the output is the input JSON document with
	// the whitespace between its tokens removed.
	Compacted bool
	// Rescued is the number of lines keep_lines rescued from the dropped
	// middle.
	Rescued int
	// Levels describes a structural JSON cut: the containers on the path
	// from the document's root to the point where the cut fell, outermost
	// first, each with how many of its elements or members the output
	// keeps. Nil for any other cut.
	Levels []Level

	// Unit is the unit of the marker's N: bytes (the zero Unit), or for a
	// cut [CutTokens] made by its token limit, [UnitTokens].
	Unit Unit
	// OriginalTokens, KeptTokens and DroppedTokens are the figures in
	// tokens of a cut whose marker counts tokens: the count of the input,
	// of what the output keeps, and N, OriginalTokens - KeptTokens. Zero
	// for a cut whose marker counts bytes.
	OriginalTokens, KeptTokens, DroppedTokens int

	// Replaced is the number of bytes of the input that the cut read and
	// found not valid UTF-8: each was replaced by U+FFFD before the cut, as
	// a client's decoder replaces it, so that the output is valid UTF-8 and
	// within the limit as the client reads it. The other figures then count
	// the replaced text. Invalid bytes past the windows of a head or
	// head_tail cut whose windows are valid are not read, so not counted
	// here (see Stats).
	Replaced int
}

// Changed reports whether the output differs from the input: something was
// dropped, a JSON document was compacted, or invalid UTF-8 was replaced.
func (s Stats) Changed() bool { return s.Dropped > 0 || s.Compacted || s.Replaced > 0 }

// Cut cuts content to at most limit bytes, marker included, with the
// strategy of spec, and returns the output and its figures.
//
// The limit holds in what the client decodes: bytes that are not valid
// UTF-8 in what the cut reads are replaced by U+FFFD (3 bytes each) before
// the text is measured. A head or head_tail cut reads only the windows it
// can show when they are valid, and counts the bytes past them as they
// are; otherwise the content is read whole and the figures count the
// replaced text (see [Stats]). An output that differs from the input is
// valid UTF-8.
//
// Content within the limit is returned unchanged, whatever the strategy:
// at the cost of one comparison and no allocation when even 3 bytes for
// each of its bytes fit (it is then returned as it is, invalid bytes
// included: decoded, it still fits), and otherwise of a pass over it to see
// that it is valid UTF-8. Otherwise the output is at most limit bytes (for every int
// limit), never splits a UTF-8 character, carries one marker whose N is
// exactly Stats.Dropped, and is built in one allocation (for invalid
// input, in memory bounded by the limit, as a [Writer] builds it). Cutting
// the output again with the same spec and limit returns it unchanged.
//
// An invalid spec (see [Spec.Validate]) is cut as far as it makes sense: an
// unknown strategy as Head, an out-of-range TailShare as the default.
// Validate specs where they are configured, as package manifest does.
func Cut(content string, limit int, spec Spec) (string, Stats) {
	if unread(len(content), limit) {
		return content, Stats{Original: len(content), Kept: len(content)}
	}
	return cutChecked(content, limit, spec)
}

// cutChecked is Cut for content that may be invalid UTF-8.
func cutChecked(content string, limit int, spec Spec) (string, Stats) {
	if !windowsValid(content, limit, spec) {
		return cutInvalid(content, limit, spec)
	}
	return cutValid(content, limit, spec)
}

// windowsValid reports whether the parts of content that a cut to limit
// with spec can show are valid UTF-8: all of content within the limit;
// over it, the first limit bytes, and for HeadTail the last limit bytes
// too. A cut of content whose windows are valid measures its input as it
// is and reads nothing else, so that it costs O(limit) however long the
// input: the bytes it never reads count as they are, which for valid
// UTF-8 (nearly every text) is what the client decodes. Content with an
// invalid byte in a window is read whole by a [Writer], which counts every
// byte as decoded. JSON and HeadTail with KeepLines read the whole input
// anyway, so they check it whole.
func windowsValid(content string, limit int, spec Spec) bool {
	if limit <= 0 || len(content) <= limit || spec.keep() == KeepJSON || len(spec.KeepLines) > 0 {
		return utf8.ValidString(content)
	}
	// A window reaches UTFMax bytes past the limit: a character cut short
	// at its edge then starts past what a cut can show, and is set aside.
	n := limit + utf8.UTFMax
	if n >= len(content) {
		return utf8.ValidString(content)
	}
	if !validWindow(content[:n], false) {
		return false
	}
	if spec.keep() == KeepHeadTail || spec.text() == KeepHeadTail {
		return validWindow(content[len(content)-n:], true)
	}
	return true
}

// validWindow reports whether w, a window of a longer text, is valid UTF-8
// once the character its end (or, with atEnd, its start) cuts through is
// set aside: up to 3 bytes, never part of what a cut shows.
func validWindow(w string, atEnd bool) bool {
	if atEnd {
		// w[0] each time: the loop shortens w as it goes.
		for i := 0; i < utf8.UTFMax-1 && len(w) > 0 && !utf8.RuneStart(w[0]); i++ {
			w = w[1:]
		}
		return utf8.ValidString(w)
	}
	return utf8.ValidString(w[:incompleteTail(stringBytes(w))])
}

// cutValid is Cut for content known to be valid UTF-8.
func cutValid(content string, limit int, spec Spec) (string, Stats) {
	if len(content) <= limit {
		return content, Stats{Original: len(content), Kept: len(content)}
	}
	return cutOver(content, limit, spec)
}

// cutInvalid is Cut for content that is not valid UTF-8: a Writer replaces
// its invalid bytes as it reads it and cuts the replaced text, in memory
// bounded by the limit however long content is.
func cutInvalid(content string, limit int, spec Spec) (string, Stats) {
	w := NewWriter(limit, spec)
	w.fix.Write(stringBytes(content), w.put)
	return w.Result()
}

// cutOver is Cut for content over the limit.
func cutOver(content string, limit int, spec Spec) (string, Stats) {
	if limit <= 0 {
		return "", Stats{Original: len(content), Dropped: len(content), Strategy: spec.text()}
	}
	switch spec.keep() {
	case KeepHeadTail:
		return headTailString(content, limit, spec)
	case KeepJSON:
		if len(content) <= JSONMaxInput(limit) {
			if out, st, ok := jsonCut(content, limit); ok {
				return out, st
			}
		}
		return cutText(content, limit, spec)
	}
	return headStats(content, limit)
}

// cutText cuts content over the limit with spec's text strategy.
func cutText(content string, limit int, spec Spec) (string, Stats) {
	if spec.text() == KeepHeadTail {
		return headTailString(content, limit, spec)
	}
	return headStats(content, limit)
}

func headStats(content string, limit int) (string, Stats) {
	out, dropped := Head(content, limit)
	return out, Stats{Original: len(content), Kept: len(content) - dropped, Dropped: dropped, Strategy: KeepHead}
}

// bytesString returns b as a string without a copy; b is not written again.
func bytesString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func indexNewline(s string) int { return strings.IndexByte(s, '\n') }
