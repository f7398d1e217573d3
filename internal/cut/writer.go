package cut

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"unsafe"

	"github.com/toolcap/toolcap/internal/hugepage"
)

// Writer cuts content that arrives in pieces, such as a tool's output read
// from a pipe or a result of hundreds of megabytes, holding memory bounded by
// the limit whatever the length of the input. Write the content to it, then
// call Result once: for valid UTF-8 the output and figures are byte for
// byte what [Cut] returns for the concatenation of everything written
// (for invalid UTF-8, see below).
//
// What it holds:
//
//   - KeepHead: the first limit+4 bytes; the rest is counted.
//   - KeepHeadTail: the first and the last limit+4 bytes, and with
//     KeepLines the matching lines the cut may rescue: the line being read
//     (up to a quarter of the limit), at most MaxRescuedLines+1 recorded
//     lines, which take at most a quarter of the limit plus the lines within
//     the last limit+4 bytes. About 2.5 times the limit at most.
//   - KeepJSON: the whole input while it is at most limit+4 bytes long.
//     Past that, the first limit+4 bytes and what its text strategy (the
//     Fallback) holds, as above, and the document is cut as it streams:
//     it is validated as it comes, and its compacted form (the whitespace
//     between tokens removed) is held up to limit+16 bytes, with the
//     containers open at each point (at most 10,000, the nesting
//     json.Valid accepts). Every structural cut of the document at the
//     limit or below is made from that prefix. With the head rule as the
//     text strategy, the first limit+4 bytes are not held beside the
//     prefix: they are the prefix's start and the whitespace dropped from
//     them (about two bytes a line of an indented document), and Result
//     cuts in the prefix's own storage, so that the document is held about
//     once. At the first byte that is not valid JSON, or past
//     [JSONMaxInput](limit), only the text strategy's part is held and the
//     content is cut as text, as Cut does.
//
// Bytes that are not valid UTF-8 are replaced by U+FFFD as they are written
// (see [Replacer]; a sequence split across two writes is held until the
// next), so a Writer cuts, and its figures count, the text as a client
// decodes it. Precisely, the Writer gives what Cut gives for the replaced
// text, since it reads every byte. That differs from Cut's output for the
// content itself in two cases, where Cut reads less: content short enough
// to fit at 3 bytes a byte, which Cut passes on unread; and a head or
// head_tail cut whose windows are valid but whose bytes past them are not,
// which Cut counts as they are (a smaller N and Original, Replaced 0)
// while the Writer counts them decoded. Both fit the limit as the client
// decodes them.
//
// A Writer is not safe for concurrent use. Its Write never fails before
// Result; after Result it returns an error.
type Writer struct {
	limit int
	spec  Spec
	win   int // windowLen(limit)
	n     int

	head []byte // the first min(n, win) bytes
	tail bool   // whether the text strategy keeps a tail
	ring []byte // the last win bytes, once n > win; ring[pos] is the oldest
	pos  int

	rec      *lineRecorder
	cur      []byte // the line being read, while it is at most rec.room+1 long
	curStart int
	curLong  bool

	json    []byte      // the whole input, for KeepJSON, while within the head window
	jsonOff bool        // the input is not held whole in json
	js      *jsonStream // cuts the document as it streams, past the window
	// headJS says js holds the head window: compacted, where json held it,
	// with the whitespace it dropped (see stream); head is then nil.
	headJS bool
	done   bool

	// undo holds the bytes of the head window, from undoAt on, that
	// ResultRestAt wrote its cut over, to be put back before the next
	// cut reads the window (see restore).
	undo   []byte
	undoAt int

	fix Replacer // makes the input valid UTF-8 before it is counted
}

// NewWriter returns a Writer that cuts to limit with spec.
func NewWriter(limit int, spec Spec) *Writer {
	w := &Writer{limit: limit, spec: spec, win: windowLen(limit)}
	w.tail = spec.text() == KeepHeadTail
	if w.tail && len(spec.KeepLines) > 0 {
		w.rec = &lineRecorder{res: spec.KeepLines, room: rescueRoom(limit), tailWin: w.win}
	}
	w.jsonOff = spec.keep() != KeepJSON
	return w
}

// errDone is what Write returns after Result.
var errDone = errors.New("cut: write after Result")

// Write adds p to the content. It never keeps p.
func (w *Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, errDone
	}
	w.fix.Write(p, w.put)
	return len(p), nil
}

// WriteString is Write for a string.
func (w *Writer) WriteString(s string) (int, error) {
	if w.done {
		return 0, errDone
	}
	// The pieces are only read, so the string's bytes serve as they are.
	w.fix.Write(stringBytes(s), w.put)
	return len(s), nil
}

// put adds p, valid UTF-8 (but for a sequence its Replacer holds), to the
// content.
func (w *Writer) put(p []byte) {
	if len(p) == 0 {
		return
	}
	off := w.n
	w.n += len(p)
	if !w.jsonOff {
		if w.n <= w.win {
			// While the whole input is held, the head window is its
			// prefix (see prefix): one copy of the input, not two.
			c := w.jsonCap()
			w.json = appendJSON(w.json, p, c, c)
		} else {
			w.stream()
		}
	}
	if w.js != nil && (w.n > JSONMaxInput(w.limit) || !w.js.write(p)) {
		// Past the bound, or not JSON: cut as text.
		w.dropStream(off)
	}
	if room := w.win - len(w.head); room > 0 && w.jsonOff && !w.headJS {
		take := min(room, len(p))
		if w.head == nil {
			// One allocation of its final size when the input is large
			// enough to need it; a short first piece gets a short buffer.
			w.head = make([]byte, 0, min(w.win, max(len(p), 4096)))
		}
		w.head = appendBounded(w.head, p[:take], w.win)
	}
	if w.tail && w.n > w.win {
		w.writeRing(p)
	}
	if w.rec != nil {
		w.lines(p, off)
	}
}

// stream starts cutting the document as it streams, from its first byte,
// once it has outgrown the head window, while it may still be cut as JSON:
// what was held becomes the head window. With the head rule as the text
// strategy, the stream compacts the window where it lies, in the held
// document's buffer (jsonCap left room there for the prefix), and holds it
// (headJS): the document is held once, its compacted prefix, with the
// whitespace the window had (about two bytes a line of an indented
// document), from which the window is given back when a text cut needs
// it. Otherwise the window is kept as it is beside the stream's own
// prefix.
func (w *Writer) stream() {
	held := w.json
	w.json, w.jsonOff = nil, true
	switch {
	case w.n > JSONMaxInput(w.limit):
		w.head = held
	case w.streamHoldsHead():
		if m := jsonPrefixMax(w.limit); cap(held) < m {
			// The piece that outgrew the window came first, or
			// nearly: the prefix's buffer, with what was held.
			held = append(make([]byte, 0, m), held...)
		}
		w.js, w.headJS = newJSONStreamIn(w.limit, held, w.win), true
		if !w.js.write(held) {
			// Not JSON: the window as it was written. What the stream
			// had not read yet is where it was.
			r := w.js.raw
			w.head = append(w.js.appendRaw(make([]byte, 0, w.win), r), held[r:]...)
			w.js, w.headJS = nil, false
		}
	default:
		w.head = held
		w.js = newJSONStream(w.limit)
		w.js.write(w.head)
	}
}

// dropStream stops cutting the document as JSON (it is not JSON, or it is
// past JSONMaxInput) before the piece at offset off: the head window, if
// the stream held it, is given back as it was written, as far as the
// bytes before that piece (put adds the piece's own).
func (w *Writer) dropStream(off int) {
	if w.headJS {
		w.head = w.js.appendRaw(make([]byte, 0, w.win), min(off, w.win))
		w.headJS = false
	}
	w.js = nil
}

// streamHoldsHead reports whether the JSON stream, once started, holds
// the head window (see stream): with the head rule as the text strategy,
// at a limit whose prefix can be allocated.
func (w *Writer) streamHoldsHead() bool {
	return !w.tail && jsonPrefixMax(w.limit) < math.MaxInt
}

// jsonCap is the capacity the held document grows to: with room for a
// stream's prefix when the stream will take the held document's storage
// (see stream).
func (w *Writer) jsonCap() int {
	if w.streamHoldsHead() {
		return max(w.win, jsonPrefixMax(w.limit))
	}
	return w.win
}

// headCopy returns a copy of the head window's first k bytes (all of it
// when it is shorter).
func (w *Writer) headCopy(k int) []byte {
	if w.headJS {
		k = min(k, w.win, w.n)
		return w.js.appendRaw(make([]byte, 0, k), k)
	}
	return slices.Clone(w.head[:min(len(w.head), k)])
}

// appendBounded appends p to b, growing b at most to most bytes. Past 1 MiB
// it grows straight to most, so that a large limit does not leave a trail
// of doubled buffers behind (the peak memory of a stream is the point).
func appendBounded(b, p []byte, most int) []byte {
	if len(b)+len(p) > cap(b) {
		size := max(2*cap(b), len(b)+len(p))
		if size > 1<<20 {
			size = most
		}
		nb := make([]byte, len(b), min(most, size))
		hugepage.Advise(nb) // a window of megabytes is filled from here on
		copy(nb, b)
		b = nb
	}
	return append(b, p...)
}

// appendJSON appends p to b, the document a KeepJSON Writer holds, growing
// b to at most most bytes (len(b)+len(p) must be within it). Each buffer
// it outgrows stays in the process's memory (a short process never gets
// it back), so the sizes are chosen for the sum: b doubles up to 1 MiB (or
// half of most, when that is less); past it, it grows straight to win
// while the input may still fit the limit (a document that fits is then
// held in one buffer of its final size), and otherwise doubles, going
// straight to most from the step that would reach half of it. A Writer
// holds the document only while it is within the window, and passes its
// jsonCap as both win and most (past the window, the document is cut as
// it streams, in the same buffer): an 8 MB document at an 8 MiB limit
// takes buffers of 1 and 8 MiB. (append grows a large slice by a quarter
// at a time: about five times the document.) The capacity not yet written
// to is never touched.
func appendJSON(b, p []byte, win, most int) []byte {
	need := len(b) + len(p)
	if need <= cap(b) {
		return append(b, p...)
	}
	size := max(2*cap(b), need, 4096)
	switch {
	case size <= 1<<20 && size < most/2:
	case need <= win:
		size = max(win, need)
	case size >= most/2:
		size = most
	}
	nb := make([]byte, len(b), min(most, size))
	copy(nb, b)
	return append(nb, p...)
}

// writeRing keeps the last win bytes of the content, p being its latest.
func (w *Writer) writeRing(p []byte) {
	if len(p) >= w.win {
		if w.ring == nil {
			w.ring = make([]byte, w.win)
		}
		copy(w.ring, p[len(p)-w.win:])
		w.pos = 0
		return
	}
	if w.ring == nil {
		// The content first outgrows the window with p: everything before
		// p is in the head, and the ring starts as its last bytes and p,
		// oldest first.
		w.ring = make([]byte, w.win)
		before := w.n - len(p)
		need := w.win - len(p)
		copy(w.ring, w.prefix()[before-need:before])
		copy(w.ring[need:], p)
		w.pos = 0
		return
	}
	k := copy(w.ring[w.pos:], p)
	copy(w.ring, p[k:])
	w.pos = (w.pos + len(p)) % w.win
}

// lines feeds the line recorder with the lines p completes; off is the
// offset of p in the content.
func (w *Writer) lines(p []byte, off int) {
	r := w.rec
	for len(p) > 0 && !r.closed {
		i := bytes.IndexByte(p, '\n')
		seg := p
		if i >= 0 {
			seg = p[:i+1]
		}
		if !w.curLong {
			if len(w.cur)+len(seg) > r.room {
				w.cur, w.curLong = w.cur[:0], true
			} else {
				w.cur = append(w.cur, seg...)
			}
		}
		if i < 0 {
			break
		}
		b := off + i + 1
		if !w.curLong && b > w.win {
			r.addBytes(w.curStart, b, w.cur)
		}
		w.cur, w.curLong, w.curStart = w.cur[:0], false, b
		p, off = p[i+1:], b
	}
	r.advance(w.n)
}

// finish ends the input: a sequence the Replacer still holds is replaced.
func (w *Writer) finish() {
	w.done = true
	w.fix.Flush(w.put)
}

// Result returns the cut of everything written, as [Cut] would, and ends
// the Writer: the cut may be made in the Writer's own storage (its head
// window, or the compacted prefix of a JSON document), so that a large
// limit's cut is not a second copy of what the Writer held, and no other
// result is asked of the Writer after it.
func (w *Writer) Result() (string, Stats) {
	w.finish()
	w.restore()
	out, st := w.result()
	st.Replaced = w.fix.replaced
	return out, st
}

func (w *Writer) result() (string, Stats) {
	if w.n <= w.limit {
		return w.whole(), Stats{Original: w.n, Kept: w.n}
	}
	if w.limit <= 0 {
		return "", Stats{Original: w.n, Dropped: w.n, Strategy: w.spec.text()}
	}
	if w.json != nil {
		return cutOver(bytesString(w.json), w.limit, w.spec)
	}
	if w.js != nil {
		// The last result: made in the stream's prefix (see Result).
		if out, st, ok := w.js.cut(w.n, w.limit, true); ok {
			return out, st
		}
	}
	if !w.tail {
		head := w.head
		if w.headJS {
			head = w.headCopy(w.win)
		}
		out, dropped := headBytes(head, w.n, w.limit)
		return bytesString(out), Stats{Original: w.n, Kept: w.n - dropped, Dropped: dropped, Strategy: KeepHead}
	}
	v := w.view()
	var buf []byte
	if cap(w.head) >= w.limit {
		buf = w.head
	}
	return v.cut(w.limit, w.spec, buf)
}

// prefix returns the head window: the first min(n, win) bytes written.
func (w *Writer) prefix() []byte {
	if w.headJS {
		return w.headCopy(w.win)
	}
	if w.jsonOff {
		return w.head
	}
	return w.json[:min(len(w.json), w.win)]
}

// whole returns everything written, which the Writer holds whole: n is
// within the limit. It shares the Writer's storage, which nothing writes
// to once the input has ended (a cut that reuses the head window's
// storage is made only of input over the limit).
func (w *Writer) whole() string {
	if w.json != nil {
		return bytesString(w.json)
	}
	return bytesString(w.head)
}

// view returns the head_tail view of everything written.
func (w *Writer) view() view {
	v := view{n: w.n, head: bytesString(w.head)}
	if w.ring == nil {
		// Everything is in the head window.
		v.tail = v.head[len(v.head)-min(w.n, w.win):]
	} else {
		// Rotate the ring in place so that it reads oldest first (once:
		// then pos is 0 and rotating again changes nothing).
		slices.Reverse(w.ring[:w.pos])
		slices.Reverse(w.ring[w.pos:])
		slices.Reverse(w.ring)
		w.pos = 0
		v.tail = bytesString(w.ring)
	}
	if w.rec != nil {
		w.rec.advance(w.n)
		v.lines = w.rec.lines
	}
	return v
}

// ResultAt returns the cut of everything written at limit, a limit no
// larger than the Writer's, byte for byte what [Cut] returns for the
// concatenation of everything written at that limit, and ends the Writer
// for Write. Unlike Result, it may be called again, at other limits: the
// cuts of the token limit ([Writer.ResultTokens]) are made this way. Each
// call allocates its output, but for everything written when it fits, and
// a JSON document that fits compacted, which are returned as the Writer
// holds them. A limit above the Writer's is cut at the Writer's.
//
// One exception: the lines a head_tail cut with KeepLines rescues at a
// smaller limit are rescued from those the Writer kept for its own limit.
// It keeps every matching line of at most a quarter of its limit until
// those surely in the dropped middle (ending at least limit+4 bytes before
// the end) pass that quarter, or they number 65; a cut at a smaller limit, which
// rescues only shorter lines, may have gone on to a later one, which the
// Writer no longer saw. No stream can keep, in memory bounded by its
// limit, every line some smaller limit would rescue (at each L, any line
// of at most L/4 bytes may be the first). The cut then rescues fewer or
// other lines than Cut, and stays within limit.
func (w *Writer) ResultAt(limit int) (string, Stats) {
	w.finish()
	w.restore()
	out, st := w.resultAt(limit)
	st.Replaced = w.fix.replaced
	return out, st
}

// ResultRestAt is [Writer.ResultAt] at limit with a read added to the
// cut's marker, as [WithRest] adds it: mark is given the cut and its
// figures, and returns the plain marker of the cut to add the read to and
// the read, or false to leave the cut as it is (ok is then false). It
// ends the Writer for Write.
//
// A cut by the head rule is made, and the read added to its marker, in
// the Writer's own head window, so that the cut of a large limit is one
// output and no copy of it (a kept head of 64 MiB is held once, not three
// times). The few bytes of the window it writes over are kept aside and
// put back by the next call of any of the Writer's Result methods, which
// ends the validity of the string this one returned: a caller that falls
// back to a plain cut (ResultAt) lets the marked one go. Another strategy
// cuts as ResultAt does and adds the read to a copy.
func (w *Writer) ResultRestAt(limit int, mark func(out string, st Stats) (Found, Rest, bool)) (out string, st Stats, ok bool) {
	w.finish()
	w.restore()
	limit = min(limit, w.limit)
	if w.n <= limit || limit <= 0 || w.json != nil || w.js != nil || w.tail {
		out, st = w.resultAt(limit)
		st.Replaced = w.fix.replaced
		f, r, ok := mark(out, st)
		if !ok {
			return out, st, false
		}
		return WithRest(out, f, r), st, true
	}
	// The head rule, as resultAt cuts it, on the window in place.
	head := w.head[:min(len(w.head), windowLen(limit))]
	k := headPoint(head, w.n, limit)
	dropped := w.n - k
	st = Stats{Original: w.n, Kept: k, Dropped: dropped, Strategy: KeepHead, Replaced: w.fix.replaced}
	ml := MarkerLen(dropped)
	if k+ml > limit {
		// A bare cut: no marker to name the read in.
		out = bytesString(w.head[:k])
		f, r, ok := mark(out, st)
		if !ok {
			return out, st, false
		}
		return WithRest(out, f, r), st, true
	}
	w.keep(k, k+ml)
	b := appendMarker(w.head[:k], dropped)
	out = bytesString(b)
	f, r, ok := mark(out, st)
	if !ok {
		return out, st, false
	}
	extra := r.suffixLen()
	if f.End > len(b) || f.End < 1 || len(b)+extra > cap(b) {
		return WithRest(out, f, r), st, true
	}
	// The read goes before the marker's closing bracket: what follows
	// that bracket (nothing, for the head rule) moves up by its length.
	w.keep(k, len(b)+extra)
	b = b[:len(b)+extra]
	copy(b[f.End-1+extra:], b[f.End-1:len(b)-extra])
	at := f.End - 1
	at += copy(b[at:], restLead)
	at += copy(b[at:], r.Tool)
	b[at] = ' '
	copy(b[at+1:], r.Args)
	return bytesString(b), st, true
}

// keep sets aside the bytes of the head window in [from, to) (as far as
// the window holds them) that a cut in place is about to write over, from
// undoAt on: ResultRestAt's cuts start at one offset, its first from.
func (w *Writer) keep(from, to int) {
	if w.undo == nil {
		w.undoAt = from
	}
	to = min(to, len(w.head))
	if have := w.undoAt + len(w.undo); to > have {
		w.undo = append(w.undo, w.head[have:to]...)
	}
}

// restore puts back the bytes of the head window a cut in place wrote
// over, so that the window holds the input's first bytes again.
func (w *Writer) restore() {
	if w.undo != nil {
		copy(w.head[w.undoAt:len(w.head)], w.undo)
		w.undo = nil
	}
}

func (w *Writer) resultAt(limit int) (string, Stats) {
	limit = min(limit, w.limit)
	if w.n <= limit {
		return w.whole(), Stats{Original: w.n, Kept: w.n}
	}
	if limit <= 0 {
		return "", Stats{Original: w.n, Dropped: w.n, Strategy: w.spec.text()}
	}
	if w.json != nil {
		return cutOver(bytesString(w.json), limit, w.spec)
	}
	if w.js != nil && w.n <= JSONMaxInput(limit) {
		if out, st, ok := w.js.cut(w.n, limit, false); ok {
			return out, st
		}
	}
	if !w.tail {
		// The head window holds limit+4 bytes of a smaller limit too.
		head := w.headCopy(windowLen(limit))
		out, dropped := headBytes(head, w.n, limit)
		return bytesString(out), Stats{Original: w.n, Kept: w.n - dropped, Dropped: dropped, Strategy: KeepHead}
	}
	// The windows are wider than a cut at a smaller limit reads, and the
	// lines between them are the matching lines past the wider head
	// window that the Writer's rule kept: the cut reads what a cut of the
	// whole content reads, unless that rule stopped before the narrower
	// one would have (see ResultAt).
	v := w.view()
	return v.cut(limit, w.spec, nil)
}

// ResultTokens is [CutTokens] of everything written at the Writer's limit
// and maxTokens tokens as c counts them, for content too long to be
// tokenized whole: longer than [TokenWindow](maxTokens). Such content is
// cut by the token limit as CutTokens cuts it (the output of the
// strategy's rule at the byte limit that fits the tokens, its marker
// counting bytes), byte for byte, since each candidate cut is
// [Writer.ResultAt]. Content of at most TokenWindow(maxTokens) bytes must
// be held whole and cut with CutTokens, whose marker then counts tokens:
// the Writer does not hold it, so ResultTokens cuts it by bytes as well.
// With maxTokens <= 0 or a nil c it is ResultAt at the Writer's limit.
func (w *Writer) ResultTokens(maxTokens int, c Counter) (string, Stats) {
	return w.ResultTokensAt(w.limit, maxTokens, c)
}

// ResultTokensAt is [Writer.ResultTokens] at a byte limit no larger than
// the Writer's, as [Writer.ResultAt] is [Writer.Result] at one: a front end
// that keeps room for more beside the cut (package rest) cuts this way.
func (w *Writer) ResultTokensAt(limit, maxTokens int, c Counter) (string, Stats) {
	limit = min(limit, w.limit)
	if maxTokens <= 0 || c == nil {
		return w.ResultAt(limit)
	}
	w.finish() // the length compared is that of the replaced text
	if w.n <= limit && w.n <= maxTokens {
		return w.ResultAt(limit)
	}
	t := tokenCut{n: w.n, maxBytes: limit, maxTokens: maxTokens, c: c, spec: w.spec, total: -1, at: w.ResultAt}
	out, st := t.cut()
	st.Replaced = w.fix.replaced
	return out, st
}

// Prefix returns the first bytes written, as many as the Writer holds from
// the start: min(n, limit+4) of the n written, which is at least every
// byte a cut at the Writer's limit shows before its marker. The string
// shares the Writer's storage and is valid until the next Write.
func (w *Writer) Prefix() string {
	return bytesString(w.prefix())
}

// stringBytes returns the bytes of s without a copy, for reading only.
func stringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
