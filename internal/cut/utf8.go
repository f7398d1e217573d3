package cut

import (
	"unicode/utf8"
)

// A limit holds in what the client decodes. A byte that is not part of a
// valid UTF-8 sequence reaches a client as U+FFFD, three bytes, once it is
// decoded (encoding/json decodes each such byte so, and so does Go's range
// over a string), so a text of n bytes may be 3n bytes long where the model
// reads it. Every cut therefore replaces such bytes first, one U+FFFD for
// each, and measures, cuts and counts the replaced text: the output is valid
// UTF-8 within the limit, and every figure of [Stats] is in bytes of the
// text as the client decodes it.

// replacementRun is U+FFFD 128 times, handed out in slices so that a run
// of invalid bytes is replaced without building anything. A constant, so
// that no process builds it at start.
const replacementRun = replacement32 + replacement32 + replacement32 + replacement32

const (
	replacement8  = "\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD"
	replacement32 = replacement8 + replacement8 + replacement8 + replacement8
)

// byteTable holds every byte value at its own index.
var byteTable = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	return t
}()

// ReplaceInvalid returns s with each byte that is not part of a valid UTF-8
// sequence replaced by U+FFFD, as a client's JSON decoder decodes it, and
// the number of bytes replaced. Valid s is returned as it is, without an
// allocation; the check costs a pass over s.
func ReplaceInvalid(s string) (string, int) {
	if utf8.ValidString(s) {
		return s, 0
	}
	b := make([]byte, 0, len(s)+len(s)/2)
	emit := func(p []byte) { b = append(b, p...) }
	var r Replacer
	r.Write(stringBytes(s), emit)
	r.Flush(emit)
	return bytesString(b), r.replaced
}

// unread reports whether n bytes fit limit even if each is invalid UTF-8
// and decodes to a 3-byte U+FFFD: a text that short is passed on as it is,
// never read. It is the one home of that threshold.
func unread(n, limit int) bool { return n <= limit/3 }

// DecodesAsIs reports whether s reaches a client as it is, within a limit
// of limit bytes as far as its encoding goes: it is valid UTF-8, or short
// enough that even a U+FFFD for each of its bytes fits (then s is not read
// at all). It says nothing of len(s) against the limit.
func DecodesAsIs(s string, limit int) bool {
	return unread(len(s), limit) || utf8.ValidString(s)
}

// Decoded returns s as a client decodes it under a limit of limit bytes,
// and the number of bytes replaced: s unread when even a U+FFFD for each
// of its bytes fits, [ReplaceInvalid] of s otherwise.
func Decoded(s string, limit int) (string, int) {
	if unread(len(s), limit) {
		return s, 0
	}
	return ReplaceInvalid(s)
}

// Replacer makes a stream of bytes valid UTF-8 the way [ReplaceInvalid]
// makes a string valid: each byte that is not part of a valid sequence
// becomes U+FFFD. A sequence split across two writes is held (at most 3
// bytes) until the write that completes or breaks it. Valid input is passed
// on as it comes, with no copy. The zero Replacer is ready to use; it is
// not safe for concurrent use. [Writer] uses one, and so does a front end
// that decodes text in pieces (the MCP proxy's JSON scanner).
type Replacer struct {
	carry    [utf8.UTFMax]byte // the start of a sequence the next write may complete
	nc       int
	replaced int
}

// Replaced returns the number of bytes replaced so far.
func (r *Replacer) Replaced() int { return r.replaced }

// Pending returns the number of bytes held: the start of a sequence the
// next write may complete.
func (r *Replacer) Pending() int { return r.nc }

// Write passes p on to emit, in one or more pieces, with each invalid byte
// replaced. emit must not modify or keep the pieces it gets. emit is only
// called, never kept, so a closure passed here need not escape: a caller
// that decodes text on its hot path pays no allocation for it.
func (r *Replacer) Write(p []byte, emit func([]byte)) {
	// First the sequence held from the last write, completed from p.
	for r.nc > 0 {
		if !utf8.FullRune(r.carry[:r.nc]) {
			if len(p) == 0 {
				return
			}
			r.carry[r.nc] = p[0]
			r.nc++
			p = p[1:]
			continue
		}
		c, size := utf8.DecodeRune(r.carry[:r.nc])
		if c == utf8.RuneError && size == 1 {
			r.replace(1, emit)
		} else {
			// Byte by byte from a table: emit may be any func, and
			// handing it the Replacer's own bytes would move every
			// Replacer to the heap.
			for _, c := range r.carry[:size] {
				emit(byteTable[c : int(c)+1])
			}
		}
		// What follows the decoded sequence is read again, before p.
		r.nc = copy(r.carry[:], r.carry[size:r.nc])
	}
	for len(p) > 0 {
		if utf8.Valid(p) {
			emit(p)
			return
		}
		// The usual reason a piece of valid text is not valid: it ends
		// inside a character. Two fast checks say so.
		if i := incompleteTail(p); i < len(p) && utf8.Valid(p[:i]) {
			if i > 0 {
				emit(p[:i])
			}
			r.nc = copy(r.carry[:], p[i:])
			return
		}
		if i := validPrefix(p); i > 0 {
			emit(p[:i])
			p = p[i:]
		}
		if !utf8.FullRune(p) {
			r.nc = copy(r.carry[:], p)
			return
		}
		// p starts with invalid bytes: replace the run of them.
		j := 0
		for j < len(p) && utf8.FullRune(p[j:]) {
			if c, size := utf8.DecodeRune(p[j:]); c != utf8.RuneError || size != 1 {
				break
			}
			j++
		}
		r.replace(j, emit)
		p = p[j:]
	}
}

// Flush ends the stream: a sequence still held, which no byte can complete
// now, goes to emit replaced, one U+FFFD for each of its bytes.
func (r *Replacer) Flush(emit func([]byte)) {
	if r.nc > 0 {
		r.replace(r.nc, emit)
		r.nc = 0
	}
}

// replace emits n replacement characters.
func (r *Replacer) replace(n int, emit func([]byte)) {
	r.replaced += n
	per := len(replacementRun) / 3
	for n > 0 {
		k := min(n, per)
		emit(stringBytes(replacementRun[:3*k]))
		n -= k
	}
}

// incompleteTail returns where the last character of p starts when p ends
// inside it (the bytes there begin a valid sequence that p cuts short), or
// len(p).
func incompleteTail(p []byte) int {
	for i := len(p) - 1; i >= 0 && i > len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				return i
			}
			return len(p)
		}
	}
	return len(p)
}

// validPrefix returns the length of the longest prefix of p that is valid
// UTF-8 and ends on a character boundary.
func validPrefix(p []byte) int {
	i := 0
	for i < len(p) {
		if p[i] < utf8.RuneSelf {
			i++
			continue
		}
		c, size := utf8.DecodeRune(p[i:])
		if c == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return i
}
