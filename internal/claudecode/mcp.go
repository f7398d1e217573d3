package claudecode

import (
	"encoding/json"
	"errors"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/internal/wire"
)

// errNotJSON is the error for a tool response that is not JSON at all.
var errNotJSON = errors.New("not JSON")

// capValue fits the output of an MCP tool, or of any tool without a shape
// of its own here: a string as one text; MCP content blocks, alone or as
// an object's content (with its structuredContent); any other value as
// JSON.
//
// Each byte of resp is decoded once, by the cut that needs it; what is
// written back as it was is checked as it is written.
func capValue(d *decoder, resp json.RawMessage, p shape.Policy) (json.RawMessage, chain.Truncation, bool, error) {
	switch resp[0] {
	case '"':
		s, err := d.str(resp)
		if err != nil {
			return nil, chain.Truncation{}, false, errNotJSON
		}
		if d.structuredText(s) {
			// It stays a valid document, cut as the proxy cuts one, whole
			// elements kept.
			if sc, ok := shape.JSON([]byte(s), p, nil); ok {
				if !sc.Cut {
					return nil, chain.Truncation{}, false, nil
				}
				enc, err := marshal(string(sc.Raw))
				return enc, sc.Figures, err == nil, err
			}
		}
		out, t, changed := d.text(s, p)
		if !changed {
			return nil, chain.Truncation{}, false, nil
		}
		enc, err := marshal(out)
		return enc, t, err == nil, err
	case '[':
		if blocks, ok := parseBlocks(d, resp); ok {
			return capBlocks(d, blocks, p)
		}
	case '{':
		if o, ok := d.object(resp); ok {
			if blocks, ok := parseBlocks(d, o.raw("content")); ok {
				return capResult(o, blocks, p)
			}
		}
	}
	return capJSON(d, resp, p)
}

// mcpSavedChars is about where Claude Code 2.1.328 saves an MCP tool's
// output to a file and hands the model a preview and the path instead
// (measured: from about 50,000 characters).
const mcpSavedChars = 50_000

// structuredText reports whether s, an MCP tool's output as Claude Code
// hands it to the hook, is the JSON text of its structuredContent (a JSON
// object or array) short enough that Claude Code would hand it to the
// model whole: such a text is cut as JSON and stays a valid document.
// Past mcpSavedChars Claude Code itself would give the model a preview and
// a path, not JSON, so the hook keeps the whole text and cuts it as text,
// with a marker naming the Read of the rest.
func structuredText(s string) bool {
	return len(s) > 0 && len(s) <= mcpSavedChars && (s[0] == '{' || s[0] == '[') && json.Valid([]byte(s))
}

// capJSON fits any JSON value as JSON ([shape.JSON]); a value no valid
// form of which fits is left to Claude Code rather than replaced by
// something of another shape.
// resp that is not JSON at all is an error, checked only when shape.JSON,
// which decodes it, fits none: a valid value is read once. A streamed
// output with long texts cannot be read as JSON: it is cut as text
// (respStream.asText).
func capJSON(d *decoder, resp json.RawMessage, p shape.Policy) (json.RawMessage, chain.Truncation, bool, error) {
	if d.hasLong() {
		d.fail("an output with long texts read as JSON")
		return nil, chain.Truncation{}, false, nil
	}
	s, ok := shape.JSON(resp, p, nil)
	if !ok && !json.Valid(resp) {
		return nil, chain.Truncation{}, false, errNotJSON
	}
	if !ok || !s.Cut {
		return nil, chain.Truncation{}, false, nil
	}
	return s.Raw, s.Figures, true, nil
}

// block is an MCP content block as a tool response carries it: its
// members, decoded only where a cut needs them, and what shape sees of it.
type block struct {
	members object
	shape   shape.Block
	// text names where the block's Text sits: "text" (a text block),
	// "resource.text" (an embedded text resource) or "description" (a
	// resource link); "" for a block without text.
	text string
}

// parseBlocks splits raw as an array of MCP content blocks (objects with a
// string "type"), decoding what shape sees of each with d, and reports
// false when it is not one.
func parseBlocks(d *decoder, raw json.RawMessage) ([]block, bool) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	elems, err := wire.SplitArray(raw)
	if err != nil {
		return nil, false
	}
	blocks := make([]block, len(elems))
	for i, e := range elems {
		m, ok := d.object(e)
		if !ok {
			return nil, false
		}
		typ, err := m.str("type")
		if err != nil || typ == "" {
			return nil, false
		}
		blocks[i] = newBlock(typ, m)
	}
	return blocks, true
}

// newBlock says what shape sees of a block of type typ: its text, and the
// bytes besides it that a model may read, as toolcap mcp counts them.
func newBlock(typ string, m object) block {
	str := func(o object, key string) string {
		s, _ := o.str(key)
		return s
	}
	b := block{members: m}
	switch typ {
	case "text":
		b.shape = shape.Block{Kind: shape.BlockText, Text: str(m, "text")}
		b.text = "text"
	case "image", "audio":
		kind := shape.BlockImage
		if typ == "audio" {
			kind = shape.BlockAudio
		}
		mime := str(m, "mimeType")
		fixed := len(mime) + len(str(m, "data"))
		if m.raw("data") == nil {
			// Another encoding of the data (a "source" object): all of
			// the block counts.
			fixed = rawLen(m)
		}
		b.shape = shape.Block{Kind: kind, Fixed: fixed, Name: mime}
	case "resource":
		r, ok := m.obj("resource")
		if !ok {
			b.shape = shape.Block{Kind: shape.BlockOther, Fixed: rawLen(m), Name: typ}
			break
		}
		uri := str(r, "uri")
		b.shape = shape.Block{Kind: shape.BlockResource, Text: str(r, "text"),
			Fixed: len(uri) + len(str(r, "mimeType")) + len(str(r, "blob")), Name: uri}
		b.text = "resource.text"
	case "resource_link":
		uri := str(m, "uri")
		b.shape = shape.Block{Kind: shape.BlockLink, Text: str(m, "description"),
			Fixed: len(uri) + len(str(m, "name")) + len(str(m, "title")) + len(str(m, "mimeType")), Name: uri}
		b.text = "description"
	default:
		b.shape = shape.Block{Kind: shape.BlockOther, Fixed: rawLen(m), Name: typ}
	}
	return b
}

// rawLen is the length of a block's JSON, less its type member: what the
// model may read of a block of an unknown layout.
func rawLen(m object) int {
	n := 0
	for k, v := range m.m {
		if k != "type" {
			n += len(k) + len(v)
			if m.d != nil && m.d.st != nil && m.d.st.placeholder(v) != nil {
				m.d.fail("a long text in a block that is not a text block")
			}
		}
	}
	return n
}

// capBlocks fits an array of content blocks to p ([shape.Content]).
func capBlocks(d *decoder, blocks []block, p shape.Policy) (json.RawMessage, chain.Truncation, bool, error) {
	out, t, changed, err := fitBlocks(d, blocks, p, shape.Note{})
	if err != nil || !changed {
		return nil, chain.Truncation{}, false, err
	}
	enc, err := marshal(out)
	return enc, t, err == nil, err
}

// capResult fits an MCP result object as toolcap mcp fits one: its
// structuredContent on its own ([shape.JSON]; dropped when no valid form of
// it fits), then its content blocks together, ending with the note of what
// the structured cut kept. The figures are the content's when it changed
// (what the model reads as text), the structured value's otherwise: the
// two are measured in different bytes, blocks against JSON, and are not
// added up.
func capResult(o object, blocks []block, p shape.Policy) (json.RawMessage, chain.Truncation, bool, error) {
	var t chain.Truncation
	var note shape.Note
	changed := false
	if sc := o.raw("structuredContent"); sc != nil && string(sc) != "null" {
		s, fitted := shape.JSON(sc, p, nil)
		switch {
		case !fitted:
			delete(o.m, "structuredContent")
			t = shape.DroppedFigures(len(sc), p)
			changed = true
		case s.Cut:
			o.m["structuredContent"] = s.Raw
			t, changed, note = s.Figures, true, s.Note
		}
	}
	content, ct, blocksCut, err := fitBlocks(o.d, blocks, p, note)
	if err != nil {
		return nil, chain.Truncation{}, false, err
	}
	if blocksCut {
		if err := o.set("content", content); err != nil {
			return nil, chain.Truncation{}, false, err
		}
		if ct.DroppedBytes > 0 || !changed {
			t = ct
		}
		changed = true
	}
	if !changed {
		return nil, chain.Truncation{}, false, nil
	}
	enc, err := o.encode()
	return enc, t, err == nil, err
}

// fitBlocks fits blocks to p, ending with tail when it is not empty, and
// returns them as JSON values: a block kept as it was is written back with
// its members as they were, a cut one with its new text, a note shape
// added as a text block ([shape.Content]; the note counts against the limit
// with the blocks).
func fitBlocks(d *decoder, blocks []block, p shape.Policy, tail shape.Note) ([]json.RawMessage, chain.Truncation, bool, error) {
	in := make([]shape.Block, len(blocks))
	for i, b := range blocks {
		in[i] = b.shape
	}
	fitted, fig := d.content(in, p, tail)
	if !fig.Changed() {
		return nil, chain.Truncation{}, false, nil
	}
	out := make([]json.RawMessage, 0, len(fitted))
	for _, f := range fitted {
		var raw json.RawMessage
		var err error
		if f.From < 0 {
			raw, err = marshal(map[string]string{"type": "text", "text": f.Text})
		} else {
			raw, err = blocks[f.From].with(f.Text)
		}
		if err != nil {
			return nil, chain.Truncation{}, false, err
		}
		out = append(out, raw)
	}
	return out, fig.Figures, true, nil
}

// with returns the block with text in place of its own.
func (b block) with(text string) (json.RawMessage, error) {
	if b.text == "" || text == b.shape.Text {
		return b.members.encode()
	}
	m := b.members.clone()
	if b.text != "resource.text" {
		if err := m.set(b.text, text); err != nil {
			return nil, err
		}
		return m.encode()
	}
	r, ok := m.obj("resource")
	if !ok {
		return nil, errors.New("resource is not an object")
	}
	if err := r.set("text", text); err != nil {
		return nil, err
	}
	if err := m.set("resource", r); err != nil {
		return nil, err
	}
	return m.encode()
}
