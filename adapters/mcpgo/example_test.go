package mcpgo_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolcap/toolcap/adapters/mcpgo"
	"github.com/toolcap/toolcap/manifest"
)

// An mcp-go server whose tool returns 1 MiB: with the middleware, its
// clients receive the tool's limit, marker included.
func ExampleMiddleware() {
	limits := &manifest.ToolOutputLimits{PerTool: map[string]int{"tail_logs": 170}}
	s := server.NewMCPServer("logs", "1.0.0",
		server.WithToolCapabilities(true),
		server.WithToolHandlerMiddleware(mcpgo.Middleware(limits.For)))
	s.AddTool(mcp.NewTool("tail_logs"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(strings.Repeat("GET /healthz 200\n", 1<<16)), nil
	})

	ctx := context.Background()
	c, err := client.NewInProcessClient(s)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if err := c.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := c.Initialize(ctx, init); err != nil {
		fmt.Println(err)
		return
	}
	var req mcp.CallToolRequest
	req.Params.Name = "tail_logs"
	res, err := c.CallTool(ctx, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	text := res.Content[0].(mcp.TextContent).Text
	fmt.Println(len(text), "bytes")
	fmt.Println(text)
	// Output:
	// 170 bytes
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 2
	// [truncated: 1113996 bytes dropped, refine your query]
}

// An agent's mcp-go client, wrapped: CallTool returns capped results whatever
// the server sends.
func ExampleWrapClient() {
	var mcpClient *client.Client // from client.NewStdioMCPClient, client.NewStreamableHttpClient, ...
	capped := mcpgo.WrapClient(mcpClient, (*manifest.ToolOutputLimits)(nil).For)
	_ = capped // use it wherever a client.MCPClient goes
}
