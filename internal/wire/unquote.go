package wire

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
	"unsafe"
)

// This file decodes a JSON string held in memory ([AppendUnquoted]) or
// handed over in pieces ([StringDecoder]), as a reader that holds or
// streams a JSON document of its own reads it (the Claude Code hook reads
// its payload so), with the escapes the Scanner decodes. Both decode as
// encoding/json does: invalid UTF-8 and a lone surrogate become U+FFFD,
// and a quote, a control character or a bad escape is an error, which
// wraps ErrNotString.

// ErrNotString is wrapped by the errors of bytes that are not a JSON
// string's: see [AppendUnquoted].
var ErrNotString = errors.New("not a JSON string")

// errMore says that a unit needs bytes past the end of the piece it starts
// in: the piece's end does not settle it.
var errMore = errors.New("wire: a unit cut short")

// Unquote decodes raw, one JSON string with its quotes, as
// [AppendUnquoted] decodes what is between them.
func Unquote(raw []byte) (string, error) {
	s, _, err := UnquoteTo(nil, raw)
	return s, err
}

// UnquoteTo is [Unquote], decoding into dst when the string, as written,
// fits in it: used is how many bytes of dst the string took (0 when it
// went to memory of its own, which a string that decodes longer than
// written does, after writing its head to dst). Nothing past the string's
// length as written is written to dst. The string shares the memory it was
// decoded into, which must not be written again: a text of any size is
// decoded once, never copied.
func UnquoteTo(dst, raw []byte) (s string, used int, err error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", 0, ErrNotString
	}
	w := raw[1 : len(raw)-1]
	i := plainEnd(w, 0, highs, &plainASCII)
	if i == len(w) && len(w) > len(dst) {
		return string(w), 0, nil // nothing to decode: one copy
	}
	// Decoded, a string is no longer than written, but for invalid UTF-8
	// (a byte becomes U+FFFD's three): append grows b only then, into
	// memory of its own.
	var b []byte
	if len(w) <= len(dst) {
		b = dst[:i:len(w)]
	} else {
		b = make([]byte, i, len(w))
	}
	copy(b, w[:i])
	if b, err = AppendUnquoted(b, w[i:]); err != nil {
		return "", 0, err
	}
	if len(b) > 0 && len(w) <= len(dst) && unsafe.SliceData(b) == unsafe.SliceData(dst) {
		used = len(b)
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), used, nil
}

// AppendUnquoted appends to dst the decoding of s, the bytes of one JSON
// string between its quotes, as encoding/json decodes it, and returns the
// extended slice. The error (which wraps [ErrNotString]) is for a quote or
// a control character in s, a bad escape, or one s cuts short; dst is then
// undefined.
func AppendUnquoted(dst, s []byte) ([]byte, error) {
	for i := 0; i < len(s); {
		j := plainEnd(s, i, highs, &plainASCII)
		dst = append(dst, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			j = plainEnd(s, i, 0, &plain)
			dst = appendText(dst, s[i:j])
			i = j
		case c == '\\' && i+1 < len(s) && simpleEscape[s[i+1]] != 0:
			dst = append(dst, simpleEscape[s[i+1]])
			i += 2
		default:
			var err error
			if dst, i, err = appendEscape(dst, s, i, false); err != nil {
				return dst, err
			}
		}
	}
	return dst, nil
}

// appendText appends run, bytes that stand for themselves in a JSON
// string, as they decode: each byte that is not valid UTF-8 is a U+FFFD.
// A run of text is checked at once, and decoded a character at a time
// only when it is not valid.
func appendText(dst, run []byte) []byte {
	if utf8.Valid(run) {
		return append(dst, run...)
	}
	for i := 0; i < len(run); {
		dst, i = appendRune(dst, run, i)
	}
	return dst
}

// appendRune appends the UTF-8 character at b[i], or U+FFFD for a byte
// that does not start one, and returns where the next one starts.
func appendRune(dst, b []byte, i int) ([]byte, int) {
	r, size := utf8.DecodeRune(b[i:])
	if r == utf8.RuneError && size == 1 {
		return utf8.AppendRune(dst, r), i + 1
	}
	return append(dst, b[i:i+size]...), i + size
}

// appendEscape appends to dst what the escape at s[i] decodes to, and
// returns where the next unit starts; a byte at s[i] that is not a
// backslash is one a string does not hold (a quote or a control
// character), an error. The position returned is past a bad unit too.
// With more, s may go on past its end, and an escape whose bytes s does
// not settle is errMore; without it, s ends where the string does.
func appendEscape(dst, s []byte, i int, more bool) ([]byte, int, error) {
	if c := s[i]; c != '\\' {
		return dst, i + 1, fmt.Errorf("%w: unescaped %q", ErrNotString, c)
	}
	r, size, err := escapeAt(s[i:], more)
	if err != nil {
		return dst, i + min(2, len(s)-i), err
	}
	return utf8.AppendRune(dst, r), i + size, nil
}

// escapeAt decodes the escape at the start of b, a backslash, as
// [EscapeIn] does where b ends as the string does; with more, b may go on,
// and an escape the bytes of b do not settle is errMore: a \u escape cut
// short, or a high surrogate whose b may still hold the second half of a
// pair.
func escapeAt(b []byte, more bool) (rune, int, error) {
	b = b[:min(len(b), 12)]
	if more && len(b) < 12 && !settled(b) {
		return 0, 0, errMore
	}
	r, size, ok := EscapeIn(b)
	switch {
	case ok:
		return r, size, nil
	case len(b) < 2:
		return 0, 0, ErrNotString
	case b[1] != 'u':
		return 0, 0, fmt.Errorf("%w: bad escape \\%c", ErrNotString, b[1])
	}
	return 0, 0, fmt.Errorf("%w: bad \\u escape", ErrNotString)
}

// settled reports whether b, the start of an escape (fewer than 12 bytes),
// decodes to the same whatever bytes follow it: it is no \u escape, or one
// with a bad digit, or whole and no high surrogate, or one whose next
// bytes cannot be the second half of a pair.
func settled(b []byte) bool {
	switch {
	case len(b) < 2:
		return false
	case b[1] != 'u' || !hexPrefix(b[2:]):
		return true
	case len(b) < 6:
		return false
	}
	if r, _ := Hex4(b[2:6]); r < 0xD800 || r >= 0xDC00 {
		return true
	}
	next := b[6:]
	pair := (len(next) < 1 || next[0] == '\\') && (len(next) < 2 || next[1] == 'u') && hexPrefix(next[min(len(next), 2):])
	return !pair
}

// hexPrefix reports whether the first bytes of b, up to four, are hex
// digits: whether b may open a \u escape's.
func hexPrefix(b []byte) bool {
	d := [4]byte{'0', '0', '0', '0'}
	copy(d[:], b)
	_, ok := Hex4(d[:])
	return ok
}

// A StringDecoder decodes a JSON string that arrives in pieces, byte for
// byte as [AppendUnquoted] decodes it whole: the pieces are the string's
// bytes after its opening quote ([StringDecoder.Write] finds the closing
// one). Decoded bytes go to emit in pieces, which emit must not keep. A
// sequence a piece cuts short (an escape, a UTF-8 character) is held until
// the next piece, and only while the bytes seen so far do not settle it,
// so that what is held never holds the closing quote. After the first
// error ([StringDecoder.Err]) the rest of the string is only read for its
// end.
type StringDecoder struct {
	emit  func([]byte)
	out   []byte
	carry [12]byte
	nc    int
	err   error
	bs    int // after an error: the backslashes that end what was read
	n     int // decoded bytes so far, emitted or not
}

// NewStringDecoder returns a StringDecoder that hands emit its decoded
// bytes in pieces of up to size bytes, or longer runs as they were
// written.
func NewStringDecoder(emit func([]byte), size int) *StringDecoder {
	return &StringDecoder{emit: emit, out: make([]byte, 0, max(size, utf8.UTFMax))}
}

// Err returns the error of the string so far: what AppendUnquoted returns
// for it, nil while it is a JSON string.
func (d *StringDecoder) Err() error { return d.err }

// Len returns how many bytes the string decoded to so far, handed on to
// emit or not.
func (d *StringDecoder) Len() int { return d.n }

// put adds decoded bytes: a long run of them goes to emit as it is.
func (d *StringDecoder) put(b []byte) {
	d.n += len(b)
	if len(d.out)+len(b) > cap(d.out) {
		d.Flush()
		if len(b) >= cap(d.out) {
			d.emit(b)
			return
		}
	}
	d.out = append(d.out, b...)
}

// Flush hands emit what is buffered: at the string's closing quote, or
// before what comes next is handed on otherwise.
func (d *StringDecoder) Flush() {
	if len(d.out) > 0 {
		d.emit(d.out)
		d.out = d.out[:0]
	}
}

// The outcomes of StringDecoder.step.
const (
	stepOK   = iota // a unit was decoded
	stepEnd         // the closing quote is at the position
	stepMore        // the sequence at the position needs bytes past the piece
)

// step decodes the unit at s[i]: a run of plain ASCII bytes, a run of
// text, an escape or a byte a string does not hold. It returns where the
// next unit starts.
func (d *StringDecoder) step(s []byte, i int) (int, int) {
	switch c := s[i]; {
	case plainASCII[c]:
		j := plainEnd(s, i, highs, &plainASCII)
		d.put(s[i:j])
		return j, stepOK
	case c == '"':
		return i, stepEnd
	case c >= utf8.RuneSelf:
		j := plainEnd(s, i, 0, &plain)
		if j == len(s) {
			if j = fullEnd(s, i); j == i {
				return i, stepMore
			}
		}
		d.text(s[i:j])
		return j, stepOK
	case c == '\\' && i+1 < len(s) && simpleEscape[s[i+1]] != 0:
		if len(d.out) == cap(d.out) {
			d.Flush()
		}
		d.out = append(d.out, simpleEscape[s[i+1]])
		d.n++
		return i + 2, stepOK
	}
	d.room()
	before := len(d.out)
	out, next, err := appendEscape(d.out, s, i, true)
	switch {
	case err == errMore:
		return i, stepMore
	case err != nil:
		d.err = err
	}
	d.out = out
	d.n += len(out) - before
	return next, stepOK
}

// fullEnd returns the end of the UTF-8 characters b holds whole from b[i]
// on: len(b), or where a sequence b's end cuts short starts.
func fullEnd(b []byte, i int) int {
	for k := len(b) - 1; k >= max(i, len(b)-utf8.UTFMax+1); k-- {
		if utf8.RuneStart(b[k]) {
			if !utf8.FullRune(b[k:]) {
				return k
			}
			break
		}
	}
	return len(b)
}

// text adds run, bytes that stand for themselves in a string, as
// appendText decodes them.
func (d *StringDecoder) text(run []byte) {
	if utf8.Valid(run) {
		d.put(run)
		return
	}
	for i := 0; i < len(run); {
		d.room()
		before := len(d.out)
		d.out, i = appendRune(d.out, run, i)
		d.n += len(d.out) - before
	}
}

// room makes room in the buffer for one character.
func (d *StringDecoder) room() {
	if len(d.out)+utf8.UTFMax > cap(d.out) {
		d.Flush()
	}
}

// Write decodes p, the string's next bytes, and returns the index in p of
// its closing quote, or -1 when the string goes on past p. What it decoded
// may still be buffered: Flush hands it on.
func (d *StringDecoder) Write(p []byte) int {
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
			end, bs := StringEnd(s[j:], 0)
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
		end, bs := StringEnd(p[i:], d.bs)
		if end >= 0 {
			return i + end
		}
		d.bs = bs
	}
	return -1
}

// StringEnd returns the index in p of the quote that closes a string whose
// bytes before p end in bs backslashes, or -1 and the backslashes that end
// p, counted with those before it when p is all backslashes: a quote
// closes the string when an even run of backslashes precedes it. Nothing
// else is checked: it finds the end of a string as a reader that decodes
// it only when it needs it does, searching for each quote rather than
// reading byte by byte.
func StringEnd(p []byte, bs int) (int, int) {
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
