package mcpproxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/internal/wire"
)

// This file reads the content blocks the reader kept straight from their
// JSON into package shape's blocks, and writes what shape made of them back
// as JSON. A block shape leaves as it was goes out as the bytes it was kept
// as, never decoded into a block type and encoded again; one whose text
// shape cut goes out as those bytes with only that text's value replaced,
// so that its other members (annotations, _meta, mimeType, uri, and those
// toolcap does not know) stay as they came, in their order.

// keptBlock is one content block as the reader kept it (see
// callResult.block), with where in it lies the text shape may cut.
type keptBlock struct {
	raw []byte
	// at and end bound, in raw, the value of the member holding the text
	// shape may cut ([shape.Block].Text): a text block's text, an embedded
	// resource's text, a resource link's description. at < 0 when the
	// block has no such member.
	at, end int
	// apart: raw holds "" at [at, end) in place of a text block's text,
	// which the reader held apart (see heldBlock): the text is written
	// there whether or not shape changed it.
	apart bool
}

// readBuffer bounds the buffer readBlock reads a block through: a block of
// any size is read in one pass, in constant memory besides its text.
const readBuffer = 64 << 10

// errNotBlock reports a kept value that is not a content block MCP
// defines: a value that is not an object, a block without a type or of a
// type MCP does not define, or one whose members shape reads are not
// strings. The proxy drops such a block and notes it, as a client could
// not read it.
var errNotBlock = errors.New("not a content block")

// readBlock reads one block the reader kept, as package shape sees it: a
// text block its text; an image or audio block its MIME type and its data
// as sent (base64); an embedded resource its URI, MIME type and blob
// (base64), and its text, the part shape may cut when it has no blob (a
// blob resource is kept whole or dropped); a resource link its URI, name,
// title and MIME type, its description as the part shape may cut. The JSON
// around them, _meta and annotations are not counted, as the JSON wrapping
// of a text block is not. A tool_use or tool_result block, which MCP
// defines for sampling, counts all of its JSON and is kept whole or
// dropped. These are the measures of adapters/mcpsdk blocks, so that a
// result is shaped alike whichever front end relays it.
func readBlock(raw []byte) (shape.Block, keptBlock, error) {
	kb := keptBlock{raw: raw, at: -1, end: -1}
	if len(raw) == 0 || raw[0] != '{' {
		return shape.Block{}, kb, errNotBlock
	}
	sc := wire.NewScanner(bufio.NewReaderSize(bytes.NewReader(raw), min(len(raw), readBuffer)))
	var (
		typ, mime, uri, name, title string
		text, desc                  string
		textAt, textEnd             = -1, -1
		descAt, descEnd             = -1, -1
		data                        int64
		res                         *resourceFields
	)
	err := sc.Object(func(key string) error {
		var err error
		switch key {
		case "type":
			typ, _, _, err = readText(sc, false, 0)
		case "text":
			text, textAt, textEnd, err = readText(sc, true, len(raw))
		case "description":
			desc, descAt, descEnd, err = readText(sc, true, len(raw))
		case "mimeType":
			mime, _, _, err = readText(sc, false, 0)
		case "uri":
			uri, _, _, err = readText(sc, false, 0)
		case "name":
			name, _, _, err = readText(sc, false, 0)
		case "title":
			title, _, _, err = readText(sc, false, 0)
		case "data":
			data, err = stringLen(sc)
		case "resource":
			res, err = readResource(sc, len(raw))
		default:
			err = sc.Skip()
		}
		return err
	})
	if err != nil {
		return shape.Block{}, kb, fmt.Errorf("%w: %w", errNotBlock, err)
	}
	switch typ {
	case "text":
		if textAt < 0 {
			// No text: the reader left it out of the joined text, which
			// holds the text blocks' texts, so it is not one of them for
			// shape either. It stays where it is, as it came.
			return shape.Block{Kind: shape.BlockOther}, kb, nil
		}
		kb.at, kb.end = textAt, textEnd
		return shape.Block{Kind: shape.BlockText, Text: text}, kb, nil
	case "image", "audio":
		k := shape.BlockImage
		if typ == "audio" {
			k = shape.BlockAudio
		}
		return shape.Block{Kind: k, Fixed: len(mime) + int(data), Name: mime}, kb, nil
	case "resource":
		if res == nil {
			// An embedded resource without its resource: all of it counts.
			return shape.Block{Kind: shape.BlockOther, Fixed: len(raw)}, kb, nil
		}
		b := shape.Block{Kind: shape.BlockResource, Name: res.uri,
			Fixed: len(res.uri) + len(res.mime) + int(res.blob)}
		if res.blob > 0 {
			b.Fixed += len(res.text) // a blob resource is kept whole or dropped
		} else {
			b.Text = res.text
			kb.at, kb.end = res.textAt, res.textEnd
		}
		return b, kb, nil
	case "resource_link":
		kb.at, kb.end = descAt, descEnd
		return shape.Block{Kind: shape.BlockLink, Text: desc,
			Fixed: len(uri) + len(name) + len(title) + len(mime), Name: uri}, kb, nil
	case "tool_use", "tool_result":
		return shape.Block{Kind: shape.BlockOther, Fixed: len(raw)}, kb, nil
	}
	return shape.Block{}, kb, fmt.Errorf("%w: type %q", errNotBlock, typ)
}

// resourceFields is what readBlock reads of an embedded resource's
// resource.
type resourceFields struct {
	uri, mime, text string
	textAt, textEnd int // the span of text's value in the block, -1 when absent
	blob            int64
}

// readResource reads the resource of an embedded resource of size bytes:
// an object, or null (no resource).
func readResource(sc *wire.Scanner, size int) (*resourceFields, error) {
	c, err := sc.Kind()
	if err != nil {
		return nil, err
	}
	if c == 'n' {
		return nil, sc.Skip()
	}
	if c != '{' {
		return nil, errors.New("resource is not an object")
	}
	r := &resourceFields{textAt: -1, textEnd: -1}
	err = sc.Object(func(key string) error {
		var err error
		switch key {
		case "uri":
			r.uri, _, _, err = readText(sc, false, 0)
		case "mimeType":
			r.mime, _, _, err = readText(sc, false, 0)
		case "text":
			r.text, r.textAt, r.textEnd, err = readText(sc, true, size)
		case "blob":
			r.blob, err = stringLen(sc)
		default:
			err = sc.Skip()
		}
		return err
	})
	return r, err
}

// readText reads a string member decoded, and the span of its value in
// the block of size bytes; null reads as the empty string, as the MCP SDKs
// read it. long says the string may be most of the block (a text, a
// description): it is then decoded in one allocation. The
// reader bounded every member it kept, so a kept block's strings are
// bounded too.
func readText(sc *wire.Scanner, long bool, size int) (s string, at, end int, err error) {
	c, err := sc.Kind()
	if err != nil {
		return "", -1, -1, err
	}
	at = int(sc.Offset())
	switch c {
	case 'n':
		err = sc.Skip()
		return "", at, int(sc.Offset()), err
	case '"':
	default:
		return "", -1, -1, fmt.Errorf("a string member starts with %q", c)
	}
	var b strings.Builder
	if long {
		// Room for the rest of the block, at least the text decoded: a
		// kept block is valid UTF-8, which no escape decodes longer.
		b.Grow(size - at)
	}
	_, err = sc.String(func(p []byte) { b.Write(p) })
	return b.String(), at, int(sc.Offset()), err
}

// stringLen reads a string member (base64 data, counted as sent) and
// returns its decoded length; null counts 0.
func stringLen(sc *wire.Scanner) (int64, error) {
	c, err := sc.Kind()
	if err != nil {
		return 0, err
	}
	switch c {
	case 'n':
		return 0, sc.Skip()
	case '"':
		return sc.String(nil)
	}
	return 0, fmt.Errorf("a string member starts with %q", c)
}

// writeBlock writes the block f of shape's output to b: kept and in are
// the blocks read (readBlock), by index, that f.From refers to. A block as
// it was read is written as its bytes, one whose text shape changed (or
// whose text the reader held apart) as its bytes with that member's value
// written in, a block shape added as a new text block.
func writeBlock(b jsonWriter, kept []keptBlock, in []shape.Block, f shape.Block) {
	if f.From < 0 {
		b.WriteString(`{"type":"text","text":`)
		writeText(b, f.Text)
		b.WriteByte('}')
		return
	}
	k := kept[f.From]
	if !k.apart && (f.Text == in[f.From].Text || k.at < 0) {
		// As it was read. A block without the member has an empty text,
		// which shape does not change: it cuts texts, and gives text only
		// to text blocks, which readBlock reads only with their text.
		b.Write(k.raw)
		return
	}
	b.Write(k.raw[:k.at])
	writeText(b, f.Text)
	b.Write(k.raw[k.end:])
}

// blockKind is the kind of a block by its MCP type, for one the reader did
// not keep.
func blockKind(typ string) shape.BlockKind {
	switch typ {
	case "image":
		return shape.BlockImage
	case "audio":
		return shape.BlockAudio
	case "resource":
		return shape.BlockResource
	case "resource_link":
		return shape.BlockLink
	}
	return shape.BlockOther
}
