package middleware

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"unicode/utf8"
	"unsafe"

	"github.com/toolcap/toolcap/internal/cut"
)

// chunk is the size of TruncateReader's first read and of every read that
// skips the input past the bytes it keeps: 64 KiB, a pipe's capacity on
// Linux, so a read drains a full pipe in one system call.
const chunk = 64 << 10

// maxOnePiece is the largest buffer TruncateReader allocates at once for the
// bytes it keeps. Limits a manifest allows (64 MiB at most) stay below it;
// above it, for limits no real input reaches, the buffer grows as the input
// arrives instead.
const maxOnePiece = 1 << 30

// TruncateReader reads r to its end and returns what [Truncate] would return
// for its whole content at limit, while keeping at most limit+4 bytes of it:
// the rest is counted, not kept. It is the head rule alone, for content too
// large to hold; shape.Read reads a stream under a tool's whole policy
// (strategy and token limit), as toolcap cap does.
//
// Its memory is one buffer of limit+4 bytes (of min(limit+4, 64 KiB) bytes
// when the input fits in that), which becomes the result with no further
// copy, and one 64 KiB buffer for the reads that skip the rest.
//
// On a read error it returns the error and no content.
func TruncateReader(r io.Reader, limit int) (capped string, dropped int64, err error) {
	head, total, err := readHead(r, limit)
	if err != nil {
		return "", 0, fmt.Errorf("read: %w", err)
	}
	if total > int64(limit) {
		var d int
		head, d = cutInPlace(head, int(total), limit)
		dropped = int64(d)
	}
	if len(head) <= cap(head)/2 {
		// Do not pin a buffer more than twice the size of the result.
		return string(head), dropped, nil
	}
	// head is not written again and nothing else refers to it, so the
	// string may share its bytes, as strings.Builder's does.
	return unsafe.String(unsafe.SliceData(head), len(head)), dropped, nil
}

// readHead reads r to its end and returns its first min(total, limit+4)
// bytes and its length total. limit+utf8.UTFMax bytes are enough to place
// any cut (see cut).
func readHead(r io.Reader, limit int) (head []byte, total int64, err error) {
	keep := max(0, limit)
	if keep <= math.MaxInt-utf8.UTFMax {
		keep += utf8.UTFMax
	}
	first := make([]byte, min(keep, chunk))
	n, err := io.ReadFull(r, first)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return first[:n], int64(n), nil
	}
	if err != nil {
		return nil, 0, err
	}
	head = first
	var scratch []byte // for the reads that skip the rest
	if keep > len(first) {
		// The input is longer than the first read: the rest of what is kept
		// goes straight into one buffer of its final size, and the first
		// buffer serves the reads that skip the rest.
		var eof bool
		if keep <= maxOnePiece {
			head = make([]byte, keep)
			// Not copy(head, first): the compiler turns make and that copy
			// into one call that zeroes the whole buffer, so every page of
			// it would be resident even for a short input.
			copy(head[:n], first)
			m, err := io.ReadFull(r, head[n:])
			switch {
			case err == io.EOF || err == io.ErrUnexpectedEOF:
				head, eof = head[:n+m], true
			case err != nil:
				return nil, 0, err
			}
		} else {
			buf := bytes.NewBuffer(first)
			_, err := io.CopyN(buf, r, int64(keep-n))
			switch {
			case err == io.EOF:
				eof = true
			case err != nil:
				return nil, 0, err
			}
			head = buf.Bytes()
		}
		if eof {
			return head, int64(len(head)), nil
		}
		scratch = first
	} else {
		scratch = make([]byte, chunk)
	}
	rest, err := discard(r, scratch)
	if err != nil {
		return nil, 0, err
	}
	return head, int64(len(head)) + rest, nil
}

// discard reads r to its end into buf, over and over, and returns the number
// of bytes read.
func discard(r io.Reader, buf []byte) (int64, error) {
	var n int64
	for {
		m, err := r.Read(buf)
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// cutInPlace is the head rule on a buffer that holds the first
// min(total, limit+4) bytes of content, which it overwrites with the
// result. It requires total > limit.
func cutInPlace(head []byte, total, limit int) ([]byte, int) {
	return cut.HeadBytes(head, total, limit)
}
