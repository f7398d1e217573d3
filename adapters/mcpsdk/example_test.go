package mcpsdk_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/adapters/mcpsdk"
	"github.com/toolcap/toolcap/manifest"
)

// A Go MCP server whose tool returns 1 MiB: with the middleware added, the
// client receives the tool's limit, marker included.
func ExampleServerMiddleware() {
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "logs", Version: "v1"}, nil)
	server.AddTool(&mcp.Tool{Name: "tail_logs", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: strings.Repeat("GET /healthz 200\n", 1<<16)},
			}}, nil
		})
	limits := &manifest.ToolOutputLimits{PerTool: map[string]int{"tail_logs": 200}}
	server.AddReceivingMiddleware(mcpsdk.ServerMiddleware(limits.For))

	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tail_logs"})
	if err != nil {
		fmt.Println(err)
		return
	}
	text := res.Content[0].(*mcp.TextContent).Text
	fmt.Println(len(text), "bytes")
	fmt.Println(text)
	// Output:
	// 200 bytes
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healt
	// [truncated: 1113966 bytes dropped, refine your query]
}

// An agent calling MCP servers caps what it receives, whatever the server
// sends, by adding the middleware to its client.
func ExampleClientMiddleware() {
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil)
	client.AddSendingMiddleware(mcpsdk.ClientMiddleware((*manifest.ToolOutputLimits)(nil).For))
	// Connect as usual; every CallTool result is now at most its tool's
	// limit (16384 bytes without a manifest).
}
