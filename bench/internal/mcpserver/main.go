// Command mcpserver is the MCP server of toolcap's proxy latency benchmark
// (bench/mcp_test.go): a server of the official Go SDK over stdio, with one
// tool, "text", whose result is a text of the number of bytes its "bytes"
// argument asks for.
package main

import (
	"context"
	"log"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type args struct {
	Bytes int `json:"bytes"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-server", Version: "1"}, nil)
	unit := strings.Repeat("0123456789abcdef", 4) + "\n"
	mcp.AddTool(s, &mcp.Tool{Name: "text"}, func(ctx context.Context, req *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		text := strings.Repeat(unit, a.Bytes/len(unit)+1)[:a.Bytes]
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
