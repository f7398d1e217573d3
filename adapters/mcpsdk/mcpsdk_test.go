package mcpsdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/adapters/mcpsdk"
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

type rows struct {
	Rows []string `json:"rows"`
}

// dumpContent is what the "dump" tool returns: more than its limit of
// text, an image, an embedded text resource and a short last block.
func dumpContent() []mcp.Content {
	return []mcp.Content{
		&mcp.TextContent{Text: strings.Repeat("log line\n", mib/9)},
		&mcp.ImageContent{Data: bytes.Repeat([]byte{0x89}, 64<<10), MIMEType: "image/png"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///big.txt", Text: strings.Repeat("r", mib)}},
		&mcp.TextContent{Text: "exit status 1"},
	}
}

// connect starts a real go-sdk server with four tools over in-memory
// transports and returns a connected client session. server and client
// say which side gets the middleware, built from pf.
func connect(t *testing.T, pf shape.PolicyFunc, server, client bool, opts ...mcpsdk.Option) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "dump", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: dumpContent()}, nil
		})
	s.AddTool(&mcp.Tool{Name: "test", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: testLog}}}, nil
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
		s.AddReceivingMiddleware(mcpsdk.ServerMiddleware(pf, opts...))
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil)
	if client {
		c.AddSendingMiddleware(mcpsdk.ClientMiddleware(pf, opts...))
	}
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// wantContent is what shape.Content makes of content under p, as go-sdk
// blocks: the rule the middleware must follow.
func wantContent(content []mcp.Content, p shape.Policy) []shape.Block {
	fitted, _ := shape.Content(mcpsdk.Blocks(content), p, shape.Note{})
	for i := range fitted {
		fitted[i].From = 0 // the output's blocks do not say where they come from
	}
	return fitted
}

func gotContent(content []mcp.Content) []shape.Block {
	return mcpsdk.Blocks(content)
}

func call(t *testing.T, cs *mcp.ClientSession, tool string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", tool, err)
	}
	return res
}

func TestMiddleware(t *testing.T) {
	for _, side := range []struct {
		name           string
		server, client bool
	}{{"server", true, false}, {"client", false, true}, {"both", true, true}} {
		t.Run(side.name, func(t *testing.T) {
			cs := connect(t, policies, side.server, side.client)

			// The blocks share the limit by shape.Content's rule: the text
			// cut, the image dropped with a note, the resource cut.
			res := call(t, cs, "dump")
			want := wantContent(dumpContent(), policies("dump"))
			got := gotContent(res.Content)
			for i := range got {
				got[i].From = 0
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("dump: the blocks differ from shape.Content's (-want +got):\n%s", diff)
			}
			if n := shape.Size(got); n > 4096 {
				t.Errorf("dump: the blocks take %d bytes, over the limit 4096", n)
			}

			// A per-tool strategy and token limit hold: the one text block
			// is shape.Text's cut, byte for byte.
			res = call(t, cs, "test")
			text, _, _ := shape.Text(testLog, headTail)
			if diff := cmp.Diff([]shape.Block{{Kind: shape.BlockText, Text: text}}, gotContent(res.Content)); diff != "" {
				t.Errorf("test: the text differs from shape.Text's (-want +got):\n%s", diff)
			}
			if err := capcheck.Text(testLog, res.Content[0].(*mcp.TextContent).Text, headTail); err != nil {
				t.Errorf("test: %v", err)
			}

			// structuredContent is cut by shape.JSON on its own, and the
			// content, its text copy, by the text rule, with the note.
			res = call(t, cs, "query")
			enc, _ := json.Marshal(res.StructuredContent)
			var sc rows
			if err := json.Unmarshal(enc, &sc); err != nil || len(enc) > 16384 || len(sc.Rows) == 0 || len(sc.Rows) >= 2048 {
				t.Errorf("query: structuredContent encodes to %d bytes (limit 16384) with %d rows of 2048 (%v), want a cut", len(enc), len(sc.Rows), err)
			}
			blocks := gotContent(res.Content)
			if n := shape.Size(blocks); n > 16384 || len(blocks) != 2 || !strings.Contains(blocks[1].Text, "structuredContent cut") {
				t.Errorf("query: %d blocks of %d bytes, want the text cut and the note: %+v", len(blocks), n, blocks[len(blocks)-1])
			}

			res = call(t, cs, "small")
			if diff := cmp.Diff([]shape.Block{{Kind: shape.BlockText, Text: "hello"}}, gotContent(res.Content)); diff != "" {
				t.Errorf("small result changed (-want +got):\n%s", diff)
			}

			// Other methods pass through.
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil || len(tools.Tools) != 4 {
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
	p := shape.Bytes(1000)
	got, content, structured := mcpsdk.CapResult(orig, p)
	if got == orig || !got.IsError {
		t.Fatalf("CapResult returned the result itself (%v) or lost IsError (%v)", got == orig, got.IsError)
	}
	if diff := cmp.Diff(wantContent(orig.Content, p), zeroFrom(gotContent(got.Content))); diff != "" {
		t.Errorf("the blocks differ from shape.Content's (-want +got):\n%s", diff)
	}
	_, wantFig := shape.Content(mcpsdk.Blocks(orig.Content), p, shape.Note{})
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
	if orig.Content[0].(*mcp.TextContent).Text != big || orig.StructuredContent.(map[string]any)["text"] != big {
		t.Error("CapResult changed the tool's own result")
	}

	small := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}, StructuredContent: map[string]any{"ok": true}}
	if same, c, sc := mcpsdk.CapResult(small, p); same != small || c != (chain.Truncation{}) || sc != (chain.Truncation{}) {
		t.Errorf("a small result: a copy %v, figures %+v and %+v", same != small, c, sc)
	}
	if got, _, _ := mcpsdk.CapResult(nil, p); got != nil {
		t.Errorf("CapResult(nil) = %v", got)
	}
}

// A structuredContent no valid form of which fits is dropped, and its
// figures say so.
func TestCapResultDropsStructured(t *testing.T) {
	keys := map[string]any{}
	for i := range 2000 {
		keys[fmt.Sprintf("key%04d", i)] = i
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "2000 keys"}}, StructuredContent: keys}
	got, content, structured := mcpsdk.CapResult(res, shape.Bytes(1024))
	enc, _ := json.Marshal(keys)
	want := chain.Truncation{Limit: 1024, OriginalBytes: len(enc), DroppedBytes: len(enc), Strategy: "json"}
	if got.StructuredContent != nil || content != (chain.Truncation{}) {
		t.Errorf("structuredContent %T, content figures %+v; want it dropped, the content untouched", got.StructuredContent, content)
	}
	if diff := cmp.Diff(want, structured); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
}

func zeroFrom(b []shape.Block) []shape.Block {
	for i := range b {
		b[i].From = 0
	}
	return b
}

// Every cut is logged once with the one field set.
func TestLog(t *testing.T) {
	var buf bytes.Buffer
	logger := hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, DisableTime: true, Level: hclog.Info})
	cs := connect(t, policies, true, false, mcpsdk.WithLogger(logger))
	res := call(t, cs, "test")
	_, fig, _ := shape.Text(testLog, headTail)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("log %q: %v", buf.String(), err)
	}
	want := map[string]any{"@level": "info", "@message": shape.Message(fig)}
	for i, f := 0, shape.LogFields("test", "", fig); i < len(f); i += 2 {
		want[f[i].(string)] = f[i+1]
	}
	// JSON numbers decode as float64.
	wantJSON, _ := json.Marshal(want)
	var wantLine map[string]any
	_ = json.Unmarshal(wantJSON, &wantLine)
	if diff := cmp.Diff(wantLine, line); diff != "" {
		t.Errorf("log line (-want +got):\n%s", diff)
	}
	if len(res.Content) != 1 {
		t.Errorf("%d blocks", len(res.Content))
	}
}

// A nil PolicyFunc gives every tool the default limit.
func TestNilPolicies(t *testing.T) {
	cs := connect(t, nil, true, false)
	res := call(t, cs, "test")
	want, _, _ := shape.Text(testLog, shape.Bytes(16384))
	if got := res.Content[0].(*mcp.TextContent).Text; got != want {
		t.Errorf("the client got %d bytes, want the default limit's cut, %d", len(got), len(want))
	}
}
