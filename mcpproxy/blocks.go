package mcpproxy

import (
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/shape"
)

// The proxy translates the go-sdk's content blocks into package shape's
// and back with adapters/mcpsdk's Blocks and FromBlocks, the one
// translation of the go-sdk's blocks; this file reads raw blocks.

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
