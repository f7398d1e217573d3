package rest

import (
	"context"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/cut"
	"github.com/toolcap/toolcap/shape"
)

// Stream cuts an output that arrives in pieces, as [shape.Read] does, and
// keeps it whole in the store as it arrives, so that memory stays
// O(the policy's bound) whatever its length. Write it, then call Result
// once. A Stream is for one goroutine.
type Stream struct {
	k   *Keeper
	ctx context.Context
	p   shape.Policy

	held  []byte // the first bytes, up to p.Hold()
	hold  int
	w     *cut.Writer // past hold: the cut as it streams
	e     Entry       // past hold, when the policy keeps the rest
	n     int
	ended bool
}

// NewStream returns a Stream that cuts to p and, when p.KeepRest is set,
// keeps the output under the scope of ctx.
func (k *Keeper) NewStream(ctx context.Context, p shape.Policy) *Stream {
	return &Stream{k: k, ctx: ctx, p: p, hold: p.Hold()}
}

// Write takes the next piece of the output. It never fails: a store that
// fails is given up, and the output is cut without it.
func (s *Stream) Write(b []byte) (int, error) {
	s.n += len(b)
	n := len(b)
	if s.w == nil {
		if len(s.held)+len(b) <= s.hold {
			s.held = append(s.held, b...)
			return n, nil
		}
		// Hold exactly the first hold bytes: where a cut shows the start,
		// they tell where the read of the rest goes on.
		fill := s.hold - len(s.held)
		s.held = append(s.held, b[:fill]...)
		b = b[fill:]
		s.begin()
	}
	s.w.Write(b) // a Writer never fails before its result
	if s.e != nil {
		if _, err := s.e.Write(b); err != nil {
			s.k.fail("write", err)
			_ = s.e.Abort()
			s.e = nil
		}
	}
	return n, nil
}

// begin starts the cut of an output longer than what the Stream holds:
// the Writer, and the entry when the policy keeps the rest.
func (s *Stream) begin() {
	s.w = cut.NewWriter(s.p.MaxBytes, s.p.Spec)
	s.w.Write(s.held)
	if !s.p.KeepRest {
		return
	}
	e, err := s.k.store.Create(s.ctx, s.k.scopeOf(s.ctx))
	if err != nil {
		s.k.fail("create", err)
		return
	}
	if _, err := e.Write(s.held); err != nil {
		s.k.fail("write", err)
		_ = e.Abort()
		return
	}
	s.e = e
}

// Result returns the output fitted to the policy, as [Keeper.Text]
// returns it for the output held whole: the marker names the read of the
// rest when the store kept it.
func (s *Stream) Result() (string, chain.Truncation, bool) {
	if s.ended {
		return "", chain.Truncation{}, false
	}
	s.ended = true
	if s.w == nil {
		return s.k.Text(s.ctx, string(s.held), s.p)
	}
	at := func(q shape.Policy) (string, chain.Truncation, bool) {
		var out string
		var st cut.Stats
		if q.HoldsTokens() {
			out, st = s.w.ResultTokensAt(q.MaxBytes, q.MaxTokens, q.Counter)
		} else {
			out, st = s.w.ResultAt(q.MaxBytes)
		}
		if !st.Changed() {
			return out, chain.Truncation{}, false
		}
		return out, shape.Figures(st, q), true
	}
	plain, pt, changed := at(s.p)
	if s.e == nil || !changed || pt.DroppedBytes == 0 {
		if s.e != nil {
			_ = s.e.Abort()
		}
		return plain, pt, changed
	}
	kept, kt, ok := s.k.mark(s.e.Ref(), s.n, s.p, at, resumeAfterHead(string(s.held)))
	if !ok {
		_ = s.e.Abort()
		return plain, pt, changed
	}
	return s.k.commit(s.e, kept, kt, plain, pt)
}

// Abort discards what the Stream kept, for a front end that gives up the
// output (its source failed).
func (s *Stream) Abort() {
	s.ended = true
	if s.e != nil {
		_ = s.e.Abort()
		s.e = nil
	}
}
