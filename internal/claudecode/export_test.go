package claudecode

import (
	"io"

	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/internal/wire"
)

// Unquote is what the hook decodes a string with, for the black-box tests
// that hold it to encoding/json.
var Unquote = wire.Unquote

// ReadBounded is readBounded, for a test of the bound that need not read
// MaxPayload bytes.
var ReadBounded = readBounded

// Streaming returns a Hook like h that streams every payload longer than
// above bytes and reads at most limit (0: MaxPayload), so that tests of the
// streaming path need not read megabytes.
func Streaming(h Hook, above int, limit int64) *Hook {
	h.streamAbove, h.maxPayload = above, limit
	return &h
}

// Streamed returns h, which tells longs how many long texts each payload
// it streams holds.
func Streamed(h *Hook, longs func(int)) *Hook {
	h.streamed = longs
	return h
}

// StreamHold is the decoded length past which a streamed string of an
// output under p is a long text.
func StreamHold(p shape.Policy) int {
	return newRespStream(nil, "", "", Setup{Policy: p}).hold
}

// DecodeInPieces decodes data, which starts with a JSON string, with the
// streaming decoder, handed data in pieces of the given sizes (cycled), and
// returns the text, the decoder's error and the index in data just past
// the string's closing quote (-1 when it has none).
func DecodeInPieces(data []byte, sizes []int) (string, int, error) {
	var out []byte
	d := wire.NewStringDecoder(func(p []byte) { out = append(out, p...) }, 7)
	if len(data) == 0 || data[0] != '"' {
		return "", -1, wire.ErrNotString
	}
	off := 1
	for k := 0; off < len(data); k++ {
		n := max(sizes[k%len(sizes)], 1)
		piece := data[off:min(off+n, len(data))]
		if end := d.Write(piece); end >= 0 {
			d.Flush()
			return string(out), off + end + 1, d.Err()
		}
		off += len(piece)
	}
	return string(out), -1, d.Err()
}

// SkipStreamed finds the end of the value that starts data, as the
// streaming reader finds it reading data in pieces of size bytes, and as
// wire.ValueEnd finds it in memory (the end, or an error).
func SkipStreamed(data []byte, size int) (streamed, held int, streamedErr, heldErr error) {
	src := newSource(iotestPieces{data, max(size, 1)}.reader(), 1<<40)
	consumed := 0
	src.tee = func(p []byte) { consumed += len(p) }
	streamedErr = src.skipValue()
	held, heldErr = wire.ValueEnd(data, 0)
	return consumed, held, streamedErr, heldErr
}

// iotestPieces reads data size bytes at a time.
type iotestPieces struct {
	data []byte
	size int
}

func (p iotestPieces) reader() *piecesReader { return &piecesReader{p.data, p.size} }

type piecesReader struct {
	data []byte
	size int
}

func (r *piecesReader) Read(b []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), r.size)], r.data)
	r.data = r.data[n:]
	return n, nil
}
