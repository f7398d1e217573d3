// Package capcheck checks, for tests, the invariants that every front end's
// output holds whatever the tool returned: within the limit in UTF-8 bytes
// (and tokens), at most one marker, and the marker's N exact. The worker's,
// the proxy's, the hook's and the adapters' tests all use it, so that "the
// limit holds" means the same thing everywhere.
package capcheck

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// Text returns what is wrong with out, the form of in a front end gave the
// model under p, or nil. It checks that:
//   - in within p is out unchanged;
//   - out is at most p.MaxBytes bytes and, when p holds tokens, at most
//     p.MaxTokens tokens;
//   - out carries at most one marker more than in;
//   - a byte marker's N is the number of bytes of in that out does not
//     show: len(in) less out without its marker (and the newline that
//     puts a head_tail marker on a line of its own); a token marker's N
//     is at least 1.
func Text(in, out string, p shape.Policy) error {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	// Issue 22: the limit holds in what the client decodes. A cut measures
	// in with each invalid byte a U+FFFD; only a text that fits even at 3
	// bytes a byte may go out with invalid bytes.
	if !utf8.ValidString(out) && len(out) > p.Fit()/3 {
		fail("%d bytes of invalid UTF-8, over the limit of %d once decoded", len(out), p.MaxBytes)
	}
	if !utf8.ValidString(in) && utf8.ValidString(out) {
		in, _ = cut.ReplaceInvalid(in)
	}
	if len(out) > p.MaxBytes {
		fail("%d bytes, over the limit of %d", len(out), p.MaxBytes)
	}
	if p.HoldsTokens() {
		if n := p.Counter.Count(out); n > p.MaxTokens {
			fail("%d tokens, over the limit of %d", n, p.MaxTokens)
		}
	}
	if out == in {
		return joined(errs)
	}
	added := cut.FindMarkers(out)
	if extra := len(added) - len(cut.FindMarkers(in)); extra > 1 {
		fail("%d markers more than the input carries, want at most 1", extra)
	}
	if len(added) > 0 {
		// The marker the cut wrote: the last one, or for head_tail the one
		// on a line of its own.
		m := added[len(added)-1]
		for _, f := range added {
			if f.End < len(out) && out[f.End] == '\n' && !strings.Contains(in, out[f.Start:f.End+1]) {
				m = f
				break
			}
		}
		checkN(in, out, m, p, fail)
	} else if cut.IsMarkerLine(out) {
		// A list of lines of which not one fitted: the marker alone.
		if _, n, _ := cut.SplitMarker("\n" + out); n != len(in) {
			fail("marker line counts %d, the input has %d bytes", n, len(in))
		}
	}
	return joined(errs)
}

// checkN checks the N of m, the marker a cut wrote into out.
func checkN(in, out string, m cut.Found, p shape.Policy, fail func(string, ...any)) {
	extra := 0
	if m.End < len(out) && out[m.End] == '\n' {
		extra = 1
	}
	if m.Unit == cut.UnitTokens {
		if m.N < 1 {
			fail("token marker counts %d, want at least 1", m.N)
		}
		if p.Counter != nil && len(in) <= cut.TokenWindow(p.MaxTokens) {
			kept := p.Counter.Count(out[:m.Start])
			if m.End+extra < len(out) {
				kept += p.Counter.Count(out[m.End+extra:])
			}
			if want := max(1, p.Counter.Count(in)-kept); m.N != want {
				fail("token marker counts %d, the input less what the output shows is %d", m.N, want)
			}
		}
		return
	}
	shown := len(out) - (m.End - m.Start) - extra
	if want := len(in) - shown; m.N != want {
		fail("marker counts %d bytes, the input (%d) less what the output shows (%d) is %d", m.N, len(in), shown, want)
	}
}

// Texts is [Text] for texts that share p's limits (see [shape.Share]):
// together within the limits, each one's marker exact.
func Texts(in, out []string, p shape.Policy) error {
	if len(in) != len(out) {
		return fmt.Errorf("%d texts in, %d out", len(in), len(out))
	}
	var errs []string
	total, tokens := 0, 0
	for i := range in {
		total += len(out[i])
		if p.HoldsTokens() {
			tokens += p.Counter.Count(out[i])
		}
		q := p
		q.MaxBytes, q.MaxTokens = len(out[i]), 0 // each alone: only its marker
		if err := Text(in[i], out[i], q); err != nil {
			errs = append(errs, fmt.Sprintf("text %d: %v", i, err))
		}
	}
	if total > p.MaxBytes {
		errs = append(errs, fmt.Sprintf("%d bytes together, over the limit of %d", total, p.MaxBytes))
	}
	if p.HoldsTokens() && tokens > p.MaxTokens {
		errs = append(errs, fmt.Sprintf("%d tokens together, over the limit of %d", tokens, p.MaxTokens))
	}
	return joined(errs)
}

func joined(errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(errs, "; "))
}
