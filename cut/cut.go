package cut

import (
	"strings"
	"unsafe"
)

// Stats are the figures of one cut, in bytes of the input.
type Stats struct {
	// Original is the length of the input.
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
}

// Changed reports whether the output differs from the input: something was
// dropped, or a JSON document was compacted.
func (s Stats) Changed() bool { return s.Dropped > 0 || s.Compacted }

// Cut cuts content to at most limit bytes, marker included, with the
// strategy of spec, and returns the output and its figures.
//
// Content within the limit is returned unchanged, whatever the strategy, at
// the cost of one comparison and no allocation. Otherwise the output is at
// most limit bytes (for every int limit), never splits a UTF-8 character of
// valid input, carries one marker whose N is exactly Stats.Dropped, and is
// built in one allocation. Cutting the output again with the same spec and
// limit returns it unchanged.
//
// An invalid spec (see [Spec.Validate]) is cut as far as it makes sense: an
// unknown strategy as Head, an out-of-range TailShare as the default.
// Validate specs where they are configured, as package manifest does.
func Cut(content string, limit int, spec Spec) (string, Stats) {
	if len(content) <= limit {
		return content, Stats{Original: len(content), Kept: len(content)}
	}
	return cutOver(content, limit, spec)
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
