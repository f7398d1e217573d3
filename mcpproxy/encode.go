package mcpproxy

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// This file writes the messages the proxy makes itself: a capped result,
// an error, the figures in _meta.

// encodeResult writes the response carrying the shaped result: the
// server's members in the server's order, content, structuredContent and
// isError as shaped, _meta with the figures added. A block is written as
// writeBlock says: the bytes it came as, unless shape changed its text.
func encodeResult(id []byte, res *callResult, sh shaped, fig truncationMeta) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"result":{`)
	n := 0
	put := func(key string, v []byte) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		writeKey(&b, key)
		b.Write(v)
	}
	content := func() {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		writeKey(&b, "content")
		b.WriteByte('[')
		for i, f := range sh.content {
			if i > 0 {
				b.WriteByte(',')
			}
			writeBlock(&b, sh.kept, sh.in, f)
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
			put(mem.key, withMeta(mem.raw, fig))
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
		put("_meta", withMeta(nil, fig))
	}
	b.WriteString("}}")
	return b.Bytes()
}

// codeInternal is JSON-RPC's "internal error", the code of the errors the
// proxy answers with itself.
const codeInternal = -32603

// errorResponse is a JSON-RPC error answering id.
func errorResponse(id []byte, code int, msg string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"error":{"code":`)
	b.WriteString(itoa(int64(code)))
	b.WriteString(`,"message":`)
	writeString(&b, []byte(msg))
	b.WriteString("}}")
	return b.Bytes()
}

func writeKey(b *bytes.Buffer, key string) {
	writeString(b, []byte(key))
	b.WriteByte(':')
}

// writeString writes s as a JSON string, as encoding/json would.
func writeString(b *bytes.Buffer, s []byte) { writeText(b, string(s)) }

// writeText writes s as a JSON string, as encoding/json would, and so as
// the MCP SDKs write a block's text.
func writeText(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s)
	b.Write(enc)
}

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

// withMeta returns the _meta object raw (nil: none) with the figures added.
func withMeta(raw []byte, t truncationMeta) []byte {
	fig, _ := json.Marshal(t)
	var b bytes.Buffer
	obj := bytes.TrimSpace(raw)
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		obj = []byte("{}")
	}
	inner := bytes.TrimSpace(obj[1 : len(obj)-1])
	b.WriteByte('{')
	if len(inner) > 0 {
		b.Write(inner)
		b.WriteByte(',')
	}
	writeKey(&b, metaKey)
	b.Write(fig)
	b.WriteByte('}')
	return b.Bytes()
}

// itoa is strconv.Itoa for the proxy's call ids.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
