package cut

import (
	"encoding/json"
	"strings"
)

// Rest is the read a marker names when the whole output was kept, so that
// the model can read on: the marker becomes
//
//	\n[truncated: N bytes dropped, refine your query or read the rest: TOOL ARGS]
//
// where TOOL is the read tool's name and ARGS the exact JSON arguments of
// the next call, such as {"ref":"…","offset":K}. Package rest builds it;
// package cut owns where it stands in the marker.
type Rest struct {
	// Tool is the read tool's name: 1 to 64 characters of [A-Za-z0-9_.-].
	Tool string
	// Args is the JSON object of the call's arguments, compact.
	Args string
}

// restLead joins the marker's plain text and the read it names.
const restLead = " or read the rest: "

// suffixLen returns the bytes r adds to a marker.
func (r Rest) suffixLen() int { return len(restLead) + len(r.Tool) + 1 + len(r.Args) }

// RestMarkerLen returns the length of the marker of a cut that drops n of
// unit and names the read r.
func RestMarkerLen(n int, unit Unit, r Rest) int {
	if unit == UnitTokens {
		return TokenMarkerLen(n) + r.suffixLen()
	}
	return MarkerLen(n) + r.suffixLen()
}

// RestMarker returns the marker of a cut that drops n of unit and names the
// read r.
func RestMarker(n int, unit Unit, r Rest) string {
	m := Marker(n)
	if unit == UnitTokens {
		m = TokenMarker(n)
	}
	return WithRest(m, Found{Start: 0, End: len(m)}, r)
}

// WithRest returns text with the read r added to the marker f, found in
// text by [FindMarkers] (or made by a cut at text[f.Start:f.End]), which
// must be a plain marker: its closing bracket is text[f.End-1].
func WithRest(text string, f Found, r Rest) string {
	var b strings.Builder
	b.Grow(len(text) + r.suffixLen())
	b.WriteString(text[:f.End-1])
	b.WriteString(restLead)
	b.WriteString(r.Tool)
	b.WriteByte(' ')
	b.WriteString(r.Args)
	b.WriteString(text[f.End-1:])
	return b.String()
}

// WithoutRest returns text with the read its marker f names removed: the
// plain marker of the same N. f must have a Rest.
func WithoutRest(text string, f Found) string {
	if f.Rest == nil {
		return text
	}
	cut := f.End - 1 - f.Rest.suffixLen()
	return text[:cut] + text[f.End-1:]
}

// parseRest parses the read a marker names, from s just after the
// marker's plain text ("… refine your query"), up to and including the
// closing bracket: it returns the read and the bytes of s it spans,
// bracket included, or false.
func parseRest(s string) (Rest, int, bool) {
	if !strings.HasPrefix(s, restLead) {
		return Rest{}, 0, false
	}
	i := len(restLead)
	j := i
	for j < len(s) && j-i < 64 && validToolByte(s[j]) {
		j++
	}
	if j == i || j >= len(s) || s[j] != ' ' {
		return Rest{}, 0, false
	}
	tool := s[i:j]
	args := s[j+1:]
	if !strings.HasPrefix(args, "{") {
		return Rest{}, 0, false
	}
	d := json.NewDecoder(strings.NewReader(args))
	var v map[string]json.RawMessage
	if err := d.Decode(&v); err != nil {
		return Rest{}, 0, false
	}
	end := int(d.InputOffset())
	if end >= len(args) || args[end] != ']' {
		return Rest{}, 0, false
	}
	return Rest{Tool: tool, Args: args[:end]}, j + 1 + end + 1, true
}

// validToolByte reports whether c may stand in a read tool's name.
func validToolByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// ValidRestTool reports whether name can be a read tool's name in a
// marker: 1 to 64 characters of [A-Za-z0-9_.-].
func ValidRestTool(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !validToolByte(name[i]) {
			return false
		}
	}
	return true
}
