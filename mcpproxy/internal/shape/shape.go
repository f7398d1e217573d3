// Package shape fits an MCP tool result within its limit: the text blocks
// joined for the worker's chain and split back, the other blocks, the notes,
// structuredContent and JSON-RPC errors. It is mcpproxy's, and internal so
// that its helpers are not part of toolcap's API.
package shape

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/cut"
	"github.com/toolcap/toolcap/middleware"
)

// TextSeparator joins the text blocks of a result into the one text that
// passes through the worker's chain, and counts against the limit there.
// The chain's text alone is therefore within the limit; what bounds what
// the client receives is [CapBlocks], which fits the text blocks, the other
// blocks and the notes it adds within the limit together.
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

// CapBlocks brings content, all its blocks together, within limit, and
// returns the new blocks; content is not modified. dropped counts the
// blocks it replaced by a note.
//
// The size of a block is what [ContentSize] measures. The text blocks come
// first: they keep what they hold when it fits (in a proxy, the chain has
// already cut them), and are otherwise cut again by the rule of text, with
// an exact count of the bytes dropped. Then the other blocks, in order, take
// what the text blocks leave: an image, audio or blob that does not fit
// whole is dropped; the text of an embedded text resource and the
// description of a resource link that do not fit are cut by the rule of text
// (marker included) when the rest can hold the marker, and the block is
// dropped otherwise. Dropped blocks are replaced by one text note, at the
// place of the first, saying what was dropped and how large it was
// ([DroppedNote]). The note counts against limit too: when a block has to
// be dropped, room for the note is set aside and the blocks are measured
// again, text first, so the text is cut further when the note needs its
// room.
//
// When nothing has to change, content itself is returned.
func CapBlocks(content []mcp.Content, limit int) (out []mcp.Content, dropped int) {
	out, st := capContent(content, limit, "", nil)
	return out, st.dropped
}

// ContentSize measures content as [CapBlocks] and [Shape] bound it: the
// bytes of every block that a model may read. A text block counts its text;
// an image or audio block its MIME type and its data as sent (base64); an
// embedded resource its URI, MIME type, text and blob (base64); a resource
// link its URI, name, title, description and MIME type. The JSON around
// them, _meta, annotations, icons and sizes are not counted, as the JSON
// wrapping of a text block is not.
func ContentSize(content []mcp.Content) int {
	n := 0
	for _, c := range content {
		n += blockSize(c)
	}
	return n
}

func blockSize(c mcp.Content) int {
	switch b := c.(type) {
	case *mcp.TextContent:
		return len(b.Text)
	case *mcp.ImageContent:
		return len(b.MIMEType) + base64.StdEncoding.EncodedLen(len(b.Data))
	case *mcp.AudioContent:
		return len(b.MIMEType) + base64.StdEncoding.EncodedLen(len(b.Data))
	case *mcp.EmbeddedResource:
		if b.Resource == nil {
			return 0
		}
		r := b.Resource
		return len(r.URI) + len(r.MIMEType) + len(r.Text) + base64.StdEncoding.EncodedLen(len(r.Blob))
	case *mcp.ResourceLink:
		return len(b.URI) + len(b.Name) + len(b.Title) + len(b.Description) + len(b.MIMEType)
	}
	return 0
}

// DroppedNote is the text that replaces what [CapBlocks] dropped: what (one
// block's kind, or a count of blocks) of size bytes, over limit.
func DroppedNote(what string, size, limit int) string {
	return fmt.Sprintf("[toolcap: dropped %s of %d bytes, over this tool's limit of %d bytes; refine your query]", what, size, limit)
}

// shortDroppedNote replaces DroppedNote when the limit is too small to
// spend that much on notes.
func shortDroppedNote(count int) string {
	if count == 1 {
		return "[toolcap: 1 block over the limit dropped]"
	}
	return fmt.Sprintf("[toolcap: %d blocks over the limit dropped]", count)
}

// restOfText is what a note calls text dropped whole.
const restOfText = "the rest of the text"

// blocksWhat names count dropped blocks in a note.
func blocksWhat(count int) string { return fmt.Sprintf("%d blocks", count) }

// kindOf names a non-text block for a note; the names the server chose
// (MIME type, URI) are clipped so that a note stays short.
func kindOf(c mcp.Content) string {
	switch b := c.(type) {
	case *mcp.ImageContent:
		return fmt.Sprintf("an image block (%s)", clip(b.MIMEType))
	case *mcp.AudioContent:
		return fmt.Sprintf("an audio block (%s)", clip(b.MIMEType))
	case *mcp.EmbeddedResource:
		if b.Resource != nil {
			return fmt.Sprintf("an embedded resource (%s)", clip(b.Resource.URI))
		}
	case *mcp.ResourceLink:
		return fmt.Sprintf("a resource link (%s)", clip(b.URI))
	}
	return "a block"
}

// clip shortens a name the server chose to at most 40 bytes, on a UTF-8
// character boundary.
func clip(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	k := floorBoundary(s, max-len("..."))
	return s[:k] + "..."
}

// floorBoundary returns the largest k <= n that does not split a UTF-8
// sequence of s (it backs off at most utf8.UTFMax-1 bytes, so invalid
// input cannot make it scan).
func floorBoundary(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	k := n
	for i := 0; i < utf8.UTFMax-1 && k > 0 && !utf8.RuneStart(s[k]); i++ {
		k--
	}
	if !utf8.RuneStart(s[k]) {
		return n // not valid UTF-8 there: any cut point will do
	}
	return k
}

// recut cuts text, which may already carry a truncation marker, to at most
// budget bytes with one marker whose count stays exact ([cut.Recut]).
func recut(text string, budget int) string {
	out, _ := cut.Recut(text, budget, cut.Spec{})
	return out
}

// capStats says what capContent did.
type capStats struct {
	dropped      int  // blocks replaced by the note (the rest of the text counts as one)
	droppedBytes int  // their sizes added up
	cut          int  // embedded text resources and resource links whose text was cut
	textRecut    bool // the text blocks were cut again
}

// Dropped is a block that is dropped before the blocks are fitted: one the
// proxy could not keep while it read a result too large to hold (see
// [Input.Overflow]). Kind names it in the note, Size is its size as sent.
type Dropped struct {
	Kind string
	Size int
}

// capContent brings content within limit as [CapBlocks] describes, with
// tail, when not empty, a note to end the content with (the structured
// note of [Shape]): it counts against limit too, and room for it is taken
// first.
func capContent(content []mcp.Content, limit int, tail string, pre []Dropped) ([]mcp.Content, capStats) {
	limit = max(limit, 0)
	if tail == "" && len(pre) == 0 && ContentSize(content) <= limit {
		return content, capStats{}
	}

	// Room for the notes. The drop note gets the room of the longest note
	// it could be: one block's, or that of every block the allocation can
	// drop (all non-text blocks and the text), with their sizes added up.
	// Notes take at most half the limit in their long forms: the structured
	// note first, then the drop note; past that, their short forms are used.
	var count, total, oneNote int
	hasText := false
	for _, d := range pre {
		count++
		total += d.Size
		oneNote = max(oneNote, len(DroppedNote(d.Kind, d.Size, limit)))
	}
	for _, c := range content {
		if _, ok := c.(*mcp.TextContent); ok {
			hasText = true
			continue
		}
		n := blockSize(c)
		count++
		total += n
		oneNote = max(oneNote, len(DroppedNote(kindOf(c), n, limit)))
	}
	if hasText {
		joined, _ := JoinText(content)
		n := len(joined)
		if head, dropped, ok := cut.SplitMarker(joined); ok {
			n = len(head) + dropped
		}
		count++
		total += n
		oneNote = max(oneNote, len(DroppedNote(restOfText, n, limit)))
	}
	dropRoom := max(oneNote, len(DroppedNote(blocksWhat(count), total, limit)))
	if len(tail) > limit/2 {
		tail = shortStructuredNote
	}
	tailRoom := min(len(tail), limit)
	long := dropRoom+tailRoom <= limit/2
	if !long {
		dropRoom = len(shortDroppedNote(count))
	}
	dropRoom = min(dropRoom, limit-tailRoom)

	out, drops, st := allocate(content, limit-tailRoom)
	if len(drops) > 0 || len(pre) > 0 {
		out, drops, st = allocate(content, limit-tailRoom-dropRoom)
	}
	for _, d := range pre {
		drops = append(drops, dropped{d.Kind, d.Size})
	}
	if len(drops) > 0 {
		var note string
		size := 0
		for _, d := range drops {
			size += d.size
		}
		switch {
		case !long:
			note = shortDroppedNote(len(drops))
		case len(drops) == 1:
			note = DroppedNote(drops[0].kind, size, limit)
		default:
			note = DroppedNote(blocksWhat(len(drops)), size, limit)
		}
		note, _ = middleware.Truncate(note, dropRoom)
		// out holds nil where a block was dropped: the note takes the
		// first such place, the others go.
		placed := false
		kept := out[:0]
		for _, c := range out {
			if c == nil {
				if !placed && note != "" {
					kept = append(kept, &mcp.TextContent{Text: note})
				}
				placed = true
				continue
			}
			kept = append(kept, c)
		}
		if !placed && note != "" {
			kept = append(kept, &mcp.TextContent{Text: note})
		}
		out = kept
		st.dropped = len(drops)
		st.droppedBytes = size
	}
	if tail != "" {
		if t, _ := middleware.Truncate(tail, tailRoom); t != "" {
			out = append(out, &mcp.TextContent{Text: t})
		}
	}
	return out, st
}

// dropped is a block allocate could not fit: its kind and size, for the
// note.
type dropped struct {
	kind string
	size int
}

// allocate fits content within budget, the blocks taking it in order, each
// what it needs of what the blocks before it left. A text block that does
// not fit is cut there by the rule of text ([recut]: the marker counts the
// bytes dropped from it and from the text blocks after it, which go, and
// those a cut before dropped); when even the marker does not fit, the rest
// of the text is dropped. Another block that does not fit is cut
// ([cutBlock]) or dropped. The returned blocks hold nil in place of each
// dropped block. content is not modified.
func allocate(content []mcp.Content, budget int) (out []mcp.Content, drops []dropped, st capStats) {
	left := max(budget, 0)
	out = make([]mcp.Content, 0, len(content))
	var joined string
	textAt := 0       // offset in joined of the next text block
	textDone := false // the text was cut: the text blocks after the cut go
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			if textDone {
				continue
			}
			if len(t.Text) <= left {
				out = append(out, c)
				left -= len(t.Text)
				textAt += len(t.Text) + len(TextSeparator)
				continue
			}
			if joined == "" {
				joined, _ = JoinText(content)
			}
			rest := joined[textAt:]
			textDone, st.textRecut = true, true
			size := len(rest)
			if head, n, ok := cut.SplitMarker(rest); ok {
				size = len(head) + n
			}
			if left < middleware.MarkerLen(size)+1 {
				out = append(out, nil)
				drops = append(drops, dropped{restOfText, size})
				continue
			}
			cut := recut(rest, left)
			out = append(out, &mcp.TextContent{Text: cut, Meta: t.Meta, Annotations: t.Annotations})
			left -= len(cut)
			continue
		}
		n := blockSize(c)
		if n <= left {
			out = append(out, c)
			left -= n
			continue
		}
		if cc, ok := cutBlock(c, left); ok {
			out = append(out, cc)
			left -= blockSize(cc)
			st.cut++
			continue
		}
		out = append(out, nil)
		drops = append(drops, dropped{kindOf(c), n})
	}
	return out, drops, st
}

// cutBlock cuts the text of an embedded text resource, or the description
// of a resource link, so that the block takes at most room bytes, by the
// rule of text. It reports false when the block has no such text, or when
// what the block needs besides it leaves no room for at least one byte and
// the marker.
func cutBlock(c mcp.Content, room int) (mcp.Content, bool) {
	switch b := c.(type) {
	case *mcp.EmbeddedResource:
		r := b.Resource
		if r == nil || r.Text == "" || len(r.Blob) > 0 {
			return nil, false
		}
		left := room - len(r.URI) - len(r.MIMEType)
		if left < middleware.MarkerLen(len(r.Text))+1 {
			return nil, false
		}
		rc := *r
		rc.Text, _ = middleware.Truncate(r.Text, left)
		bc := *b
		bc.Resource = &rc
		return &bc, true
	case *mcp.ResourceLink:
		if b.Description == "" {
			return nil, false
		}
		left := room - len(b.URI) - len(b.Name) - len(b.Title) - len(b.MIMEType)
		if left < middleware.MarkerLen(len(b.Description))+1 {
			return nil, false
		}
		bc := *b
		bc.Description, _ = middleware.Truncate(b.Description, left)
		return &bc, true
	}
	return nil, false
}

// Shaped is the outcome of [Shape]: the result for the client and what was
// done to it, for logs, figures and tests.
type Shaped struct {
	Result *mcp.CallToolResult
	// TextChanged reports that the text blocks differ from the server's.
	TextChanged bool
	// BlocksDropped counts the blocks replaced by the note (text dropped
	// whole, when even the marker did not fit, counts as one), and
	// DroppedBytes their sizes added up.
	BlocksDropped int
	DroppedBytes  int
	// BlocksCut counts embedded text resources and resource links whose
	// text was cut.
	BlocksCut int
	// StructuredCut reports that strings of structuredContent were cut.
	StructuredCut bool
	// StructuredDropped reports that structuredContent was dropped: it did
	// not fit, or no longer matched the tool's output schema once cut.
	StructuredDropped bool
	// StructuredRaw is the structuredContent for the client, as JSON: the
	// server's when it fitted, its cut form when StructuredCut; nil when
	// dropped or absent. (Result.StructuredContent is not used.)
	StructuredRaw []byte
}

// Changed reports whether the result differs from the server's.
func (sh Shaped) Changed() bool {
	return sh.TextChanged || sh.BlocksDropped > 0 || sh.BlocksCut > 0 || sh.StructuredCut || sh.StructuredDropped
}

// Input is what [Shape] shapes: the server's result and what the chain
// made of its text.
type Input struct {
	// Result is the server's result; it is not modified. Its
	// StructuredContent is not read: see StructuredRaw.
	Result *mcp.CallToolResult
	// StructuredRaw is the server's structuredContent as JSON, or nil.
	StructuredRaw []byte
	// StructuredPrecut lists the strings of StructuredRaw that a reader
	// already shortened, in document order (see [Precut]).
	StructuredPrecut []Precut
	// Text and IsError are the chain's content and error flag.
	Text    *string
	IsError bool
	// Limit is the tool's limit, Schema its resolved output schema or nil.
	Limit  int
	Schema *jsonschema.Resolved
	// Overflow lists blocks that are dropped whatever the limit: those a
	// reader could not keep while it read a result too large to hold.
	Overflow []Dropped
	// StructuredTooLarge reports a structuredContent too large to read,
	// which is dropped as one that does not fit.
	StructuredTooLarge bool
}

// Shape builds the result sent to the client from in.
//
// The text goes back into the text blocks ([SplitText]); then all the
// blocks, notes included, are brought within the limit together
// ([CapBlocks]), so that [ContentSize] of the result's content never
// exceeds it. structuredContent follows [CapStructuredJSON]: its serialized
// JSON is bounded by the limit on its own, and a cut that dropped elements
// adds a note saying what it kept. When structuredContent has to be dropped from a
// result of a tool that declares an output schema, a successful result would
// break the schema's contract, so it becomes an error result and a note
// saying why ends its content: the capped blocks still carry what the model
// can use.
func Shape(in Input) Shaped {
	orig, text, limit, schema := in.Result, in.Text, in.Limit, in.Schema
	res := *orig
	sh := Shaped{Result: &res}
	res.IsError = in.IsError
	res.Content = SplitText(orig.Content, text)
	joined, _ := JoinText(orig.Content)
	sh.TextChanged = text == nil || *text != joined

	tail := ""
	if in.StructuredRaw != nil || in.StructuredTooLarge {
		var sc StructuredCut
		ok := false
		if in.StructuredRaw != nil {
			sc, ok = CapStructuredJSON(in.StructuredRaw, limit, schema, in.StructuredPrecut)
		}
		switch {
		case !ok:
			res.StructuredContent = nil
			sh.StructuredDropped = true
			if schema != nil && !res.IsError {
				res.IsError = true
				tail = StructuredNote(limit)
			}
		case sc.Cut:
			sh.StructuredRaw = sc.Raw
			sh.StructuredCut = true
			tail = sc.Note
		default:
			sh.StructuredRaw = sc.Raw
		}
	}
	var st capStats
	res.Content, st = capContent(res.Content, limit, tail, in.Overflow)
	sh.BlocksDropped, sh.DroppedBytes, sh.BlocksCut = st.dropped, st.droppedBytes, st.cut
	sh.TextChanged = sh.TextChanged || st.textRecut
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	return sh
}

// NotePrefix starts every note shape adds to a result.
const NotePrefix = "[toolcap: "

// StructuredNote is the text added to a result whose structuredContent was
// dropped although its tool declares an output schema.
func StructuredNote(limit int) string {
	return fmt.Sprintf("[toolcap: the structured result did not fit this tool's limit of %d bytes in a form valid for its output schema and was dropped; refine your query]", limit)
}

// shortStructuredNote replaces StructuredNote when the limit is too small
// to spend that much on notes.
const shortStructuredNote = "[toolcap: structuredContent over the limit dropped]"

// CapError brings a JSON-RPC error from the server within limit, for the
// client's model reads its message as it reads a result. When the message
// and the data together exceed limit, data of at most a quarter of limit is
// kept and the message is cut to the rest, by the rule of text
// ([middleware.Truncate], marker included); larger data is dropped and the
// message is cut to limit. The code is kept. Other errors (the connection's, the proxy's
// own, which may quote the server) keep their text when it is within
// limit, and are otherwise replaced by an error whose text is cut by the
// same rule.
func CapError(err error, limit int) error {
	if err == nil {
		return nil
	}
	var w *jsonrpc.Error
	if !errors.As(err, &w) {
		if text := err.Error(); len(text) > limit {
			capped, _ := middleware.Truncate(text, limit)
			return errors.New(capped)
		}
		return err
	}
	if len(w.Message)+len(w.Data) <= limit {
		return w
	}
	if len(w.Data) <= limit/4 {
		msg, _ := middleware.Truncate(w.Message, limit-len(w.Data))
		return &jsonrpc.Error{Code: w.Code, Message: msg, Data: w.Data}
	}
	msg, _ := middleware.Truncate(w.Message, limit)
	return &jsonrpc.Error{Code: w.Code, Message: msg}
}
