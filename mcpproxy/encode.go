package mcpproxy

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"unicode/utf8"
)

// This file writes the messages the proxy makes itself: a capped result,
// an error, the figures in _meta.

// jsonWriter is where the proxy writes a message it makes: a
// bytes.Buffer, or a bufio.Writer on the way to the peer, so that a result
// of many megabytes is written out as it is encoded, never held encoded.
type jsonWriter interface {
	io.Writer
	io.ByteWriter
	io.StringWriter
}

// encodeResult writes the response carrying the shaped result: the
// server's members in the server's order, content, structuredContent and
// isError as shaped, _meta with the figures added. A block is written as
// writeBlock says: the bytes it came as, unless shape changed its text.
func encodeResult(b jsonWriter, id []byte, res *callResult, sh shaped, meta resultMeta) {
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"result":{`)
	n := 0
	put := func(key string, v []byte) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		writeKey(b, key)
		b.Write(v)
	}
	content := func() {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		writeKey(b, "content")
		b.WriteByte('[')
		for i, f := range sh.content {
			if i > 0 {
				b.WriteByte(',')
			}
			writeBlock(b, sh.kept, sh.in, f)
		}
		b.WriteByte(']')
	}
	var sawContent, sawError, sawMeta bool
	for _, mem := range res.members {
		switch mem.key {
		case "content":
			sawContent = true
			content()
		case "structuredContent":
			switch {
			case sh.structuredDropped:
			case sh.structured == nil: // the server's null
				put(mem.key, []byte("null"))
			default:
				put(mem.key, sh.structured)
			}
		case "isError":
			sawError = true
			if sh.isError {
				put(mem.key, []byte("true"))
			} else {
				put(mem.key, []byte("false"))
			}
		case "_meta":
			sawMeta = true
			put(mem.key, meta.add(mem.raw))
		default:
			if mem.raw != nil {
				put(mem.key, mem.raw)
			}
		}
	}
	if !sawContent {
		content()
	}
	if !sawError && sh.isError {
		put("isError", []byte("true"))
	}
	if !sawMeta {
		put("_meta", meta.add(nil))
	}
	b.WriteString("}}")
}

// codeInternal is JSON-RPC's "internal error", the code of the errors the
// proxy answers with itself.
const codeInternal = -32603

// errorResponse is a JSON-RPC error answering id.
func errorResponse(id []byte, code int, msg string) []byte {
	return errorResponseData(id, code, msg, nil)
}

// errorResponseData is errorResponse with the error's data, JSON; nil for
// none.
func errorResponseData(id []byte, code int, msg string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"error":{"code":`)
	b.WriteString(itoa(int64(code)))
	b.WriteString(`,"message":`)
	writeString(&b, []byte(msg))
	if data != nil {
		b.WriteString(`,"data":`)
		b.Write(data)
	}
	b.WriteString("}}")
	return b.Bytes()
}

func writeKey(b jsonWriter, key string) {
	writeText(b, key)
	b.WriteByte(':')
}

// writeString writes s as a JSON string, as encoding/json would.
func writeString(b jsonWriter, s []byte) { writeText(b, bytesString(s)) }

// writeText writes s as a JSON string byte for byte as encoding/json
// writes it, and so as the MCP SDKs write a block's text: <, > and & as
// \u escapes, U+2028 and U+2029 too, a byte that is not UTF-8 as \ufffd.
// The runs between escapes go to b straight from s, so that a text of
// many megabytes is written in one pass without a copy of it encoded.
func writeText(b jsonWriter, s string) {
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainJSON[c] {
				i++
				continue
			}
			b.WriteString(s[start:i])
			switch c {
			case '\\', '"':
				b.WriteByte('\\')
				b.WriteByte(c)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(s[start:i])
			b.WriteString(`\ufffd`)
		case r == '\u2028' || r == '\u2029':
			b.WriteString(s[start:i])
			b.WriteString(`\u202`)
			b.WriteByte(hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

const hexDigits = "0123456789abcdef"

// plainJSON marks the ASCII bytes encoding/json writes as they are in a
// string: not a control character, a quote, a backslash, or one of the
// HTML characters it escapes.
var plainJSON = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// truncationMeta is the value of _meta["toolcap/truncation"] on a capped
// result: the figures of its content, in the unit of the limit.
type truncationMeta struct {
	Unit     string `json:"unit"`
	Limit    int    `json:"limit"`
	Original int    `json:"original"`
	Kept     int    `json:"kept"`
	Dropped  int    `json:"dropped"`
	// Tokens holds the figures in tokens of the text when its tool's token
	// limit cut it and its marker counts tokens; nil otherwise.
	Tokens *tokenMeta `json:"tokens,omitempty"`
	// Ref names the entry of the store that keeps the whole text, when
	// the rest was kept, and Resume the offset the marker's read starts
	// at; both absent otherwise.
	Ref    string `json:"ref,omitempty"`
	Resume *int   `json:"resume,omitempty"`
}

// tokenMeta is the token figures of a text cut by its token limit.
type tokenMeta struct {
	Limit    int `json:"limit"`
	Original int `json:"original"`
	Kept     int `json:"kept"`
	Dropped  int `json:"dropped"`
}

// metaKey is the _meta key of the figures.
const metaKey = "toolcap/truncation"

// resultMeta is what toolcap adds to the _meta of a result it wrote out:
// the figures of its cut, and what was redacted from it; each nil when
// there is none.
type resultMeta struct {
	truncation *truncationMeta
	redaction  *redactionMeta
}

// add returns the _meta object raw (nil: none) with the figures added.
func (m resultMeta) add(raw []byte) []byte {
	var keys []string
	var vals [][]byte
	if m.truncation != nil {
		fig, _ := json.Marshal(m.truncation)
		keys, vals = append(keys, metaKey), append(vals, fig)
	}
	if m.redaction != nil {
		red, _ := json.Marshal(m.redaction)
		keys, vals = append(keys, redactionKey), append(vals, red)
	}
	return addMeta(raw, keys, vals)
}

// withMeta returns the _meta object raw (nil: none) with the figures added.
func withMeta(raw []byte, t truncationMeta) []byte {
	return resultMeta{truncation: &t}.add(raw)
}

// addMeta returns the _meta object raw (nil: none) with the members keys,
// of the values vals (JSON), added.
func addMeta(raw []byte, keys []string, vals [][]byte) []byte {
	var b bytes.Buffer
	obj := bytes.TrimSpace(raw)
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		obj = []byte("{}")
	}
	inner := bytes.TrimSpace(obj[1 : len(obj)-1])
	b.WriteByte('{')
	n := 0
	if len(inner) > 0 {
		b.Write(inner)
		n++
	}
	for i, k := range keys {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		writeKey(&b, k)
		b.Write(vals[i])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// itoa is strconv.Itoa for the proxy's call ids.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
