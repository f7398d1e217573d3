package rest

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// JSONKept fits raw, a structured value a tool returned beside its text
// (MCP's structuredContent), to p as cutAt fits it, for a result whose text
// was cut and kept under ref (by [Keeper.Text] or a [Stream]): the marker
// of the cut's last cut string then names the read of that kept text, so
// that a client that shows the model the structured value rather than the
// text leaves nothing unreadable behind it.
//
// cutAt cuts the value at a policy as [shape.JSON] does (a front end passes
// its own precut strings and elided tails, as to [shape.JSONReduced]).
// JSONKept calls it at p; when that cut shortened a string, it calls it
// again with p's limits less the room the read takes as written in a JSON
// string, its quotes escaped (the room [Keeper.Text] keeps, for an output
// of len(raw) bytes), and splices the read into the marker at the end of
// the last string that cut shortened. Nothing is written to the store: the
// text is kept already. The read starts where
// that string's kept head ends in the kept text when the text begins with
// that head, as when the structured value mirrors the text
// ({"content": text}); otherwise at 0, the start, so that it never skips a
// byte the model has not seen. prefix is what the caller holds of the kept
// text's start (all of it, or its first bytes): a head longer than prefix
// reads from 0.
//
// The result is within p's limits, valid JSON, and accepted by valid when
// it is not nil (it gets the value decoded, as from shape.JSON). Its
// figures count its own bytes and carry ref and the offset
// (chain.Truncation.Ref, Resume). The N of the marker that names the read
// is what the read returns, from its offset to the end: total, the kept
// text's length, less the offset (issue 41: it counted the string's bytes
// as written, escapes and all, which a read never returns), so that a
// client that shows the model the structured value and one that shows the
// text give it the same rule. When p does not keep the rest, ref is not
// a ref, no cut string carries a marker (only elements of containers were
// dropped: the note says so), or the read cannot fit or pass valid,
// JSONKept returns cutAt's cut at p, with its plain markers; ok is then
// cutAt's.
func (k *Keeper) JSONKept(raw []byte, p shape.Policy, ref, prefix string, total int, valid func(any) error, cutAt func(shape.Policy) (shape.Structured, bool)) (shape.Structured, bool) {
	// The cut at p first: only it tells whether the value needs a cut at
	// all (a value over the limit may fit once compacted) and whether a
	// string of it is cut, which a smaller limit must not change.
	sc, ok := cutAt(p)
	if !ok || !sc.Cut || !p.KeepRest || !ValidRef(ref) {
		return sc, ok
	}
	if _, cutString := cut.LastCutString(sc.Raw); !cutString {
		return sc, true
	}
	if kept, ok := k.jsonMark(len(raw), p, ref, prefix, total, valid, cutAt); ok {
		return kept, true
	}
	return sc, true
}

// jsonMark is JSONKept's cut that names the read, false when there is
// none.
func (k *Keeper) jsonMark(n int, p shape.Policy, ref, prefix string, total int, valid func(any) error, cutAt func(shape.Policy) (shape.Structured, bool)) (shape.Structured, bool) {
	// Room for the digits the marker's N may gain when it becomes what the
	// read returns (total less the offset).
	room := p
	room.MaxBytes -= len(strconv.Itoa(total))
	// The read's offset and N count the kept text, total bytes long.
	n = max(n, total)
	return markWithin(k, room, n, cut.InJSONString, func(q shape.Policy) (shape.Structured, int, bool) {
		sc, ok := cutAt(q)
		if !ok || !sc.Cut {
			return shape.Structured{}, 0, false
		}
		out, resume, ok := k.spliceRead(sc.Raw, ref, prefix, total, k.pageLength(p, n))
		if !ok || !fits(string(out), p) {
			return shape.Structured{}, 0, false
		}
		if valid != nil {
			// The longer string may break what the schema allows of it.
			var v any
			if json.Unmarshal(out, &v) != nil || valid(v) != nil {
				return shape.Structured{}, 0, false
			}
		}
		sc.Raw = out
		t := &sc.Figures
		t.Limit, t.LimitTokens = p.MaxBytes, 0
		if p.HoldsTokens() {
			t.LimitTokens = p.MaxTokens
		}
		t.KeptBytes = len(out)
		t.DroppedBytes = t.OriginalBytes - t.KeptBytes
		t.Ref, t.Resume = ref, resume
		// The note names the limit it was cut to: p's, not the one less
		// the room of the read.
		sc.Note.Long = strings.Replace(sc.Note.Long, limitOf(q.MaxBytes), limitOf(p.MaxBytes), 1)
		return sc, len(out), true
	})
}

// limitOf is how a note of package shape names a byte limit.
func limitOf(n int) string { return "limit of " + strconv.Itoa(n) + " bytes" }

// spliceRead adds the read of ref (pages of length bytes) to the marker that ends the last string
// value of doc a cut shortened, and returns the new document and the
// offset the read starts at (see [Keeper.JSONKept]), or false when no
// string of doc ends in a plain marker.
func (k *Keeper) spliceRead(doc []byte, ref, prefix string, total, length int) ([]byte, int, bool) {
	s, ok := cut.LastCutString(doc)
	if !ok {
		return nil, 0, false
	}
	resume := 0
	if len(s.Kept) <= len(prefix) && prefix[:len(s.Kept)] == s.Kept {
		resume = len(s.Kept)
	}
	read := cut.JSONRead(cut.Rest{Tool: k.tool, Args: readArgs(ref, resume, length)})
	out := cut.AddReadInJSON(doc, s, read)
	if total >= resume {
		// The marker's N becomes what the read returns.
		out = cut.SetDroppedInJSON(out, s, total-resume)
	}
	return out, resume, true
}
