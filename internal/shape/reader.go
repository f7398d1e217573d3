package shape

import (
	"fmt"
	"io"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
)

// Read reads r to its end and fits what it read to p, holding memory
// bounded by p's limits whatever the length of the input: it is [Text] for
// a result that arrives as a stream, such as a framework's streamed tool
// output or a command's standard output.
//
// Under a token limit, input of at most [Policy.Hold] bytes is held whole
// and fitted by Text. Other input is cut as it is read by a [cut.Writer], which holds only
// what p's strategy may keep (about the limit for head, twice it for
// head_tail, the document for json while it is short enough to be cut as
// one), and under a token limit by [cut.Writer.ResultTokens]. The output
// and figures are byte for byte those of Text on the whole input, but for
// input between the bound of Hold and the token window under a token limit
// (of more than 8 MiB, or 4 times the byte limit, and fewer than 32 bytes a
// token of the limit): Text counts such input whole and names tokens in its
// marker; Read keeps its memory bounded and its marker counts bytes,
// exactly.
//
// changed is false, and out is everything read, when the input fits p;
// input that is not valid UTF-8 comes out as it was read when it is short
// enough that the client decodes it within the limit whatever it holds
// (at most a third of [Policy.Fit], and at most 1 MiB), as Text passes
// such input on, and decoded otherwise. A read error other than io.EOF
// ends the read: Read returns it, wrapped, with nothing else.
func Read(r io.Reader, p Policy) (out string, t chain.Truncation, changed bool, err error) {
	var held []byte
	if p.HoldsTokens() {
		// Without a token limit the Writer's cut is Text's at any length:
		// nothing needs holding beyond what the Writer holds.
		hold := p.Hold()
		held, err = io.ReadAll(io.LimitReader(r, int64(hold)+1))
		if err != nil {
			return "", chain.Truncation{}, false, readError(err)
		}
		if len(held) <= hold {
			out, t, changed = Text(string(held), p)
			return out, t, changed, nil
		}
	}
	w := cut.NewWriter(p.MaxBytes, p.Spec)
	w.Write(held) // never fails before a result
	held = nil    // the Writer kept what it needs
	// raw keeps the input as read while it is short enough to pass on as
	// it is whatever it holds, as Text does (FitsText: 3 bytes a byte at
	// most, as decoded); the Writer keeps it decoded. Past that, raw is
	// let go: the Writer's result is Text's.
	rawMax := -1
	if !p.HoldsTokens() {
		rawMax = min(p.Fit()/3, maxRawHold)
	}
	var raw []byte
	// 64 KiB reads, a pipe's capacity on Linux: one system call drains a
	// full pipe. (A reader's own WriteTo is bypassed: it would pick its
	// own, smaller, buffer.)
	buf := make([]byte, 64<<10)
	n := 0
	for {
		k, rerr := r.Read(buf)
		if k > 0 {
			w.Write(buf[:k])
			if n += k; n <= rawMax {
				raw = append(raw, buf[:k]...)
			} else {
				raw = nil
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return "", chain.Truncation{}, false, readError(rerr)
		}
	}
	if n <= rawMax {
		return string(raw), chain.Truncation{}, false, nil
	}
	var st cut.Stats
	if p.HoldsTokens() {
		out, st = w.ResultTokens(p.MaxTokens, p.Counter)
	} else {
		out, st = w.Result()
	}
	if !st.Changed() {
		return out, chain.Truncation{}, false, nil
	}
	return out, Figures(st, p), true, nil
}

// maxRawHold bounds what Read holds of its input as read, beside what its
// Writer holds: input of invalid UTF-8 longer than this, under a limit
// over 3 MiB, comes out decoded although Text would pass it on as it is.
const maxRawHold = 1 << 20

// readError names where a read error came from.
func readError(err error) error {
	return fmt.Errorf("shape: reading the result: %w", err)
}
