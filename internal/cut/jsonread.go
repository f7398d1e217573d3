package cut

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// A CutString is a string value of a JSON document that a cut shortened:
// its content ends in a plain marker in bytes, as [JSONValue] ends a
// string it cuts ("…\n[truncated: N bytes dropped, refine your query]").
type CutString struct {
	// End is the offset in the document just past the string's closing
	// quote.
	End int
	// Kept is what the string kept before its marker, decoded.
	Kept string
}

// LastCutString finds the last string value of doc, a valid JSON document,
// that a cut shortened: the one a read of what the cut dropped is added to
// ([AddReadInJSON]), so that a document cut as JSON still names the read of
// the rest. An object's key is never one; neither is a string whose marker
// names a read already, or counts tokens. ok is false when doc has no such
// string, as when a cut dropped only elements of containers.
//
// It searches doc's bytes for markers as written and decodes only the
// strings that end in one: it does not decode doc's tokens.
func LastCutString(doc []byte) (s CutString, ok bool) {
	// Two matches never overlap (one cannot start inside another's fixed
	// text), so every candidate is among these.
	ms := jsonStringMarker().FindAllIndex(doc, -1)
	for i := len(ms) - 1; i >= 0; i-- {
		if s, ok := cutStringAt(doc, ms[i][0], ms[i][1]); ok {
			return s, true
		}
	}
	return CutString{}, false
}

// cutStringAt checks that doc[start:end], a match of jsonStringMarker,
// ends a string value with a plain marker in bytes, and returns it.
func cutStringAt(doc []byte, start, end int) (CutString, bool) {
	// The match opens with the backslash of "\n": escaped itself (an odd
	// run of backslashes before it), it is text, not the marker's newline.
	slashes := 0
	for k := start - 1; k >= 0 && doc[k] == '\\'; k-- {
		slashes++
	}
	if slashes%2 == 1 || keyFollows(doc[end:]) {
		return CutString{}, false
	}
	var text string
	if json.Unmarshal(doc[jsonStringStart(doc, start)-1:end], &text) != nil {
		return CutString{}, false
	}
	ms := FindMarkers(text)
	if len(ms) == 0 {
		return CutString{}, false
	}
	m := ms[len(ms)-1]
	if m.End != len(text) || m.Rest != nil || m.Unit != UnitBytes {
		return CutString{}, false
	}
	return CutString{End: end, Kept: text[:m.Start]}, true
}

// keyFollows reports whether rest, what follows a string in a JSON
// document, makes that string an object's key: a colon comes next.
func keyFollows(rest []byte) bool {
	rest = bytes.TrimLeft(rest, " \t\r\n")
	return len(rest) > 0 && rest[0] == ':'
}

// JSONRead returns what [WithRest] adds to a plain marker to name the read
// r, as it is written inside a JSON string ([InJSONString]): what
// [AddReadInJSON] adds, and so the room a read takes in a document cut as
// JSON.
func JSONRead(r Rest) string {
	m := RestMarker(0, UnitBytes, r)
	// All but the closing bracket, which stays the marker's last byte.
	return InJSONString(m[MarkerLen(0)-1 : len(m)-1])
}

// InJSONString returns s as it is written inside a JSON string, without
// the quotes: quotes, backslashes and control characters escaped as
// encoding/json escapes them, HTML characters left as they are.
func InJSONString(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if e.Encode(s) != nil {
		return s // cannot happen: a string always encodes
	}
	enc := strings.TrimSuffix(b.String(), "\n")
	return enc[1 : len(enc)-1]
}

// needsEscape reports whether JSON writes s other than as it is inside a
// string: a quote, a backslash, a control character or invalid UTF-8.
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return true
		}
	}
	return false
}

// SetDroppedInJSON returns a copy of doc with the N of the marker that
// ends the string s (found by [LastCutString]) set to n, such as what a
// read the marker names returns. doc may be the document s was found in
// or [AddReadInJSON]'s copy of it: the read goes in after N. doc itself is
// returned when the marker is not where s says.
func SetDroppedInJSON(doc []byte, s CutString, n int) []byte {
	fixed := markerSuffix[:len(markerSuffix)-1] // N's fixed text, up to the bracket
	end := s.End - len(`]"`) - len(fixed)
	if end < 0 || end+len(fixed) > len(doc) || string(doc[end:end+len(fixed)]) != fixed {
		return doc
	}
	start := end
	for start > 0 && doc[start-1] >= '0' && doc[start-1] <= '9' {
		start--
	}
	out := make([]byte, 0, len(doc)+20)
	out = append(out, doc[:start]...)
	out = strconv.AppendInt(out, int64(n), 10)
	return append(out, doc[end:]...)
}

// AddReadInJSON returns a copy of doc with read, as [JSONRead] writes it,
// added to the marker that ends the string s (found by [LastCutString]),
// before the marker's closing bracket.
func AddReadInJSON(doc []byte, s CutString, read string) []byte {
	at := s.End - len(`]"`)
	out := make([]byte, 0, len(doc)+len(read))
	out = append(out, doc[:at]...)
	out = append(out, read...)
	return append(out, doc[at:]...)
}
