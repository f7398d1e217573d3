package mcpproxy

import (
	"bufio"
	"bytes"
	"io"
	"sync"
)

// StreamConn returns a [Conn] over rw, a byte stream in MCP's stdio
// framing: reads come from rw as they are, and each message is written to
// rw followed by a newline. Close closes rw. It is the Conn of a client on
// the proxy's own standard input and output, or of any peer reached through
// a pipe or a socket; [Command] frames a server's standard input the same
// way.
func StreamConn(rw io.ReadWriteCloser) Conn {
	return &streamConn{rw: rw, lw: lineWriter{w: rw}}
}

type streamConn struct {
	rw io.ReadWriteCloser
	lw lineWriter
}

func (c *streamConn) Read(p []byte) (int, error)    { return c.rw.Read(p) }
func (c *streamConn) WriteMessage(msg []byte) error { return c.lw.writeMessage(msg) }
func (c *streamConn) Close() error                  { return c.rw.Close() }

func (c *streamConn) writeMessageFunc(write func(jsonWriter)) error {
	return c.lw.writeMessageFunc(write)
}

// piecesConn is a Conn that takes a message in pieces as it is made: the
// proxy's own streams, whose framing is a newline after the message.
type piecesConn interface {
	// writeMessageFunc sends the message write makes, followed by its
	// newline, one message at a time as WriteMessage does.
	writeMessageFunc(write func(jsonWriter)) error
}

// lineWriter writes whole messages to a stream, each followed by a newline.
type lineWriter struct {
	w   io.Writer
	mu  sync.Mutex // one message at a time: lines never interleave
	buf []byte
	bw  *bufio.Writer // for messages written in pieces, made on first use
}

// piecesBuffer is the size of the buffer a message written in pieces goes
// out through.
const piecesBuffer = 64 << 10

func (w *lineWriter) writeMessageFunc(write func(jsonWriter)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.bw == nil {
		w.bw = bufio.NewWriterSize(w.w, piecesBuffer)
	}
	write(w.bw)
	_ = w.bw.WriteByte('\n')
	err := w.bw.Flush()
	if err != nil {
		// A bufio.Writer keeps its error: the next message gets a new one.
		w.bw = nil
	}
	return err
}

// lineJoin bounds the messages copied to go out with their newline in one
// write: a pipe reader then never sees a message without its end, and a
// larger message is not copied only to save one write.
const lineJoin = 64 << 10

var newline = []byte{'\n'}

func (w *lineWriter) writeMessage(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(msg) <= lineJoin {
		w.buf = append(append(w.buf[:0], msg...), '\n')
		_, err := w.w.Write(w.buf)
		return err
	}
	if _, err := w.w.Write(msg); err != nil {
		return err
	}
	_, err := w.w.Write(newline)
	return err
}

// envelopeScan is the window through which a transport reads the envelope
// of a message it is handed: the message is scanned where it lies, never
// copied whole.
const envelopeScan = 4 << 10

// envelopeOfMessage reads the envelope (id, method, kind) of msg, one whole
// message or batch handed to a transport, so that the transport can route
// it. Nothing of msg is kept: the result's raw is nil.
func envelopeOfMessage(msg []byte) (*message, error) { return envelopeIn(msg, envelopeScan) }

// envelopeIn is envelopeOfMessage through a read buffer of size bytes.
func envelopeIn(msg []byte, size int) (*message, error) {
	// A bound of 0: a message larger than the window is not copied aside.
	r := newReader(bytes.NewReader(msg), 0, size)
	r.idMax = len(msg) // the id is in msg, which is held whole already
	m, err := r.next(nil)
	if err != nil {
		return nil, err
	}
	m.raw, m.tooLarge = nil, false
	return m, nil
}
