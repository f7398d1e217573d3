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
	"github.com/toolcap/toolcap/shape"
	"github.com/toolcap/toolcap/tokens"
)

// An mcp-go server whose tool returns 1.7 KB: with the middleware, its
// clients receive the tool's policy from the manifest, here a token limit
// counted by the calibrated estimate (2 bytes a token until it learns), the
// marker included and naming its unit.
func ExampleMiddleware() {
	m, err := manifest.Load(context.Background(), manifest.Bytes("toolcap.toml", []byte(`
[worker.tool_output.per_tool]
tail_logs = { max_bytes = 4096, max_tokens = 80 }
`)))
	if err != nil {
		fmt.Println(err)
		return
	}
	policies, err := m.Policies()
	if err != nil {
		fmt.Println(err)
		return
	}
	policies = policies.WithCounter(tokens.NewCalibrated())
	s := server.NewMCPServer("logs", "1.0.0",
		server.WithToolCapabilities(true),
		server.WithToolHandlerMiddleware(mcpgo.Middleware(policies.For)))
	s.AddTool(mcp.NewTool("tail_logs"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(strings.Repeat("GET /healthz 200\n", 100)), nil
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
	// 159 bytes
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /h
	// [truncated: 796 tokens dropped, refine your query]
}

// An agent's mcp-go client, wrapped: CallTool returns capped results whatever
// the server sends.
func ExampleWrapClient() {
	var mcpClient *client.Client // from client.NewStdioMCPClient, client.NewStreamableHttpClient, ...
	var policies *shape.Policies // from (*manifest.WorkerManifest).Policies; nil: the defaults
	capped := mcpgo.WrapClient(mcpClient, policies.For)
	_ = capped // use it wherever a client.MCPClient goes
}
