package cut

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A Level is one container on the path from a JSON document's root to the
// point where a structural cut fell.
type Level struct {
	// Pointer is the container's JSON Pointer (RFC 6901): "" for the root,
	// "/entities" for the array under the root's "entities" member,
	// "/entities/3" for its fourth element.
	Pointer string
	// Array reports an array; otherwise it is an object.
	Array bool
	// Kept is how many of its elements (or members) the output holds,
	// whole or cut; Total is how many the input holds. "kept Kept of Total".
	Kept, Total int
}

// JSONMaxInput is the longest input the JSON strategy cuts as a document
// for a limit: 8 MiB, or 4 times the limit when that is more. Longer input
// is cut with the text strategy, by [Cut] as by a [Writer], so that both
// give the same output. The bound was the most a Writer held to make a
// structural cut; a Writer now makes it as the document streams, in memory
// bounded by the limit (see Writer), and the bound stays so that no output
// changes: a document this long is cut as text, as it always was.
func JSONMaxInput(limit int) int {
	if limit > math.MaxInt/4 {
		return math.MaxInt
	}
	return max(8<<20, 4*limit)
}

// JSONValue cuts the JSON document raw to a valid JSON document of at most
// limit bytes, with no marker: for a value whose container must stay JSON,
// such as an MCP result's structuredContent or a text block that holds a
// document, where the caller reports the cut elsewhere (st.Levels gives
// "kept K of M" for each container on the cut's path).
//
// raw that is not valid JSON gives ok == false. raw within limit is
// returned as it is (the same slice). Otherwise, when raw compacted (the
// whitespace between tokens removed) fits, that is returned with
// st.Compacted and nothing dropped. Otherwise the cut is structural,
// greedy in document order:
//
//   - an array keeps the longest prefix of whole elements that fits (when
//     not even its first element fits whole, that element is cut the same
//     way, so that a one-element array still shows something): whole rows,
//     so that a cut structuredContent stays valid for a schema that
//     requires each row's members ([Cut]'s KeepJSON, for text, also cuts
//     the first element past them that does not fit);
//   - an object keeps its members in order; the first member that does not
//     fit whole keeps its key and a cut form of its value, when one fits,
//     and the members after it are dropped;
//   - a string that does not fit keeps the longest prefix of its text (as
//     written, escapes whole, an escaped surrogate pair such as
//     \ud83d\ude00 kept or dropped as one, never splitting a UTF-8
//     character) followed by the marker inside the string,
//     `\n[truncated: N bytes dropped, refine your query]`, N counting the
//     string's bytes as written;
//   - numbers, true, false and null are whole or absent;
//   - every container open at the cut is closed, and nothing after the cut
//     is kept.
//
// The output keeps the input's key order (it is never decoded into a map),
// is json.Valid, and its figures are st.Original = len(raw), st.Kept =
// len(out), st.Dropped = len(raw) - len(out). When no valid document fits
// (limit below 2, or a root number longer than limit), ok is false.
//
// It takes time linear in len(raw) (a validation pass, then one pass that
// copies at most limit bytes) and allocates the output and the levels.
func JSONValue(raw []byte, limit int) (out []byte, st Stats, ok bool) {
	return jsonValue(raw, limit, true)
}

// jsonValue is JSONValue, keeping whole rows (elements past an array's
// first) when rows is set, or cutting the first that does not fit as [Cut]
// does otherwise.
func jsonValue(raw []byte, limit int, rows bool) (out []byte, st Stats, ok bool) {
	st = Stats{Original: len(raw)}
	if !json.Valid(raw) {
		return nil, st, false
	}
	if len(raw) <= limit {
		st.Kept = len(raw)
		return raw, st, true
	}
	r := structuralPrefix(bytesString(raw), limit, rows, nil, nil, nil)
	switch {
	case r.complete:
		st.Kept, st.Compacted, st.Strategy = len(raw), true, KeepJSON
		return r.doc, st, true
	case r.compact <= limit:
		st.Kept, st.Compacted, st.Strategy = len(raw), true, KeepJSON
		return compact(bytesString(raw), r.compact), st, true
	case r.doc == nil:
		return nil, st, false
	}
	st.Kept, st.Dropped, st.Strategy, st.Levels = len(r.doc), len(raw)-len(r.doc), KeepJSON, r.levels
	return r.doc, st, true
}

// jsonCut is Cut with the JSON strategy for content over the limit, or ok
// == false when content is not a JSON document or has no valid form that
// fits beside the marker.
func jsonCut(content string, limit int) (string, Stats, bool) {
	if !json.Valid([]byte(content)) {
		return "", Stats{}, false
	}
	return jsonCutDoc(len(content), limit,
		func(budget int, spare []byte) result {
			return structuralPrefix(content, budget, false, nil, spare, nil)
		},
		func(size int) []byte { return compact(content, size) }, nil)
}

// jsonCutDoc is jsonCut for a valid document of n bytes, given the means to
// cut it: cutTo makes its structural cut to a budget (in spare's storage
// when that is large enough: the cut it gives back), and compacted returns
// it compacted, size bytes long. A [Writer] cuts with them a compacted
// prefix it held (see jsonStream), [Cut] the whole document, so that both
// choose the budget, the marker and the figures with this one code. save,
// when not nil, is told where the marker is about to be written, as
// structuralPrefix tells it of its own writes (see jsonStream.cut).
func jsonCutDoc(n, limit int, cutTo func(budget int, spare []byte) result, compacted func(size int) []byte, save func(at, n int)) (string, Stats, bool) {
	st := Stats{Original: n, Strategy: KeepJSON}
	var spare []byte // a cut let go, whose storage the next one reuses
	for d := digits(n); d >= 1; d-- {
		budget := limit - markerFixed - d
		if budget < 2 {
			// No room for a marker: only compacting can help.
			if r := cutTo(limit, spare); r.complete {
				st.Kept, st.Compacted = n, true
				return bytesString(r.doc), st, true
			}
			return "", Stats{}, false
		}
		r := cutTo(budget, spare)
		if r.compact <= limit {
			st.Kept, st.Compacted = n, true
			if r.complete {
				return bytesString(r.doc), st, true
			}
			return bytesString(compacted(r.compact)), st, true
		}
		if r.doc == nil {
			return "", Stats{}, false
		}
		dropped := n - len(r.doc)
		if digits(dropped) < d && d > 1 && digits(max(0, n-limit)) < d {
			// N is shorter than the marker assumed: a larger budget may
			// keep a few more bytes. (Its cut takes this one's storage,
			// which has room for it: a document of up to limit bytes.)
			spare = r.doc
			continue
		}
		if digits(dropped) > d {
			// Cannot happen (N <= n); kept for safety of the limit.
			return "", Stats{}, false
		}
		if save != nil {
			save(len(r.doc), MarkerLen(dropped))
		}
		b := appendMarker(r.doc, dropped)
		st.Kept, st.Dropped, st.Levels = len(r.doc), dropped, r.levels
		return bytesString(b), st, true
	}
	return "", Stats{}, false
}

// compact returns content, a valid JSON document, without the whitespace
// between its tokens; size is the length of the result.
func compact(content string, size int) []byte {
	out := make([]byte, 0, size)
	for i := 0; i < len(content); {
		c := content[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			i++
		case '"':
			e := stringEnd(content, i)
			out = append(out, content[i:e]...)
			i = e
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

// stringEnd returns the index just after the string token that starts at
// s[i] == '"'; s is valid JSON.
func stringEnd(s string, i int) int {
	j := i + 1
	for {
		k := strings.IndexAny(s[j:], `"\`)
		if k < 0 {
			return len(s)
		}
		j += k
		if s[j] == '"' {
			return j + 1
		}
		j += 2 // an escape: the byte after the backslash is never the end
	}
}

// literalEnd returns the index just after the number, true, false or null
// that starts at s[i].
func literalEnd(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// frame is one open container of a structural cut.
type frame struct {
	array bool
	count int // elements or members complete
	total int // elements or members started
	// key is its key in its parent object, a raw string token (a slice of
	// the input, so that a frame costs no allocation), or "" in an array,
	// where index is its position.
	key     string
	index   int
	blocked bool // its current element is a later array element
	// bare: it is a later array element (a cut descends into those, see
	// structuralPrefix) that holds nothing whole yet, so that a cut does
	// not end it empty.
	bare bool
}

// result is what structural returns.
type result struct {
	// doc is the cut (or whole, when complete) compacted document, nil
	// when no valid form fits.
	doc      []byte
	complete bool
	compact  int // the length of the whole document compacted
	levels   []Level
}

// jsonTail is what structuralPrefix needs to know of a valid document
// beyond the compacted prefix of it that it reads.
type jsonTail struct {
	// compact is the length of the whole document compacted.
	compact int
	// strAt is the offset in the prefix of the string token that runs past
	// its end, if any, and strLen its whole length, quotes included (0
	// when no string does).
	strAt, strLen int
	// totals holds the Total of each container open at the end of the
	// prefix, by depth (0 the root).
	totals []int
}

// structuralPrefix makes the structural cut of s, a valid JSON document,
// to at most budget bytes (see JSONValue), in one pass. It copies tokens
// while they fit, with room kept for the closers of every open container,
// and remembers the last safe point: a length of the output at which
// closing the open containers gives a valid document that the rules allow
// (after a container's opening, after a whole element or member; with rows,
// outside any later array element; without, outside a later element that
// holds nothing whole yet). The stack at the last safe point is always a
// prefix of the current stack (a container open there cannot close without
// making a newer one), so a safe point is two integers. After the cut it
// goes on scanning, without copying, for the compacted length and the
// totals of the cut's levels.
//
// s is either a whole valid document (t nil) or the first bytes of one
// compacted, cut anywhere, and t what lies past them. Every cut it makes
// falls within budget bytes of the compacted document, so that it reads no
// further than budget+16 bytes of it: the token that crosses the budget,
// when it is a string, is cut from the text it has there (see
// appendCutString) and its length. A prefix of at least budget+16 bytes
// therefore gives the cut of the whole document, and t gives its figures.
// The cut is made in spare's storage when it has room for it and the marker
// after it.
//
// spare may be the storage of s itself, when s is compacted: the cut then
// copies each byte onto itself up to the point where it ends, and writes
// over s only what ends it (a cut string's marker and closing quote, the
// closers), each after the scan has gone past where it falls. save, when
// not nil, is told of those writes before they are made (the offset and
// length of each), so that the caller can keep what they write over and
// put it back before s is read again.
func structuralPrefix(s string, budget int, rows bool, t *jsonTail, spare []byte, save func(at, n int)) result {
	// The scan is here, not in a method, so that p is a local: growing
	// p.stack then stores to the stack, with no write barrier, which would
	// keep each array it outgrows during a GC cycle alive through it (a
	// deep document grows it often).
	p := prefixer{s: s, budget: budget, safeLen: -1}
	// Room for the marker a cut adds after the document (at most 20
	// digits), so that adding it takes no copy. A spare cut's storage had
	// that room beside a budget at most 20 bytes smaller.
	if cap(spare) >= min(len(s), max(budget, 0)) {
		p.out = spare[:0]
	} else {
		p.out = make([]byte, 0, min(len(s), max(budget, 0)+markerFixed+20))
	}
	var pre []byte     // the comma and key before a value
	expectKey := false // the next string is an object's key
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r', ',', ':':
			i++
			continue
		case ']', '}':
			p.compactN++
			if !p.cut {
				p.out = append(p.out, c)
			}
			n := len(p.stack) - 1
			if p.stack[n].bare {
				p.bare-- // an empty container, whole
			}
			if n < p.open {
				p.levels[n].Total = p.stack[n].total
				p.open = n
			}
			p.stack = p.stack[:n]
			i++
			p.valueDone()
			expectKey = len(p.stack) > 0 && !p.stack[len(p.stack)-1].array
			continue
		}
		pre = pre[:0]
		key, index, later := "", 0, false
		if n := len(p.stack); n > 0 {
			f := &p.stack[n-1]
			if f.total > 0 {
				pre = append(pre, ',')
			}
			if expectKey {
				// A key and its colon; the value follows.
				if t != nil && (t.strLen > 0 && i == t.strAt || stringEnd(s, i)+1 >= len(s)) {
					// The prefix ends in the key, its colon or before
					// the value: the member starts past the budget (see
					// structuralPrefix), so it cannot fit in any form.
					f.total++
					if !p.cut {
						p.cutAtSafe()
					}
					break
				}
				e := stringEnd(s, i)
				pre = append(pre, s[i:e]...)
				pre = append(pre, ':')
				key = s[i:e]
				for i = e; s[i] != ':'; i++ {
				}
				for i++; s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'; i++ {
				}
				c = s[i]
			} else {
				index = f.total
				later = f.count > 0
				if rows && later {
					f.blocked = true
					p.blocked++
				}
			}
			f.total++
		}
		p.compactN += len(pre)
		expectKey = false
		switch c {
		case '{', '[':
			p.compactN++
			if !p.cut {
				if p.fits(len(pre)+1, len(p.stack)+1) {
					p.out = append(p.out, pre...)
					p.out = append(p.out, c)
				} else {
					p.cutAtSafe()
				}
			}
			p.stack = append(p.stack, frame{array: c == '[', key: key, index: index, bare: later && !rows})
			if later && !rows {
				p.bare++
			}
			p.markSafe()
			expectKey = c == '{'
			i++
			continue
		case '"':
			var e int
			if t != nil && t.strLen > 0 && i == t.strAt {
				// The string runs past the prefix, past the budget.
				e = i + t.strLen
			} else {
				e = stringEnd(s, i)
			}
			p.compactN += e - i
			if !p.cut {
				switch {
				case p.fits(len(pre)+e-i, len(p.stack)):
					p.out = append(p.out, pre...)
					p.out = append(p.out, s[i:e]...)
				case p.blocked == 0:
					p.cutString(pre, i, e, later, save)
				default:
					p.cutAtSafe()
				}
			}
			i = e
		default:
			e := literalEnd(s, i)
			p.compactN += e - i
			if !p.cut {
				if p.fits(len(pre)+e-i, len(p.stack)) {
					p.out = append(p.out, pre...)
					p.out = append(p.out, s[i:e]...)
				} else {
					p.cutAtSafe()
				}
			}
			i = e
		}
		p.valueDone()
		expectKey = len(p.stack) > 0 && !p.stack[len(p.stack)-1].array
	}
	return p.finish(t, save)
}

// A prefixer is one structural cut in the making (see structuralPrefix).
// The scan that copies tokens, the cut that may fall at any token and the
// figures gathered after it all read and move the same state, so it is
// held here rather than passed between them. structuralPrefix's t and save
// are passed to the methods that use them instead: what p holds escapes
// (a method's append may store grown storage in it), and they would escape
// with it, making every caller allocate them.
type prefixer struct {
	s      string
	budget int

	out     []byte
	stack   []frame
	blocked int // frames whose current element is blocked
	bare    int // bare frames
	// safeLen and safeDepth are the last safe point: the length of out and
	// of stack there; safeLen is -1 until there is one.
	safeLen, safeDepth int
	cut                bool
	cutLen             int // the length of out at the cut; -1 when no valid form fits
	levels             []Level
	open               int // levels whose container has not closed yet
	compactN           int // the length of the document read so far, compacted
}

// fits reports whether n more bytes of output fit with room left to close
// depth containers: a cut must always be able to end in a valid document.
func (p *prefixer) fits(n, depth int) bool { return len(p.out)+n+depth <= p.budget }

// markSafe makes the output as it stands the last safe point, the one a
// token that does not fit falls back to, unless the cut is made or the
// scan is inside an element the rules forbid a cut to end in.
func (p *prefixer) markSafe() {
	if !p.cut && p.blocked == 0 && p.bare == 0 {
		p.safeLen, p.safeDepth = len(p.out), len(p.stack)
	}
}

// valueDone ends a value: the current element of the innermost frame. It
// is where a frame stops being blocked or bare, and so where the safe
// point moves.
func (p *prefixer) valueDone() {
	if len(p.stack) == 0 {
		return
	}
	f := &p.stack[len(p.stack)-1]
	f.count++
	if f.blocked {
		f.blocked = false
		p.blocked--
	}
	if p.bare > 0 {
		// A value ended inside every bare frame on the stack (each is an
		// ancestor): they all hold something whole now.
		for j := range p.stack {
			p.stack[j].bare = false
		}
		p.bare = 0
	}
	p.markSafe()
}

// cutString ends the output in a cut form of the string token s[i:e],
// after pre, or at the last safe point when none fits: a string is the one
// token a cut may end inside rather than before, so that a long text shows
// its start.
func (p *prefixer) cutString(pre []byte, i, e int, later bool, save func(at, n int)) {
	room := p.budget - len(p.out) - len(pre) - len(p.stack)
	text, n := p.s[i+1:min(e-1, len(p.s))], e-i-2
	// A later element, or one that holds nothing yet, shows some of its
	// text or is left out: a marker alone would say nothing the one after
	// the document does not.
	if k, ok := cutStringPoint(text, n, room); ok && (k > 0 || (!later && p.bare == 0)) {
		b := append(p.out, pre...)
		if save != nil {
			// The quote and the kept text are the string as written; its
			// marker and closing quote are not.
			save(len(b)+1+k, cutStringTailLen(n-k))
		}
		p.out = appendCutString(b, text, n, k)
		p.cutAt(len(p.out), len(p.stack), true)
		return
	}
	p.cutAtSafe()
}

// cutAtSafe cuts at the last safe point, for a token that neither fits nor
// can be cut itself.
func (p *prefixer) cutAtSafe() {
	if p.safeLen < 0 {
		p.cut, p.cutLen = true, -1 // no valid form fits
		return
	}
	p.cutAt(p.safeLen, p.safeDepth, false)
}

// cutAt cuts at output length length with the first depth frames open;
// inner says the innermost of them keeps its current element cut. The
// levels are taken from the stack now, as it stands at the cut; the scan
// goes on only to fill in their totals.
func (p *prefixer) cutAt(length, depth int, inner bool) {
	p.cut, p.cutLen = true, length
	levels := make([]Level, depth)
	p.levels, p.open = levels, depth
	// Each level's pointer is a prefix of the innermost one's: that is
	// built once and the levels share it, so that the cost is linear in
	// the depth, not quadratic (a document may nest 10,000 deep).
	stack := p.stack[:depth]
	full, ends := pointers(stack)
	for i := range depth {
		levels[i] = Level{Pointer: full[:ends[i]], Array: stack[i].array, Kept: stack[i].count + 1}
	}
	if depth > 0 && !inner {
		levels[depth-1].Kept = stack[depth-1].count
	}
}

// finish closes the containers open at the cut and gives the result with
// the figures the scan went on for; containers still open at the end of a
// prefix take their totals from t.
func (p *prefixer) finish(t *jsonTail, save func(at, n int)) result {
	r := result{compact: p.compactN}
	if t != nil {
		// The containers open at the end of the prefix close past it.
		for j := range p.open {
			p.levels[j].Total = t.totals[j]
		}
		r.compact = t.compact
	}
	switch {
	case !p.cut:
		r.doc, r.complete = p.out, true
	case p.cutLen >= 0:
		doc := p.out[:p.cutLen]
		if save != nil {
			save(p.cutLen, len(p.levels))
		}
		for j := len(p.levels) - 1; j >= 0; j-- {
			if p.levels[j].Array {
				doc = append(doc, ']')
			} else {
				doc = append(doc, '}')
			}
		}
		r.doc, r.levels = doc, p.levels
	}
	return r
}

// pointers returns the JSON Pointer of the innermost of frames, and for
// each frame the length of its own pointer, a prefix of that one.
func pointers(frames []frame) (string, []int) {
	ends := make([]int, len(frames))
	if len(frames) == 0 {
		return "", ends
	}
	var b []byte
	for i, f := range frames[1:] {
		b = append(b, '/')
		if f.key == "" {
			b = strconv.AppendInt(b, int64(f.index), 10)
		} else {
			b = appendKey(b, f.key)
		}
		ends[i+1] = len(b)
	}
	return bytesString(b), ends
}

// appendKey appends to b the pointer token of key, a raw string token of
// valid JSON: its text decoded as encoding/json decodes it (a lone
// surrogate escape becomes U+FFFD), then escaped as [PointerToken] says.
// It decodes in place, with no allocation, so that a path of thousands of
// escaped keys costs no more than their length.
func appendKey(b []byte, key string) []byte {
	text := key[1 : len(key)-1]
	for {
		i := strings.IndexByte(text, '\\')
		if i < 0 {
			return appendPointerToken(b, text)
		}
		b = appendPointerToken(b, text[:i])
		r, size := rune(text[i+1]), 2
		switch text[i+1] {
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			r, size = hexRune(text[i+2:i+6]), 6
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if len(text) >= i+12 && text[i+6] == '\\' && text[i+7] == 'u' {
					r2 = utf16.DecodeRune(r, hexRune(text[i+8:i+12]))
				}
				if r2 != utf8.RuneError {
					size = 12
				}
				r = r2
			}
		}
		switch r {
		case '~':
			b = append(b, "~0"...)
		case '/':
			b = append(b, "~1"...)
		default:
			b = utf8.AppendRune(b, r)
		}
		text = text[i+size:]
	}
}

// hexRune returns the code unit the 4 hex digits h (of a valid \uXXXX
// escape) encode.
func hexRune(h string) rune {
	var v rune
	for i := range len(h) {
		c := h[i] | 0x20 // lower case; digits are unchanged
		if c <= '9' {
			v = v<<4 | rune(c-'0')
		} else {
			v = v<<4 | rune(c-'a'+10)
		}
	}
	return v
}

// PointerToken escapes key for a JSON Pointer (RFC 6901): "~" becomes "~0"
// and "/" becomes "~1". It returns key itself when there is nothing to
// escape. Every package that names a JSON container by pointer uses it, so
// that the pointers of a [Level] and of its users match.
func PointerToken(key string) string {
	if !strings.ContainsAny(key, "~/") {
		return key
	}
	return bytesString(appendPointerToken(make([]byte, 0, len(key)+8), key))
}

// appendPointerToken appends key to b escaped as [PointerToken] escapes it.
func appendPointerToken(b []byte, key string) []byte {
	for {
		i := strings.IndexAny(key, "~/")
		if i < 0 {
			return append(b, key...)
		}
		b = append(b, key[:i]...)
		if key[i] == '~' {
			b = append(b, "~0"...)
		} else {
			b = append(b, "~1"...)
		}
		key = key[i+1:]
	}
}

// cutStringPoint returns how much of a string token's raw (escaped) text,
// n bytes long, a cut to at most room bytes, quotes included, keeps: the
// longest prefix of text that ends neither inside an escape (a surrogate
// pair is one, see escapeLen) nor inside a UTF-8 character, with room left
// for the marker, its newline written as the escape \n, and the closing
// quote (see appendCutString). ok is false when not even the marker fits.
// text may hold only the first min(n, room+12) bytes: the cut reads no
// further than 12 bytes (a surrogate pair's escape) past room.
func cutStringPoint(text string, n, room int) (k int, ok bool) {
	// quotes and the marker's newline escape are 3 bytes beside
	// MarkerLen(N); markerPoint keeps k + MarkerLen(n-k) within room-3.
	k = markerPoint(n, room-3)
	if k < 0 {
		return 0, false
	}
	k = floorCharBoundary(text, k)
	// Back off to the start of an escape that k would split, a surrogate
	// pair counting as one escape: a lone surrogate is valid to
	// json.Valid but refused by strict decoders. Moving k down keeps the
	// marker within room, as in Head.
	for j := 0; j < k; {
		idx := strings.IndexByte(text[j:k], '\\')
		if idx < 0 {
			break
		}
		e := j + idx
		size := escapeLen(text, e)
		if e+size > k {
			k = e
			break
		}
		j = e + size
	}
	return k, true
}

// appendCutString appends to b the string token whose raw text is text, n
// bytes long, cut to its first k bytes ([cutStringPoint]): the opening
// quote, those bytes, the marker and the closing quote.
func appendCutString(b []byte, text string, n, k int) []byte {
	b = append(b, '"')
	b = append(b, text[:k]...)
	b = append(b, `\n[truncated: `...)
	b = strconv.AppendInt(b, int64(n-k), 10)
	b = append(b, markerSuffix...)
	return append(b, '"')
}

// cutStringTailLen is how many bytes appendCutString writes after the kept
// text of a string that drops dropped bytes: its marker, the newline
// escaped, and the closing quote.
func cutStringTailLen(dropped int) int { return MarkerLen(dropped) + 2 }

// escapeLen returns the length of the escape that starts at text[e] ==
// '\\' in the content of a valid JSON string: 2 for a short escape, 6 for
// \uXXXX, and 12 for a high surrogate escape followed by a low one, the
// pair a character outside the BMP is written as, which a cut keeps
// whole or drops whole. A lone surrogate in the input is 6, as written.
func escapeLen(text string, e int) int {
	if e+1 >= len(text) || text[e+1] != 'u' {
		return 2
	}
	if e+12 <= len(text) && isSurrogate(text[e+2:e+6], 0xD800) &&
		text[e+6] == '\\' && text[e+7] == 'u' && isSurrogate(text[e+8:e+12], 0xDC00) {
		return 12
	}
	return 6
}

// isSurrogate reports whether the 4 hex digits h encode a code unit in
// [base, base+0x400): base 0xD800 for a high surrogate, 0xDC00 for a low
// one.
func isSurrogate(h string, base uint16) bool {
	var v uint16
	for i := range len(h) {
		c := h[i] | 0x20 // lower case; digits are unchanged
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint16(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint16(c-'a'+10)
		default:
			return false
		}
	}
	return v >= base && v < base+0x400
}
