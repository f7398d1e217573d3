package redact

import (
	"bytes"
	"io"
	"unsafe"
)

// contextBytes is how much of the text already written a Writer keeps in
// front of what it scans next, for the patterns that look at the byte
// before a secret (a word boundary).
const contextBytes = 64

// minChunk is the least a Writer scans at a time past what it holds back,
// so that a stream written in small pieces is scanned in few passes.
const minChunk = 64 << 10

// A Writer redacts a stream as it is written and writes the redacted text
// to the underlying writer, in memory bounded by the detector's MaxLen: it
// holds back the last MaxLen bytes written until it has seen what follows
// them, so that a secret split across writes is found whole. Close writes
// what it holds back. Its output is [Text]'s on the whole stream but where
// a finding ends within the last MaxLen bytes of a pass and a longer one
// would have started earlier (the Writer defers such a finding to its next
// pass, Text has all of it at once); both redact every secret no longer
// than MaxLen.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	w      io.Writer
	d      Detector
	hold   int
	chunk  int
	buf    []byte // text not yet written on, after ctx bytes of context
	ctx    int
	out    []byte // the redacted text of a pass, reused
	counts map[string]int
	err    error
}

// NewWriter returns a Writer that redacts with d and writes to w. A nil d
// passes the stream through unchanged.
func NewWriter(w io.Writer, d Detector) *Writer {
	x := &Writer{w: w, d: d}
	if d != nil {
		x.hold = d.MaxLen()
		x.chunk = max(minChunk, 4*x.hold)
	}
	return x
}

// Write redacts p, with what came before and after it, and writes the
// result on as it becomes final. It returns len(p), or the first error of
// the underlying writer.
func (x *Writer) Write(p []byte) (int, error) {
	if x.err != nil {
		return 0, x.err
	}
	if x.d == nil {
		_, x.err = x.w.Write(p)
		return len(p), x.err
	}
	x.buf = append(x.buf, p...)
	if len(x.buf)-x.ctx >= x.hold+x.chunk {
		x.pass(false)
	}
	return len(p), x.err
}

// Close redacts and writes what the Writer holds back. It does not close
// the underlying writer.
func (x *Writer) Close() error {
	if x.err == nil && x.d != nil {
		x.pass(true)
	}
	return x.err
}

// Counts returns the redactions made so far, by rule; nil when none.
func (x *Writer) Counts() map[string]int { return x.counts }

// pass scans what the Writer holds and writes on what is final: all of it
// when final, else all but the last hold bytes, less a finding that
// starts in those bytes (it may go on in the next write).
func (x *Writer) pass(final bool) {
	// Read only, until buf changes at the end: a Detector keeps nothing
	// of the text it is given (see Detector), so no copy is needed.
	text := unsafe.String(unsafe.SliceData(x.buf), len(x.buf))
	cut := len(text)
	if !final {
		cut -= x.hold
	}
	at := x.ctx
	out := x.out[:0]
	for _, f := range x.d.Find(text) {
		if f.Start < at {
			continue // in the context, or inside a finding already made
		}
		if !final && f.Start >= cut {
			break
		}
		if !final && f.End > cut && f.Start >= len(text)-x.hold {
			cut = f.Start // it may grow with the next write
			break
		}
		out = append(out, text[at:f.Start]...)
		out = append(out, marker(f.Rule)...)
		if x.counts == nil {
			x.counts = map[string]int{}
		}
		x.counts[f.Rule]++
		at = f.End
	}
	cut = max(cut, at)
	switch {
	case len(out) > 0:
		out = append(out, text[at:cut]...)
		_, x.err = x.w.Write(out)
		x.out = out
	case at < cut:
		// No secret: what is final goes on from the buffer itself.
		_, x.err = x.w.Write(x.buf[at:cut])
	}
	// Keep the context in front of the rest, then the rest.
	from := max(cut-contextBytes, 0)
	n := copy(x.buf, x.buf[from:])
	x.buf = x.buf[:n]
	x.ctx = cut - from
}

// A Reader redacts what it reads from an underlying reader: a [Writer]
// turned around, for a consumer that reads (a cut that reads its input as
// a stream). Its memory is bounded as a Writer's is.
type Reader struct {
	r    io.Reader
	w    *Writer
	out  bytes.Buffer
	buf  []byte
	done bool
	err  error
}

// NewReader returns a Reader that reads r and redacts with d; a nil d
// passes r's bytes through unchanged.
func NewReader(r io.Reader, d Detector) *Reader {
	x := &Reader{r: r}
	x.w = NewWriter(&x.out, d)
	return x
}

// Read reads redacted text. A read error of the underlying reader other
// than io.EOF is returned once what was read before it is consumed; what
// the Reader held back is then dropped, never passed on unredacted.
func (x *Reader) Read(p []byte) (int, error) {
	for x.out.Len() == 0 && !x.done {
		if x.buf == nil {
			x.buf = make([]byte, 32<<10)
		}
		n, err := x.r.Read(x.buf)
		x.w.Write(x.buf[:n]) // writes to a bytes.Buffer: no error
		switch {
		case err == io.EOF:
			x.w.Close()
			x.done = true
		case err != nil:
			x.done, x.err = true, err
		}
	}
	if x.out.Len() > 0 {
		return x.out.Read(p)
	}
	if x.err != nil {
		return 0, x.err
	}
	return 0, io.EOF
}

// Counts returns the redactions made so far, by rule; nil when none.
func (x *Reader) Counts() map[string]int { return x.w.Counts() }
