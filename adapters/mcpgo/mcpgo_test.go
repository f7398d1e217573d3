package mcpgo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolcap/toolcap/adapters/mcpgo"
	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/capvalue"
	"github.com/toolcap/toolcap/internal/shape"
)

const mib = 1 << 20

// headTail is the policy every front end's tests check all settings with.
var headTail = capcheck.HeadTail

// policies gives "dump" 4096 bytes, "test" the head_tail policy above, and
// every other tool 16384 bytes.
func policies(tool string) shape.Policy {
	switch tool {
	case "dump":
		return shape.Bytes(4096)
	case "test":
		return headTail
	}
	return shape.Bytes(16384)
}

// testLog is a test run's output with one failure inside.
var testLog = capcheck.TestLog(3000, 1700)

// dumpContent is what the "dump" tool returns: more than its limit of
// text, an image, an embedded text resource and a short last block, as
// values and pointers.
func dumpContent() []mcp.Content {
	return []mcp.Content{
		mcp.NewTextContent(strings.Repeat("log line\n", mib/9)),
		mcp.NewImageContent(strings.Repeat("iVBO", 16<<10), "image/png"),
		mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "file:///big.txt", Text: strings.Repeat("r", mib)}),
		&mcp.TextContent{Type: "text", Text: "exit status 1"},
	}
}

// newServer returns a real mcp-go server with a tool returning 1 MiB of
// blocks, one a test log, one 1 MiB of structured content and a small one.
func newServer(opts ...server.ServerOption) *server.MCPServer {
	s := server.NewMCPServer("big", "1.0.0", append(opts, server.WithToolCapabilities(true))...)
	s.AddTool(mcp.NewTool("dump"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: dumpContent()}, nil
	})
	s.AddTool(mcp.NewTool("test"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(testLog), nil
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

// blocks is what shape sees of content, wherever the blocks came from.
func blocks(content []mcp.Content) []shape.Block {
	b := mcpgo.Blocks(content)
	for i := range b {
		b[i].From = 0
	}
	return b
}

// wantContent is what shape.Content makes of content under p: the rule
// every front end follows.
func wantContent(content []mcp.Content, p shape.Policy) []shape.Block {
	fitted, _ := shape.Content(mcpgo.Blocks(content), p, shape.Note{})
	for i := range fitted {
		fitted[i].From = 0
	}
	return fitted
}

func TestCaps(t *testing.T) {
	tests := []struct {
		name   string
		client func(t *testing.T) client.MCPClient
	}{
		{"server middleware", func(t *testing.T) client.MCPClient {
			return connect(t, newServer(server.WithToolHandlerMiddleware(mcpgo.Middleware(policies))))
		}},
		{"server Use", func(t *testing.T) client.MCPClient {
			s := newServer()
			s.Use(mcpgo.Middleware(policies))
			return connect(t, s)
		}},
		{"client wrapper", func(t *testing.T) client.MCPClient {
			return mcpgo.WrapClient(connect(t, newServer()), policies)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.client(t)

			// The blocks share the limit by shape.Content's rule.
			res := call(t, c, "dump")
			got := blocks(res.Content)
			if diff := cmp.Diff(wantContent(dumpContent(), policies("dump")), got); diff != "" {
				t.Errorf("dump: the blocks differ from shape.Content's (-want +got):\n%s", diff)
			}
			if n := shape.Size(got); n > 4096 {
				t.Errorf("dump: the blocks take %d bytes, over the limit 4096", n)
			}

			// A per-tool strategy and token limit hold: the text is
			// shape.Text's cut, byte for byte.
			res = call(t, c, "test")
			text, _, _ := shape.Text(testLog, headTail)
			if diff := cmp.Diff([]shape.Block{{Kind: shape.BlockText, Text: text}}, blocks(res.Content)); diff != "" {
				t.Errorf("test: the text differs from shape.Text's (-want +got):\n%s", diff)
			}
			if err := capcheck.Text(testLog, text, headTail); err != nil {
				t.Errorf("test: %v", err)
			}

			// structuredContent is cut by shape.JSON on its own, the raw
			// copy in step, and the content carries the note.
			res = call(t, c, "query")
			enc, _ := json.Marshal(res.StructuredContent)
			var sc struct{ Rows []any }
			if err := json.Unmarshal(enc, &sc); err != nil || len(enc) > 16384 || len(sc.Rows) == 0 || len(sc.Rows) >= 2048 {
				t.Errorf("query: structuredContent encodes to %d bytes (limit 16384) with %d rows of 2048 (%v), want a cut", len(enc), len(sc.Rows), err)
			}
			if len(res.RawStructuredContent) > 16384 {
				t.Errorf("query: RawStructuredContent still has %d bytes", len(res.RawStructuredContent))
			}
			if b := blocks(res.Content); len(b) != 2 || !strings.Contains(b[1].Text, "structuredContent cut") {
				t.Errorf("query: %d blocks, want the text and the note", len(b))
			}

			if diff := cmp.Diff([]shape.Block{{Kind: shape.BlockText, Text: "hello"}}, blocks(call(t, c, "small").Content)); diff != "" {
				t.Errorf("small result changed (-want +got):\n%s", diff)
			}
			tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil || len(tools.Tools) != 4 {
				t.Errorf("ListTools: %v", err)
			}
		})
	}
}

func TestCapResult(t *testing.T) {
	big := strings.Repeat("é", mib/2)
	orig := &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(big), &mcp.TextContent{Type: "text", Text: big}},
		StructuredContent: map[string]any{"text": big},
		IsError:           true,
	}
	p := shape.Bytes(1000)
	got, content, structured := mcpgo.CapResult(orig, p)
	if got == orig || !got.IsError {
		t.Fatalf("CapResult returned the result itself (%v) or lost IsError (%v)", got == orig, got.IsError)
	}
	if diff := cmp.Diff(wantContent(orig.Content, p), blocks(got.Content)); diff != "" {
		t.Errorf("the blocks differ from shape.Content's (-want +got):\n%s", diff)
	}
	if _, ok := got.Content[0].(mcp.TextContent); !ok {
		t.Errorf("the cut block is a %T, want the value it was", got.Content[0])
	}
	_, wantFig := shape.Content(mcpgo.Blocks(orig.Content), p, shape.Note{})
	if diff := cmp.Diff(wantFig.Figures, content); diff != "" {
		t.Errorf("content figures (-want +got):\n%s", diff)
	}
	wantSC, s, _ := capvalue.JSON(orig.StructuredContent, p)
	if diff := cmp.Diff(wantSC, got.StructuredContent); diff != "" {
		t.Errorf("structuredContent differs from capvalue.JSON's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(s.Figures, structured); diff != "" {
		t.Errorf("structuredContent figures (-want +got):\n%s", diff)
	}
	if orig.Content[0].(mcp.TextContent).Text != big || orig.StructuredContent.(map[string]any)["text"] != big {
		t.Error("CapResult changed the tool's own result")
	}

	small := mcp.NewToolResultText("ok")
	if same, c, sc := mcpgo.CapResult(small, p); same != small || c != (chain.Truncation{}) || sc != (chain.Truncation{}) {
		t.Errorf("a small result: a copy %v, figures %+v and %+v", same != small, c, sc)
	}
}

// A client's result is measured by the JSON it arrived as, and both copies
// are cut alike; one no valid form of which fits is dropped.
func TestCapResultRawStructured(t *testing.T) {
	raw := json.RawMessage(`{"id":9223372036854775807,"body":"` + strings.Repeat("z", 4000) + `"}`)
	res := &mcp.CallToolResult{StructuredContent: map[string]any{"id": 9.223372036854776e18}, RawStructuredContent: raw}
	p := shape.Bytes(1000)
	got, _, fig := mcpgo.CapResult(res, p)
	want, _ := shape.JSON(raw, p, nil)
	if diff := cmp.Diff(string(want.Raw), string(got.RawStructuredContent)); diff != "" {
		t.Errorf("RawStructuredContent differs from shape.JSON's cut (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Figures, fig); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
	if m, ok := got.StructuredContent.(map[string]any); !ok || m["id"] != json.Number("9223372036854775807") {
		t.Errorf("StructuredContent = %v, want the cut, its id exact", got.StructuredContent)
	}

	var keys strings.Builder
	keys.WriteString("{")
	for i := range 200 {
		fmt.Fprintf(&keys, "%q:%d,", fmt.Sprintf("key%04d", i), i)
	}
	many := json.RawMessage(strings.TrimSuffix(keys.String(), ",") + "}")
	got, _, fig = mcpgo.CapResult(&mcp.CallToolResult{StructuredContent: map[string]any{}, RawStructuredContent: many}, shape.Bytes(300))
	dropped := chain.Truncation{Limit: 300, OriginalBytes: len(many), DroppedBytes: len(many), Strategy: "json"}
	if got.StructuredContent != nil || got.RawStructuredContent != nil || fig != dropped {
		t.Errorf("too many keys: %v, %q, figures %+v; want both dropped, figures %+v", got.StructuredContent, got.RawStructuredContent, fig, dropped)
	}
}

// Every cut is logged once with the one field set.
func TestLog(t *testing.T) {
	var buf bytes.Buffer
	logger := hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, DisableTime: true, Level: hclog.Info})
	c := mcpgo.WrapClient(connect(t, newServer()), policies, mcpgo.WithLogger(logger))
	call(t, c, "test")
	_, fig, _ := shape.Text(testLog, headTail)
	want := map[string]any{"@level": "info", "@message": shape.Message(fig)}
	for i, f := 0, shape.LogFields("test", "", fig); i < len(f); i += 2 {
		want[f[i].(string)] = f[i+1]
	}
	wantJSON, _ := json.Marshal(want)
	var wantLine, line map[string]any
	_ = json.Unmarshal(wantJSON, &wantLine) // numbers as a decoded log line has them
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("log %q: %v", buf.String(), err)
	}
	if diff := cmp.Diff(wantLine, line); diff != "" {
		t.Errorf("log line (-want +got):\n%s", diff)
	}
}
