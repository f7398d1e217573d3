package claudecode

import (
	"encoding/json"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// keepJSON is keep for an MCP tool's output that is the JSON text of its
// structuredContent, short enough to be cut as JSON (structuredText): the
// text is kept whole, in its pageable form, and the marker at the end of
// the last string the cut shortened names the Read of it from its first
// line, since a JSON cut reshapes the document (a read from the start
// never skips a byte the model has not seen). The read is written inside
// that JSON string, its quotes escaped, and the document stays valid and
// within p. It reports false when the cut shortened no string (only
// elements of containers went: the note says so), the read cannot fit, or
// the store fails: the plain cut stands.
func (h *Hook) keepJSON(d *decoder, in Input, s string, p shape.Policy) (json.RawMessage, chain.Truncation, bool) {
	// The cut at p first: only it tells whether the text needs one (its
	// JSON encoding may be over the limit while the text is not) and
	// whether a string of it is shortened.
	if sc, ok := shape.JSON([]byte(s), p, nil); !ok || !sc.Cut {
		return nil, chain.Truncation{}, false
	} else if _, cutString := cut.LastCutString(sc.Raw); !cutString {
		return nil, chain.Truncation{}, false
	}
	form := s
	if pageableJSON(s) {
		form, _ = pageable(s)
	}
	file := &keptFile{s: form, n: len(form)}
	e, path, ok := h.openEntry(d, in, file)
	if !ok {
		return nil, chain.Truncation{}, false
	}
	room := p.MaxBytes - cut.RestMarkerLen(len(form), cut.UnitBytes, cut.Rest{Tool: ReadTool, Args: widestArgs(path)})
	read := cut.JSONRead(cut.Rest{Tool: ReadTool, Args: readArgs(path, 1, pageLines(form, 1, room-16))})
	q := p
	q.MaxBytes -= len(read)
	if p.HoldsTokens() {
		q.MaxTokens -= p.Counter.Count(read) + 2
	}
	if q.MaxBytes < 64 || (p.HoldsTokens() && q.MaxTokens < 16) {
		_ = e.Abort()
		return nil, chain.Truncation{}, false
	}
	sc, ok := shape.JSON([]byte(s), q, nil)
	if !ok || !sc.Cut {
		_ = e.Abort()
		return nil, chain.Truncation{}, false
	}
	cs, ok := cut.LastCutString(sc.Raw)
	if !ok {
		_ = e.Abort()
		return nil, chain.Truncation{}, false
	}
	out := string(cut.AddReadInJSON(sc.Raw, cs, read))
	if len(out) > p.MaxBytes || (p.HoldsTokens() && p.Counter.Count(out) > p.MaxTokens) || !json.Valid([]byte(out)) {
		_ = e.Abort()
		return nil, chain.Truncation{}, false
	}
	if !h.commitEntry(e, file) {
		return nil, chain.Truncation{}, false
	}
	enc, err := marshal(out)
	if err != nil {
		return nil, chain.Truncation{}, false
	}
	t := sc.Figures
	t.Limit, t.LimitTokens = p.MaxBytes, 0
	if p.HoldsTokens() {
		t.LimitTokens = p.MaxTokens
	}
	t.KeptBytes = len(out)
	t.DroppedBytes = t.OriginalBytes - t.KeptBytes
	t.Ref, t.Resume = e.Ref(), 0
	return enc, t, true
}
