package cut

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
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

// recutRest is a recut of text whose last marker naming a read is f: the
// marker made plain, recut cuts it at the limit less the read's bytes (it
// gets the read's text, to count its tokens), and the read goes back into
// the marker of the cut, its "offset" moved back by what the cut gave up
// before the marker; where that cannot fit, the plain marker. It reports
// false for a text whose marker names no read.
func recutRest(text string, limit int, recut func(plain string, limit int, read string) (string, Stats)) (string, Stats, bool) {
	var f Found
	found := false
	for _, m := range FindMarkers(text) {
		if m.Rest != nil {
			f, found = m, true
		}
	}
	if !found {
		return "", Stats{}, false
	}
	r := *f.Rest
	read := restLead + r.Tool + " " + r.Args
	plain := WithoutRest(text, f)
	out, st := recut(plain, limit-r.suffixLen(), read)
	n, unit := st.Dropped, UnitBytes
	if st.Unit == UnitTokens {
		n, unit = st.DroppedTokens, UnitTokens
	}
	ms := FindMarkers(out)
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if m.N != n || m.Unit != unit || m.Rest != nil {
			continue
		}
		r.Args = movedOffset(r.Args, f.Start-m.Start)
		return WithRest(out, m, r), st, true
	}
	// No room for the read beside a marker: the plain marker, its count
	// still that of the whole original.
	out, st = recut(plain, limit, "")
	return out, st, true
}

// offsetMember finds the "offset" member of a read's arguments.
// Compiled at its first use, not at start-up (see jsonStringMarker).
var offsetMember = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"offset":(\d+)`) })

// movedOffset returns args with its "offset" moved back by by bytes (when
// by > 0), never below 0.
func movedOffset(args string, by int) string {
	m := offsetMember().FindStringSubmatchIndex(args)
	if m == nil || by <= 0 {
		return args
	}
	k, err := strconv.Atoi(args[m[2]:m[3]])
	if err != nil {
		return args
	}
	return args[:m[2]] + strconv.Itoa(max(0, k-by)) + args[m[3]:]
}
