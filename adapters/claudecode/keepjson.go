package claudecode

import (
	"encoding/json"
	"strings"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/cut"
	"github.com/toolcap/toolcap/shape"
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
	} else if _, cutString := spliceRead(string(sc.Raw), ""); !cutString {
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
	read, err := escapedRead(readArgs(path, 1, pageLines(form, 1, room-16)))
	if err != nil {
		_ = e.Abort()
		return nil, chain.Truncation{}, false
	}
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
	out, ok := spliceRead(string(sc.Raw), read)
	if !ok || len(out) > p.MaxBytes || (p.HoldsTokens() && p.Counter.Count(out) > p.MaxTokens) || !json.Valid([]byte(out)) {
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

// escapedRead returns what a marker naming the Read with args adds to a
// plain marker (cut.WithRest), as written inside a JSON string.
func escapedRead(args string) (string, error) {
	m := cut.RestMarker(0, cut.UnitBytes, cut.Rest{Tool: ReadTool, Args: args})
	suffix := m[cut.MarkerLen(0)-1 : len(m)-1] // all but the closing bracket
	enc, err := marshal(suffix)
	if err != nil {
		return "", err
	}
	return string(enc[1 : len(enc)-1]), nil
}

// spliceRead adds read, as escapedRead writes it, to the last plain marker
// in bytes that ends a string of doc, a JSON text (as written there: after
// a \n escape, before the string's closing quote), before the marker's
// closing bracket. It reports false when no string of doc ends in one.
func spliceRead(doc, read string) (string, bool) {
	plain := cut.Marker(0)
	suffix := plain[strings.LastIndexByte(plain, '0')+1:] + `"` // " bytes dropped, refine your query]" and the quote
	lead := `\n` + plain[1:strings.LastIndexByte(plain, '0')]   // \n[truncated: , as written in JSON
	end := strings.LastIndex(doc, suffix)
	if end < 0 {
		return "", false
	}
	// The marker's count, and its lead before it.
	i := end
	for i > 0 && doc[i-1] >= '0' && doc[i-1] <= '9' {
		i--
	}
	if i == end || !strings.HasSuffix(doc[:i], lead) {
		return "", false
	}
	at := end + len(suffix) - len(`]"`)
	return doc[:at] + read + doc[at:], true
}
