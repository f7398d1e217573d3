package cut

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Unit is the unit a marker counts in.
type Unit string

// The units. The zero Unit is bytes.
const (
	UnitBytes  Unit = ""
	UnitTokens Unit = "tokens"
)

// String returns "bytes" or "tokens".
func (u Unit) String() string {
	if u == UnitBytes {
		return "bytes"
	}
	return string(u)
}

// TokenWindowBytesPerToken bounds what [CutTokens] tokenizes: an input of
// at most TokenWindow(maxTokens) bytes is tokenized whole, so that its
// marker can count in tokens exactly; a longer one is tokenized only where
// the cut falls. 32 bytes per token is eight times what prose, code, logs
// and JSON take, so no input that could fit the token limit is ever longer
// than the window.
const TokenWindowBytesPerToken = 32

// TokenWindow returns the longest input [CutTokens] tokenizes whole for a
// limit of maxTokens.
func TokenWindow(maxTokens int) int {
	if maxTokens <= 0 {
		return 0
	}
	if maxTokens > math.MaxInt/TokenWindowBytesPerToken {
		return math.MaxInt
	}
	return maxTokens * TokenWindowBytesPerToken
}

// The token marker: markerPrefix + N + tokenSuffix.
const (
	tokenSuffix = " tokens dropped, refine your query]"
	tokenFixed  = len(markerPrefix) + len(tokenSuffix)
)

// TokenMarker returns the marker of a cut that drops n tokens:
// "\n[truncated: n tokens dropped, refine your query]".
func TokenMarker(n int) string {
	return markerPrefix + strconv.Itoa(n) + tokenSuffix
}

// TokenMarkerLen returns len(TokenMarker(n)) without building it.
func TokenMarkerLen(n int) int { return tokenFixed + digits(n) }

// CutTokens cuts content so that it holds at most maxBytes bytes and at
// most maxTokens tokens as c counts them, marker included, with the
// strategy of spec; with maxTokens <= 0 or a nil c it is [Cut].
//
// Content within both limits is returned unchanged. Content of at most
// min(maxBytes, maxTokens) bytes is known to fit without being counted
// (a Counter counts at most a token per byte); other content within
// maxBytes is counted once.
//
// When the byte limit cuts (the output of Cut at maxBytes is within
// maxTokens), the output is exactly Cut's, with its byte marker. When the
// token limit cuts, the output is the longest output of spec's rule,
// within a few tokens, that the counter counts within maxTokens, and its
// marker counts tokens: [TokenMarker](N), N = Count(content) minus the
// tokens of what the output keeps (the text before the marker, plus for
// head_tail the text after its line, each counted on its own), and at
// least 1. The figures are in [Stats] (Unit UnitTokens, OriginalTokens,
// KeptTokens, DroppedTokens) beside the usual ones in bytes.
//
// Counting is bounded: only an input of at most [TokenWindow](maxTokens)
// bytes is tokenized whole. A longer input cut by its token limit is
// tokenized only where the cut falls, so its count of tokens is not known,
// and its marker counts bytes, exactly, as Cut's does; its Stats.Unit is
// bytes and its token figures are zero. Either way the marker's N is exact
// in the unit it names. A cut by tokens counts a few outputs of about the
// output's size, so it costs a few times what counting the output costs;
// [Cut] with a calibrated estimate (package tokens) costs what Cut costs.
//
// Cutting the output again with the same limits, spec and counter returns
// it unchanged.
//
// Content that is not valid UTF-8 is cut, and its tokens counted, as the
// client decodes it, as Cut does: each invalid byte replaced by U+FFFD
// first (in a copy of at most 3*[TokenWindow](maxTokens) bytes; longer
// content is replaced as a [Writer] reads it).
func CutTokens(content string, maxBytes, maxTokens int, c Counter, spec Spec) (string, Stats) {
	if maxTokens <= 0 || c == nil {
		return Cut(content, maxBytes, spec)
	}
	if DecodesAsIs(content, min(maxBytes, maxTokens)) {
		return cutTokensValid(content, maxBytes, maxTokens, c, spec)
	}
	if len(content) > TokenWindow(maxTokens) {
		// Too long to count whole, and longer still replaced: cut as a
		// stream is, byte for byte what cutTokensValid does with the
		// replaced text.
		w := NewWriter(maxBytes, spec)
		w.fix.Write(stringBytes(content), w.put)
		return w.ResultTokens(maxTokens, c)
	}
	fixed, replaced := ReplaceInvalid(content)
	out, st := cutTokensValid(fixed, maxBytes, maxTokens, c, spec)
	st.Replaced = replaced
	return out, st
}

// cutTokensValid is CutTokens for content known to be valid UTF-8.
func cutTokensValid(content string, maxBytes, maxTokens int, c Counter, spec Spec) (string, Stats) {
	n := len(content)
	if n <= maxBytes && n <= maxTokens {
		return content, Stats{Original: n, Kept: n}
	}
	t := tokenCut{n: n, maxBytes: maxBytes, maxTokens: maxTokens, c: c, spec: spec, total: -1,
		at: func(limit int) (string, Stats) { return cutValid(content, limit, spec) }}
	if n <= TokenWindow(maxTokens) {
		t.total = c.Count(content)
		if n <= maxBytes && t.total <= maxTokens {
			return content, Stats{Original: n, Kept: n}
		}
	}
	return t.cut()
}

// RecutTokens is [Recut] under a token limit as well: it cuts text, which
// may be the output of an earlier cut, to at most maxBytes bytes and
// maxTokens tokens as c counts them, so that the result still carries one
// marker. A byte marker text carries stays one in bytes, its count adding
// what this cut drops (the tokens of the original are not known). A token
// marker stays one in tokens: the tokens of the original are its N plus
// those of what the text shows, and the new N is that less the tokens of
// what the output shows ([recutTokenMarked]). A text without a marker is
// cut as [CutTokens] cuts it. With maxTokens <= 0 or a nil c it is Recut.
// Text that is not valid UTF-8 is recut with each invalid byte replaced by
// U+FFFD first, as Recut does.
func RecutTokens(text string, maxBytes, maxTokens int, c Counter, spec Spec) (string, Stats) {
	if maxTokens <= 0 || c == nil {
		return Recut(text, maxBytes, spec)
	}
	if DecodesAsIs(text, min(maxBytes, maxTokens)) {
		return recutTokensValid(text, maxBytes, maxTokens, c, spec)
	}
	fixed, replaced := ReplaceInvalid(text)
	out, st := recutTokensValid(fixed, maxBytes, maxTokens, c, spec)
	st.Replaced = replaced
	return out, st
}

// recutTokensValid is RecutTokens for text known to be valid UTF-8.
func recutTokensValid(text string, maxBytes, maxTokens int, c Counter, spec Spec) (string, Stats) {
	if len(text) > maxBytes || len(text) > maxTokens {
		if out, st, ok := recutRest(text, maxBytes, func(plain string, l int, read string) (string, Stats) {
			// The read's own tokens, and a few where it meets the marker.
			return recutTokensPlain(plain, l, maxTokens-c.Count(read)-2, c, spec)
		}); ok {
			return out, st
		}
	}
	return recutTokensPlain(text, maxBytes, maxTokens, c, spec)
}

// recutTokensPlain is RecutTokens of a text whose marker names no read.
func recutTokensPlain(text string, maxBytes, maxTokens int, c Counter, spec Spec) (string, Stats) {
	if ms := FindMarkers(text); len(ms) == 1 && ms[0].Unit == UnitTokens {
		if len(text) <= maxBytes && (len(text) <= maxTokens || c.Count(text) <= maxTokens) {
			return text, Stats{Original: len(text), Kept: len(text)}
		}
		if out, st, ok := recutTokenMarked(text, ms[0], maxBytes, maxTokens, c); ok {
			return out, st
		}
	}
	if _, _, ok := SplitMarker(text); !ok && !headTailMarker().MatchString(text) {
		return CutTokens(text, maxBytes, maxTokens, c, spec)
	}
	n := len(text)
	if n <= maxBytes && n <= maxTokens {
		return text, Stats{Original: n, Kept: n}
	}
	t := tokenCut{n: n, maxBytes: maxBytes, maxTokens: maxTokens, c: c, spec: spec, total: -1, recut: true,
		at: func(limit int) (string, Stats) { return recutValid(text, limit, spec) }}
	if n <= maxBytes {
		if t.total = c.Count(text); t.total <= maxTokens {
			return text, Stats{Original: n, Kept: n}
		}
	}
	return t.cut()
}

// tokenCut is one cut under a token limit, of content of n bytes that at
// cuts at a byte limit with the strategy's rule: a string held whole, or
// what a Writer holds of a stream.
type tokenCut struct {
	n                   int
	at                  func(limit int) (string, Stats)
	maxBytes, maxTokens int
	c                   Counter
	spec                Spec
	total               int  // Count(content), or -1 when not counted
	recut               bool // content may be a cut's output: its marker stays in bytes
}

// candidate is the output of the strategy's rule at one byte limit.
type candidate struct {
	limit int
	out   string
	st    Stats
	count int // the counter's count of out
}

// maxSteps bounds the search for the byte limit at which the output fills
// the token limit; each step counts one output.
const maxSteps = 12

func (t *tokenCut) cut() (string, Stats) {
	n := t.n
	// The byte limit first: when its cut fits the token limit, bytes cut.
	var hi candidate
	if n <= t.maxBytes && t.total >= 0 {
		// The content itself, counted already: over the token limit.
		out, _ := t.at(n) // the content itself, held whole
		hi = candidate{limit: n, out: out, st: Stats{Original: n, Kept: n}, count: t.total}
	} else {
		hi = t.eval(min(t.maxBytes, n-1, TokenWindow(t.maxTokens)), false)
		if hi.count <= t.maxTokens {
			return hi.out, hi.st
		}
	}
	// A recut keeps the byte marker it finds: the tokens of the original
	// are not known.
	swap := t.total >= 0 && !t.recut
	// Each bound is a byte limit whose output is counted: lo fits the token
	// limit, hi does not. A limit a few bytes under maxTokens fits: its
	// output is at most that long plus what a token marker may take over
	// the byte marker it replaces, and a Counter counts at most one token
	// per byte.
	lo := t.eval(max(0, min(t.maxTokens, t.maxBytes)-3), swap)
	for lo.count > t.maxTokens && lo.limit > 0 {
		// Only a Counter that breaks its contract gets here.
		lo = t.eval(lo.limit/2, swap)
	}
	slack := max(1, t.maxTokens/200)
	for range maxSteps {
		if lo.count >= t.maxTokens-slack || hi.limit-lo.limit <= 1 {
			break
		}
		// Interpolate between the bounds on tokens per byte of output,
		// aiming a little under the limit so that most steps land inside.
		aim := float64(t.maxTokens - slack/2)
		span := float64(hi.count - lo.count)
		next := lo.limit + 1
		if span > 0 {
			next = lo.limit + int((aim-float64(lo.count))/span*float64(hi.limit-lo.limit))
		}
		next = min(max(next, lo.limit+1), hi.limit-1)
		if t.maxBytes-1 < next {
			next = t.maxBytes - 1
		}
		if next <= lo.limit {
			break
		}
		c := t.eval(next, swap)
		if c.count <= t.maxTokens {
			lo = c
		} else {
			hi = c
		}
	}
	if !swap {
		return lo.out, lo.st
	}
	return t.exact(lo)
}

// eval cuts the content at a byte limit and counts the output; with swap,
// the byte marker is replaced by a token marker whose N is estimated from
// the output's count.
func (t *tokenCut) eval(limit int, swap bool) candidate {
	out, st := t.at(limit)
	if swap && st.Dropped > 0 {
		if before, after, ok := splitAt(out, st); ok {
			// N in proportion to the bytes dropped: only its digits matter
			// here, and exact gives it its true value once the limit is
			// chosen.
			est := int(float64(t.total) * float64(st.Dropped) / float64(t.n))
			out = before + TokenMarker(max(1, est)) + after
		}
	}
	return candidate{limit: limit, out: out, st: st, count: t.c.Count(out)}
}

// exact gives a candidate cut by tokens its exact marker, and steps down
// when that marker's own tokens push the output over the limit.
func (t *tokenCut) exact(c candidate) (string, Stats) {
	for range maxSteps {
		out, st, ok := t.withTokenMarker(c)
		if !ok {
			return c.out, c.st
		}
		if len(out) <= t.maxBytes && t.c.Count(out) <= t.maxTokens {
			return out, st
		}
		c = t.eval(max(0, c.limit-max(1, c.limit/100)), false)
	}
	// Unreachable for a Counter that keeps its contract: a cut to a few
	// bytes under maxTokens fits.
	out, st := t.at(max(0, min(t.maxBytes, t.maxTokens)-3))
	return out, st
}

// withTokenMarker rebuilds the cut of c (made at c.limit) with the token
// marker its exact N gives.
func (t *tokenCut) withTokenMarker(c candidate) (string, Stats, bool) {
	out, st := t.at(c.limit)
	if st.Dropped == 0 {
		return out, st, true // compacted, or cut bare: no marker to name
	}
	before, after, ok := splitAt(out, st)
	if !ok {
		return out, st, true
	}
	kept := t.c.Count(before)
	if after != "" {
		kept += t.c.Count(after[1:]) // after the marker's own newline
	}
	dropped := max(1, t.total-kept)
	st.Unit = UnitTokens
	st.OriginalTokens = t.total
	st.DroppedTokens = dropped
	st.KeptTokens = t.total - dropped
	return before + TokenMarker(dropped) + after, st, true
}

// splitAt splits the output of a cut around its byte marker: the text
// before it and the text after it (for head_tail, its line's newline and
// the rest).
func splitAt(out string, st Stats) (before, after string, ok bool) {
	m := Marker(st.Dropped)
	if st.Strategy == KeepHeadTail {
		i := strings.Index(out, m+"\n")
		if i < 0 {
			return "", "", false
		}
		return out[:i], out[i+len(m):], true
	}
	if !strings.HasSuffix(out, m) {
		return "", "", false
	}
	return out[:len(out)-len(m)], "", true
}

// recutTokenMarked cuts text, which carries one token marker m (a cut by
// tokens: the text before it, and for head_tail a newline and a tail
// after it), to maxBytes and maxTokens, keeping one token marker whose N
// stays exact by CutTokens' rule: the tokens of the original (m.N plus the
// tokens of what text shows) less the tokens of what the output shows. A
// JSON document before the marker is cut as a document ([JSONValue]);
// otherwise head and tail give up room in proportion to their lengths. ok
// is false for a text of another form (something other than a tail after
// the marker), which the caller cuts otherwise. The byte figures are of
// what text shows (the original's bytes are not known); the token figures
// are the original's.
func recutTokenMarked(text string, m Found, maxBytes, maxTokens int, c Counter) (string, Stats, bool) {
	before, after := text[:m.Start], text[m.End:]
	tail := ""
	if after != "" {
		if after[0] != '\n' {
			return "", Stats{}, false
		}
		tail = after[1:]
	}
	shown := c.Count(before)
	if tail != "" {
		shown += c.Count(tail)
	}
	total := m.N + shown
	isDoc := tail == "" && len(before) > 0 && (before[0] == '{' || before[0] == '[') && json.Valid([]byte(before))
	// build returns the output that keeps b bytes of what text shows.
	build := func(b int) (string, int, int) {
		var head, end string
		if isDoc {
			doc, _, ok := jsonValue([]byte(before), b, false)
			if !ok {
				doc = nil
			}
			head = string(doc)
		} else {
			kh := b
			if tail != "" {
				kh = int(int64(b) * int64(len(before)) / int64(len(before)+len(tail)))
			}
			kh = floorCharBoundary(before, min(kh, len(before)))
			kt := min(b-kh, len(tail))
			end = tail[ceilCharBoundary(tail, len(tail)-kt):]
			head = before[:kh]
		}
		kept := c.Count(head)
		if end != "" {
			kept += c.Count(end)
		}
		n := max(1, total-kept)
		out := head + TokenMarker(n)
		if tail != "" {
			out += "\n" + end
		}
		return out, len(head) + len(end), kept
	}
	fits := func(out string) bool { return len(out) <= maxBytes && c.Count(out) <= maxTokens }
	// The largest b whose output fits: the kept bytes only grow with b, and
	// so do, but for a digit of the marker, the output's bytes and tokens.
	lo, hi := 0, len(before)+len(tail)
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if out, _, _ := build(mid); fits(out) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	out, keptBytes, kept := build(lo)
	if !fits(out) {
		// Not even the marker alone fits: no marker, as a cut with no room
		// for one.
		return "", Stats{Original: len(text), Dropped: len(text), Strategy: KeepHead}, true
	}
	strategy := KeepHead
	switch {
	case isDoc:
		strategy = KeepJSON
	case tail != "":
		strategy = KeepHeadTail
	}
	shownBytes := len(before) + len(tail)
	return out, Stats{
		Original: shownBytes, Kept: keptBytes, Dropped: shownBytes - keptBytes, Strategy: strategy,
		Unit: UnitTokens, OriginalTokens: total, KeptTokens: kept, DroppedTokens: max(1, total-kept),
	}, true
}
