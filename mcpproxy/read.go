package mcpproxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sync/atomic"
	"time"

	"github.com/toolcap/toolcap/internal/wire"
)

// bufferSize is the size each side's read buffer grows to. A message that
// fits in it (with its newline) is examined where it lies and forwarded
// from there; a larger one is read through the buffer, and copied aside
// only up to Options.MaxMessageBytes, or, for a tools/call result that may
// go out as it came, up to reader.teeBound.
const bufferSize = 4 << 20

// smallBuffer is the size a session's read buffer has while its messages
// fit in it: most do (requests, notifications, listings, capped results),
// and a session that starts, or sits idle, holds this much rather than
// bufferSize per side. A message that does not fit moves the buffer to one
// of bufferSize (see reader.frame), so which messages are examined where
// they lie does not depend on it.
const smallBuffer = 64 << 10

// bufferIdle is how long a session's reader keeps its large buffer, once
// no message needs it, for the next that does: a burst of large results
// reuses one, and a --listen session that sits idle after them lets it
// go.
const bufferIdle = time.Second

// message is one JSON-RPC message as the proxy sees it while relaying it.
type message struct {
	// raw is the message as it came, without its newline, valid until the
	// next read from the same side; nil when it was larger than the bound
	// (see tooLarge), or when it is in parts.
	raw []byte
	// parts is a tools/call result larger than the read buffer, as it
	// came, in the chunks the reader copied it in (see reader.teeBound),
	// valid until the next read from the same side; nil when it could not
	// go out as it came (it is then written out from what was read).
	parts [][]byte
	// size is the message's length in bytes.
	size int64
	// tooLarge reports that the message was over Options.MaxMessageBytes, so
	// that only what the reader kept of it (id, method, a reduced tools/call
	// result) is known.
	tooLarge bool

	id        []byte // the id as it came, nil when absent
	method    string
	hasMethod bool
	hasResult bool
	hasError  bool
	// extraIDs holds the values of the "id" members after the first: a
	// message with more than one is invalid, and is never forwarded.
	extraIDs [][]byte
	sawID    bool
	// idAt is the offset in the message of the first byte of its id as
	// it came (of the first "id" member), valid when id is not nil: a
	// stateless lane puts its own id there and the client's back.
	idAt int64
	// idBytes is the length of an id longer than the reader could hold
	// (see reader.idMax); the id is then nil.
	idBytes int64
	// tooDeep reports a message with a value nested deeper than
	// wire.MaxDepth: it was read past that value for its envelope only (id,
	// method, kind), and is never forwarded (raw is nil, result unread).
	tooDeep bool
	batch   bool // the message is a batch (read for its size only)

	// Set while reading a response the reader was told to reduce (a
	// tools/call result or error).
	result *callResult
	rpcErr *callError

	// call is the params of a tools/call request, once toolCall has
	// decoded them: the read tool's answer and the note of the call both
	// need them, and a message is decoded once.
	call *toolCallParams
}

// toolCallParams is what the proxy reads of a tools/call request.
type toolCallParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Meta is the request's _meta, as it came: see clientName.
	Meta json.RawMessage `json:"_meta"`
	// err is the decoding's error: the fields hold what decoded before
	// it (encoding/json goes on past a value of the wrong type).
	err error
}

// clientName returns the name of the client in the params' _meta
// (io.modelcontextprotocol/clientInfo, which each request of the
// stateless revision carries), or "": read on its own, so that a _meta
// of another shape never makes the call's params fail to decode.
func (p toolCallParams) clientName() string {
	var meta struct {
		ClientInfo struct {
			Name string `json:"name"`
		} `json:"io.modelcontextprotocol/clientInfo"`
	}
	if len(p.Meta) == 0 || json.Unmarshal(p.Meta, &meta) != nil {
		return ""
	}
	return meta.ClientInfo.Name
}

// toolCall returns the params of m, a tools/call request held whole,
// decoding them the first time.
func (m *message) toolCall() toolCallParams {
	if m.call == nil {
		var req struct {
			Params toolCallParams `json:"params"`
		}
		req.Params.err = json.Unmarshal(m.raw, &req)
		m.call = &req.Params
	}
	return *m.call
}

// trimParts returns parts without the spaces that end the last of them.
func trimParts(parts [][]byte) [][]byte {
	for len(parts) > 0 {
		last := bytes.TrimRight(parts[len(parts)-1], " \t\r\n")
		if len(last) > 0 {
			return append(parts[:len(parts)-1:len(parts)-1], last)
		}
		parts = parts[:len(parts)-1]
	}
	return nil
}

func (m *message) isRequest() bool      { return m.hasMethod && m.id != nil }
func (m *message) isNotification() bool { return m.hasMethod && m.id == nil }
func (m *message) isResponse() bool {
	return !m.hasMethod && m.id != nil && (m.hasResult || m.hasError)
}

// A strayLine is a line that is not a JSON-RPC message: a banner or a debug
// print on a server's stdout, or a message that is not valid JSON.
type strayLine struct {
	head []byte // its first bytes, for the log
	size int64
	err  error // why it is not a message; nil for a line that is not JSON at all
	// msg is what was read of the envelope before the error (the id, the
	// method, the kind, when they came first), so that a request, or a
	// response a request waits for, can still be answered; nil for a line
	// that is not JSON at all.
	msg *message
}

func (e *strayLine) Error() string { return e.describe("") }

// describe says what the line was, and where it came from.
func (e *strayLine) describe(from string) string {
	what := "a line" + from + " that is not a JSON-RPC message"
	if e.err != nil {
		what = fmt.Sprintf("an invalid JSON-RPC message%s (%v)", from, e.err)
	}
	return fmt.Sprintf("skipped %s, %d bytes: %q", what, e.size, e.head)
}

// strayHead is how much of a stray line is logged.
const strayHead = 200

// reader reads the messages of one side.
type reader struct {
	br  *bufio.Reader
	sc  *wire.Scanner
	max int // Options.MaxMessageBytes
	// idMax bounds the ids the reader holds: the message bound, since the
	// peers bound none (the MCP SDKs take any string) and a message within
	// its bound is held whole anyway. An id longer is in a message over the
	// bound, which cannot be held to answer it either.
	idMax int

	// A session's reader (newSessionReader) reads through small, its own
	// buffer of smallBuffer bytes, and through one of bufferSize while a
	// message needs it; br is the one in use. src, which both read from,
	// hands the new one first what the other had buffered. spare holds
	// the large one between the messages that need it, until idle lets it
	// go. All are nil for a reader of a fixed buffer (newReader).
	small *bufio.Reader
	src   *heldReader
	spare atomic.Pointer[bufio.Reader]
	idle  *time.Timer
}

// newReader returns a reader of r through a buffer of size bytes, for a
// message, or messages, already in memory.
func newReader(r io.Reader, max, size int) *reader {
	br := bufio.NewReaderSize(r, size)
	return &reader{br: br, sc: wire.NewScanner(br), max: max, idMax: max}
}

// newSessionReader returns a reader of a session's side, r, whose buffer
// starts at smallBuffer bytes and is one of bufferSize only while messages
// need it (see reader.frame and reader.shrink): a session that starts, or
// sits idle for bufferIdle after a large result, holds no large buffer.
func newSessionReader(r io.Reader, max int) *reader {
	src := &heldReader{r: r}
	small := bufio.NewReaderSize(src, smallBuffer)
	return &reader{br: small, sc: wire.NewScanner(small), max: max, idMax: max,
		small: small, src: src}
}

// A heldReader reads held, the bytes a reader's last buffer had buffered,
// then r.
type heldReader struct {
	held []byte
	r    io.Reader
}

func (h *heldReader) Read(p []byte) (int, error) {
	if len(h.held) == 0 {
		return h.r.Read(p)
	}
	n := copy(p, h.held)
	h.held = h.held[n:]
	if len(h.held) == 0 {
		h.held = nil // nothing of the old buffer kept, so that it can be let go
	}
	return n, nil
}

// moveTo makes to the reader's buffer, with what the one in use had
// buffered: to must have room for it.
func (r *reader) moveTo(to *bufio.Reader) {
	held, _ := r.br.Peek(r.br.Buffered())
	to.Reset(r.src)
	if len(held) > 0 {
		// One read of src, which copies all of held (to is empty and has
		// room), and reads nothing from the side: the old buffer is free
		// once this returns.
		r.src.held = held
		_, _ = to.Peek(len(held))
	}
	r.br = to
	r.sc.UseReader(to)
}

// grow moves a session's reader to a buffer of bufferSize: the spare one,
// or a new one when idle let it go.
func (r *reader) grow() {
	big := r.spare.Swap(nil)
	if big == nil {
		big = bufio.NewReaderSize(nil, bufferSize)
	}
	r.moveTo(big)
}

// shrink moves a session's reader back to its small buffer between
// messages, when what is buffered fits in it, so that it waits for the
// next message in that: the message that needed the large one is done
// with (a message's raw bytes are valid until the next read). The large
// one is kept as the spare for bufferIdle, then let go.
func (r *reader) shrink() {
	if r.small == nil || r.br == r.small || r.br.Buffered() > smallBuffer {
		return
	}
	big := r.br
	r.moveTo(r.small)
	r.spare.Store(big)
	if r.idle == nil {
		r.idle = time.AfterFunc(bufferIdle, func() { r.spare.Store(nil) })
	} else {
		r.idle.Reset(bufferIdle)
	}
}

// release lets go of a session's reader's spare buffer when the session's
// side is done, rather than bufferIdle later.
func (r *reader) release() {
	if r.idle != nil {
		r.idle.Stop()
	}
	r.spare.Store(nil)
}

// reduceFunc is asked, when the reader reaches the result or the error of
// a response, which pending tools/call it answers (m.id is set when the id
// came first), and returns it with how much of its text to keep, or nil to
// read the value past. It is also asked with a nil m.id when the id comes
// after the result: it then returns the pending tools/calls it may answer,
// so that the result is reduced while it is read, for each of them, in case
// it is one, and says whether it certainly is one (every pending request is
// a tools/call).
type reduceFunc func(m *message) (calls []*pendingCall, retain int, certain bool)

// next reads the next message. It returns a *strayLine error for a line
// that is not a message, and the reader's error (io.EOF at the end) when
// there are no more.
func (r *reader) next(reduce reduceFunc) (*message, error) {
	// The scanner's copy of the message (up to --max-message and more for
	// a result, in chunks) is the message's once it is read: the scanner
	// lets go of it here rather than at the next message's start, so that
	// a session that goes idle after a large result does not hold it.
	defer r.sc.Reset()
	r.shrink()
	for {
		c, err := r.sc.Peek()
		if err != nil {
			return nil, err
		}
		if c == '\n' { // a blank line
			_, _ = r.br.Discard(1)
			continue
		}
		if c != '{' && c != '[' {
			head, n, err := r.sc.SkipLine(strayHead)
			if err != nil {
				return nil, err
			}
			return nil, &strayLine{head: head, size: n}
		}
		break
	}

	frame, err := r.frame()
	if err != nil {
		return nil, err
	}
	r.sc.Reset()
	if frame == nil {
		r.sc.Tee(r.max)
	}
	m := &message{}
	c, _ := r.sc.Kind()
	if c == '[' {
		m.batch = true
		err = r.sc.Skip() // a batch: examined element by element later
	} else {
		err = r.sc.Object(r.member(m, reduce))
	}
	if de := (*wire.DepthError)(nil); errors.As(err, &de) {
		// Valid JSON, maybe, but deeper than the scanner follows: read on
		// past it in constant memory for what follows it at the top level
		// (the id, when it comes after), so that the message can still be
		// answered. It is never forwarded.
		m.tooDeep = true
		if m.result != nil {
			m.result.abort()
		}
		m.result, m.rpcErr = nil, nil
		r.sc.StopTee()
		if c == '[' {
			err = r.sc.SkipOut(0)
		} else {
			err = r.sc.Resume(1, r.member(m, nil))
		}
	}
	if err == nil {
		err = r.sc.EndMessage()
	}
	m.size = r.sc.Offset()
	if err != nil {
		if m.result != nil {
			m.result.abort() // not a message the proxy handles
		}
		var se *wire.SyntaxError
		if !errors.As(err, &se) {
			return nil, err
		}
		head := frame
		if frame == nil {
			head = teedHead(r.sc, strayHead)
		}
		head = bytes.Clone(head[:min(len(head), strayHead)])
		r.sc.StopTee() // the rest of the line is read past, not copied
		_, n, rerr := r.sc.SkipLine(0)
		if rerr != nil {
			return nil, rerr
		}
		m.result, m.rpcErr = nil, nil
		return nil, &strayLine{head: head, size: m.size + n, err: err, msg: m}
	}
	if m.tooDeep {
		m.raw = nil
		return m, nil
	}
	switch {
	case frame != nil:
		m.raw = frame
	case m.result != nil && m.result.stopTee:
		// A tools/call result kept as it came goes out in the chunks it
		// was copied in (see teeBound), never joined.
		if parts, ok := r.sc.TeedParts(); ok && len(parts) > 0 {
			m.parts = trimParts(parts)
		} else {
			m.tooLarge = true
		}
	default:
		if raw, ok := r.sc.Teed(); ok {
			m.raw = bytes.TrimRight(raw, " \t\r\n")
		} else {
			m.tooLarge = true
		}
	}
	if m.size > int64(r.max) {
		// Only a tools/call result keeps its copy past the bound (see
		// teeBound), in parts; fromServer forwards nothing else over it.
		m.raw, m.tooLarge = nil, true
	}
	if c == '[' && m.raw != nil {
		m.raw = bytes.Clone(m.raw)
	}
	return m, nil
}

// teedHead returns the first n bytes of the scanner's copy of the
// message, or fewer, without joining its chunks.
func teedHead(sc *wire.Scanner, n int) []byte {
	parts, _ := sc.TeedParts()
	var head []byte
	for _, p := range parts {
		if len(head) >= n {
			break
		}
		head = append(head, p[:min(len(p), n-len(head))]...)
	}
	return head
}

// frame returns the message at the head of the buffer, without its
// newline, when the whole of it is buffered; nil when it is larger than the
// buffer (bufferSize for a session's reader, which grows to it first). It
// reads only what the sender has written: a message followed by nothing
// yet is returned as soon as its newline is in.
func (r *reader) frame() ([]byte, error) {
	scanned := 0
	for {
		b, _ := r.br.Peek(r.br.Buffered())
		if i := bytes.IndexByte(b[scanned:], '\n'); i >= 0 {
			return b[:scanned+i], nil
		}
		scanned = len(b)
		if len(b) >= r.br.Size() {
			if r.small == nil || r.br != r.small {
				return nil, nil
			}
			r.grow()
			continue
		}
		if _, err := r.br.Peek(len(b) + 1); err != nil {
			if errors.Is(err, io.EOF) {
				// The last message, without a newline.
				b, _ := r.br.Peek(r.br.Buffered())
				return b, nil
			}
			return nil, err
		}
	}
}

// member returns the reader of the members of a message's top-level
// object, which records the envelope in m.
func (r *reader) member(m *message, reduce reduceFunc) func(key string) error {
	sc := r.sc
	extra := 0 // bytes of m.extraIDs
	return func(key string) error {
		switch key {
		case "id":
			if m.sawID && (len(m.extraIDs) >= maxExtraIDs || extra >= r.idMax) {
				// Kept only up to a few, and in all no more than one id
				// may take, so that a message of many ids costs no more
				// than one of a few.
				return sc.Skip()
			}
			start := sc.Offset()
			raw, ok, err := sc.Capture(max(r.idMax, maxIDBytes) - extra)
			if err != nil {
				return err
			}
			if m.sawID {
				if ok {
					m.extraIDs = append(m.extraIDs, bytes.Clone(raw))
					extra += len(raw)
				}
				return nil
			}
			m.sawID = true
			if !ok {
				// Longer than any message the reader holds: not held, and
				// so not answered; how long it was is logged.
				m.idBytes = sc.Offset() - start
				return nil
			}
			if !bytes.Equal(raw, []byte("null")) {
				m.id = bytes.Clone(raw)
				m.idAt = sc.Offset() - int64(len(raw))
			}
			return nil
		case "method":
			s, err := sc.ShortString(maxMethodBytes)
			m.method, m.hasMethod = s, true
			return err
		case "result", "error":
			if key == "result" {
				m.hasResult = true
			} else {
				m.hasError = true
			}
			if reduce == nil || m.hasMethod {
				return sc.Skip()
			}
			calls, retain, certain := reduce(m)
			if calls == nil {
				return sc.Skip()
			}
			known := m.id != nil || certain
			if known && key == "result" {
				// Known to be a tools/call result: a result that fits goes
				// to the client as it came, from the copy, which may then
				// be larger than the message bound (the result stops it as
				// soon as it cannot fit).
				sc.TeeMax(r.teeBound(retain))
			} else if known {
				// An error is written out from what was read of it.
				sc.StopTee()
			}
			if key == "result" {
				res, err := readCallResult(sc, retain, calls, known)
				if err != nil {
					res.abort() // the message is not handled: nothing it kept is read
				}
				m.result = res
				return err
			}
			e, err := readCallError(sc, retain, detectorOf(calls))
			m.rpcErr = e
			return err
		}
		return sc.Skip()
	}
}

// teeBound bounds the copy of a message known to carry a tools/call
// result, which goes to the client as it came when it fits its limit: the
// message bound, and room for a result within retain, the largest limit,
// written with an escape for every byte (a \u escape takes 6 bytes for
// one) beside its other blocks and structuredContent. The result stops the
// copy as soon as it is over retain, so a result that does not fit is
// copied only up to about retain bytes.
func (r *reader) teeBound(retain int) int {
	if retain > (math.MaxInt-r.max)/8 {
		return math.MaxInt
	}
	return r.max + 8*retain
}

const (
	// maxIDBytes is the least id length every reader holds, even one
	// reading with no message bound (envelopeOfMessage): reader.idMax is
	// the bound otherwise.
	maxIDBytes     = 1024
	maxMethodBytes = 1024
	// maxExtraIDs is how many "id" members after the first a message's
	// envelope keeps (see message.extraIDs).
	maxExtraIDs = 16
)
