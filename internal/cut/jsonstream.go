package cut

import (
	"encoding/binary"
	"math"
)

// maxJSONDepth is the deepest nesting json.Valid accepts (encoding/json's
// maxNestingDepth): a deeper document is not valid JSON to it, so not to a
// jsonStream either.
const maxJSONDepth = 10000

// jsonPrefixSlack is how far past a cut's budget structuralPrefix may read
// the compacted document: a string cut reads up to 12 bytes past it.
const jsonPrefixSlack = 16

// The states of a jsonStream: what the next byte may be.
const (
	jsValue      = iota // a value (at the start, after a colon, after a comma in an array)
	jsValueOrEnd        // after '[': a value or ']'
	jsKeyOrEnd          // after '{': a key or '}'
	jsKey               // after a comma in an object: a key
	jsColon             // after a key
	jsAfter             // after a value in a container: a comma or its closer
	jsEnd               // after the root value: whitespace only
	jsString            // in a string
	jsEscape            // after a backslash in a string
	jsHex               // in the 4 hex digits of \uXXXX
	jsMinus             // after a number's '-'
	jsZero              // after a number's leading 0
	jsInt               // in a number's integer digits
	jsDot               // after a number's '.'
	jsFrac              // in a number's fraction digits
	jsExp               // after a number's 'e' or 'E'
	jsExpSign           // after the exponent's sign
	jsExpDigits         // in the exponent's digits
	jsLiteral           // in true, false or null
)

// jsFrame is one open container of a jsonStream.
type jsFrame struct {
	array bool
	total int // elements or members started
}

// jsonStream cuts a JSON document as it is written, holding memory bounded
// by the limit whatever the document's length: it validates it as
// json.Valid does (the same documents accepted, the nesting bound
// included), and keeps its compacted form (the whitespace between tokens
// removed) as far as limit+jsonPrefixSlack bytes, with what a structural
// cut needs to know of the rest (see jsonTail). Every cut [Cut] makes of
// the document at a limit no larger is made from that prefix (see
// structuralPrefix): the same output, byte for byte, and the same figures.
type jsonStream struct {
	max    int    // the most bytes of the compacted document held
	prefix []byte // the compacted document's first min(n, max) bytes
	n      int    // the compacted document's length so far
	bad    bool   // not valid JSON

	state int
	stack []jsFrame
	inKey bool   // the string being read is a key
	hex   int    // hex digits left in \uXXXX
	lit   string // the rest of the literal being read

	// low is the number of containers at the bottom of the stack that
	// opened within the prefix; totals[i] is the final total of the i-th
	// of them that closed past it.
	low    int
	totals []int
	// strOpen is the offset of the string being read; strAt and strLen
	// are those of the string that crossed the end of the prefix.
	strOpen, strAt, strLen int

	// undo holds what a cut made in the prefix's own storage wrote over
	// (see cut), to be put back before the prefix is read again; given
	// says that cut was handed out (the Writer's Result), so that the
	// storage is its string's, and is copied before anything is put back.
	undo  []jsUndo
	given bool

	// The document as written, whitespace included, can be given back
	// from the prefix (appendRaw) as far as rawMax bytes: raw is how many
	// bytes the stream has read; ws holds the whitespace it dropped from
	// the first rawMax of them, in runs (see appendRun), but for the run
	// being read, which is run, at the compacted offset runAt. lastAt is
	// the compacted offset of the last run in ws.
	raw, rawMax   int
	ws, run       []byte
	runAt, lastAt int
}

// The forms of a run of whitespace in jsonStream.ws: each run is its
// distance from the run before it (its compacted offset less that run's,
// a uvarint), then n<<2|form (a uvarint), for n spaces (wsSpaces), a
// newline and n spaces (wsLineSpaces), a newline and n tabs (wsLineTabs),
// or the n bytes that follow (wsBytes). A document indented by an encoder
// costs about two bytes a line.
const (
	wsBytes = iota
	wsSpaces
	wsLineSpaces
	wsLineTabs
)

// jsUndo is bytes of a jsonStream's prefix, from at on, that a cut made in
// place wrote over.
type jsUndo struct {
	at int
	b  []byte
}

// newJSONStream returns a jsonStream for cuts at limit or below. Its
// prefix is allocated at its full size, limit+jsonPrefixSlack bytes, at
// once: a Writer starts one for a document already longer than the limit,
// and the pages a short document leaves unwritten are never touched.
func newJSONStream(limit int) *jsonStream {
	m := jsonPrefixMax(limit)
	return &jsonStream{max: m, prefix: make([]byte, 0, m)}
}

// jsonPrefixMax is the length of a jsonStream's prefix for cuts at limit:
// limit+jsonPrefixSlack.
func jsonPrefixMax(limit int) int {
	if limit < math.MaxInt-jsonPrefixSlack {
		return max(limit, 0) + jsonPrefixSlack
	}
	return math.MaxInt
}

// newJSONStreamIn is newJSONStream with the prefix in storage, which has
// room for it (jsonPrefixMax(limit) bytes): storage may hold the
// document's first bytes, which the stream then compacts where they lie
// when they are written to it (it writes no byte before it has read it).
// The stream keeps the whitespace it drops from the document's first
// rawMax bytes, so that they can be given back (appendRaw).
func newJSONStreamIn(limit int, storage []byte, rawMax int) *jsonStream {
	return &jsonStream{max: jsonPrefixMax(limit), prefix: storage[:0], rawMax: rawMax}
}

// emit adds b, the next bytes of the compacted document, to it.
func (s *jsonStream) emit(b []byte) {
	if room := s.max - len(s.prefix); room > 0 {
		s.prefix = append(s.prefix, b[:min(room, len(b))]...)
	}
	s.n += len(b)
}

// emitByte adds c, the next byte of the compacted document, to it.
func (s *jsonStream) emitByte(c byte) {
	if len(s.prefix) < s.max {
		s.prefix = append(s.prefix, c)
	}
	s.n++
}

// fail marks the document invalid. The prefix and the whitespace stay, for
// appendRaw.
func (s *jsonStream) fail() bool {
	s.bad = true
	s.stack, s.totals = nil, nil
	return false
}

// write reads p, the document's next bytes, and reports whether the
// document may still be valid JSON. Once it is not, the stream reads
// nothing more: raw stops at the first byte that is not.
func (s *jsonStream) write(p []byte) bool {
	if s.bad {
		return false
	}
	i, ok := s.scan(p)
	s.raw += i
	return ok
}

// wsRunMax bounds the run a jsonStream holds as bytes: a longer run goes
// to ws in parts of this length at the same offset, so that whitespace is
// not held twice (as bytes, and in ws).
const wsRunMax = 4 << 10

// space adds c, whitespace the compacted document drops, to the run being
// read: the run the last call started, unless the document went on since.
func (s *jsonStream) space(c byte) {
	if len(s.run) > 0 && s.runAt != s.n {
		s.flushRun()
	}
	if len(s.run) == 0 {
		s.runAt = s.n
	}
	s.run = append(s.run, c)
	if len(s.run) == wsRunMax {
		s.flushRun()
	}
}

// flushRun adds the run being read to ws.
func (s *jsonStream) flushRun() {
	s.ws = binary.AppendUvarint(s.ws, uint64(s.runAt-s.lastAt))
	s.ws = appendRun(s.ws, s.run)
	s.lastAt, s.run = s.runAt, s.run[:0]
}

// appendRun appends to b the form of run, whitespace (see wsBytes).
func appendRun(b, run []byte) []byte {
	form, body, fill := uint64(wsSpaces), run, byte(' ')
	if run[0] == '\n' {
		form, body = wsLineSpaces, run[1:]
		if len(body) > 0 && body[0] == '\t' {
			form, fill = wsLineTabs, '\t'
		}
	}
	for _, c := range body {
		if c != fill {
			//lint:ignore SA4016 the form wsBytes is 0; or-ing it names the form
			return append(binary.AppendUvarint(b, uint64(len(run))<<2|wsBytes), run...)
		}
	}
	return binary.AppendUvarint(b, uint64(len(body))<<2|form)
}

// appendRaw appends to dst the document's first n bytes as written,
// whitespace included, from the compacted prefix and the whitespace the
// stream kept: n must be at most raw and rawMax. A cut made in place is
// undone first.
func (s *jsonStream) appendRaw(dst []byte, n int) []byte {
	s.restore()
	end := len(dst) + n
	put := func(b []byte) { dst = append(dst, b[:min(len(b), end-len(dst))]...) }
	fill := func(c byte, k int) {
		for k = min(k, end-len(dst)); k > 0; k-- {
			dst = append(dst, c)
		}
	}
	ws, c, at, pending := s.ws, 0, 0, len(s.run) > 0
	for len(dst) < end {
		var run []byte
		form, k := uint64(wsBytes), 0
		switch {
		case len(ws) > 0:
			d, w := binary.Uvarint(ws)
			f, w2 := binary.Uvarint(ws[w:])
			ws = ws[w+w2:]
			at += int(d)
			form, k = f&3, int(f>>2)
			if form == wsBytes {
				run, ws = ws[:k], ws[k:]
			}
		case pending:
			pending, at, run = false, s.runAt, s.run
		default:
			put(s.prefix[c:])
			return dst
		}
		put(s.prefix[c:at])
		c = at
		switch form {
		case wsBytes:
			put(run)
		case wsSpaces:
			fill(' ', k)
		case wsLineSpaces:
			fill('\n', 1)
			fill(' ', k)
		case wsLineTabs:
			fill('\n', 1)
			fill('\t', k)
		}
	}
	return dst
}

// scan is write, and returns how many bytes of p it read: all of them, or
// those before the first that makes the document invalid.
func (s *jsonStream) scan(p []byte) (int, bool) {
	for i := 0; i < len(p); {
		c := p[i]
		switch s.state {
		case jsString:
			j := i
			for j < len(p) && p[j] != '"' && p[j] != '\\' && p[j] >= 0x20 {
				j++
			}
			s.emit(p[i:j])
			if j == len(p) {
				return j, true
			}
			switch c = p[j]; c {
			case '"':
				s.emitByte(c)
				if s.strOpen < s.max && s.n > s.max {
					s.strAt, s.strLen = s.strOpen, s.n-s.strOpen
				}
				if s.inKey {
					s.state = jsColon
				} else {
					s.valueDone()
				}
			case '\\':
				s.emitByte(c)
				s.state = jsEscape
			default:
				return j, s.fail() // a control character
			}
			i = j + 1
			continue
		case jsEscape:
			switch c {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.state = jsString
			case 'u':
				s.state, s.hex = jsHex, 4
			default:
				return i, s.fail()
			}
			s.emitByte(c)
			i++
			continue
		case jsHex:
			if !('0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f') {
				return i, s.fail()
			}
			s.emitByte(c)
			if s.hex--; s.hex == 0 {
				s.state = jsString
			}
			i++
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			switch s.state {
			case jsZero, jsInt, jsFrac, jsExpDigits:
				s.valueDone()
			case jsMinus, jsDot, jsExp, jsExpSign, jsLiteral:
				return i, s.fail()
			}
			if s.raw+i < s.rawMax {
				s.space(c)
			}
			i++
			continue
		}
		switch s.step(c) {
		case stepFail:
			return i, s.fail()
		case stepRead:
			i++
		}
	}
	return len(p), true
}

// What step did with a byte.
const (
	stepFail  = iota // the document is not valid JSON
	stepRead         // read it
	stepAgain        // ended a number: the byte is read again, after it
)

// step reads c, a byte outside any string that is not whitespace.
func (s *jsonStream) step(c byte) int {
	switch s.state {
	case jsValue:
		return s.value(c)
	case jsValueOrEnd:
		if c == ']' {
			return s.close(c)
		}
		return s.value(c)
	case jsKeyOrEnd, jsKey:
		switch {
		case c == '"':
			s.stack[len(s.stack)-1].total++
			s.startString(true)
			return stepRead
		case c == '}' && s.state == jsKeyOrEnd:
			return s.close(c)
		}
		return stepFail
	case jsColon:
		if c != ':' {
			return stepFail
		}
		s.emitByte(c)
		s.state = jsValue
		return stepRead
	case jsAfter:
		top := s.stack[len(s.stack)-1]
		switch {
		case c == ',':
			s.emitByte(c)
			s.state = jsKey
			if top.array {
				s.state = jsValue
			}
			return stepRead
		case c == ']' && top.array, c == '}' && !top.array:
			return s.close(c)
		}
		return stepFail
	case jsEnd:
		return stepFail
	case jsLiteral:
		if c != s.lit[0] {
			return stepFail
		}
		s.emitByte(c)
		if s.lit = s.lit[1:]; s.lit == "" {
			s.valueDone()
		}
		return stepRead
	case jsMinus:
		switch {
		case c == '0':
			s.state = jsZero
		case '1' <= c && c <= '9':
			s.state = jsInt
		default:
			return stepFail
		}
	case jsZero, jsInt, jsFrac:
		switch {
		case '0' <= c && c <= '9' && s.state != jsZero:
		case c == '.' && s.state != jsFrac:
			s.state = jsDot
		case c == 'e' || c == 'E':
			s.state = jsExp
		default:
			s.valueDone()
			return stepAgain
		}
	case jsDot:
		if c < '0' || c > '9' {
			return stepFail
		}
		s.state = jsFrac
	case jsExp:
		switch {
		case c == '+' || c == '-':
			s.state = jsExpSign
		case '0' <= c && c <= '9':
			s.state = jsExpDigits
		default:
			return stepFail
		}
	case jsExpSign:
		if c < '0' || c > '9' {
			return stepFail
		}
		s.state = jsExpDigits
	case jsExpDigits:
		if c < '0' || c > '9' {
			s.valueDone()
			return stepAgain
		}
	}
	// A byte of a number.
	s.emitByte(c)
	return stepRead
}

// value starts a value with c.
func (s *jsonStream) value(c byte) int {
	if n := len(s.stack); n > 0 && s.stack[n-1].array {
		s.stack[n-1].total++
	}
	switch c {
	case '{', '[':
		if len(s.stack) == maxJSONDepth {
			return stepFail
		}
		if s.n < s.max {
			s.low++
		}
		s.stack = append(s.stack, jsFrame{array: c == '['})
		s.emitByte(c)
		s.state = jsKeyOrEnd
		if c == '[' {
			s.state = jsValueOrEnd
		}
		return stepRead
	case '"':
		s.startString(false)
		return stepRead
	case '-':
		s.state = jsMinus
	case '0':
		s.state = jsZero
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		s.state = jsInt
	case 't':
		s.state, s.lit = jsLiteral, "rue"
	case 'f':
		s.state, s.lit = jsLiteral, "alse"
	case 'n':
		s.state, s.lit = jsLiteral, "ull"
	default:
		return stepFail
	}
	s.emitByte(c)
	return stepRead
}

// startString reads a string's opening quote; key says it is a key.
func (s *jsonStream) startString(key bool) {
	s.strOpen, s.inKey, s.state = s.n, key, jsString
	s.emitByte('"')
}

// close reads c, the closer of the innermost container, which matches it.
func (s *jsonStream) close(c byte) int {
	s.emitByte(c)
	d := len(s.stack) - 1
	if d < s.low {
		s.low = d
		if s.n > s.max {
			// It opened within the prefix and closes past it.
			if len(s.totals) <= d {
				s.totals = append(s.totals, make([]int, d+1-len(s.totals))...)
			}
			s.totals[d] = s.stack[d].total
		}
	}
	s.stack = s.stack[:d]
	s.valueDone()
	return stepRead
}

// valueDone ends a value.
func (s *jsonStream) valueDone() {
	if len(s.stack) == 0 {
		s.state = jsEnd
	} else {
		s.state = jsAfter
	}
}

// end ends the document and reports whether it is valid JSON.
func (s *jsonStream) end() bool {
	if s.bad {
		return false
	}
	switch s.state {
	case jsZero, jsInt, jsFrac, jsExpDigits:
		s.valueDone()
	}
	if s.state != jsEnd {
		return s.fail()
	}
	return true
}

// cut is jsonCut of the document, n bytes long, which has ended, at limit
// (no larger than the stream's): the same output and figures.
//
// With inPlace, for the Writer's last result ([Writer.Result]), the cut is
// made in the prefix's own storage rather than in a buffer of its own: a
// cut at the limit is nearly all of the prefix, so that the document is
// held once, not twice. A cut of a budget that proves too small is undone
// (the bytes it wrote over were set aside) before the next one reads the
// prefix.
func (s *jsonStream) cut(n, limit int, inPlace bool) (string, Stats, bool) {
	if !s.end() {
		return "", Stats{}, false
	}
	s.restore()
	held := bytesString(s.prefix)
	var t *jsonTail
	if s.n > len(s.prefix) {
		t = &jsonTail{compact: s.n, strAt: s.strAt, strLen: s.strLen, totals: s.totals}
	}
	var save func(at, n int)
	if inPlace {
		save = s.save
	}
	cutTo := func(budget int, spare []byte) result {
		// A cut made before this one, of a budget that proved too small,
		// wrote over the prefix.
		s.restore()
		if s.n <= budget {
			return result{doc: s.prefix, complete: true, compact: s.n}
		}
		if inPlace {
			spare = s.prefix[:0]
		}
		return structuralPrefix(held, budget, false, t, spare, save)
	}
	compacted := func(size int) []byte {
		s.restore()
		return s.prefix[:size]
	}
	out, st, ok := jsonCutDoc(n, limit, cutTo, compacted, save)
	s.given = ok && len(s.undo) > 0
	return out, st, ok
}

// save sets aside the n bytes of the prefix from at on (as far as it
// holds them) that a cut in place is about to write over.
func (s *jsonStream) save(at, n int) {
	if end := min(at+n, len(s.prefix)); at < end {
		s.undo = append(s.undo, jsUndo{at: at, b: append([]byte(nil), s.prefix[at:end]...)})
	}
}

// restore puts back what cuts in place wrote over, the last first: in a
// copy of the prefix when the cut was handed out, whose string must not
// change (the Writer is asked nothing after Result, but a string stays a
// string).
func (s *jsonStream) restore() {
	if s.given && len(s.undo) > 0 {
		s.prefix = append(make([]byte, 0, cap(s.prefix)), s.prefix...)
	}
	s.given = false
	for i := len(s.undo) - 1; i >= 0; i-- {
		copy(s.prefix[s.undo[i].at:], s.undo[i].b)
	}
	s.undo = s.undo[:0]
}
