package mcpsdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/adapters/mcpsdk"
)

const mib = 1 << 20

var markerEnd = " bytes dropped, refine your query]"

// limits gives "dump" 4096 bytes and every other tool 16384.
func limits(tool string) int {
	if tool == "dump" {
		return 4096
	}
	return 16384
}

type rows struct {
	Rows []string `json:"rows"`
}

// connect starts a real go-sdk server with three tools over in-memory
// transports and returns a connected client session. server and client
// say which side gets the middleware.
func connect(t *testing.T, server, client bool) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "dump", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: strings.Repeat("log line\n", mib/9)},
				&mcp.ImageContent{Data: bytes.Repeat([]byte{0x89}, 64<<10), MIMEType: "image/png"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///big.txt", Text: strings.Repeat("r", mib)}},
				&mcp.TextContent{Text: "exit status 1"},
			}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "query"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, rows, error) {
			out := rows{}
			for range 2048 {
				out.Rows = append(out.Rows, strings.Repeat("x", 512))
			}
			return nil, out, nil
		})
	s.AddTool(&mcp.Tool{Name: "small", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil
		})
	if server {
		s.AddReceivingMiddleware(mcpsdk.ServerMiddleware(limits))
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil)
	if client {
		c.AddSendingMiddleware(mcpsdk.ClientMiddleware(limits))
	}
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// modelText is what an agent hands its model of a result: the text of its
// text blocks and text resources.
func modelText(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			out = append(out, c.Text)
		case *mcp.EmbeddedResource:
			out = append(out, c.Resource.Text)
		}
	}
	return out
}

func TestMiddleware(t *testing.T) {
	for _, side := range []struct {
		name           string
		server, client bool
	}{{"server", true, false}, {"client", false, true}, {"both", true, true}} {
		t.Run(side.name, func(t *testing.T) {
			cs := connect(t, side.server, side.client)
			ctx := context.Background()

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "dump"})
			if err != nil {
				t.Fatal(err)
			}
			texts := modelText(res)
			total := 0
			for _, s := range texts {
				total += len(s)
			}
			if total > 4096 || total < 4000 || !strings.HasSuffix(texts[0], markerEnd) || !strings.HasSuffix(texts[1], markerEnd) {
				t.Errorf("dump: %d text bytes (limit 4096), first ends %q", total, texts[0][max(0, len(texts[0])-60):])
			}
			if texts[2] != "exit status 1" {
				t.Errorf("dump: the short block = %q, want it whole", texts[2])
			}
			if img := res.Content[1].(*mcp.ImageContent); len(img.Data) != 64<<10 {
				t.Errorf("dump: the image has %d bytes, want it whole", len(img.Data))
			}

			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "query"})
			if err != nil {
				t.Fatal(err)
			}
			enc, _ := json.Marshal(res.StructuredContent)
			if len(enc) > 16384 || !bytes.Contains(enc, []byte(markerEnd)) {
				t.Errorf("query: structuredContent encodes to %d bytes (limit 16384)", len(enc))
			}
			if text := modelText(res); len(text) != 1 || len(text[0]) > 16384 || !strings.HasSuffix(text[0], markerEnd) {
				t.Errorf("query: the text copy has %d blocks", len(text))
			}

			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "small"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"hello"}, modelText(res)); diff != "" {
				t.Errorf("small result changed (-want +got):\n%s", diff)
			}

			// Other methods pass through.
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) != 3 {
				t.Errorf("ListTools = %v tools, %v", len(tools.Tools), err)
			}
		})
	}
}

func TestCapResult(t *testing.T) {
	big := strings.Repeat("é", mib/2)
	orig := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: big}, &mcp.TextContent{Text: big}},
		StructuredContent: map[string]any{"text": big},
		IsError:           true,
	}
	got, dropped := mcpsdk.CapResult(orig, 1000)
	if dropped == 0 || !got.IsError {
		t.Fatalf("dropped %d, IsError %v", dropped, got.IsError)
	}
	a, b := got.Content[0].(*mcp.TextContent).Text, got.Content[1].(*mcp.TextContent).Text
	if len(a)+len(b) > 1000 || !strings.HasSuffix(a, markerEnd) || !strings.HasSuffix(b, markerEnd) {
		t.Errorf("texts %d + %d bytes, over 1000 or without a marker", len(a), len(b))
	}
	if enc, _ := json.Marshal(got.StructuredContent); len(enc) > 1000 {
		t.Errorf("structuredContent encodes to %d bytes, over 1000", len(enc))
	}
	if orig.Content[0].(*mcp.TextContent).Text != big || orig.StructuredContent.(map[string]any)["text"] != big {
		t.Error("CapResult changed the tool's own result")
	}
	if same, d := mcpsdk.CapResult(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, 1000); d != 0 || same.Content[0].(*mcp.TextContent).Text != "ok" {
		t.Errorf("a small result: dropped %d", d)
	}
}

// A nil Limits gives every tool the default limit.
func TestNilLimits(t *testing.T) {
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "dump", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", mib)}}}, nil
		})
	s.AddReceivingMiddleware(mcpsdk.ServerMiddleware(nil))
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "dump"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Content[0].(*mcp.TextContent).Text); n != 16384 {
		t.Errorf("the client got %d bytes, want the default limit, 16384", n)
	}
}
