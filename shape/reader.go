package shape

import (
	"fmt"
	"io"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/cut"
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
// changed is false, and out is everything read, as it was read, when the
// input fits p as the client decodes it ([Policy.FitsText]), as Text
// passes it on. A
// read error other than io.EOF ends the read: Read returns it, wrapped,
// with nothing else.
func Read(r io.Reader, p Policy) (out string, t chain.Truncation, changed bool, err error) {
	var held []byte
	if !p.HoldsTokens() {
		// Input that fits as the client decodes it is passed on as it is,
		// as Text passes it: not valid UTF-8 included (the Writer would
		// give its decoded form, which the client makes of it anyway).
		held, err = io.ReadAll(io.LimitReader(r, int64(p.Fit())+1))
		if err != nil {
			return "", chain.Truncation{}, false, readError(err)
		}
		if s := string(held); len(held) <= p.Fit() && p.FitsText(s) {
			return s, chain.Truncation{}, false, nil
		}
	}
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
	// 64 KiB reads, a pipe's capacity on Linux: one system call drains a
	// full pipe. (A reader's own WriteTo is bypassed: it would pick its
	// own, smaller, buffer.)
	if _, err := io.CopyBuffer(w, struct{ io.Reader }{r}, make([]byte, 64<<10)); err != nil {
		return "", chain.Truncation{}, false, readError(err)
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

// readError names where a read error came from.
func readError(err error) error {
	return fmt.Errorf("shape: reading the result: %w", err)
}
