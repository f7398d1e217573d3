// Package wire reads newline-delimited JSON-RPC messages, the framing of
// MCP's stdio transport, one token at a time, so that a message of any size
// can be examined and reduced while it is read and none of it has to be
// held whole.
//
// A [Scanner] reads from a [bufio.Reader] and never reads past the message
// it is on, so the next message stays in the reader. What it consumes can be
// copied into a bounded buffer as it goes ([Scanner.Tee]): a message that
// needs no change is forwarded from that copy, byte for byte.
//
// The package is the one JSON scanner of the relay and of the Claude Code
// hook: the hook, which holds its payload or streams it through a buffer
// of its own, splits a JSON text held in memory with [SplitObject] and
// [ValueEnd], decodes a string held whole with [Unquote] or in pieces
// with a [StringDecoder], with the escapes, UTF-8 handling and number
// grammar the Scanner reads with.
package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/hugepage"
)

// MaxDepth bounds the nesting of arrays and objects the scanner follows:
// 10,000, the bound of Go's encoding/json, which the proxy and the MCP Go
// SDK decode messages with, and above what the other peers' decoders reach
// (Python's json stops near 1,000 levels, its recursion limit; serde_json
// at 128). A peer may still send deeper JSON (JavaScript's JSON.parse has no
// bound): the scanner then reports a [DepthError], and [Scanner.Resume]
// reads on past it, in constant memory, to the members that follow.
const MaxDepth = 10000

// A DepthError reports a value nested deeper than [MaxDepth] levels, and
// where (the offset of the array or object that went past it). The
// scanner stops before that value: [Scanner.SkipOut] and [Scanner.Resume]
// read past it.
type DepthError struct {
	Offset int64
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("nesting deeper than %d levels at byte %d of the message", MaxDepth, e.Offset)
}

// A SyntaxError reports input that is not JSON, and where (the offset from
// the start of the message).
type SyntaxError struct {
	Offset int64
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d of the message: %s", e.Offset, e.Msg)
}

// A Scanner reads JSON tokens from a bufio.Reader.
type Scanner struct {
	br  *bufio.Reader
	off int64 // bytes consumed since Reset

	// tee is the copy of what was consumed, while teeing, in chunks that
	// are never moved (see teeAppend); teeLen is its length.
	tee     [][]byte
	teeLen  int
	teeMax  int
	teeing  bool
	teeOver bool // the copy was abandoned: the message is larger than teeMax
	// teeLost is called with the copy when it is abandoned over teeMax,
	// before it is let go (see OnTeeOver).
	teeLost func(teed [][]byte)

	scratch []byte // decoded escapes, see String
	// replaced counts the bytes String replaced since Reset: see Replaced.
	replaced int64

	// depth is how many arrays and objects are open at the position: the
	// level Object and Array check against MaxDepth, and the one
	// SkipOut returns to.
	depth int
	stack []byte // the closing bytes of the containers skip has open

	capture  []byte // copy of the value being captured, see Capture
	capMax   int
	capping  bool
	capOver  bool
	capTrunc bool // keep the first capMax bytes rather than give up
}

// NewScanner returns a Scanner reading from br.
func NewScanner(br *bufio.Reader) *Scanner { return &Scanner{br: br} }

// UseReader switches the scanner to read from br, which must hold what the
// last reader had buffered: a reader whose buffer is resized between
// messages, or before a message is scanned, moves to another bufio.Reader.
func (s *Scanner) UseReader(br *bufio.Reader) { s.br = br }

// Reset starts a new message: the offset goes back to 0 and teeing stops.
func (s *Scanner) Reset() {
	s.off = 0
	s.depth = 0
	s.teeing, s.teeOver = false, false
	s.teeLost = nil
	s.tee, s.teeLen = nil, 0
	s.replaced = 0
}

// Replaced returns how many invalid bytes [Scanner.String] replaced with
// U+FFFD in the message so far, up to what it has handed on: 0 says every
// string it decoded was valid UTF-8 as written, so that it decodes again
// from the copy with [DecodeParts] to the same text.
func (s *Scanner) Replaced() int64 { return s.replaced }

// OnTeeOver sets f (nil: none) to be called, once, with the copy being
// made, in the chunks [Scanner.TeedParts] returns, when it goes over its
// bound, before the copy is let go: a reader that was to decode parts of it
// again takes what it needs then. The copy holds every byte whose decoded
// form [Scanner.String] has handed on. The next Reset, Tee or StopTee
// clears f.
func (s *Scanner) OnTeeOver(f func(teed [][]byte)) { s.teeLost = f }

// Offset returns how many bytes of the message have been consumed.
func (s *Scanner) Offset() int64 { return s.off }

// Tee starts copying what is consumed, up to max bytes: see [Scanner.Teed].
func (s *Scanner) Tee(max int) {
	s.teeing, s.teeOver, s.teeMax = true, false, max
	s.teeLost = nil
	s.tee, s.teeLen = nil, 0
}

// TeeMax sets the bound of the copy being made to max, when one is: a
// reader that learns, part way through a message, that it may forward a
// larger one as it came raises it. A copy already over a lowered bound is
// abandoned with the next byte consumed.
func (s *Scanner) TeeMax(max int) {
	if s.teeing {
		s.teeMax = max
	}
}

// Teeing reports whether the copy [Scanner.Tee] started is still being
// made: it was neither stopped nor abandoned over its bound.
func (s *Scanner) Teeing() bool { return s.teeing }

// StopTee stops copying and releases the copy: [Scanner.Teed] then
// reports it abandoned.
func (s *Scanner) StopTee() {
	if s.teeing {
		s.teeOver = true
	}
	s.teeing = false
	s.teeLost = nil
	s.tee, s.teeLen = nil, 0
}

// Teed returns the bytes consumed since [Scanner.Tee], and false when there
// were more than its max (the copy was then abandoned as soon as it went
// over). A copy in more than one chunk is joined into one slice, once. The
// slice is valid until the next Tee or Reset.
func (s *Scanner) Teed() ([]byte, bool) {
	if s.teeOver {
		return nil, false
	}
	switch len(s.tee) {
	case 0:
		return nil, true
	case 1:
		return s.tee[0], true
	}
	joined := make([]byte, 0, s.teeLen)
	for _, c := range s.tee {
		joined = append(joined, c...)
	}
	s.tee = [][]byte{joined}
	return joined, true
}

// TeedParts is [Scanner.Teed] without the join: the copy in the chunks it
// was made in, in order. A message of many megabytes is copied once this
// way, never moved to grow.
func (s *Scanner) TeedParts() ([][]byte, bool) {
	if s.teeOver {
		return nil, false
	}
	return s.tee, true
}

// teeChunk bounds the chunks of the copy: a copy takes at most this much
// more than it holds (in capacity: what is not written to is not touched).
// A chunk of 8 MiB covers at least three 2 MiB-aligned stretches, which
// the kernel backs with huge pages (hugepage.Advise): a copy of tens of
// megabytes is filled with a fault per 2 MiB, where 1 MiB chunks took one
// per 4 KiB, most of the time the copy took on a VM.
const teeChunk = 8 << 20

// teeAppend adds b to the copy: to the room left in its last chunk, then
// to a new chunk, twice the size of the last (from 4 KiB to teeChunk, or
// b's size when that is larger) but no larger than the bound leaves room
// for.
func (s *Scanner) teeAppend(b []byte) {
	s.teeLen += len(b)
	if n := len(s.tee); n > 0 {
		last := s.tee[n-1]
		k := min(cap(last)-len(last), len(b))
		s.tee[n-1] = append(last, b[:k]...)
		b = b[k:]
	}
	if len(b) == 0 {
		return
	}
	size := 4 << 10
	if n := len(s.tee); n > 0 {
		size = min(2*cap(s.tee[n-1]), teeChunk)
	}
	size = max(min(size, s.teeMax-(s.teeLen-len(b))), len(b))
	chunk := make([]byte, 0, size)
	hugepage.Advise(chunk)
	s.tee = append(s.tee, append(chunk, b...))
}

// consume discards n buffered bytes, copying them where asked.
func (s *Scanner) consume(n int) {
	if n == 0 {
		return
	}
	if s.teeing || s.capping {
		b, _ := s.br.Peek(n)
		s.copyOut(b)
	}
	_, _ = s.br.Discard(n)
	s.off += int64(n)
}

func (s *Scanner) copyOut(b []byte) {
	if s.teeing {
		if s.teeLen+len(b) > s.teeMax {
			s.teeing, s.teeOver = false, true
			if f := s.teeLost; f != nil {
				s.teeLost = nil
				f(s.tee)
			}
			s.tee, s.teeLen = nil, 0
		} else {
			s.teeAppend(b)
		}
	}
	if s.capping {
		switch {
		case len(s.capture)+len(b) <= s.capMax:
			s.capture = append(s.capture, b...)
		case s.capTrunc:
			s.capture = append(s.capture, b[:s.capMax-len(s.capture)]...)
		default:
			s.capping, s.capOver = false, true
			s.capture = nil
		}
	}
}

// window returns the buffered bytes, reading more when none are: at least
// one byte, or an error.
func (s *Scanner) window() ([]byte, error) {
	if n := s.br.Buffered(); n > 0 {
		b, _ := s.br.Peek(n)
		return b, nil
	}
	b, err := s.br.Peek(1)
	if len(b) == 0 {
		if err == nil {
			err = io.ErrNoProgress
		}
		return nil, err
	}
	b, _ = s.br.Peek(s.br.Buffered())
	return b, nil
}

func (s *Scanner) unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (s *Scanner) syntax(format string, args ...any) error {
	return &SyntaxError{Offset: s.off, Msg: fmt.Sprintf(format, args...)}
}

// SkipSpace consumes JSON whitespace other than newlines, which end a
// message. It returns the error of the reader, io.EOF included.
func (s *Scanner) SkipSpace() error {
	for {
		b, err := s.window()
		if err != nil {
			return err
		}
		i := 0
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r') {
			i++
		}
		s.consume(i)
		if i < len(b) {
			return nil
		}
	}
}

// Peek returns the next byte without consuming it, after JSON whitespace
// other than newlines.
func (s *Scanner) Peek() (byte, error) {
	if err := s.SkipSpace(); err != nil {
		return 0, err
	}
	b, err := s.window()
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// peekValue returns the next byte after whitespace, inside a message. A
// newline there is an error: it ends the message (MCP's stdio framing
// forbids newlines inside one), and the next message starts after it.
func (s *Scanner) peekValue() (byte, error) {
	if err := s.SkipSpace(); err != nil {
		return 0, s.unexpectedEOF(err)
	}
	b, err := s.window()
	if err != nil {
		return 0, s.unexpectedEOF(err)
	}
	if b[0] == '\n' {
		return 0, s.syntax("the line ends inside the message")
	}
	return b[0], nil
}

// peekN returns the next n bytes, or fewer when the line or the input ends
// first: it never waits for bytes past the end of the line, which belong to
// the next message.
func (s *Scanner) peekN(n int) []byte {
	if s.br.Buffered() < n {
		b, _ := s.br.Peek(s.br.Buffered())
		if bytes.IndexByte(b, '\n') >= 0 {
			return b
		}
	}
	b, _ := s.br.Peek(n)
	return b
}

// expect consumes c, after whitespace.
func (s *Scanner) expect(c byte) error {
	got, err := s.peekValue()
	if err != nil {
		return err
	}
	if got != c {
		return s.syntax("want %q, got %q", c, got)
	}
	s.consume(1)
	return nil
}

// SkipLine consumes the rest of the line, newline included, and returns up
// to max of its first bytes (for a log line) and how many bytes it had. A
// line cut short by the end of the input is not an error.
func (s *Scanner) SkipLine(max int) (head []byte, n int64, err error) {
	for {
		b, err := s.window()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return head, n, nil
			}
			return head, n, err
		}
		i := bytes.IndexByte(b, '\n')
		end := len(b)
		if i >= 0 {
			end = i
		}
		if room := max - len(head); room > 0 {
			head = append(head, b[:min(room, end)]...)
		}
		n += int64(end)
		if i >= 0 {
			s.consume(i + 1)
			return head, n, nil
		}
		s.consume(len(b))
	}
}

// EndMessage consumes what follows the top-level value of a message: spaces
// and the newline that ends it (or the end of the input). Anything else is
// a syntax error.
func (s *Scanner) EndMessage() error {
	if err := s.SkipSpace(); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	b, err := s.window()
	if err != nil {
		return err
	}
	if b[0] != '\n' {
		return s.syntax("want the end of the line after the message, got %q", b[0])
	}
	s.consume(1)
	return nil
}

// Object reads an object, calling field for each member with the member's
// key; field must consume the member's value (with one of the Scanner's
// value methods). Keys longer than 4096 bytes are an error.
//
// An object that would open past [MaxDepth] levels is a [*DepthError],
// returned before anything of it is consumed.
func (s *Scanner) Object(field func(key string) error) error {
	if empty, err := s.open('{', '}'); err != nil || empty {
		return err
	}
	return s.members(field, false)
}

// members reads an object's members from the first key on (or, with
// comma, from the ',' that comes before the next one) to its closing
// brace, calling field for each.
func (s *Scanner) members(field func(key string) error, comma bool) error {
	var key []byte
	for {
		if comma {
			if more, err := s.next('}', "an object"); err != nil || !more {
				return err
			}
		}
		comma = true
		var err error
		key = key[:0]
		key, err = s.appendString(key, 4096)
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := field(string(key)); err != nil {
			return err
		}
	}
}

// open consumes the '{' or '[' that opens a container, one level deeper,
// or returns a DepthError past MaxDepth. empty reports a container that
// end, consumed too, closes at once.
func (s *Scanner) open(c, end byte) (empty bool, err error) {
	got, err := s.peekValue()
	switch {
	case err != nil:
		return false, err
	case got != c:
		return false, s.syntax("want %q, got %q", c, got)
	case s.depth >= MaxDepth:
		return false, &DepthError{Offset: s.off}
	}
	s.consume(1)
	s.depth++
	if got, err = s.peekValue(); err != nil || got != end {
		return false, err
	}
	s.consume(1)
	s.depth--
	return true, nil
}

// next consumes what follows a member or element of the container that
// end closes, in: a comma (more follow) or end (the container is done, a
// level up).
func (s *Scanner) next(end byte, in string) (more bool, err error) {
	c, err := s.peekValue()
	if err != nil {
		return false, err
	}
	s.consume(1)
	switch c {
	case ',':
		return true, nil
	case end:
		s.depth--
		return false, nil
	}
	return false, s.syntax("want ',' or %q in %s, got %q", end, in, c)
}

// Depth returns how many arrays and objects are open at the position: 1
// inside a message's top-level object.
func (s *Scanner) Depth() int { return s.depth }

// SkipOut consumes what is left of the containers open past level, so
// that the scanner is back at level, just after the value that was open
// there. It reads past a [DepthError] in constant memory, whatever the
// depth: it matches brackets by count alone (strings are read as strings,
// so brackets inside them do not count), so it checks no more than that
// the value ends on this line. It is for a message that is refused all the
// same, and read on only for the members that follow (its id).
func (s *Scanner) SkipOut(level int) error {
	for s.depth > level {
		b, err := s.window()
		if err != nil {
			return s.unexpectedEOF(err)
		}
		i, str := 0, false
	scan:
		for ; i < len(b) && s.depth > level; i++ {
			switch b[i] {
			case '{', '[':
				s.depth++
			case '}', ']':
				s.depth--
			case '"':
				str = true
				break scan
			case '\n':
				s.consume(i)
				return s.syntax("the line ends inside the message")
			}
		}
		s.consume(i)
		if str {
			if _, err := s.String(nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// Resume goes on with the object open at level after one of its members
// failed with a [DepthError]: it skips what is left of that member
// ([Scanner.SkipOut]), then reads the object's remaining members as
// [Scanner.Object] does, to its closing brace. A member that fails with a
// DepthError again is skipped the same way. It lets a reader find the
// members that follow a value too deep to read, such as a message's id.
func (s *Scanner) Resume(level int, field func(key string) error) error {
	for {
		if err := s.SkipOut(level); err != nil {
			return err
		}
		err := s.members(field, true)
		var de *DepthError
		if !errors.As(err, &de) {
			return err
		}
	}
}

// Array reads an array, calling elem for each element, which elem must
// consume.
//
// An array that would open past [MaxDepth] levels is a [*DepthError],
// returned before anything of it is consumed.
func (s *Scanner) Array(elem func(i int) error) error {
	if empty, err := s.open('[', ']'); err != nil || empty {
		return err
	}
	for i := 0; ; i++ {
		if err := elem(i); err != nil {
			return err
		}
		if more, err := s.next(']', "an array"); err != nil || !more {
			return err
		}
	}
}

// Kind returns the first byte of the next value: '{', '[', '"', 't', 'f',
// 'n' or a digit or '-'.
func (s *Scanner) Kind() (byte, error) { return s.peekValue() }

// String reads a string value and writes its decoded bytes to w in pieces
// (w may be nil), and returns how many bytes it decoded to. It decodes as
// encoding/json does, and so as a client reads the text: an escaped lone
// surrogate decodes to U+FFFD, and so does each byte that is not valid UTF-8
// ([cut.Replacer], a sequence split across the reader's buffers held until
// it is complete), so that a text is measured and cut as the client will
// decode it (issue 22).
//
// Runs of plain bytes are handed to w from the reader's buffer; escapes are
// decoded into a small scratch buffer, so that a text with an escape every
// few bytes (a log: a \n per line) costs a pass over it, not a call per
// escape.
func (s *Scanner) String(w func([]byte)) (int64, error) {
	var rep cut.Replacer
	var n int64
	base := s.replaced
	emit := func(b []byte) {
		// Counted before the piece is handed on: a reader that decodes
		// the copy again from w knows what it holds.
		s.replaced = base + int64(rep.Replaced())
		n += int64(len(b))
		if w != nil {
			w(b)
		}
	}
	_, err := s.decodeString(func(b []byte) { rep.Write(b, emit) })
	rep.Flush(emit)
	return n, err
}

// decodeString is String with invalid UTF-8 passed on as it is.
func (s *Scanner) decodeString(w func([]byte)) (int64, error) {
	if err := s.expect('"'); err != nil {
		return 0, err
	}
	var n int64
	out := s.scratch[:0]
	flush := func() {
		if len(out) > 0 {
			if w != nil {
				w(out)
			}
			n += int64(len(out))
			out = out[:0]
		}
	}
	defer func() { s.scratch = out[:0] }()
	for {
		b, err := s.window()
		if err != nil {
			flush()
			return n, s.unexpectedEOF(err)
		}
		// Bytes are consumed (and so copied, while teeing) before what
		// they decode to goes to w, so that a copy of the message always
		// holds what w was given: a reader may decode the copy again.
		// b stays valid as bytes of it are consumed: nothing refills the
		// buffer before the next window.
		i, done := 0, 0
		advance := func(to int) {
			if to > done {
				s.consume(to - done)
				done = to
			}
		}
		straddle := false
	scan:
		for i < len(b) {
			j := plainEnd(b, i, 0, &plain)
			if j-i >= directRun {
				// A long run goes to w straight from the buffer.
				advance(j)
				flush()
				if w != nil {
					w(b[i:j])
				}
				n += int64(j - i)
			} else {
				out = append(out, b[i:j]...)
			}
			i = j
			if i == len(b) {
				break
			}
			switch c := b[i]; {
			case c == '"':
				advance(i + 1)
				flush()
				return n, nil
			case c < 0x20:
				advance(i)
				flush()
				return n, s.syntax("control character %#x in a string", c)
			}
			// An escape, decoded here when the buffer holds all of it.
			if i+1 >= len(b) {
				straddle = true
				break scan
			}
			if d := simpleEscape[b[i+1]]; d != 0 {
				out = append(out, d)
				i += 2
				continue
			}
			if b[i+1] != 'u' || i+12 > len(b) {
				straddle = true
				break scan
			}
			r, size, ok := decodeU(b[i:])
			if !ok {
				straddle = true // reported by the slow path
				break scan
			}
			out = utf8.AppendRune(out, r)
			i += size
			if len(out) >= directRun {
				advance(i)
				flush()
			}
		}
		advance(i)
		if len(out) >= directRun {
			flush()
		}
		if straddle {
			r, size, err := s.escape()
			if err != nil {
				flush()
				return n, err
			}
			s.consume(size)
			out = utf8.AppendRune(out, r)
		}
	}
}

// directRun is the length from which a run of plain bytes is passed on
// without a copy.
const directRun = 4096

// simpleEscape maps the byte after a backslash to what it stands for, or 0.
var simpleEscape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// decodeU decodes the \u escape at the start of b, and the second half of
// a surrogate pair after it, b holding what the input has of them (at
// least 12 bytes, or all the input has): ok is false for a bad hex digit
// or an escape b cuts short, and a pair b cuts short is a lone surrogate,
// U+FFFD, as a lone one is.
func decodeU(b []byte) (rune, int, bool) {
	if len(b) < 6 {
		return 0, 0, false
	}
	r, ok := Hex4(b[2:6])
	if !ok {
		return 0, 0, false
	}
	if !utf16IsSurrogate(r) {
		return r, 6, true
	}
	if r >= 0xDC00 || len(b) < 12 || b[6] != '\\' || b[7] != 'u' {
		return utf8.RuneError, 6, true
	}
	if r2, ok := Hex4(b[8:12]); ok && r2 >= 0xDC00 && r2 < 0xE000 {
		return ((r-0xD800)<<10 | (r2 - 0xDC00)) + 0x10000, 12, true
	}
	return utf8.RuneError, 6, true
}

// escape decodes the escape at the start of the buffer without consuming
// it, and returns the rune and the escape's length.
func (s *Scanner) escape() (rune, int, error) {
	b := s.peekN(12)
	r, size, ok := EscapeIn(b)
	switch {
	case ok:
		return r, size, nil
	case len(b) < 2 || b[1] == 'u' && len(b) < 6:
		return 0, 0, s.syntax("the message ends inside an escape")
	case b[1] != 'u':
		return 0, 0, s.syntax("invalid escape \\%c", b[1])
	}
	return 0, 0, s.syntax("invalid \\u escape %q", b[:6])
}

func utf16IsSurrogate(r rune) bool { return r >= 0xD800 && r < 0xE000 }

// Hex4 decodes b, the four hex digits of a \u escape.
func Hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// appendString reads a string and appends its decoded bytes to dst, which
// must stay within max bytes.
func (s *Scanner) appendString(dst []byte, max int) ([]byte, error) {
	over := false
	_, err := s.String(func(b []byte) {
		if len(dst)+len(b) > max {
			over = true
			return
		}
		dst = append(dst, b...)
	})
	if err == nil && over {
		err = s.syntax("string longer than %d bytes where a short one is expected", max)
	}
	return dst, err
}

// ShortString reads a string that must not decode to more than max bytes.
func (s *Scanner) ShortString(max int) (string, error) {
	b, err := s.appendString(nil, max)
	return string(b), err
}

// Bool reads true or false.
func (s *Scanner) Bool() (bool, error) {
	c, err := s.peekValue()
	if err != nil {
		return false, err
	}
	switch c {
	case 't':
		return true, s.literal("true")
	case 'f':
		return false, s.literal("false")
	}
	return false, s.syntax("want true or false, got %q", c)
}

func (s *Scanner) literal(lit string) error {
	b := s.peekN(len(lit))
	if len(b) < len(lit) {
		return s.syntax("the message ends inside %q", lit)
	}
	if string(b) != lit {
		return s.syntax("invalid literal %q", b)
	}
	s.consume(len(lit))
	return nil
}

func (s *Scanner) number() error {
	// Numbers are passed on as they are, never computed with, but they are
	// checked against JSON's grammar, a byte at a time, so a number of any
	// length costs no memory.
	st := numStart
	for {
		b, err := s.window()
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		i := 0
		for i < len(b) {
			next := numStep(st, b[i])
			if next == numEnd {
				break
			}
			if next == numBad {
				s.consume(i)
				return s.syntax("invalid number")
			}
			st = next
			i++
		}
		s.consume(i)
		if i < len(b) || err != nil {
			break
		}
	}
	if !numFinal(st) {
		return s.syntax("invalid number")
	}
	return nil
}

// The states of a number being read.
const (
	numStart   = iota // nothing yet
	numMinus          // "-"
	numZero           // a leading 0
	numInt            // digits of the integer part
	numDot            // "."
	numFrac           // digits after the dot
	numE              // "e" or "E"
	numExpSign        // its sign
	numExp            // digits of the exponent
	numEnd            // the byte is not part of the number
	numBad            // the byte makes the number invalid
)

func numFinal(st int) bool { return st == numZero || st == numInt || st == numFrac || st == numExp }

// numStep returns the state after byte c in state st.
func numStep(st int, c byte) int {
	digit := c >= '0' && c <= '9'
	switch st {
	case numStart, numMinus:
		switch {
		case c == '-' && st == numStart:
			return numMinus
		case c == '0':
			return numZero
		case digit:
			return numInt
		}
		return numBad
	case numZero, numInt:
		switch {
		case digit && st == numInt:
			return numInt
		case digit:
			return numBad // a leading zero
		case c == '.':
			return numDot
		case c == 'e' || c == 'E':
			return numE
		}
	case numDot, numFrac:
		switch {
		case digit:
			return numFrac
		case st == numDot:
			return numBad
		case c == 'e' || c == 'E':
			return numE
		}
	case numE:
		switch {
		case c == '+' || c == '-':
			return numExpSign
		case digit:
			return numExp
		}
		return numBad
	case numExpSign, numExp:
		if digit {
			return numExp
		}
		if st == numExpSign {
			return numBad
		}
	}
	if numberByte(c) {
		return numBad // such as a second '.', or a sign inside
	}
	return numEnd
}

func numberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// Skip consumes one value of any kind. A value nested past [MaxDepth]
// levels is a [*DepthError], returned where it went past: what is left of
// it is still to be read ([Scanner.SkipOut]).
func (s *Scanner) Skip() error { return s.skip() }

// skip reads a value with a loop rather than a recursion, keeping one byte
// per open container (its closing byte), so that a value 10,000 levels
// deep costs 10 KB, not a goroutine stack of megabytes.
func (s *Scanner) skip() error {
	s.stack = s.stack[:0] // kept in the Scanner, so that its room is reused
value:
	for {
		c, err := s.peekValue()
		if err != nil {
			return err
		}
		switch {
		case c == '{' || c == '[':
			if s.depth >= MaxDepth {
				return &DepthError{Offset: s.off}
			}
			s.consume(1)
			s.depth++
			end := byte(']')
			if c == '{' {
				end = '}'
			}
			next, err := s.peekValue()
			if err != nil {
				return err
			}
			if next == end {
				s.consume(1)
				s.depth--
				break // an empty container: a whole value
			}
			s.stack = append(s.stack, end)
			if end == '}' {
				if err := s.skipKey(); err != nil {
					return err
				}
			}
			continue value
		case c == '"':
			if _, err := s.String(nil); err != nil {
				return err
			}
		case c == 't':
			err = s.literal("true")
		case c == 'f':
			err = s.literal("false")
		case c == 'n':
			err = s.literal("null")
		case c == '-' || (c >= '0' && c <= '9'):
			err = s.number()
		default:
			return s.syntax("unexpected %q", c)
		}
		if err != nil {
			return err
		}
		// A value is done: close the containers it ends, up to the next
		// value or the end of the one skip started with.
		for len(s.stack) > 0 {
			c, err := s.peekValue()
			if err != nil {
				return err
			}
			end := s.stack[len(s.stack)-1]
			s.consume(1)
			switch c {
			case ',':
				if end == '}' {
					if err := s.skipKey(); err != nil {
						return err
					}
				}
				continue value
			case end:
				s.stack = s.stack[:len(s.stack)-1]
				s.depth--
			default:
				if end == '}' {
					return s.syntax("want ',' or '}' in an object, got %q", c)
				}
				return s.syntax("want ',' or ']' in an array, got %q", c)
			}
		}
		return nil
	}
}

// skipKey reads a member's key and its colon.
func (s *Scanner) skipKey() error {
	if c, err := s.peekValue(); err != nil {
		return err
	} else if c != '"' {
		return s.syntax("want a string key in an object, got %q", c)
	}
	if _, err := s.String(nil); err != nil {
		return err
	}
	return s.expect(':')
}

// Capture consumes one value and returns its bytes as they were, or ok ==
// false when they were more than max (the value is consumed all the same,
// and the partial copy released as soon as it went over).
func (s *Scanner) Capture(max int) (raw []byte, ok bool, err error) {
	if _, err := s.peekValue(); err != nil {
		return nil, false, err
	}
	if s.capping {
		return nil, false, errors.New("wire: nested Capture")
	}
	s.capping, s.capOver, s.capMax, s.capture = true, false, max, nil
	err = s.skip()
	raw, ok = s.capture, !s.capOver
	s.capping, s.capture = false, nil
	if !ok {
		raw = nil
	}
	return raw, ok, err
}

// StringRaw reads a string value and returns the first bytes of its
// content as written (escapes not decoded, quotes excluded), at most max of
// them and ending where a JSON string may end (never inside an escape, a
// surrogate pair or a UTF-8 character), and the length of the whole content
// as written. The head, between quotes, is a valid JSON string: the value
// itself when whole == true.
func (s *Scanner) StringRaw(max int) (head []byte, written int64, whole bool, err error) {
	if _, err := s.peekValue(); err != nil {
		return nil, 0, false, err
	}
	if s.capping {
		return nil, 0, false, errors.New("wire: nested capture")
	}
	start := s.off
	s.capping, s.capTrunc, s.capMax, s.capture = true, true, max+2, nil
	_, err = s.String(nil)
	capture := s.capture
	s.capping, s.capTrunc, s.capture = false, false, nil
	if err != nil {
		return nil, 0, false, err
	}
	written = s.off - start - 2
	if int64(len(capture)) == written+2 {
		return capture[1 : len(capture)-1], written, true, nil
	}
	return stringPrefix(capture[1:]), written, false, nil
}

// stringPrefix returns the longest prefix of b, the content of a JSON string
// as written, that ends between two characters.
func stringPrefix(b []byte) []byte {
	last := 0
	for i := 0; i < len(b); {
		n := 1
		switch c := b[i]; {
		case c == '\\':
			if i+1 >= len(b) {
				return b[:last]
			}
			n = 2
			if b[i+1] == 'u' {
				n = 6
				if i+6 <= len(b) {
					if r, ok := Hex4(b[i+2 : i+6]); ok && r >= 0xD800 && r < 0xDC00 &&
						i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
						n = 12
					} else if ok && r >= 0xD800 && r < 0xDC00 && i+12 > len(b) {
						return b[:last] // the pair may go on past the head
					}
				}
			}
		case c >= utf8.RuneSelf:
			if !utf8.FullRune(b[i:]) {
				return b[:last]
			}
			_, n = utf8.DecodeRune(b[i:])
		}
		if i+n > len(b) {
			return b[:last]
		}
		i += n
		last = i
	}
	return b[:last]
}
