package mcpgo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolcap/toolcap/adapters/mcpgo"
)

const mib = 1 << 20

const markerEnd = " bytes dropped, refine your query]"

func limits(tool string) int {
	if tool == "dump" {
		return 4096
	}
	return 16384
}

// newServer returns a real mcp-go server with a tool returning 1 MiB of
// text blocks, one returning 1 MiB of structured content and a small one.
func newServer(opts ...server.ServerOption) *server.MCPServer {
	s := server.NewMCPServer("big", "1.0.0", append(opts, server.WithToolCapabilities(true))...)
	s.AddTool(mcp.NewTool("dump"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewTextContent(strings.Repeat("log line\n", mib/9)),
			mcp.NewImageContent(strings.Repeat("iVBO", 16<<10), "image/png"),
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "file:///big.txt", Text: strings.Repeat("r", mib)}),
			&mcp.TextContent{Type: "text", Text: "exit status 1"},
		}}, nil
	})
	s.AddTool(mcp.NewTool("query"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rows := make([]any, 2048)
		for i := range rows {
			rows[i] = map[string]any{"id": i, "body": strings.Repeat("x", 512)}
		}
		return mcp.NewToolResultStructured(map[string]any{"rows": rows}, "2048 rows"), nil
	})
	s.AddTool(mcp.NewTool("small"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("hello"), nil
	})
	return s
}

// connect returns a started, initialized in-process client of s.
func connect(t *testing.T, s *server.MCPServer) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "agent", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

func call(t *testing.T, c client.MCPClient, tool string) *mcp.CallToolResult {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = tool
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("CallTool(%s): %v", tool, err)
	}
	return res
}

// modelText is the text an agent hands its model of a result.
func modelText(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case mcp.TextContent:
			out = append(out, c.Text)
		case *mcp.TextContent:
			out = append(out, c.Text)
		case mcp.EmbeddedResource:
			out = append(out, c.Resource.(mcp.TextResourceContents).Text)
		}
	}
	return out
}

func TestCaps(t *testing.T) {
	tests := []struct {
		name   string
		client func(t *testing.T) client.MCPClient
	}{
		{"server middleware", func(t *testing.T) client.MCPClient {
			return connect(t, newServer(server.WithToolHandlerMiddleware(mcpgo.Middleware(limits))))
		}},
		{"server Use", func(t *testing.T) client.MCPClient {
			s := newServer()
			s.Use(mcpgo.Middleware(limits))
			return connect(t, s)
		}},
		{"client wrapper", func(t *testing.T) client.MCPClient {
			return mcpgo.WrapClient(connect(t, newServer()), limits)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.client(t)

			res := call(t, c, "dump")
			texts := modelText(res)
			total := 0
			for _, s := range texts {
				total += len(s)
			}
			if len(texts) != 3 || total > 4096 || total < 4000 || !strings.HasSuffix(texts[0], markerEnd) || !strings.HasSuffix(texts[1], markerEnd) {
				t.Errorf("dump: %d blocks, %d text bytes (limit 4096)", len(texts), total)
			}
			if texts[2] != "exit status 1" {
				t.Errorf("dump: the short block = %q, want it whole", texts[2])
			}

			res = call(t, c, "query")
			enc, _ := json.Marshal(res.StructuredContent)
			if len(enc) > 16384 || !bytes.Contains(enc, []byte(markerEnd)) {
				t.Errorf("query: structuredContent encodes to %d bytes (limit 16384), marker %v", len(enc), bytes.Contains(enc, []byte(markerEnd)))
			}
			if res.RawStructuredContent != nil && len(res.RawStructuredContent) > 16384 {
				t.Errorf("query: RawStructuredContent still has %d bytes", len(res.RawStructuredContent))
			}

			if diff := cmp.Diff([]string{"hello"}, modelText(call(t, c, "small"))); diff != "" {
				t.Errorf("small result changed (-want +got):\n%s", diff)
			}
			tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil || len(tools.Tools) != 3 {
				t.Errorf("ListTools: %v", err)
			}
		})
	}
}

func TestCapResultKeepsTheOriginal(t *testing.T) {
	big := strings.Repeat("é", mib/2)
	orig := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(big)}, IsError: true}
	got, dropped := mcpgo.CapResult(orig, 1000)
	if dropped == 0 || !got.IsError || len(got.Content[0].(mcp.TextContent).Text) > 1000 {
		t.Errorf("dropped %d, IsError %v", dropped, got.IsError)
	}
	if orig.Content[0].(mcp.TextContent).Text != big {
		t.Error("CapResult changed the tool's own result")
	}
}
