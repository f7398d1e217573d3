package claudecode

import (
	"errors"
	"fmt"
	"io"

	"github.com/toolcap/toolcap/internal/wire"
)

// This file reads a payload too long to hold (see stream.go) through a
// bounded buffer: source hands out its bytes, and the skip and capture
// functions find where a value ends exactly as wire.ValueEnd does on a
// payload in memory (strings by their closing quote, wire.StringEnd,
// containers by counting brackets, literals up to a delimiter and checked
// by a wire.Literal). A wire.StringDecoder decodes a string of any length
// in pieces, exactly as wire.Unquote decodes it whole.

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

// open consumes the bracket next, which opens a container that close
// closes, and the space after it, and reports whether the container is
// empty: then its closing bracket is consumed too.
func (s *source) open(close byte) bool {
	s.consume(1)
	s.space()
	if c, ok := s.peek(); ok && c == close {
		s.consume(1)
		return true
	}
	return false
}

// next consumes what follows a member or element of a container that
// close closes: space, and the comma after it (more: the next member or
// element follows, after space, also consumed) or close (the container
// ended). ok is false, and nothing but the space consumed, for any other
// byte, or none.
func (s *source) next(close byte) (more, ok bool) {
	s.space()
	switch c, ok := s.peek(); {
	case ok && c == ',':
		s.consume(1)
		s.space()
		return true, true
	case ok && c == close:
		s.consume(1)
		return false, true
	}
	return false, false
}

// skipValue consumes one value as wire.ValueEnd finds its end in memory: a
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
		end, next := wire.StringEnd(s.buf[s.i:s.n], bs)
		if end >= 0 {
			s.consume(end + 1)
			return nil
		}
		s.consume(s.n - s.i)
		bs = next
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
	var lit wire.Literal
	for {
		if s.i == s.n && !s.more() {
			break
		}
		j := s.i
		for j < s.n && !wire.EndsLiteral(s.buf[j]) {
			lit.Add(s.buf[j])
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
	if !lit.Valid() {
		return errors.New("invalid value")
	}
	return nil
}
