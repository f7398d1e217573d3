package shape_test

import (
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/internal/shape"
)

// Content fits the blocks of one MCP result to a tool's policy: the text
// blocks are cut as one text, the image that no longer fits is replaced by
// a note, and everything together stays within the limit.
func ExampleContent() {
	blocks := []shape.Block{
		{Kind: shape.BlockText, Text: strings.Repeat("log line\n", 40)},
		{Kind: shape.BlockImage, Name: "image/png", Fixed: 9 + 4000}, // MIME type and base64 data
	}
	out, fig := shape.Content(blocks, shape.Bytes(300), shape.Note{})
	for _, b := range out {
		fmt.Printf("from %d: %q\n", b.From, b.Text)
	}
	fmt.Printf("%d of %d bytes kept, within %d: %v\n", fig.Figures.KeptBytes, fig.Figures.OriginalBytes, fig.Figures.Limit, shape.Size(out) <= 300)
	// Output:
	// from 0: "log line\nlog line\nlog line\nlog line\nlog line\nlog line\nlog line\nlog line\nlog line\nlog line\nlog line\nlog line\nlog line\nlog line\nlog line\n\n[truncated: 225 bytes dropped, refine your query]"
	// from -1: "[toolcap: dropped an image block (image/png) of 4009 bytes, over this tool's limit of 300 bytes; refine your query]"
	// 135 of 4369 bytes kept, within 300: true
}
