package shape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
)

// Structured is the outcome of [JSON]: a structured value, such as an MCP
// result's structuredContent, fitted to a policy.
type Structured struct {
	// Raw is the value to send: the input itself when it fits.
	Raw []byte
	// Cut reports that Raw is a cut form of the input.
	Cut bool
	// Note says what the cut kept ("kept K of M items of /entities"), for
	// the result's content, since the cut value carries no marker of its
	// own where a container lost elements; empty when none did. Its Short
	// form says only that the value was cut.
	Note Note
	// Figures are in bytes of serialized JSON: Limit, OriginalBytes (the
	// value as sent, with what a reader dropped before, see [Precut]),
	// KeptBytes, DroppedBytes, Strategy "json", Compacted; the zero value
	// when the input fitted. KeptBytes is the cut form's length (the
	// markers inside cut strings included) and DroppedBytes what the cut
	// form is shorter by: a structured cut has no one marker whose N they
	// restate; each cut string's marker counts that string's bytes, and
	// elements a container lost are told by the Note.
	Figures chain.Truncation
}

// Precut is a string of a JSON value that a reader shortened before the
// value reached [JSONPrecut], such as a proxy that cannot hold a result of
// any size: Head is what it kept of the string's content as written (its
// first bytes, escapes intact, quotes excluded), Extra how many bytes as
// written it dropped after them.
type Precut struct {
	// Head is what the reader kept of the string's content, as written.
	Head []byte
	// Extra is how many bytes as written it dropped after Head.
	Extra int
}

// JSON fits a JSON value within p.MaxBytes bytes of serialized JSON,
// keeping it valid JSON and, when valid is not nil, a form valid accepts:
// valid gets the cut form decoded (encoding/json's any), such as a check
// against a tool's output schema. ok is false when no such form fits (the
// caller then drops the value), and when raw, over the limit, is not valid
// JSON.
//
// A value within the limit is kept as it is. An object keeps every member,
// in its order, the members sharing the limit by [WaterFill] over their
// lengths (the bytes left of the limit once the keys and punctuation are
// counted): a member within its share keeps all of itself, the others are
// cut to theirs by [cut.JSONValue] (an array keeps the longest prefix of
// whole elements that fits, a string its prefix and the marker inside it).
// Keeping every member is what keeps a value valid for a schema that
// requires them, such as {"entities": [...], "relations": [...]}. Any
// other value is cut by cut.JSONValue as a whole.
//
// When p holds tokens, the cut form holds p.MaxTokens too, counted on its
// serialized JSON: the longest byte limit whose cut does is searched for.
func JSON(raw []byte, p Policy, valid func(v any) error) (Structured, bool) {
	return JSONPrecut(raw, p, valid, nil)
}

// JSONPrecut is [JSON] for a value whose long strings a reader shortened
// before, listed in precut in document order: each of them is cut again
// here, and its marker then counts the bytes the reader dropped too, so
// that it stays exact.
func JSONPrecut(raw []byte, p Policy, valid func(v any) error, precut []Precut) (Structured, bool) {
	return JSONReduced(raw, p, valid, precut, nil)
}

// Elided is the tail of a container that a reader left out of a JSON value
// before the value reached [JSONReduced], such as a proxy that reads a
// structuredContent of any size and holds only what a cut to the limit can
// keep: the container keeps its first elements (or members), Count more
// followed them, Bytes long as written with their separators.
type Elided struct {
	// Pointer is the container's JSON Pointer (RFC 6901) in the value, as
	// in [cut.Level].
	Pointer string
	// Count is how many elements or members were left out.
	Count int
	// Bytes is their length as written, separators included.
	Bytes int
}

// JSONReduced is [JSONPrecut] for a value a reader also shortened by
// leaving out the tails of containers, listed in elided. The reader must
// have kept of each such container more than the limit (so that a cut
// never reaches what it left out); the cut's figures then count the bytes
// left out as dropped, and its note the elements left out as not kept.
func JSONReduced(raw []byte, p Policy, valid func(v any) error, precut []Precut, elided []Elided) (Structured, bool) {
	limit := p.MaxBytes
	extra := 0
	for _, pc := range precut {
		extra += pc.Extra
	}
	for _, e := range elided {
		extra += e.Bytes
	}
	if len(precut) == 0 && len(elided) == 0 && p.Fits(len(raw)) {
		return Structured{Raw: raw}, true
	}
	if !json.Valid(raw) {
		return Structured{}, false
	}
	if len(precut) == 0 && len(elided) == 0 && len(raw) <= limit && p.count(string(raw)) <= p.MaxTokens {
		return Structured{Raw: raw}, true // p holds tokens, and they fit too
	}
	out, c, ok := jsonAt(raw, limit, precut)
	if ok && p.HoldsTokens() && p.count(string(out)) > p.MaxTokens {
		// The longest byte limit whose cut holds the tokens too.
		ok = false
		lo, hi := 0, len(out)-1
		for lo <= hi {
			mid := lo + (hi-lo)/2
			if o, cc, ok2 := jsonAt(raw, mid, precut); ok2 && p.count(string(o)) <= p.MaxTokens {
				out, c, ok = o, cc, true
				lo = mid + 1
			} else {
				hi = mid - 1
			}
		}
	}
	if !ok {
		return Structured{}, false
	}
	if valid != nil {
		var v any
		if err := json.Unmarshal(out, &v); err != nil || valid(v) != nil {
			return Structured{}, false
		}
	}
	for i, l := range c.levels {
		for _, e := range elided {
			if l.Pointer == e.Pointer {
				c.levels[i].Total += e.Count
			}
		}
	}
	original := len(raw) + extra
	kept := original - c.dropped - extra
	t := chain.Truncation{
		Limit:         limit,
		LimitTokens:   p.tokens(),
		OriginalBytes: original,
		KeptBytes:     kept,
		DroppedBytes:  original - kept,
		Strategy:      string(cut.KeepJSON),
		// Nothing dropped: only whitespace between tokens went.
		Compacted: c.compacted || original == kept,
	}
	s := Structured{Raw: out, Cut: true, Figures: t}
	if long := keptNote(c.levels, limit); long != "" {
		s.Note = Note{Long: long, Short: shortKeptNote}
	}
	return s, true
}

// jsonCut is what jsonAt did.
type jsonCut struct {
	levels    []cut.Level
	dropped   int // bytes of raw the cut dropped
	compacted bool
}

// jsonAt cuts raw to limit bytes as [JSONPrecut] describes.
func jsonAt(raw []byte, limit int, precut []Precut) ([]byte, jsonCut, bool) {
	// Room for the digits the corrected counts may add.
	room := limit - markerSlack*len(precut)
	var out []byte
	var c jsonCut
	ok := false
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		out, c, ok = cutObject(trimmed, room)
	} else {
		var st cut.Stats
		out, st, ok = cut.JSONValue(raw, room)
		c = jsonCut{levels: st.Levels, dropped: st.Dropped, compacted: st.Compacted}
	}
	if ok && len(precut) > 0 {
		out = addPrecut(out, precut)
	}
	if !ok || len(out) > limit {
		return nil, jsonCut{}, false
	}
	return out, c, true
}

// markerSlack is the room set aside, for each precut string, for the
// digits its corrected count may add to a marker.
const markerSlack = 12

// addPrecut adds to the marker of each string of out that is a cut of a
// precut string the bytes the reader dropped from it. Both are in document
// order, and a cut keeps the order of its input; a precut string the cut
// dropped whole is passed over.
func addPrecut(out []byte, precut []Precut) []byte {
	j := 0
	return cut.AddDroppedInJSON(out, func(kept []byte) int {
		if len(kept) == 0 {
			return 0
		}
		for k := j; k < len(precut); k++ {
			if bytes.HasPrefix(precut[k].Head, kept) {
				j = k + 1
				return precut[k].Extra
			}
		}
		return 0
	})
}

// member is one member of a JSON object.
type member struct {
	key []byte // as written, quotes included
	val []byte
}

// cutObject cuts an object, every member kept, to limit bytes, the
// members sharing it by WaterFill.
func cutObject(raw []byte, limit int) ([]byte, jsonCut, bool) {
	members, ok := objectMembers(raw)
	if !ok {
		return nil, jsonCut{}, false
	}
	budget := limit - 2 // the braces
	lens := make([]int, len(members))
	for i, m := range members {
		budget -= len(m.key) + 1 // the key and its colon
		if i > 0 {
			budget-- // the comma
		}
		lens[i] = len(m.val)
	}
	if budget < 0 {
		return nil, jsonCut{}, false
	}
	shares := WaterFill(lens, budget)

	var b bytes.Buffer
	var c jsonCut
	b.Grow(limit)
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m.key)
		b.WriteByte(':')
		v := m.val
		if len(v) > shares[i] {
			out, st, ok := cut.JSONValue(v, shares[i])
			if !ok {
				return nil, jsonCut{}, false
			}
			v = out
			c.dropped += st.Dropped
			c.compacted = c.compacted || st.Compacted
			var key string
			_ = json.Unmarshal(m.key, &key)
			// Each level's pointer is a prefix of the innermost one's
			// (they are one path): prefix that one once and slice it, so
			// that a path 10,000 deep costs its length, not its square.
			prefix := "/" + cut.PointerToken(key)
			full := ""
			if n := len(st.Levels); n > 0 {
				full = prefix + st.Levels[n-1].Pointer
			}
			for _, l := range st.Levels {
				l.Pointer = full[:len(prefix)+len(l.Pointer)]
				c.levels = append(c.levels, l)
			}
		}
		b.Write(v)
	}
	b.WriteByte('}')
	// Whitespace between the members is not kept; as in a compaction, it
	// does not count as dropped.
	return b.Bytes(), c, true
}

// objectMembers splits a JSON object into its members, in order.
func objectMembers(raw []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		start := dec.InputOffset()
		if _, err := dec.Token(); err != nil {
			return nil, false
		}
		key := bytes.TrimLeft(raw[start:dec.InputOffset()], " \t\r\n,")
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, member{key: bytes.TrimSpace(key), val: v})
	}
	return out, true
}

// keptNote says which containers lost elements. A note longer than the
// limit could never be shown (see [Fit]), and listing every level of a
// path thousands deep would cost the square of its depth: past the limit
// it is the short note.
func keptNote(levels []cut.Level, limit int) string {
	var parts []string
	size := 0
	for _, l := range levels {
		if size > limit {
			return shortKeptNote
		}
		if l.Kept >= l.Total {
			continue
		}
		what := "members"
		if l.Array {
			what = "items"
		}
		where := l.Pointer
		if where == "" {
			where = "the root"
		}
		parts = append(parts, fmt.Sprintf("%d of %d %s of %s", l.Kept, l.Total, what, where))
		size += len(parts[len(parts)-1]) + 2
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%sstructuredContent cut to this tool's limit of %d bytes: kept %s; refine your query]", notePrefix, limit, strings.Join(parts, ", "))
}

// shortKeptNote replaces keptNote when the limit is too small to spend
// that much on notes.
const shortKeptNote = notePrefix + "structuredContent cut to the limit]"

// StructuredDropped is the note for the content of a result whose
// structured value was dropped although its tool declares an output
// schema, so that the result, which breaks the schema's contract, says
// why.
func StructuredDropped(limit int) Note {
	return Note{
		Long:  fmt.Sprintf("%sthe structured result did not fit this tool's limit of %d bytes in a form valid for its output schema and was dropped; refine your query]", notePrefix, limit),
		Short: notePrefix + "structuredContent over the limit dropped]",
	}
}

// DroppedFigures returns the figures of a structured value of n bytes of
// JSON that no valid form fitted and that was dropped whole: every byte
// dropped, under p's limits. Every front end that drops one reports these.
func DroppedFigures(n int, p Policy) chain.Truncation {
	return Figures(cut.Stats{Original: n, Dropped: n, Strategy: cut.KeepJSON}, p)
}
