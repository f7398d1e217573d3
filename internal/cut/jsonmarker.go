package cut

import (
	"bytes"
	"regexp"
	"strconv"
	"sync"
)

// jsonStringMarker is the marker at the end of a string [JSONValue] cut,
// as written in the document: its newline escaped, then the closing quote.
// Compiled at its first use, not at start-up: every toolcap process, the
// Claude Code hook's included, would pay for it.
var jsonStringMarker = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(`\n`+markerPrefix[1:]) + `(\d+)` + regexp.QuoteMeta(markerSuffix+`"`))
})

// AddDroppedInJSON raises the counts of the markers [JSONValue] put at the
// end of the strings it cut in doc, for strings an earlier reader had
// already shortened: their markers then count what that reader dropped
// too, and stay exact.
//
// add is called for each string of doc that ends in a marker, in document
// order, with what the string kept of its content (as written: escapes
// intact, quotes excluded); it returns the bytes to add to that marker's
// count, 0 to leave it. The result is doc itself when nothing changed, and
// otherwise a new document, still valid JSON, a few bytes longer for each
// count that gained digits.
func AddDroppedInJSON(doc []byte, add func(kept []byte) int) []byte {
	var b []byte
	last := 0
	for _, m := range jsonStringMarker().FindAllSubmatchIndex(doc, -1) {
		extra := add(doc[jsonStringStart(doc, m[0]):m[0]])
		if extra <= 0 {
			continue
		}
		n, err := strconv.Atoi(string(doc[m[2]:m[3]]))
		if err != nil {
			continue // more digits than an int holds: not a count cut wrote
		}
		if b == nil {
			b = make([]byte, 0, len(doc)+8)
		}
		b = append(b, doc[last:m[2]]...)
		b = strconv.AppendInt(b, int64(n+extra), 10)
		last = m[3]
	}
	if b == nil {
		return doc
	}
	return append(b, doc[last:]...)
}

// jsonStringStart returns the offset of the content of the JSON string of
// doc that holds offset end: just after its opening quote, the nearest
// quote before end that no backslash escapes.
func jsonStringStart(doc []byte, end int) int {
	for q := bytes.LastIndexByte(doc[:end], '"'); q >= 0; q = bytes.LastIndexByte(doc[:q], '"') {
		slashes := 0
		for k := q - 1; k >= 0 && doc[k] == '\\'; k-- {
			slashes++
		}
		if slashes%2 == 0 {
			return q + 1
		}
	}
	return 0
}
