package shape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/toolcap/toolcap/cut"
)

// StructuredCut is the outcome of [CapStructuredJSON].
type StructuredCut struct {
	// Raw is the value for the client: the input itself when it fits.
	Raw []byte
	// Cut reports that Raw is a cut form of the input.
	Cut bool
	// Note says what the cut kept, "kept K of M", for the content; empty
	// when no container lost elements.
	Note string
}

// CapStructuredJSON brings a structuredContent value, as JSON, within limit
// bytes of serialized JSON, keeping it valid JSON and, when schema is not
// nil, valid for the tool's output schema. ok is false when no such form
// fits: the caller then drops it.
//
// A value within limit is kept as it is. An object keeps every member, in
// its order, the members sharing the limit by water-filling: a member
// smaller than the fair share keeps all of itself and the others share
// what is left equally, each cut by [cut.JSONValue] (an array keeps the
// longest prefix of whole elements that fits, a string its prefix and the
// marker inside it). Keeping every member is what keeps a result valid for
// a schema that requires them, such as {"entities": [...], "relations":
// [...]}. Any other value is cut by [cut.JSONValue] as a whole.
//
// precut lists the strings of raw a reader shortened before (keeping their
// first bytes as written): each is cut again here, and the marker's count
// then adds the bytes the reader dropped, so that it stays exact.
func CapStructuredJSON(raw []byte, limit int, schema *jsonschema.Resolved, precut []Precut) (sc StructuredCut, ok bool) {
	if len(raw) <= limit && len(precut) == 0 {
		return StructuredCut{Raw: raw}, true
	}
	// Room for the digits the corrected counts may add.
	full := limit
	limit -= markerSlack * len(precut)
	var out []byte
	var levels []cut.Level
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		out, levels, ok = capObject(trimmed, limit)
	} else {
		var st cut.Stats
		out, st, ok = cut.JSONValue(raw, limit)
		levels = st.Levels
	}
	if ok && len(precut) > 0 {
		out = fixCounts(out, precut)
	}
	if !ok || len(out) > full {
		return StructuredCut{}, false
	}
	if schema != nil {
		var v any
		if err := json.Unmarshal(out, &v); err != nil || schema.Validate(v) != nil {
			return StructuredCut{}, false
		}
	}
	return StructuredCut{Raw: out, Cut: true, Note: keptNote(levels, full)}, true
}

// Precut is a string a reader shortened: Head is what it kept of the
// string's content as written, Extra how many bytes as written it dropped.
type Precut struct {
	Head  []byte
	Extra int
}

// markerSlack is the room set aside for the digits a corrected count may
// add to a marker.
const markerSlack = 12

// stringMarker is the marker at the end of a string cut by cut.JSONValue,
// as written in JSON.
var stringMarker = regexp.MustCompile(`\\n\[truncated: (\d+) bytes dropped, refine your query\]"`)

// fixCounts adds to the marker of each string of out that is a cut of a
// precut string the bytes the reader dropped from it. Both lists are in
// document order, and out keeps the order of its input.
func fixCounts(out []byte, precut []Precut) []byte {
	var b bytes.Buffer
	last, j := 0, 0
	for _, m := range stringMarker.FindAllSubmatchIndex(out, -1) {
		if j >= len(precut) {
			break
		}
		content := out[stringStart(out, m[0]):m[0]]
		if len(content) == 0 || !bytes.HasPrefix(precut[j].Head, content) {
			continue
		}
		n, err := strconv.Atoi(string(out[m[2]:m[3]]))
		if err != nil {
			continue
		}
		b.Write(out[last:m[2]])
		b.WriteString(strconv.Itoa(n + precut[j].Extra))
		last = m[3]
		j++
	}
	b.Write(out[last:])
	return b.Bytes()
}

// stringStart returns the offset of the content of the JSON string that
// holds offset end of b: just after its opening quote.
func stringStart(b []byte, end int) int {
	for q := end - 1; q >= 0; q-- {
		if b[q] != '"' {
			continue
		}
		slashes := 0
		for k := q - 1; k >= 0 && b[k] == '\\'; k-- {
			slashes++
		}
		if slashes%2 == 0 {
			return q + 1
		}
	}
	return 0
}

// member is one member of a JSON object.
type member struct {
	key []byte // as written, quotes included
	val []byte
}

// capObject cuts an object, every member kept, to limit bytes.
func capObject(raw []byte, limit int) ([]byte, []cut.Level, bool) {
	members, ok := objectMembers(raw)
	if !ok {
		return nil, nil, false
	}
	budget := limit - 2 // the braces
	for i, m := range members {
		budget -= len(m.key) + 1 // the key and its colon
		if i > 0 {
			budget-- // the comma
		}
	}
	if budget < 0 {
		return nil, nil, false
	}
	// Water-filling: the smallest values first take what they need while
	// it is below the fair share of what is left.
	order := make([]int, len(members))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(members[a].val) - len(members[b].val) })
	share := make([]int, len(members))
	left, n := budget, len(members)
	for _, i := range order {
		fair := left / n
		if len(members[i].val) > fair {
			for _, j := range order[len(members)-n:] {
				share[j] = left / n
			}
			break
		}
		share[i] = len(members[i].val)
		left -= share[i]
		n--
	}

	var b bytes.Buffer
	var levels []cut.Level
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m.key)
		b.WriteByte(':')
		v := m.val
		if len(v) > share[i] {
			out, st, ok := cut.JSONValue(v, share[i])
			if !ok {
				return nil, nil, false
			}
			v = out
			var key string
			_ = json.Unmarshal(m.key, &key)
			for _, l := range st.Levels {
				l.Pointer = "/" + pointerToken(key) + l.Pointer
				levels = append(levels, l)
			}
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), levels, true
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

// pointerToken escapes a key for a JSON Pointer (RFC 6901).
func pointerToken(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// keptNote says which containers lost elements.
func keptNote(levels []cut.Level, limit int) string {
	var parts []string
	for _, l := range levels {
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
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%sstructuredContent cut to this tool's limit of %d bytes: kept %s; refine your query]", NotePrefix, limit, strings.Join(parts, ", "))
}
