package claudecode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file reads a payload too long to hold (see stream.go) through a
// bounded buffer: source hands out its bytes, the skip and capture
// functions find where a value ends exactly as skipValue does on a payload
// in memory (strings by their closing quote, containers by counting
// brackets, literals up to a delimiter and checked), and strDec decodes a
// string of any length in pieces, exactly as unquote decodes it whole.

// srcBuf is the buffer a payload is read through: 64 KiB, a pipe's
// capacity on Linux, so that one read drains a full pipe.
const srcBuf = 64 << 10

// source reads a payload through a buffer of srcBuf bytes, at most limit
// bytes in all.
// Every byte consumed goes to tee when it is set: the bytes a caller keeps
// or copies (the reduced output, the raw output's cut, a spool) are taken
// there, in pieces that must not be kept.
type source struct {
	r     io.Reader
	buf   []byte
	i, n  int // buf[i:n] is read and not consumed
	read  int64
	limit int64
	eof   bool
	err   error
	tee   func([]byte)
}

func newSource(r io.Reader, limit int64) *source {
	return &source{r: r, buf: make([]byte, srcBuf), limit: limit}
}

// more reads at least one more byte into the buffer, and reports false
// when none comes: at the end of the payload, past its limit
// (ErrPayloadTooLarge) or on a read error (both in s.err).
func (s *source) more() bool {
	switch {
	case s.i == s.n:
		s.i, s.n = 0, 0
	case s.i > 0 && s.n > len(s.buf)/2:
		s.n = copy(s.buf, s.buf[s.i:s.n])
		s.i = 0
	case s.n == len(s.buf):
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	for s.err == nil && !s.eof {
		m, err := s.r.Read(s.buf[s.n:])
		s.n += m
		s.read += int64(m)
		switch {
		case s.read > s.limit:
			s.err = tooLarge(s.limit)
		case err == io.EOF:
			s.eof = true
		case err != nil:
			s.err = fmt.Errorf("reading the payload: %w", err)
		}
		if m > 0 {
			return s.err == nil
		}
	}
	return false
}

// peek returns the next byte without consuming it.
func (s *source) peek() (byte, bool) {
	if s.i == s.n && !s.more() {
		return 0, false
	}
	return s.buf[s.i], true
}

// consume consumes the next k bytes, which are read.
func (s *source) consume(k int) {
	if s.tee != nil && k > 0 {
		s.tee(s.buf[s.i : s.i+k])
	}
	s.i += k
}

// fail returns the error of input that ended too early: the reader's, or
// msg.
func (s *source) fail(msg string) error {
	if s.err != nil {
		return s.err
	}
	return errors.New(msg)
}

// space consumes white space.
func (s *source) space() {
	for {
		if s.i == s.n && !s.more() {
			return
		}
		for s.i < s.n {
			switch s.buf[s.i] {
			case ' ', '\t', '\n', '\r':
				s.consume(1)
			default:
				return
			}
		}
	}
}

// skipValue consumes one value as skipValue finds its end in memory: a
// string, an object or array (brackets counted at any depth, nothing else
// checked), or a literal (up to the next delimiter, checked as JSON).
func (s *source) skipValue() error {
	c, ok := s.peek()
	if !ok {
		return s.fail("missing value")
	}
	switch c {
	case '"':
		return s.skipString()
	case '{', '[':
		return s.skipBrackets(0)
	}
	return s.skipLiteral()
}

// skipString consumes a string from its opening quote to its closing one.
func (s *source) skipString() error {
	s.consume(1)
	return s.skipStringRest(0)
}

// skipStringRest consumes the rest of a string, bs being the number of
// backslashes that end what came of it before, through its closing quote.
func (s *source) skipStringRest(bs int) error {
	for {
		if s.i == s.n && !s.more() {
			return s.fail("unterminated string")
		}
		end, next := strEnd(s.buf[s.i:s.n], bs)
		if end >= 0 {
			s.consume(end + 1)
			return nil
		}
		s.consume(s.n - s.i)
		bs = next
	}
}

// strEnd returns the index in p of the quote that closes a string whose
// bytes before p end in bs backslashes, or -1 and the backslashes that end
// p, counted with those before it when p is all backslashes: a quote
// closes the string when an even run of backslashes precedes it.
func strEnd(p []byte, bs int) (int, int) {
	for j := 0; ; {
		k := bytes.IndexByte(p[j:], '"')
		if k < 0 {
			m := len(p)
			for m > 0 && p[m-1] == '\\' {
				m--
			}
			if m == 0 {
				return -1, bs + len(p)
			}
			return -1, len(p) - m
		}
		q := j + k
		m := q
		for m > 0 && p[m-1] == '\\' {
			m--
		}
		run := q - m
		if m == 0 {
			run += bs
		}
		if run%2 == 0 {
			return q, 0
		}
		j = q + 1
	}
}

// brackets marks the bytes skipBrackets stops at.
var brackets = func() (t [256]bool) {
	for _, c := range `"{}[]` {
		t[c] = true
	}
	return t
}()

// skipBrackets consumes the rest of a container as skipValue counts it:
// depth is the number of brackets open before the next byte (0 when it is
// the container's own opening bracket); it ends past the bracket that
// brings the count back to 0.
func (s *source) skipBrackets(depth int) error {
	for {
		if s.i == s.n && !s.more() {
			return s.fail("unterminated value")
		}
		j := s.i
		for j < s.n && !brackets[s.buf[j]] {
			j++
		}
		s.consume(j - s.i)
		if s.i == s.n {
			continue
		}
		switch s.buf[s.i] {
		case '"':
			if err := s.skipString(); err != nil {
				return err
			}
			continue
		case '{', '[':
			depth++
		default:
			depth--
		}
		s.consume(1)
		if depth <= 0 {
			return nil
		}
	}
}

// skipLiteral consumes a literal or number up to the next delimiter and
// checks it as json.Valid checks it alone.
func (s *source) skipLiteral() error {
	var lit literal
	for {
		if s.i == s.n && !s.more() {
			break
		}
		j := s.i
		for j < s.n && !isDelim(s.buf[j]) {
			lit.add(s.buf[j])
			j++
		}
		s.consume(j - s.i)
		if j < s.n {
			break
		}
	}
	if s.err != nil {
		return s.err
	}
	if !lit.valid() {
		return errors.New("invalid value")
	}
	return nil
}

// literal checks a literal byte by byte, with no bound on its length: one
// of true, false and null, or a JSON number.
type literal struct {
	n     int
	word  [5]byte
	state int8 // of a number: see add
	bad   bool
}

// The states of a number: after its sign, its leading 0, its integer
// digits, its point, its fraction digits, its e, its exponent sign, its
// exponent digits.
const (
	numStart int8 = iota
	numSign
	numZero
	numInt
	numPoint
	numFrac
	numE
	numESign
	numExp
)

func (l *literal) add(c byte) {
	if l.n < len(l.word) {
		l.word[l.n] = c
	}
	l.n++
	if l.bad {
		return
	}
	digit := '0' <= c && c <= '9'
	switch l.state {
	case numStart:
		switch {
		case c == '-':
			l.state = numSign
		case c == '0':
			l.state = numZero
		case digit:
			l.state = numInt
		default:
			l.bad = true
		}
	case numSign:
		switch {
		case c == '0':
			l.state = numZero
		case digit:
			l.state = numInt
		default:
			l.bad = true
		}
	case numZero, numInt:
		switch {
		case digit && l.state == numInt:
		case c == '.':
			l.state = numPoint
		case c == 'e' || c == 'E':
			l.state = numE
		default:
			l.bad = true
		}
	case numPoint, numFrac:
		switch {
		case digit:
			l.state = numFrac
		case c == 'e' || c == 'E':
			l.bad = l.state == numPoint
			l.state = numE
		default:
			l.bad = true
		}
	case numE:
		switch {
		case c == '+' || c == '-':
			l.state = numESign
		case digit:
			l.state = numExp
		default:
			l.bad = true
		}
	case numESign, numExp:
		if !digit {
			l.bad = true
		}
		l.state = numExp
	}
}

func (l *literal) valid() bool {
	switch w := string(l.word[:min(l.n, len(l.word))]); {
	case l.n <= len(l.word) && (w == "true" || w == "false" || w == "null"):
		return true
	case l.n == 0 || l.bad:
		return false
	}
	return l.state == numZero || l.state == numInt || l.state == numFrac || l.state == numExp
}

// strDec decodes a string that arrives in pieces, byte for byte as unquote
// decodes it whole: the pieces are the string's raw bytes after its
// opening quote (write finds the closing one); decoded bytes go to emit in
// pieces of up to outBuf bytes, which emit must not keep. A sequence a
// piece cuts short (an escape, a UTF-8 character) is held until the next
// piece, and held only while the bytes seen so far do not settle it, so
// that what is held never holds the closing quote. After the first error
// (err, unquote's) the rest of the string is only scanned for its end.
type strDec struct {
	emit  func([]byte)
	out   []byte
	carry [12]byte
	nc    int
	err   error
	bs    int // after an error: the backslashes that end what was scanned
	n     int // decoded bytes so far, emitted or not
}

// outBuf is the most strDec buffers before it emits.
const outBuf = 64 << 10

func newStrDec(emit func([]byte)) *strDec { return newStrDecSize(emit, outBuf) }

// newStrDecSize returns a strDec that buffers at most size bytes, for a
// short string such as a member name.
func newStrDecSize(emit func([]byte), size int) *strDec {
	return &strDec{emit: emit, out: make([]byte, 0, size)}
}

// put adds decoded bytes: a long run of them goes to emit as it is.
func (d *strDec) put(b []byte) {
	d.n += len(b)
	if len(d.out)+len(b) > cap(d.out) {
		d.flush()
		if len(b) >= cap(d.out) {
			d.emit(b)
			return
		}
	}
	d.out = append(d.out, b...)
}

// putByte adds one decoded byte.
func (d *strDec) putByte(b byte) {
	if len(d.out) == cap(d.out) {
		d.flush()
	}
	d.out = append(d.out, b)
	d.n++
}

// putRune adds the UTF-8 encoding of r.
func (d *strDec) putRune(r rune) {
	if len(d.out)+utf8.UTFMax > cap(d.out) {
		d.flush()
	}
	n := len(d.out)
	d.out = utf8.AppendRune(d.out, r)
	d.n += len(d.out) - n
}

// flush emits what is buffered.
func (d *strDec) flush() {
	if len(d.out) > 0 {
		d.emit(d.out)
		d.out = d.out[:0]
	}
}

// The outcomes of strDec.step.
const (
	stepOK   = iota // a unit was decoded
	stepEnd         // the closing quote is at the position
	stepMore        // the sequence at the position needs bytes past the piece
)

// step decodes the unit at s[i]: a run of plain bytes, an escape, a
// UTF-8 character or a byte that is not one. It returns where the next
// unit starts.
func (d *strDec) step(s []byte, i int) (int, int) {
	c := s[i]
	switch {
	case plainByte[c]:
		j := plainRun(s, i)
		d.put(s[i:j])
		return j, stepOK
	case c == '"':
		return i, stepEnd
	case c == '\\':
		return d.escape(s, i)
	case c < 0x20:
		d.err = fmt.Errorf("%w: unescaped %q", errNotString, c)
		return i + 1, stepOK
	}
	if !utf8.FullRune(s[i:]) {
		return i, stepMore
	}
	r, size := utf8.DecodeRune(s[i:])
	if r == utf8.RuneError && size == 1 {
		d.putRune(unicode.ReplacementChar)
	} else {
		d.put(s[i : i+size])
	}
	return i + size, stepOK
}

// escape decodes the escape at s[i], a backslash, as unquote does.
func (d *strDec) escape(s []byte, i int) (int, int) {
	if i+1 >= len(s) {
		return i, stepMore
	}
	var b byte
	switch e := s[i+1]; e {
	case '"', '\\', '/':
		b = e
	case 'b':
		b = '\b'
	case 'f':
		b = '\f'
	case 'n':
		b = '\n'
	case 'r':
		b = '\r'
	case 't':
		b = '\t'
	case 'u':
		return d.unicode(s, i)
	default:
		d.err = fmt.Errorf("%w: bad escape \\%c", errNotString, e)
		return i + 2, stepOK
	}
	d.putByte(b)
	return i + 2, stepOK
}

// unicode decodes the \u escape at s[i], and the one after it when the
// two are a surrogate pair, as unquote does: a lone surrogate is U+FFFD.
func (d *strDec) unicode(s []byte, i int) (int, int) {
	if !hexPrefix(s[i+2:], 4) {
		d.err = fmt.Errorf("%w: bad \\u escape", errNotString)
		return i + 2, stepOK
	}
	if len(s) < i+6 {
		return i, stepMore
	}
	r, _ := hex4(s[i+2:])
	if utf16.IsSurrogate(r) {
		// unquote pairs it with a \u escape that the string holds whole
		// right after it: the bytes seen so far may settle that before
		// all six are there (a quote, which ends the string, settles it).
		next := s[i+6:]
		pair := (len(next) < 1 || next[0] == '\\') && (len(next) < 2 || next[1] == 'u') && hexPrefix(next[min(len(next), 2):], 4)
		if pair && len(next) < 6 {
			return i, stepMore
		}
		r2, ok := rune(-1), false
		if pair {
			r2, ok = hex4(next[2:])
		}
		if dec := utf16.DecodeRune(r, r2); ok && dec != unicode.ReplacementChar {
			r = dec
			i += 6
		} else {
			r = unicode.ReplacementChar
		}
	}
	d.putRune(r)
	return i + 6, stepOK
}

// hexPrefix reports whether the first min(len(s), n) bytes of s are hex
// digits: whether s may still open n of them.
func hexPrefix(s []byte, n int) bool {
	for _, c := range s[:min(len(s), n)] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// write decodes p, the string's next raw bytes, and returns the index in p
// of its closing quote, or -1 when the string goes on past p. What it
// decoded may still be buffered: end flushes it.
func (d *strDec) write(p []byte) int {
	i := 0
	if d.nc > 0 && d.err == nil {
		// The held sequence, completed from p, is decoded in a copy until
		// the decoding passes the bytes that were held. Twelve bytes
		// settle any sequence, so the sixteen taken from p settle it.
		nc := d.nc
		var tmp [len(d.carry) + 16]byte
		copy(tmp[:], d.carry[:nc])
		k := copy(tmp[nc:], p)
		s := tmp[:nc+k]
		d.nc = 0
		j := 0
		for j < nc && d.err == nil {
			next, st := d.step(s, j)
			if st == stepMore {
				// Only when p itself ended: it is all held.
				d.nc = copy(d.carry[:], s[j:])
				return -1
			}
			if st == stepEnd {
				return j - nc // the held bytes hold no quote
			}
			j = next
		}
		if d.err != nil && j < len(s) {
			end, bs := strEnd(s[j:], 0)
			if end >= 0 {
				return j + end - nc
			}
			d.bs = bs
			j = len(s)
		}
		i = j - nc
	}
	for i < len(p) && d.err == nil {
		next, st := d.step(p, i)
		switch st {
		case stepEnd:
			return i
		case stepMore:
			d.nc = copy(d.carry[:], p[i:])
			return -1
		}
		i = next
	}
	if d.err != nil && i < len(p) {
		end, bs := strEnd(p[i:], d.bs)
		if end >= 0 {
			return i + end
		}
		d.bs = bs
	}
	return -1
}

// end flushes what is buffered, at the string's closing quote.
func (d *strDec) end() {
	d.flush()
}
