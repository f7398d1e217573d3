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
// The cut is [cut.Writer]'s, which holds only what p's strategy may keep
// (about the limit for head, twice it for head_tail, the document for json
// while it is short enough to be cut as one), so the output and figures are
// byte for byte those of Text on the whole input, with these bounds:
//
//   - Without a token limit, always.
//   - With a token limit (p holds tokens), for input of at most
//     [cut.JSONMaxInput](p.MaxBytes) bytes (8 MiB or 4 times the byte
//     limit) and, unless p's strategy is json, at most
//     [cut.TokenWindow](p.MaxTokens): it is held whole, counted and cut
//     as Text cuts it. Longer input, which Text itself does not count
//     whole, is cut as it streams, to the byte limit or the token window
//     whichever is less (Text's first cut too), then to the token limit
//     from what was kept ([cut.RecutTokens]): within both limits, its one
//     marker counting exactly the bytes of the input the output does not
//     show, as Text's does for such input; when that first cut is over
//     the token limit, the kept text may end a few bytes from where
//     Text's ends.
//
// changed is false, and out is everything read, when the input fits p. A
// read error other than io.EOF ends the read: Read returns it, wrapped,
// with nothing else.
func Read(r io.Reader, p Policy) (out string, t chain.Truncation, changed bool, err error) {
	var held []byte
	if p.HoldsTokens() {
		// Held whole up to the token window, which no input that could
		// fit the token limit outgrows, and never longer than the json
		// strategy holds a document; the json strategy holds that much
		// anyway, so it is held whole as far as it would be.
		hold := cut.JSONMaxInput(p.MaxBytes)
		if p.Spec.Keep != cut.KeepJSON {
			hold = min(hold, cut.TokenWindow(p.MaxTokens))
		}
		held, err = io.ReadAll(io.LimitReader(r, int64(hold)+1))
		if err != nil {
			return "", chain.Truncation{}, false, readError(err)
		}
		if len(held) <= hold {
			out, t, changed = Text(string(held), p)
			return out, t, changed, nil
		}
	}
	limit := p.MaxBytes
	if held != nil {
		// Text cuts input this long to the token window first: the same
		// first cut, so that when it fits the token limit the output is
		// Text's.
		limit = min(limit, cut.TokenWindow(p.MaxTokens))
	}
	w := cut.NewWriter(limit, p.Spec)
	w.Write(held) // never fails before Result
	held = nil    // the Writer kept what it needs
	if _, err := io.Copy(w, r); err != nil {
		return "", chain.Truncation{}, false, readError(err)
	}
	out, st := w.Result()
	if !st.Changed() {
		if p.HoldsTokens() {
			// The whole input, within the byte limit: count it as Text
			// does.
			out, t, changed = Text(out, p)
			return out, t, changed, nil
		}
		return out, chain.Truncation{}, false, nil
	}
	if p.HoldsTokens() {
		if again, st2 := cut.RecutTokens(out, p.MaxBytes, p.MaxTokens, p.Counter, p.Spec); st2.Changed() {
			out, st = again, st2
		}
	}
	return out, Figures(st, p), true, nil
}

// readError names where a read error came from.
func readError(err error) error {
	return fmt.Errorf("shape: reading the result: %w", err)
}
