package mcpproxy

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/middleware"
)

// TextSeparator joins the text blocks of a result into the one text that
// passes through the worker's chain. It counts against the limit, so the text
// blocks the client receives never hold more than the limit between them.
const TextSeparator = "\n"

// JoinText returns the text blocks of content joined by [TextSeparator], in
// order, and whether content had any text block. A result without text
// blocks has no content for the chain: it is neither measured nor cut.
func JoinText(content []mcp.Content) (string, bool) {
	var texts []string
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	if texts == nil {
		return "", false
	}
	return strings.Join(texts, TextSeparator), true
}

// SplitText puts text, the chain's version of [JoinText](content), back into
// content's text blocks and returns the new blocks; content is not modified.
//
// When text equals the joined original, content is returned as it is, so an
// uncut result reaches the client unchanged. Otherwise each original text
// block that text still holds whole, in order and followed by the separator,
// is kept as it was (with its annotations and _meta); the first block that
// is not is replaced by the rest of text (for a cut result: the kept part of
// that block and the marker), and the text blocks after it are dropped.
// Non-text blocks keep their places. A nil text drops every text block.
func SplitText(content []mcp.Content, text *string) []mcp.Content {
	joined, had := JoinText(content)
	if text != nil && had && *text == joined {
		return content
	}
	if !had && (text == nil || *text == "") {
		return content
	}
	var texts []*mcp.TextContent
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t)
		}
	}

	// The new text blocks, one per original text block at most.
	var out []mcp.Content
	var repl []mcp.Content
	if text != nil {
		rest := *text
		for i, t := range texts {
			last := i == len(texts)-1
			if !last && strings.HasPrefix(rest, t.Text+TextSeparator) {
				repl = append(repl, t)
				rest = rest[len(t.Text)+len(TextSeparator):]
				continue
			}
			if last && rest == t.Text {
				repl = append(repl, t)
				rest = ""
				break
			}
			repl = append(repl, &mcp.TextContent{Text: rest, Meta: t.Meta, Annotations: t.Annotations})
			rest = ""
			break
		}
		if len(texts) == 0 {
			// A middleware gave content to a result that had none.
			repl = append(repl, &mcp.TextContent{Text: rest})
		}
	}

	next := 0
	for _, c := range content {
		if _, ok := c.(*mcp.TextContent); ok {
			if next < len(repl) {
				out = append(out, repl[next])
				next++
			}
			continue
		}
		out = append(out, c)
	}
	if len(texts) == 0 {
		out = append(repl, out...)
	}
	if out == nil {
		out = []mcp.Content{}
	}
	return out
}

// CapBlocks applies the rule for non-text blocks to content and returns the
// new blocks; content is not modified. Each image, audio or embedded
// resource block is measured alone, by the bytes of its payload as sent (the
// base64 of image, audio and blob data, the text of a text resource): one
// within limit passes unchanged; a larger one is replaced by a short text
// block saying what was dropped and how large it was. Resource links, which
// carry no payload, always pass. dropped counts the blocks replaced.
func CapBlocks(content []mcp.Content, limit int) (out []mcp.Content, dropped int) {
	for i, c := range content {
		kind, size := payload(c)
		if size <= limit {
			if out != nil {
				out = append(out, c)
			}
			continue
		}
		if out == nil {
			out = append(make([]mcp.Content, 0, len(content)), content[:i]...)
		}
		out = append(out, &mcp.TextContent{Text: DroppedNote(kind, size, limit)})
		dropped++
	}
	if out == nil {
		return content, 0
	}
	return out, dropped
}

// DroppedNote is the text that replaces a non-text block of size bytes that
// does not fit limit.
func DroppedNote(kind string, size, limit int) string {
	return fmt.Sprintf("[toolcap: dropped %s of %d bytes, over this tool's limit of %d bytes; refine your query]", kind, size, limit)
}

// payload names a block's kind and gives the size of its payload as sent;
// text blocks and blocks without a payload report 0.
func payload(c mcp.Content) (kind string, size int) {
	switch b := c.(type) {
	case *mcp.ImageContent:
		return fmt.Sprintf("an image block (%s)", b.MIMEType), base64.StdEncoding.EncodedLen(len(b.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("an audio block (%s)", b.MIMEType), base64.StdEncoding.EncodedLen(len(b.Data))
	case *mcp.EmbeddedResource:
		if b.Resource == nil {
			return "", 0
		}
		n := len(b.Resource.Text) + base64.StdEncoding.EncodedLen(len(b.Resource.Blob))
		return fmt.Sprintf("an embedded resource (%s)", b.Resource.URI), n
	}
	return "", 0
}

// CapStructured caps a structuredContent value with the rule of text: its
// string values, in the order they are serialized (object keys sorted), share
// one budget of limit bytes and are cut with [middleware.Truncate], so a
// string cut carries the marker with its exact count. Keys, numbers,
// booleans, nulls and the JSON punctuation are not counted, as the wrapping
// of a text block is not.
//
// It returns v itself and cut == false when the strings fit. ok is false
// when v cannot be brought within the limit by cutting strings: when its
// other parts alone (keys and scalars, measured as serialized) exceed limit,
// a huge array of numbers for example. The caller then drops it.
func CapStructured(v any, limit int) (capped any, cut bool, ok bool) {
	if skeleton(v) > limit {
		return nil, false, false
	}
	if stringBytes(v) <= limit {
		return v, false, true
	}
	budget := limit
	return capValue(v, &budget), true, true
}

// capValue returns a copy of v whose strings are cut to share *budget.
func capValue(v any, budget *int) any {
	switch x := v.(type) {
	case string:
		s, _ := middleware.Truncate(x, max(*budget, 0))
		*budget -= len(s)
		return s
	case map[string]any:
		m := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			m[k] = capValue(x[k], budget)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = capValue(e, budget)
		}
		return a
	}
	return v
}

// stringBytes is the sum of the lengths of v's string values.
func stringBytes(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case map[string]any:
		n := 0
		for _, e := range x {
			n += stringBytes(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += stringBytes(e)
		}
		return n
	}
	return 0
}

// skeleton measures what CapStructured cannot cut: the keys and the scalars
// other than strings, as serialized.
func skeleton(v any) int {
	switch x := v.(type) {
	case string:
		return 0
	case map[string]any:
		n := 0
		for k, e := range x {
			n += len(k) + skeleton(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += skeleton(e)
		}
		return n
	case nil:
		return len("null")
	}
	return len(fmt.Sprint(v))
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Shaped is the outcome of [Shape]: the result for the client and what was
// done to it, for logs and tests.
type Shaped struct {
	Result *mcp.CallToolResult
	// TextChanged reports that the text blocks differ from the server's.
	TextChanged bool
	// BlocksDropped counts non-text blocks replaced by a note.
	BlocksDropped int
	// StructuredCut reports that strings of structuredContent were cut.
	StructuredCut bool
	// StructuredDropped reports that structuredContent was dropped: it did
	// not fit, or no longer matched the tool's output schema once cut.
	StructuredDropped bool
}

// Shape builds the result sent to the client from the server's result orig
// and what the chain made of its text: text (the chain's content) and
// isError. limit is the tool's limit and schema its resolved output schema,
// or nil. orig is not modified.
//
// The text goes back into the text blocks ([SplitText]); non-text blocks
// follow [CapBlocks]; structuredContent follows [CapStructured]. When
// structuredContent has to be dropped from a result of a tool that declares
// an output schema, a successful result would break the schema's contract,
// so it becomes an error result and a note saying why is added: the capped
// text blocks still carry what the model can use.
func Shape(orig *mcp.CallToolResult, text *string, isError bool, limit int, schema *jsonschema.Resolved) Shaped {
	res := *orig
	sh := Shaped{Result: &res}
	res.IsError = isError
	res.Content = SplitText(orig.Content, text)
	joined, _ := JoinText(orig.Content)
	sh.TextChanged = text == nil || *text != joined
	res.Content, sh.BlocksDropped = CapBlocks(res.Content, limit)

	if orig.StructuredContent != nil {
		v, cut, ok := CapStructured(orig.StructuredContent, limit)
		if ok && cut && schema != nil {
			if err := schema.Validate(v); err != nil {
				ok = false
			}
		}
		switch {
		case !ok:
			res.StructuredContent = nil
			sh.StructuredDropped = true
			if schema != nil && !res.IsError {
				res.IsError = true
				res.Content = addNote(res.Content, StructuredNote(limit), limit)
			}
		case cut:
			res.StructuredContent = v
			sh.StructuredCut = true
		}
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	return sh
}

// StructuredNote is the text added to a result whose structuredContent was
// dropped although its tool declares an output schema.
func StructuredNote(limit int) string {
	return fmt.Sprintf("[toolcap: the structured result did not fit this tool's limit of %d bytes in a form valid for its output schema and was dropped; refine your query]", limit)
}

// addNote appends a text block holding note to content, first cutting the
// other text blocks so that all of them, note included, stay within limit.
func addNote(content []mcp.Content, note string, limit int) []mcp.Content {
	if text, ok := JoinText(content); ok {
		budget := limit - len(note) - len(TextSeparator)
		if len(text) > budget {
			capped, _ := middleware.Truncate(text, max(budget, 0))
			content = SplitText(content, &capped)
		}
	}
	return append(append([]mcp.Content(nil), content...), &mcp.TextContent{Text: note})
}
