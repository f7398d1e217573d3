package mcpproxy

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/internal/wire"
	"github.com/toolcap/toolcap/redact"
)

// This file redacts a result as the reader reads it (issue 37): the
// pinned redact stage of the proxy. The chain's own redact stage
// (pin.Redact) runs on what the chain is given, but the reader has done
// much with a result by then: written its text to the store as it came
// (rest.Stream), cut a text too long to hold while it was read
// (cut.Writer), kept its head and counted it for the marker, and it may
// forward the result as the server sent it. So each text is redacted as
// it is decoded, before any of these sees it, and the JSON the reader
// keeps (structuredContent, the members of the blocks other than their
// joined text, a JSON-RPC error's message and data) before it is cut or
// sent: the store, the cuts, the figures, the logs and the client only
// ever hold redacted text. A result anything was redacted from is never
// forwarded as it came.

// detectorOf returns the detector that redacts a result that may answer
// calls: the policy's of each (nil when none redacts). A result read
// before its id is known may answer calls whose policies differ; it is
// redacted by all of their detectors together, the safe choice: a call
// whose tool does not redact (redact = false) then gets the text redacted
// all the same when another call it might have answered redacts.
func detectorOf(calls []*pendingCall) redact.Detector {
	if len(calls) == 1 {
		return calls[0].policy.Redact
	}
	var ds anyDetector
	for _, c := range calls {
		d := c.policy.Redact
		if d == nil || slices.ContainsFunc(ds, func(e redact.Detector) bool { return sameDetector(d, e) }) {
			continue
		}
		ds = append(ds, d)
	}
	switch len(ds) {
	case 0:
		return nil
	case 1:
		return ds[0]
	}
	return ds
}

// sameDetector reports whether a and b are the same detector value
// (most calls share redact.Default()); false for values that cannot be
// compared.
func sameDetector(a, b redact.Detector) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}

// anyDetector finds what any of its detectors finds; of two findings that
// overlap, the one that starts first is kept, of two that start together
// the longer (as redact.New merges its rules').
type anyDetector []redact.Detector

func (ds anyDetector) MaxLen() int {
	n := 0
	for _, d := range ds {
		n = max(n, d.MaxLen())
	}
	return n
}

func (ds anyDetector) Find(text string) []redact.Finding {
	var found []redact.Finding
	for _, d := range ds {
		found = append(found, d.Find(text)...)
	}
	if len(found) < 2 {
		return found
	}
	slices.SortStableFunc(found, func(a, b redact.Finding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	out := found[:1]
	for _, f := range found[1:] {
		if f.Start >= out[len(out)-1].End {
			out = append(out, f)
		}
	}
	return out
}

// textRedactor redacts one text of a result as it is read: the reader
// writes its decoded pieces in (callResult.writeText), and the redacted
// text comes out, the detector's MaxLen bytes behind, to the joined text
// (callResult.put), from where it goes to the head, the cuts and the
// store. A secret split across the pieces, wherever the server's writes
// or the reader's buffer split the text, is found whole.
type textRedactor struct {
	res *callResult
	w   *redact.Writer
	// in is the decoded bytes of the text written in so far.
	in int64
	// stale: materialize redid the text from the reader's copy with a
	// redactor of its own; what this one still writes goes nowhere.
	stale bool
}

func (t *textRedactor) Write(p []byte) (int, error) {
	if !t.stale {
		t.res.put(p)
	}
	return len(p), nil
}

// newTextRedactor returns a redactor of the result's next text.
func (res *callResult) newTextRedactor() *textRedactor {
	t := &textRedactor{res: res}
	t.w = redact.NewWriter(t, res.detector)
	return t
}

// beginText starts a text block's text: its pieces go through a redactor
// of their own when the result is redacted.
func (res *callResult) beginText() {
	if res.detector != nil {
		res.red = res.newTextRedactor()
	}
}

// endText ends a text block's text: what its redactor held back is
// written, and what it redacted counted. A secret found while the result
// was read raw ends raw (see materialize), so that the text the result
// holds, and sends, is the redacted one.
func (res *callResult) endText() {
	t := res.red
	if t == nil {
		return
	}
	_ = t.w.Close()
	if res.raw && t.w.Counts() != nil {
		res.cutHere()
	}
	if res.red != t {
		// Redone from the copy (see materialize), perhaps while t was
		// being closed: the redo has been written the whole text.
		t = res.red
		_ = t.w.Close()
	}
	res.red = nil
	if c := t.w.Counts(); c != nil {
		res.textRedactions = pin.AddRedactions(res.textRedactions, c)
		res.redacted(c)
	}
}

// redacted records counts, redactions made in the result, and notes that
// the result cannot go to the client as it came.
func (res *callResult) redacted(counts map[string]int) {
	if len(counts) == 0 {
		return
	}
	res.redactions = pin.AddRedactions(res.redactions, counts)
	res.cutHere()
}

// binaryMembers are the members whose strings redactJSON leaves as they
// are: base64 data (an image's, an audio clip's, a blob resource's), which
// a pattern may match by chance, and which a marker would corrupt.
var binaryMembers = map[string]bool{"data": true, "blob": true}

// jsonEdit is a string redactJSON wrote again: the bytes from, to (its
// quotes included) of the JSON it was given are at, at+n of its output.
type jsonEdit struct {
	from, to int
	at, n    int
}

// redactJSON returns raw, a JSON value, with each string value in which d
// finds a secret decoded, redacted and written again (as encoding/json
// writes a string); keys, the string values of the members named in skip
// (not the strings nested in them), and
// every byte between strings are left as they are, so that the value
// keeps its structure and stays valid JSON. It returns the redactions by
// rule and the strings it wrote again, in order; raw itself, nil and nil
// when it found nothing.
func redactJSON(raw []byte, d redact.Detector, skip map[string]bool) ([]byte, map[string]int, []jsonEdit) {
	if d == nil {
		return raw, nil, nil
	}
	var (
		out    []byte
		counts map[string]int
		edits  []jsonEdit
		last   = 0 // raw[:last] is in out
		// key is the key of the member whose value comes next, when it
		// is a string; "" after any other token.
		key string
	)
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			if raw[i] == '{' || raw[i] == '[' {
				key = ""
			}
			continue
		}
		start := i
		esc := false
		for i++; i < len(raw); i++ {
			if raw[i] == '\\' {
				esc = true
				i++
				continue
			}
			if raw[i] == '"' {
				break
			}
		}
		if i >= len(raw) {
			break // not JSON: left as it is
		}
		end := i + 1
		// A key is followed by a colon.
		j := end
		for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t' || raw[j] == '\n' || raw[j] == '\r') {
			j++
		}
		if j < len(raw) && raw[j] == ':' {
			key = string(raw[start+1 : i])
			if esc {
				_ = json.Unmarshal(raw[start:end], &key)
			}
			continue
		}
		if skip[key] {
			key = ""
			continue
		}
		key = ""
		text := bytesString(raw[start+1 : i])
		if esc {
			var s string
			if json.Unmarshal(raw[start:end], &s) != nil {
				continue
			}
			text = s
		}
		red, c := redact.Text(text, d)
		if c == nil {
			continue
		}
		counts = pin.AddRedactions(counts, c)
		if out == nil {
			out = make([]byte, 0, len(raw)+64)
		}
		out = append(out, raw[last:start]...)
		var b strings.Builder
		writeText(&b, red)
		edits = append(edits, jsonEdit{from: start, to: end, at: len(out), n: b.Len()})
		out = append(out, b.String()...)
		last = end
	}
	if out == nil {
		return raw, nil, nil
	}
	return append(out, raw[last:]...), counts, edits
}

// movedBy returns where offset at of the JSON redactJSON was given is in
// its output, at being outside the strings it wrote again.
func movedBy(edits []jsonEdit, at int) int {
	k := sort.Search(len(edits), func(k int) bool { return edits[k].to > at })
	if k == 0 {
		return at
	}
	e := edits[k-1]
	return e.at + e.n + (at - e.to)
}

// redactionMeta is the value of _meta["toolcap/redaction"] on a result
// toolcap redacted: the rules that found secrets and how many each found,
// and the total; never a value.
type redactionMeta struct {
	Rules map[string]int `json:"rules"`
	Count int            `json:"count"`
}

// redactionKey is the _meta key of the redactions.
const redactionKey = "toolcap/redaction"

// newRedactionMeta returns the figures of counts, nil when there are none.
func newRedactionMeta(counts map[string]int) *redactionMeta {
	if len(counts) == 0 {
		return nil
	}
	m := &redactionMeta{Rules: counts}
	for _, n := range counts {
		m.Count += n
	}
	return m
}

// redactStructured redacts the string values of structuredContent as the
// reducer kept it, before it is cut or kept; precutAt is where the strings
// the reducer shortened start in it, whose heads are then those of the
// redacted strings (the reducer cut them before a secret it would have cut
// in two, see stringRawRedacted).
func (res *callResult) redactStructured(precutAt []int) {
	if res.detector == nil || res.structured == nil {
		return
	}
	red, counts, edits := redactJSON(res.structured, res.detector, nil)
	if counts == nil {
		return
	}
	res.structured = red
	k := 0
	for _, e := range edits {
		for k < len(precutAt) && precutAt[k] < e.from {
			k++
		}
		if k < len(precutAt) && precutAt[k] == e.from {
			res.structuredPrecut[k].Head = red[e.at+1 : e.at+e.n-1]
		}
	}
	res.redacted(counts)
}

// stringRawRedacted is wire.Scanner.StringRaw(max) for a result that is
// redacted: a string cut short keeps the same head, less what of it may
// be a secret the cut splits, which no scan of the head could find (its
// first bytes would show). To know, it reads up to maxLen bytes (the
// longest secret det finds) past the head, and cuts the head
// back to the start of a secret that runs past its end. (A secret of more
// than maxLen bytes as written, so written with many escapes, may still
// run past what it read: its first bytes are then kept.)
func stringRawRedacted(sc *wire.Scanner, max int, det redact.Detector) (head []byte, written int64, whole bool, err error) {
	more, written, whole, err := sc.StringRaw(max + det.MaxLen())
	if err != nil || (whole && written <= int64(max)) {
		return more, written, whole, err
	}
	// The head StringRaw(max) gives: the longest prefix of the string,
	// as written, of at most max+1 bytes, that ends between characters.
	head = writtenPrefix(more[:min(len(more), max+1)])
	var d string
	if json.Unmarshal(append(append([]byte{'"'}, more...), '"'), &d) != nil {
		return head, written, false, nil
	}
	end := decodedLen(head)
	for _, f := range det.Find(d) {
		if f.Start < end && f.End > end {
			head = head[:writtenAt(head, f.Start)]
			break
		}
	}
	return head, written, false, nil
}

// writtenChar returns the length, as written in a JSON string, of the
// character that starts b, and of its decoded form as encoding/json
// decodes it (invalid UTF-8 and a lone surrogate as U+FFFD); ok is false
// when b ends inside it.
func writtenChar(b []byte) (w, d int, ok bool) {
	switch c := b[0]; {
	case c == '\\':
		if len(b) < 2 {
			return 0, 0, false
		}
		if b[1] != 'u' {
			return 2, 1, true
		}
		if len(b) < 6 {
			return 0, 0, false
		}
		r, ok := wire.Hex4(b[2:6])
		if !ok {
			return 6, 3, true // not JSON
		}
		if utf16.IsSurrogate(r) {
			if len(b) < 12 && r < 0xDC00 {
				return 0, 0, false // the pair may go on
			}
			if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
				if r2, ok := wire.Hex4(b[8:12]); ok && utf16.DecodeRune(r, r2) != utf8.RuneError {
					return 12, 4, true
				}
			}
			return 6, 3, true
		}
		return 6, utf8.RuneLen(r), true
	case c >= utf8.RuneSelf:
		if !utf8.FullRune(b) {
			return 0, 0, false
		}
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			return 1, 3, true
		}
		return n, n, true
	}
	return 1, 1, true
}

// writtenPrefix returns the longest prefix of b, the content of a JSON
// string as written, that ends between two characters (as
// wire.Scanner.StringRaw cuts a string).
func writtenPrefix(b []byte) []byte {
	i := 0
	for i < len(b) {
		w, _, ok := writtenChar(b[i:])
		if !ok || i+w > len(b) {
			break
		}
		i += w
	}
	return b[:i]
}

// decodedLen returns the length of b, whole characters of a JSON string
// as written, decoded.
func decodedLen(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		w, d, ok := writtenChar(b[i:])
		if !ok {
			break
		}
		i, n = i+w, n+d
	}
	return n
}

// writtenAt returns where in b, a JSON string as written, the character
// holding byte off of its decoded form starts.
func writtenAt(b []byte, off int) int {
	n := 0
	for i := 0; i < len(b); {
		w, d, ok := writtenChar(b[i:])
		if !ok || n+d > off {
			return i
		}
		i, n = i+w, n+d
	}
	return len(b)
}
