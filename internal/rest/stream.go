package rest

import (
	"context"
	"unicode/utf8"
	"unsafe"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// Stream cuts an output that arrives in pieces, as [shape.Read] does, and
// keeps it whole in the store as it arrives, so that memory stays
// O(the policy's bound) whatever its length. Write it, then call Result
// once. A Stream is for one goroutine.
type Stream struct {
	k   *Keeper
	ctx context.Context
	p   shape.Policy

	// fix decodes the output as a client does, each byte that is not
	// valid UTF-8 replaced by U+FFFD, before the cut and the entry see
	// it: the entry holds the text the marker's figures count, so that an
	// offset the marker names is one of the entry's, and a page read from
	// it is valid UTF-8 (issue 39, item 11).
	fix   cut.Replacer
	dec   []byte // what fix emits of one Write
	held  []byte // under a token limit, the first bytes, up to p.Hold()
	hold  int
	w     *cut.Writer // the cut as it streams; under a token limit, past hold
	e     Entry       // over the limit, when the policy keeps the rest
	n     int         // bytes written to w, as decoded
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
	if s.ended {
		return len(b), nil
	}
	if s.fix.Pending() == 0 && utf8.Valid(b) {
		s.put(b)
		return len(b), nil
	}
	s.decode(func(emit func([]byte)) { s.fix.Write(b, emit) })
	return len(b), nil
}

// decode puts what run emits through the Replacer as one piece of whole
// characters: a character the Replacer completes comes out byte by byte,
// and the entry must begin (begin) on a character's boundary, where the
// Writer holds every byte put so far.
func (s *Stream) decode(run func(emit func([]byte))) {
	s.dec = s.dec[:0]
	run(func(p []byte) { s.dec = append(s.dec, p...) })
	s.put(s.dec)
	if cap(s.dec) > 1<<20 {
		s.dec = nil
	}
}

// put takes the next piece of the output, decoded, in whole characters.
func (s *Stream) put(b []byte) {
	if len(b) == 0 {
		return
	}
	if s.w == nil {
		if len(s.held)+len(b) <= s.hold {
			s.held = append(s.held, b...)
			s.n += len(b)
			return
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
	if s.fix.Pending() > 0 {
		s.decode(s.fix.Flush) // a character the output cut short: U+FFFD
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
	var kept string
	var kt chain.Truncation
	var ok bool
	if s.p.HoldsTokens() || s.p.MaxBytes <= inPlaceFrom {
		kept, kt, ok = s.k.mark(s.e.Ref(), s.n, s.p, at, resumeAfterHead(s.w.Prefix))
	} else {
		kept, kt, ok = s.markInPlace()
	}
	if !ok {
		_ = s.e.Abort()
		return at(s.p)
	}
	return s.k.commit(s.e, kept, kt, func() (string, chain.Truncation) {
		out, t, _ := at(s.p)
		return out, t
	})
}

// inPlaceFrom is the byte limit past which the cut that names the read is
// made in the Writer's own storage (markInPlace): past 1 MiB [markWithin]
// makes one cut, never a second one beside the first.
const inPlaceFrom = 1 << 20

// markInPlace is [Keeper.mark] of the Writer's cut under a byte limit of
// more than inPlaceFrom, where markWithin cuts once, at the policy with
// room kept for the read: the same cut, read and checks, but the read is
// added to the cut's marker where the Writer built the cut
// ([cut.Writer.ResultRestAt]), so that the head it keeps is held once,
// not copied for the cut and again for the read. A plain cut made after
// it (a failed commit) lets it go.
func (s *Stream) markInPlace() (string, chain.Truncation, bool) {
	p := s.p
	q, ok := s.k.reserve(p, s.n, asIs)
	if !ok {
		return "", chain.Truncation{}, false
	}
	ref := s.e.Ref()
	resumeAt := resumeAfterHead(s.w.Prefix)
	var t chain.Truncation
	out, _, ok := s.w.ResultRestAt(q.MaxBytes, func(out string, st cut.Stats) (cut.Found, cut.Rest, bool) {
		if !st.Changed() {
			return cut.Found{}, cut.Rest{}, false
		}
		t = shape.Figures(st, q)
		if t.DroppedBytes == 0 {
			return cut.Found{}, cut.Rest{}, false
		}
		f, ok := cutMarker(out, t)
		if !ok {
			return cut.Found{}, cut.Rest{}, false
		}
		t.Resume = resumeAt(out, f, t)
		return f, cut.Rest{Tool: s.k.tool, Args: readArgs(ref, t.Resume, s.k.pageLength(p, s.n))}, true
	})
	if !ok || !fits(out, p) {
		return "", chain.Truncation{}, false
	}
	t.Limit, t.LimitTokens = p.MaxBytes, 0
	t.Ref = ref
	return out, t, true
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
