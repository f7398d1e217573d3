package cut

import (
	"encoding/binary"
	"math"
	"math/bits"
	"regexp"
	"strings"
	"unicode/utf8"
)

// A head_tail cut of content of n bytes needs only a window at each end and
// the matching lines between, so that the same code serves a string held
// whole and a stream held in bounded memory (see [Writer]). The windows are
// limit+window bytes: enough for any cut point, the byte before the tail
// (to see a line start) and a character boundary on either side.
const window = utf8.UTFMax

// view is what a head_tail cut reads of a content of n bytes.
type view struct {
	n    int
	head string // the first min(n, limit+window) bytes
	tail string // the last min(n, limit+window) bytes
	// lines are the matching lines that end past head, in order, as
	// recordLines chooses them.
	lines []line
}

// line is the line content[a:b], newline included.
type line struct {
	a, b int
	text string
}

// headOf returns content[:k], k <= len(v.head).
func (v *view) headOf(k int) string { return v.head[:k] }

// tailFrom returns content[t:], t >= n-len(v.tail).
func (v *view) tailFrom(t int) string { return v.tail[t-(v.n-len(v.tail)):] }

// windowLen is the length of each window for limit.
func windowLen(limit int) int {
	if limit > math.MaxInt-window {
		return math.MaxInt
	}
	return max(limit, 0) + window
}

// rescueRoom is the most bytes the rescued lines of one cut may take: a
// quarter of the limit, so that head and tail always keep most of it, and a
// bound a stream can apply before it knows its length.
func rescueRoom(limit int) int { return limit / 4 }

// matches reports whether a line (without its newline) matches one of res.
func matches(res []*regexp.Regexp, text string) bool {
	for _, re := range res {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

// matchesBytes is matches for a line held as bytes.
func matchesBytes(res []*regexp.Regexp, text []byte) bool {
	for _, re := range res {
		if re.Match(text) {
			return true
		}
	}
	return false
}

// lineRecorder applies the rule that decides which matching lines past the
// head window a cut may need, in the order the lines end, so that a stream
// keeps the same lines as a string held whole. A line is recorded when it
// matches and is at most rescueRoom long; recording stops for good at the
// 66th line (a cut takes at most MaxRescuedLines, and one recorded line may
// start inside the head), or at the first line that surely lies in the
// dropped middle (it ends at least a tail window before the end) and would
// take the lines of that kind past rescueRoom: a cut can take no line from
// there on. Lines whose end lies within the last tail window are pending:
// they may turn out to be part of the tail.
type lineRecorder struct {
	res     []*regexp.Regexp
	room    int // rescueRoom(limit)
	tailWin int // limit+window
	lines   []line
	sure    int // lines[:sure] lie surely in the middle
	sureLen int
	closed  bool
}

// add records a complete line [a, b), if it matches; text includes the
// newline.
func (r *lineRecorder) add(a, b int, text string) {
	if r.closed || b-a > r.room || !matches(r.res, text[:len(text)-1]) {
		return
	}
	r.keep(a, b, text)
}

// addBytes is add for a line a stream holds in a buffer it reuses: the
// line is copied only when it is recorded.
func (r *lineRecorder) addBytes(a, b int, text []byte) {
	if r.closed || b-a > r.room || !matchesBytes(r.res, text[:len(text)-1]) {
		return
	}
	r.keep(a, b, string(text))
}

// keep records the matching line [a, b).
func (r *lineRecorder) keep(a, b int, text string) {
	if len(r.lines) == MaxRescuedLines+1 {
		r.closed = true
		return
	}
	r.lines = append(r.lines, line{a, b, text})
}

// advance promotes the pending lines that end at least a tail window
// before end, the content's length so far.
func (r *lineRecorder) advance(end int) {
	for r.sure < len(r.lines) && r.lines[r.sure].b <= end-r.tailWin {
		l := r.lines[r.sure]
		if r.sureLen+l.b-l.a > r.room {
			r.lines = r.lines[:r.sure]
			r.closed = true
			return
		}
		r.sureLen += l.b - l.a
		r.sure++
	}
}

// headTailString is [Cut] with the head_tail strategy for content over
// the limit, held whole.
func headTailString(content string, limit int, spec Spec) (string, Stats) {
	v := view{n: len(content)}
	w := min(len(content), windowLen(limit))
	v.head = content[:w]
	v.tail = content[len(content)-w:]
	if len(spec.KeepLines) > 0 {
		v.lines = recordLines(content, limit, spec.KeepLines).lines
	}
	return v.cut(limit, spec, nil)
}

// recordLines applies the lineRecorder's rule, at limit, to content held
// whole. Lines that end within the head window are read from it when the
// cut is made; the others are recorded, in order, until the rule says no
// later line can be rescued (the recorder is then closed).
func recordLines(content string, limit int, res []*regexp.Regexp) lineRecorder {
	r := lineRecorder{res: res, room: rescueRoom(limit), tailWin: windowLen(limit)}
	w := min(len(content), windowLen(limit))
	for a := 0; a < len(content) && !r.closed; {
		i := indexNewline(content[a:])
		if i < 0 {
			break
		}
		b := a + i + 1
		if b > w && b-a <= r.room {
			r.add(a, b, content[a:b])
			// The whole length is known: promote at once, so that the
			// scan stops as soon as no later line can be rescued.
			r.advance(len(content))
		}
		a = b
	}
	r.advance(len(content))
	return r
}

// cut makes the head_tail cut of the content v describes; n > limit.
//
// The output is head + Marker(N) + "\n" + rescued lines + tail. The head ends
// at a line end (before the newline, which the marker's leading newline
// stands in for) when one lies in the last 10% of its budget; the tail
// starts at a line start (after the newline, which the marker's trailing
// newline stands in for) when one lies in the first 10% of the room the head
// left it. N counts every byte of content not in the head, the tail or a
// rescued line, newlines included.
//
// When buf is not nil, it holds v.head (its first len(v.head) bytes, with a
// capacity of at least limit) and may be overwritten: the output is built in
// it, after the head it already holds, so that a stream cut allocates no
// second buffer of the limit's size.
func (v *view) cut(limit int, spec Spec, buf []byte) (string, Stats) {
	n := v.n
	share := spec.tailShare()
	for d := digits(max(0, n-limit)); d <= digits(n); d++ {
		// room is what head, tail and rescued lines share when N has d
		// digits; the +1 is the newline after the marker.
		room := limit - markerFixed - d - 1
		if room < 2 {
			continue
		}
		h, t := v.split(room, share, n, 0)
		var rescued []string
		sum := 0
		if len(spec.KeepLines) > 0 {
			rescued, sum = v.rescue(h, t, limit, room, spec.KeepLines)
			if sum > 0 {
				h, t = v.split(room-sum, share, h, t)
			}
		}
		kept := h + (n - t) + sum
		dropped := n - kept
		if digits(dropped) > d {
			continue
		}
		var b []byte
		if buf != nil && cap(buf) >= kept+MarkerLen(dropped)+1 {
			// Rescued lines may lie in the head window, which the
			// marker is about to overwrite: copy them out first.
			for i, l := range rescued {
				rescued[i] = strings.Clone(l)
			}
			b = buf[:h]
		} else {
			b = make([]byte, 0, kept+MarkerLen(dropped)+1)
			b = append(b, v.headOf(h)...)
		}
		b = appendMarker(b, dropped)
		b = append(b, '\n')
		for _, l := range rescued {
			b = append(b, l...)
		}
		b = append(b, v.tailFrom(t)...)
		return bytesString(b), Stats{Original: n, Kept: kept, Dropped: dropped, Strategy: KeepHeadTail, Rescued: len(rescued)}
	}
	// No room for a marker on its own line: the head rule's cut, and the
	// figures say so.
	out, dropped := headOfView(v, limit)
	return out, Stats{Original: n, Kept: n - dropped, Dropped: dropped, Strategy: KeepHead}
}

// headOfView is Head on the content v describes.
func headOfView(v *view, limit int) (string, int) {
	b := []byte(v.head)
	out, dropped := headBytes(b, v.n, limit)
	return bytesString(out), dropped
}

// split places the head's end h and the tail's start t for room bytes
// between them, share of it for the tail, with h <= maxHead and
// t >= minTail.
//
// Candidates for h are the newlines in the last 10% of the head's budget
// (the head stops before the newline); for each, the tail gets the room
// the head left, and starts after the first newline at or after its budget's
// start, when that lies in the first 10% of it. Of the pairs where both ends
// fall on lines, the one that keeps the most bytes wins (the later head on a
// tie), so a line-structured cut fills the limit whenever the line lengths
// allow. Without such a pair, an end that found no newline is a hard cut at
// a character boundary that takes all the room the other end left.
func (v *view) split(room int, share float64, maxHead, minTail int) (h, t int) {
	n := v.n
	tb := int(float64(room) * share)
	tb = min(max(tb, 1), room-1)
	hb := room - tb
	hb = min(hb, maxHead)
	wh := hb / 10

	// lastNL is the latest head candidate, for a hard tail.
	var bestH, bestT, lastNL int
	lo0, hi0 := max(hb-wh, 0), min(hb, len(v.head)-1)
	d := n - room // a head end p leaves the tail room from d+p
	if minTail <= d+lo0 {
		// No candidate's tail is held back by minTail: the common case,
		// searched a word of candidates at a time.
		bestH, bestT, lastNL = v.nearestEnds(lo0, hi0, d, room)
	} else {
		bestH, bestT, lastNL = v.nearestEndsBytes(lo0, hi0, room, n, minTail)
	}
	if bestH >= 0 {
		return bestH, bestT
	}
	if lastNL >= 0 {
		// The head ends on a line; the tail, with no line start near its
		// budget, takes all the room left.
		return lastNL, v.hardTail(max(n-(room-lastNL), minTail))
	}
	// The head found no line end: see whether the tail alone can start on a
	// line, and give the head the rest.
	tailRoom := tb
	lo := max(n-tailRoom, minTail)
	hi := n - tailRoom + tailRoom/10
	if t = v.lineStart(lo); t <= hi && t < n {
		return v.hardHead(min(room-(n-t), maxHead)), t
	}
	h = v.hardHead(hb)
	return h, v.hardTail(max(n-(room-h), minTail))
}

// nearestEndsBytes is the search of split over the head ends p in [lo0,
// hi0], one line at a time: for each (v.head[p] is a newline), the tail gets
// room-p bytes and starts at the first line start at or after
// max(n-(room-p), minTail), when that lies in the first 10% of its room.
// It returns the pair that keeps the most bytes (bestH < 0 if none) and the
// latest candidate (-1 if none).
func (v *view) nearestEndsBytes(lo0, hi0, room, n, minTail int) (bestH, bestT, lastNL int) {
	bestH, bestT, lastNL = -1, -1, -1
	best := -1
	// From the latest head end down, so that the first pair that fills the
	// room exactly ends the search, and a tie keeps the later head.
	for end := hi0 + 1; end > lo0; {
		i := strings.LastIndexByte(v.head[lo0:end], '\n')
		if i < 0 {
			break
		}
		p := lo0 + i
		end = p
		if lastNL < 0 {
			lastNL = p
		}
		tailRoom := room - p
		lo := max(n-tailRoom, minTail)
		hi := n - tailRoom + tailRoom/10
		if t := v.lineStart(lo); t <= hi && t < n {
			if kept := p + n - t; kept > best {
				bestH, bestT, best = p, t, kept
				if kept == room {
					break
				}
			}
		}
	}
	return bestH, bestT, lastNL
}

// nearestEnds is nearestEndsBytes for minTail <= d+lo0, where d = n-room,
// with the same result, at a cost that does not grow with the number of
// lines: what made head_tail cost 1.5x head on a log of short lines was one
// LastIndexByte and one IndexByte call per candidate.
//
// Candidate p's tail starts at d+p, less its gap: the distance from
// content[d+p-1] to the next newline. The pair keeps room-gap bytes, so the
// best is the smallest gap (the latest p on a tie, 0 a fill), valid when
// the tail start lies in the first 10% of the tail's room: gap <=
// (room-p)/10. Candidates are taken 64 at a time, latest first, as a word of
// bits (bit i: v.head[lo0+i] is a newline) beside the word of the content
// 64 bytes from d+lo0-1 (bit i: content[d+lo0-1+i] is a newline), so that
// each gap is a shift and a count of trailing zeros.
func (v *view) nearestEnds(lo0, hi0, d, room int) (bestH, bestT, lastNL int) {
	bestH, bestT, lastNL = -1, -1, -1
	if hi0 < lo0 {
		return
	}
	cands := hi0 - lo0 + 1
	words := (cands + 63) / 64
	// base is the tail window's index of content[d+lo0-1]: d >= n-limit,
	// so it lies in the window, which holds the last limit+4 bytes.
	base := d + lo0 - 1 - (v.n - len(v.tail))
	// above is the index (relative to base) of the first newline past the
	// word being searched, or -1: the next newline of a candidate whose
	// word holds none after it. No valid gap reaches past the latest
	// candidate's (room-hi0)/10.
	above := -1
	if from, to := base+words*64, min(len(v.tail), base+cands+(room-hi0)/10); from < to {
		if j := strings.IndexByte(v.tail[from:to], '\n'); j >= 0 {
			above = words*64 + j
		}
	}
	tword := func(i0 int) uint64 {
		if base+i0 >= len(v.tail) {
			return 0
		}
		return newlineBits(v.tail, base+i0, min(64, len(v.tail)-(base+i0)))
	}
	bestGap := -1
	twHigh := tword(words * 64) // the newlines of the word above
	for w := words - 1; w >= 0; w-- {
		i0 := w * 64
		hw := newlineBits(v.head, lo0+i0, min(64, cands-i0))
		tw := tword(i0)
		if lastNL < 0 && hw != 0 {
			lastNL = lo0 + i0 + 63 - bits.LeadingZeros64(hw)
		}
		if bestGap >= 0 && bestGap <= 8 {
			// Only a gap below bestGap can win: keep the candidates with a
			// newline less than bestGap bytes after, a few shifts for a
			// word, so that a short best gap skips the walk below.
			var near uint64
			for k := range bestGap {
				near |= tw>>k | twHigh<<(64-k)
			}
			hw &= near
		}
		twHigh = tw
		for hw != 0 {
			b := 63 - bits.LeadingZeros64(hw)
			hw &^= 1 << b
			next := above
			if m := tw >> b; m != 0 {
				next = i0 + b + bits.TrailingZeros64(m)
			} else if next < 0 {
				continue
			}
			p := lo0 + i0 + b
			gap := next - (i0 + b)
			if gap > (room-p)/10 || (bestGap >= 0 && gap >= bestGap) {
				continue
			}
			bestGap, bestH, bestT = gap, p, d+p+gap
			if gap == 0 {
				return
			}
		}
		if tw != 0 {
			above = i0 + bits.TrailingZeros64(tw)
		}
	}
	return
}

// newlineBits returns the newlines of s[from:from+k], k <= 64, as bits:
// bit i is set when s[from+i] is a newline. It reads 8 bytes at a time.
func newlineBits(s string, from, k int) uint64 {
	const (
		ones = 0x0101010101010101
		low7 = 0x7f7f7f7f7f7f7f7f
		// gather moves bit 8j of a word to bit 56+j.
		gather = 0x0102040810204080
	)
	b := stringBytes(s[from : from+k])
	var w uint64
	i := 0
	for ; len(b) >= 8; i += 8 {
		x := binary.LittleEndian.Uint64(b) ^ ('\n' * ones)
		b = b[8:]
		// The high bit of each byte of z is set exactly when that byte
		// of x is 0: the addition carries into it from any other value.
		z := ^((x&low7 + low7) | x | low7)
		w |= ((z >> 7) * gather >> 56) << i
	}
	for j, c := range b {
		if c == '\n' {
			w |= 1 << (i + j)
		}
	}
	return w
}

// lineStart returns the first t >= lo that starts a line (content[t-1] is
// a newline), or n; lo-1 lies in the tail window.
func (v *view) lineStart(lo int) int {
	off := v.n - len(v.tail)
	i := strings.IndexByte(v.tail[lo-1-off:], '\n')
	if i < 0 {
		return v.n
	}
	return lo + i
}

// hardHead is the largest character boundary <= k.
func (v *view) hardHead(k int) int {
	return floorCharBoundary(v.head, max(0, k))
}

// hardTail is the smallest character boundary >= k in the tail window.
func (v *view) hardTail(k int) int {
	off := v.n - len(v.tail)
	return off + ceilCharBoundary(v.tail, k-off)
}

// rescue returns the lines of content[h:t] that keep_lines rescue, in
// order: matching lines at most rescueRoom(limit) long, taken in order until
// one does not fit in rescueRoom(limit) (or in the room, less two bytes for
// a head and a tail), at most MaxRescuedLines of them.
func (v *view) rescue(h, t, limit, room int, res []*regexp.Regexp) ([]string, int) {
	most := min(rescueRoom(limit), room-2)
	var out []string
	sum := 0
	take := func(a, b int, text string) bool {
		if a < h || b > t || b-a > rescueRoom(limit) {
			return true
		}
		if sum+b-a > most || len(out) == MaxRescuedLines {
			return false
		}
		out = append(out, text)
		sum += b - a
		return true
	}
	// Lines that end within the head window, read from it.
	a := 0
	for a < len(v.head) {
		i := indexNewline(v.head[a:])
		if i < 0 {
			break
		}
		b := a + i + 1
		if b > t {
			return out, sum
		}
		if b-a <= rescueRoom(limit) && matches(res, v.head[a:b-1]) && !take(a, b, v.head[a:b]) {
			return out, sum
		}
		a = b
	}
	for _, l := range v.lines {
		if l.b > t {
			break
		}
		if !take(l.a, l.b, l.text) {
			break
		}
	}
	return out, sum
}
