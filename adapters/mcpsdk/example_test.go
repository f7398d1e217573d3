package mcpsdk_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/adapters/mcpsdk"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/shape"
)

// A Go MCP server whose tool returns 1 MiB: with the middleware added, the
// client receives the tool's policy from the manifest, here 300 bytes that
// keep the head and the tail, the marker included.
func ExampleServerMiddleware() {
	ctx := context.Background()
	m, err := manifest.Load(context.Background(), manifest.Bytes("toolcap.toml", []byte(`
[worker.tool_output.per_tool]
tail_logs = { max_bytes = 300, keep = "head_tail" }
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
	server := mcp.NewServer(&mcp.Implementation{Name: "logs", Version: "v1"}, nil)
	server.AddTool(&mcp.Tool{Name: "tail_logs", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: strings.Repeat("GET /healthz 200\n", 1<<16) + "GET /metrics 500\n"},
			}}, nil
		})
	server.AddReceivingMiddleware(mcpsdk.ServerMiddleware(policies.For))

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
	// 292 bytes
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// [truncated: 1113892 bytes dropped, refine your query]
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /metrics 500
}

// An agent calling MCP servers caps what it receives, whatever the server
// sends, by adding the middleware to its client.
func ExampleClientMiddleware() {
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil)
	var policies *shape.Policies // from (*manifest.WorkerManifest).Policies; nil: the defaults
	client.AddSendingMiddleware(mcpsdk.ClientMiddleware(policies.For))
	// Connect as usual; every CallTool result is now at most its tool's
	// limit (16384 bytes without a manifest).
}
