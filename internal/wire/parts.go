package wire

import "unicode/utf8"

// DecodeParts decodes again a JSON string of a message the Scanner copied
// ([Scanner.TeedParts]): the string whose opening quote is at offset at of
// parts, to its closing quote or to the end of parts, whichever comes
// first. It hands w what [Scanner.String] hands on for the same bytes, but
// for invalid UTF-8, which it passes on as it is: a reader that knows the
// text had none ([Scanner.Replaced] was 0 when the copy was made) decodes
// it this way straight from the copy, with no buffer between and no second
// check of its UTF-8. An escape the end of parts cuts short is not handed
// on (String reads it from the reader, and had not handed it on either);
// a surrogate escape whose second half is cut off is U+FFFD, as String
// decodes one at the end of its input. The bytes are the ones String
// accepted, so that anything else (a control byte, an invalid escape) just
// ends the string.
//
// Pieces are handed to w in place, from parts, when they are long runs of
// plain bytes; a piece may end inside a multi-byte character, which the
// next piece completes.
func DecodeParts(parts [][]byte, at int64, w func([]byte)) {
	d := partsDecoder{parts: parts, w: w}
	for d.i < len(d.parts) && at >= int64(len(d.parts[d.i])) {
		at -= int64(len(d.parts[d.i]))
		d.i++
	}
	if d.i == len(d.parts) || d.parts[d.i][at] != '"' {
		return
	}
	d.j = int(at) + 1
	d.decode()
	d.flush()
}

// partsDecoder is the state of DecodeParts: the position (part i, byte j)
// and the decoded bytes not yet handed on.
type partsDecoder struct {
	parts [][]byte
	i, j  int
	w     func([]byte)
	out   []byte
}

func (d *partsDecoder) flush() {
	if len(d.out) > 0 {
		d.w(d.out)
		d.out = d.out[:0]
	}
}

func (d *partsDecoder) decode() {
	for d.i < len(d.parts) {
		b := d.parts[d.i]
		i := d.j
		for i < len(b) {
			j := plainEnd(b, i, 0, &plain)
			if j-i >= directRun {
				d.flush()
				d.w(b[i:j])
			} else {
				d.out = append(d.out, b[i:j]...)
			}
			i = j
			if i == len(b) {
				break
			}
			if b[i] != '\\' {
				return // the closing quote (or a byte String rejected)
			}
			// An escape the part holds whole, decoded in place, as
			// decodeString does in its buffer.
			if i+1 < len(b) {
				if c := simpleEscape[b[i+1]]; c != 0 {
					d.out = append(d.out, c)
					i += 2
					if len(d.out) >= directRun {
						d.flush()
					}
					continue
				}
			}
			if i+12 <= len(b) && b[i+1] == 'u' {
				if r, size, ok := decodeU(b[i:]); ok {
					d.out = utf8.AppendRune(d.out, r)
					i += size
					if len(d.out) >= directRun {
						d.flush()
					}
					continue
				}
			}
			var esc [12]byte
			n := d.peek(i, esc[:])
			r, size, ok := EscapeIn(esc[:n])
			if !ok {
				return // cut short by the end of the copy
			}
			d.out = utf8.AppendRune(d.out, r)
			if len(d.out) >= directRun {
				d.flush()
			}
			// Past the escape, which may end in a later part.
			d.j = i
			d.skip(size)
			if d.i >= len(d.parts) {
				return
			}
			b, i = d.parts[d.i], d.j
		}
		d.i, d.j = d.i+1, 0
	}
}

// peek copies into dst the bytes from offset i of the current part on,
// across parts, as many as dst holds or the parts have, and returns how
// many.
func (d *partsDecoder) peek(i int, dst []byte) int {
	n := copy(dst, d.parts[d.i][i:])
	for k := d.i + 1; n < len(dst) && k < len(d.parts); k++ {
		n += copy(dst[n:], d.parts[k])
	}
	return n
}

// skip moves the position n bytes on.
func (d *partsDecoder) skip(n int) {
	for d.i < len(d.parts) {
		if left := len(d.parts[d.i]) - d.j; n < left {
			d.j += n
			return
		} else {
			n -= left
		}
		d.i, d.j = d.i+1, 0
	}
}

// EscapeIn decodes the escape at the start of b (a backslash, and what
// follows of it, up to 12 bytes) as [Scanner.escape] does, where b ends
// as its input would: ok is false for an escape b does not hold whole,
// or that is not JSON. A lone surrogate is U+FFFD, as encoding/json
// decodes it.
func EscapeIn(b []byte) (rune, int, bool) {
	if len(b) < 2 {
		return 0, 0, false
	}
	if c := simpleEscape[b[1]]; c != 0 {
		return rune(c), 2, true
	}
	if b[1] != 'u' {
		return 0, 0, false
	}
	return decodeU(b)
}
