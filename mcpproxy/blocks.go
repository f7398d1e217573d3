package mcpproxy

import (
	"encoding/base64"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/shape"
)

// This file translates the go-sdk's content blocks into package shape's
// and back: the proxy's only knowledge of what a block weighs.

// toBlocks gives each block what a model may read of it, as shape
// measures it: a text block its text; an image or audio block its MIME
// type and its data as sent (base64); an embedded resource its URI, MIME
// type, text and blob (base64), its text cuttable when it has no blob; a
// resource link its URI, name, title and MIME type, and its description,
// cuttable.
func toBlocks(content []mcp.Content) []shape.Block {
	out := make([]shape.Block, len(content))
	for i, c := range content {
		out[i] = toBlock(c)
	}
	return out
}

func toBlock(c mcp.Content) shape.Block {
	switch b := c.(type) {
	case *mcp.TextContent:
		return shape.Block{Kind: shape.BlockText, Text: b.Text}
	case *mcp.ImageContent:
		return shape.Block{Kind: shape.BlockImage, Name: b.MIMEType,
			Fixed: len(b.MIMEType) + base64.StdEncoding.EncodedLen(len(b.Data))}
	case *mcp.AudioContent:
		return shape.Block{Kind: shape.BlockAudio, Name: b.MIMEType,
			Fixed: len(b.MIMEType) + base64.StdEncoding.EncodedLen(len(b.Data))}
	case *mcp.EmbeddedResource:
		r := b.Resource
		if r == nil {
			return shape.Block{Kind: shape.BlockOther}
		}
		blk := shape.Block{Kind: shape.BlockResource, Name: r.URI,
			Fixed: len(r.URI) + len(r.MIMEType) + base64.StdEncoding.EncodedLen(len(r.Blob))}
		if len(r.Blob) > 0 {
			blk.Fixed += len(r.Text) // a blob resource is kept whole or dropped
		} else {
			blk.Text = r.Text
		}
		return blk
	case *mcp.ResourceLink:
		return shape.Block{Kind: shape.BlockLink, Name: b.URI, Text: b.Description,
			Fixed: len(b.URI) + len(b.Name) + len(b.Title) + len(b.MIMEType)}
	}
	return shape.Block{Kind: shape.BlockOther}
}

// fromBlocks builds the content shape's output out stands for: a block
// shape left as it was is the server's own (annotations, _meta and all), a
// block whose text shape cut is a copy of the server's with that text, and
// a block shape added is a text block. in is toBlocks(orig).
func fromBlocks(orig []mcp.Content, in, out []shape.Block) []mcp.Content {
	content := make([]mcp.Content, 0, len(out))
	for _, b := range out {
		if b.From < 0 {
			content = append(content, &mcp.TextContent{Text: b.Text})
			continue
		}
		c := orig[b.From]
		if b.Text == in[b.From].Text {
			content = append(content, c)
			continue
		}
		switch c := c.(type) {
		case *mcp.TextContent:
			content = append(content, &mcp.TextContent{Text: b.Text, Meta: c.Meta, Annotations: c.Annotations})
		case *mcp.EmbeddedResource:
			rc := *c.Resource
			rc.Text = b.Text
			bc := *c
			bc.Resource = &rc
			content = append(content, &bc)
		case *mcp.ResourceLink:
			bc := *c
			bc.Description = b.Text
			content = append(content, &bc)
		default:
			content = append(content, c) // shape cuts no other kind's text
		}
	}
	return content
}

// decodeBlock decodes one content block with the SDK's own decoding.
func decodeBlock(raw []byte) (mcp.Content, error) {
	var r mcp.CallToolResult
	data := make([]byte, 0, len(raw)+16)
	data = append(data, `{"content":[`...)
	data = append(data, raw...)
	data = append(data, "]}"...)
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if len(r.Content) != 1 {
		return nil, errors.New("not one content block")
	}
	return r.Content[0], nil
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
