package claudecode

import (
	"bytes"
	"io"
	"sort"
	"strings"

	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/internal/wire"
	"github.com/toolcap/toolcap/redact"
)

// This file is the hook's redact stage (issue 37), pinned before the cap:
// each text of a tool's output is redacted with the tool's detector
// (shape.Policy.Redact) before it is measured, cut, written to the file
// of the rest or shown to the model, so that the hook's files, its reply
// and its log only ever hold redacted text.
//
// An output held whole is redacted at once (redactResponse): every string
// of its JSON, decoded, as the texts the cut reads (Bash's stdout and
// stderr, Read's content, Grep's and Glob's names, MCP text blocks and
// the strings of structuredContent, any other tool's strings), and
// written again only where a secret was found, so that an output without
// one is the same bytes as before. A streamed output (stream.go) redacts
// each long text as it is decoded, through a [redact.Writer] that holds
// back the detector's MaxLen bytes, so that a secret split across the
// stream's reads is found whole; what it holds as written is redacted as
// an output held whole is, and its JSON as written, which the cut falls
// back to when it cannot read the output's shape, through the same kind
// of Writer with escapes decoded (jsonEscaped).

// binaryMembers are the members whose strings are base64 data (an MCP
// image's or audio's data, a blob resource, Read's image or PDF, a
// notebook's image output): a pattern may match it by chance, and a
// marker would corrupt it. As toolcap mcp leaves them.
func binaryMember(key string) bool {
	switch key {
	case "data", "blob", "base64", "image_data":
		return true
	}
	return false
}

// dataURL reports whether s starts as a base64 data URL ("data:image/png;
// base64,..."), as Bash's output of an image is: binary data too.
func dataURL(s string) bool {
	if !strings.HasPrefix(s, "data:") {
		return false
	}
	head := s[:min(len(s), 128)]
	return strings.Contains(head, ";base64,")
}

// redactValue returns s, the string member key of tool's output ("" for
// an element of an array or the output itself), redacted with det, and
// the counts by rule (nil when nothing was redacted). Base64 data is left
// as it is. In Read's content a secret that spans lines (a private key)
// is replaced by its marker and as many newlines as it held, so that the
// lines after it keep their numbers, which Read's offset names.
func redactValue(det redact.Detector, tool, key, s string) (string, map[string]int) {
	if det == nil || binaryMember(key) || dataURL(s) {
		return s, nil
	}
	if tool == ReadTool && key == "content" {
		return redactLines(s, det)
	}
	return redact.Text(s, det)
}

// redactLines is [redact.Text] with the newlines of each secret kept
// after its marker.
func redactLines(s string, det redact.Detector) (string, map[string]int) {
	found := det.Find(s)
	if len(found) == 0 {
		return s, nil
	}
	counts := map[string]int{}
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, f := range found {
		b.WriteString(s[at:f.Start])
		b.WriteString(marker(f.Rule))
		for range strings.Count(s[f.Start:f.End], "\n") {
			b.WriteByte('\n')
		}
		counts[f.Rule]++
		at = f.End
	}
	b.WriteString(s[at:])
	return b.String(), counts
}

// marker is the marker of a secret found by rule, as [redact.Text] writes
// it: redact.Text of a text its detector finds whole.
func marker(rule string) string {
	m, _ := redact.Text("x", wholeText(rule))
	return m
}

// wholeText is a detector that finds the whole of any text, by its rule.
type wholeText string

func (w wholeText) Find(text string) []redact.Finding {
	return []redact.Finding{{Start: 0, End: len(text), Rule: string(w)}}
}

func (wholeText) MaxLen() int { return 0 }

// gapLen is the shortest stretch of a JSON text between strings that is
// searched for secrets: JSON's own punctuation and literals hold none, and
// the shortest secret of the built-in rules is 20 bytes; only JSON that is
// not valid (text where a value should be) has such stretches.
const gapLen = 16

// redactResponse returns resp, a tool's output as JSON, with each string
// in which det finds a secret decoded, redacted (redactValue; a member
// name as a plain text) and written again; the placeholders of a streamed
// output's long texts (redacted as they streamed) and every byte between
// strings are left as they are, so that the output keeps its shape. A
// string that is not valid JSON, and a stretch between strings long
// enough to hold a secret (resp is not valid JSON there), are redacted as
// written (jsonEscaped), the marker in place of the secret's bytes. The
// output of an MCP tool that is the JSON text of its structuredContent
// (structuredText) has the strings of that text redacted, and stays a
// JSON text. It returns resp itself and nil counts when nothing was
// redacted.
func redactResponse(d *decoder, tool string, resp []byte, det redact.Detector) ([]byte, map[string]int) {
	if det == nil || len(resp) == 0 {
		return resp, nil
	}
	var (
		out    []byte
		counts map[string]int
		last   int // resp[:last] is in out
		key    string
		gap    int // where the stretch since the last string starts
	)
	// replace puts repl in out in place of resp[from:to].
	replace := func(from, to int, repl []byte) {
		if out == nil {
			out = make([]byte, 0, len(resp)+64)
		}
		out = append(out, resp[last:from]...)
		out = append(out, repl...)
		last = to
	}
	// asWritten redacts resp[from:to] as JSON text.
	asWritten := func(from, to int) {
		if to-from < gapLen {
			return
		}
		red, c := redact.Text(bytesString(resp[from:to]), jsonEscaped{det})
		if c != nil {
			counts = pin.AddRedactions(counts, c)
			replace(from, to, []byte(red))
		}
	}
	i := 0
	for i < len(resp) {
		j := bytes.IndexByte(resp[i:], '"')
		if j < 0 {
			break
		}
		start := i + j
		if k := bytes.LastIndexAny(resp[i:start], "{[,"); k >= 0 {
			key = "" // a new member or element: the last name was not its
		}
		asWritten(gap, start)
		end, err := wire.ValueEnd(resp, start)
		if err != nil {
			// An unterminated string: the rest is redacted as written.
			gap = start
			break
		}
		i, gap = end, end
		// A member name is followed by a colon.
		k := end
		for k < len(resp) && (resp[k] == ' ' || resp[k] == '\t' || resp[k] == '\n' || resp[k] == '\r') {
			k++
		}
		if k < len(resp) && resp[k] == ':' {
			key, _ = wire.Unquote(resp[start:end])
			i, gap = k+1, k+1
			// A name the model reads too (an MCP tool's structured
			// content keyed by tokens): redacted as a text, its member
			// named as it came for what follows.
			if red, c := redact.Text(key, det); c != nil {
				if enc, err := marshal(red); err == nil {
					counts = pin.AddRedactions(counts, c)
					replace(start, end, enc)
				}
			}
			continue
		}
		raw := resp[start:end]
		name := key
		key = ""
		if d != nil && d.st != nil && d.st.placeholder(raw) != nil {
			continue
		}
		s, ok := plainString(raw)
		if !ok {
			if s, err = d.str(raw); err != nil {
				asWritten(start, end)
				continue
			}
		}
		var red string
		var c map[string]int
		if start == 0 && end == len(resp) && structuredText(s) {
			red, c = redactStructured(s, det)
		} else {
			red, c = redactValue(det, tool, name, s)
		}
		if c == nil {
			continue
		}
		enc, err := marshal(red)
		if err != nil {
			continue
		}
		counts = pin.AddRedactions(counts, c)
		replace(start, end, enc)
	}
	asWritten(gap, len(resp))
	if out == nil {
		return resp, nil
	}
	return append(out, resp[last:]...), counts
}

// plainString returns the text of raw, a JSON string with its quotes,
// without a copy, when it holds printable ASCII only, no escape: as it is
// written, it is its own decoding (the most common string of a tool's
// output, a file name, a line, a number as text).
func plainString(raw []byte) (string, bool) {
	for _, c := range raw[1 : len(raw)-1] {
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return "", false
		}
	}
	return bytesString(raw[1 : len(raw)-1]), true
}

// redactStructured redacts s, the JSON text of an MCP tool's
// structuredContent: its strings, decoded, so that a secret behind an
// escape is found and the text stays valid JSON.
func redactStructured(s string, det redact.Detector) (string, map[string]int) {
	red, counts := redactResponse(nil, "", []byte(s), det)
	if counts == nil {
		return s, nil
	}
	return string(red), counts
}

// jsonEscaped finds what its detector finds in the text of a JSON value
// as written: in the text with each escape of its strings decoded ("\n"
// a newline, "\u00e9" an é), so that a secret after an escaped newline,
// or whose lines are joined by escaped ones (a private key), is found as
// in the decoded string. Each finding covers the escapes it decoded
// whole; a marker in their place leaves the JSON text's strings
// terminated as they were.
type jsonEscaped struct{ d redact.Detector }

// MaxLen is twice the detector's: a secret's escapes (its newlines)
// are longer as written than decoded.
func (j jsonEscaped) MaxLen() int { return 2*j.d.MaxLen() + 12 }

// escape is an escape of a JSON text: the bytes raw[from:to] decoded to n
// bytes at view offset at.
type escape struct{ at, n, from, to int }

func (j jsonEscaped) Find(text string) []redact.Finding {
	if strings.IndexByte(text, '\\') < 0 {
		return j.d.Find(text)
	}
	found := j.d.Find(unescaped(text, nil))
	if len(found) == 0 {
		return nil
	}
	// Where the escapes are, only for a text that holds a secret.
	var escs []escape
	unescaped(text, &escs)
	// pos returns the bytes of text that view[v] decodes from.
	pos := func(v int) (int, int) {
		k := sort.Search(len(escs), func(k int) bool { return escs[k].at > v }) - 1
		if k < 0 {
			return v, v + 1
		}
		e := escs[k]
		if v < e.at+e.n {
			return e.from, e.to
		}
		r := e.to + v - (e.at + e.n)
		return r, r + 1
	}
	out := found[:0]
	for _, f := range found {
		f.Start, _ = pos(f.Start)
		_, f.End = pos(f.End - 1)
		if len(out) > 0 && f.Start < out[len(out)-1].End {
			continue // within the escape the one before ended in
		}
		out = append(out, f)
	}
	return out
}

// unescaped returns text with each escape decoded, and, when escs is not
// nil, appends to it where each escape is.
func unescaped(text string, escs *[]escape) string {
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		k := strings.IndexByte(text[i:], '\\')
		if k < 0 {
			b.WriteString(text[i:])
			break
		}
		b.WriteString(text[i : i+k])
		i += k
		r, size, ok := wire.EscapeIn([]byte(text[i:min(i+12, len(text))]))
		if !ok {
			b.WriteByte('\\')
			i++
			continue
		}
		at := b.Len()
		b.WriteRune(r)
		if escs != nil {
			*escs = append(*escs, escape{at: at, n: b.Len() - at, from: i, to: i + size})
		}
		i += size
	}
	return b.String()
}

// funcWriter is an io.Writer that hands what it is written to a function.
type funcWriter func([]byte)

func (f funcWriter) Write(p []byte) (int, error) {
	f(p)
	return len(p), nil
}

var _ io.Writer = funcWriter(nil)
