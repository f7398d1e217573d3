package mcpproxy_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// A proxy between a client and a server whose tool returns far too much.
// In a real program the server is a subprocess ([mcp.CommandTransport]) and
// the client is on stdio ([mcp.StdioTransport]); here both are in memory.
func ExampleConnect() {
	ctx := context.Background()

	server := mcp.NewServer(&mcp.Implementation{Name: "chatty"}, nil)
	server.AddTool(&mcp.Tool{Name: "search_files", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text := strings.Repeat("/src/some/file.go\n", 20000) // 360000 bytes
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	serverSide, proxyUp := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, serverSide, nil); err != nil {
		panic(err)
	}

	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{
		PerTool: map[string]int{"search_files": 1024},
	}}
	proxy, err := mcpproxy.Connect(ctx, proxyUp, mcpproxy.Options{Manifest: m})
	if err != nil {
		panic(err)
	}
	proxyDown, clientSide := mcp.NewInMemoryTransports()
	go proxy.Serve(ctx, proxyDown)

	client, err := mcp.NewClient(&mcp.Implementation{Name: "agent"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()
	res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: "search_files"})
	if err != nil {
		panic(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	fmt.Println(len(text), res.IsError)
	fmt.Println(text[strings.LastIndex(text, "\n")+1:])
	// Output:
	// 1024 false
	// [truncated: 359029 bytes dropped, refine your query]
}
