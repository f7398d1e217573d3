package rest

import (
	"context"
	"unsafe"

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

	held  []byte // under a token limit, the first bytes, up to p.Hold()
	hold  int
	w     *cut.Writer // the cut as it streams; under a token limit, past hold
	e     Entry       // over the limit, when the policy keeps the rest
	n     int         // bytes written to w
	ended bool

	gaveUp bool // the store failed: nothing is kept
}

// NewStream returns a Stream that cuts to p and, when p.KeepRest is set,
// keeps the output under the scope of ctx.
func (k *Keeper) NewStream(ctx context.Context, p shape.Policy) *Stream {
	s := &Stream{k: k, ctx: ctx, p: p, hold: p.Hold()}
	if !p.HoldsTokens() {
		// Without a token limit the Writer's cut is Text's at any length
		// (shape.Policy.Hold): nothing is held beside it.
		s.w = cut.NewWriter(p.MaxBytes, p.Spec)
	}
	return s
}

// Write takes the next piece of the output. It never fails: a store that
// fails is given up, and the output is cut without it.
func (s *Stream) Write(b []byte) (int, error) {
	n := len(b)
	if s.w == nil {
		if len(s.held)+len(b) <= s.hold {
			s.held = append(s.held, b...)
			s.n += n
			return n, nil
		}
		// Hold exactly the first hold bytes, then cut as it streams.
		fill := s.hold - len(s.held)
		s.held = append(s.held, b[:fill]...)
		s.n += fill
		b = b[fill:]
		s.w = cut.NewWriter(s.p.MaxBytes, s.p.Spec)
		s.w.Write(s.held)
		if s.p.KeepRest {
			// Past what is held, so over the limit: keep it all.
			s.start(s.held)
		}
		s.held = nil // the Writer holds what a cut shows (Writer.Prefix)
	}
	if s.e == nil && s.p.KeepRest && !s.gaveUp && s.n+len(b) > s.p.MaxBytes {
		// Over the limit from this piece on: keep it all, from the
		// first byte, which the Writer still holds (its prefix is at
		// least the limit).
		s.begin()
	}
	s.n += len(b)
	s.w.Write(b) // a Writer never fails before its result
	if s.e != nil {
		if _, err := s.e.Write(b); err != nil {
			s.k.fail("write", err)
			s.giveUp()
		}
	}
	return n, nil
}

// begin starts the entry of an output over the limit, with what was
// written so far: all of it is in the Writer's prefix, since it was
// within the limit.
func (s *Stream) begin() {
	prefix := s.w.Prefix()
	// Read in place: an io.Writer neither changes nor keeps what it gets.
	s.start(unsafe.Slice(unsafe.StringData(prefix), len(prefix)))
}

// start creates the entry, with first as its first bytes.
func (s *Stream) start(first []byte) {
	e, err := s.k.store.Create(s.ctx, s.k.scopeOf(s.ctx))
	if err != nil {
		s.k.fail("create", err)
		s.gaveUp = true
		return
	}
	s.e = e
	if _, err := e.Write(first); err != nil {
		s.k.fail("write", err)
		s.giveUp()
	}
}

// giveUp discards the entry after a store failure: the output is cut
// without it.
func (s *Stream) giveUp() {
	_ = s.e.Abort()
	s.e = nil
	s.gaveUp = true
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
	if s.e == nil {
		return at(s.p)
	}
	// The output passed what the Stream holds, so it is over the limit:
	// the cut that names the read is tried first, and the plain one is
	// built only when it fails, so that a large limit costs one output.
	kept, kt, ok := s.k.mark(s.e.Ref(), s.n, s.p, at, resumeAfterHead(s.w.Prefix()))
	if !ok {
		_ = s.e.Abort()
		return at(s.p)
	}
	return s.k.commit(s.e, kept, kt, func() (string, chain.Truncation) {
		out, t, _ := at(s.p)
		return out, t
	})
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
