package mcpproxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
	"github.com/toolcap/toolcap/mcpproxy/internal/shape"
	"github.com/toolcap/toolcap/middleware"
)

// fakeServer is an in-process MCP server with the shapes of result the proxy
// must handle.
func fakeServer(t *testing.T) *mcp.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "9.9"}, &mcp.ServerOptions{
		Instructions: "use the tools",
	})
	obj := map[string]any{"type": "object"}
	outSchema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"content": map[string]any{"type": "string"}},
		"required":   []any{"content"},
	}
	big := strings.Repeat("0123456789abcdef\n", 6000) // 102000 bytes
	s.AddTool(&mcp.Tool{Name: "big", InputSchema: obj, OutputSchema: outSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: big}},
				StructuredContent: map[string]any{"content": big},
			}, nil
		})
	s.AddTool(&mcp.Tool{Name: "mcp.fs.read", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "small", InputSchema: obj, OutputSchema: outSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &args)
			text := "[FILE] a.go\n[DIR] sub <&>"
			if args["echo"] != nil {
				text = args["echo"].(string)
			}
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: text}},
				StructuredContent: map[string]any{"content": text},
			}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				IsError: true,
				Content: []mcp.Content{&mcp.TextContent{Text: "Access denied - path outside allowed directories: " + strings.Repeat("x", 40000)}},
			}, nil
		})
	s.AddTool(&mcp.Tool{Name: "proto", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: -32042, Message: "server says no"}
		})
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := range 3 {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: 3,
				})
			}
			var args map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &args)
			if args["hang"] != nil {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "blocks", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: strings.Repeat("a", 10000)},
				&mcp.ImageContent{MIMEType: "image/png", Data: bytes.Repeat([]byte{1}, 100)},
				&mcp.TextContent{Text: strings.Repeat("b", 10000)},
				&mcp.ImageContent{MIMEType: "image/png", Data: bytes.Repeat([]byte{2}, 30000)},
				&mcp.TextContent{Text: "c"},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "file:///readme", Name: "readme"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "read me"}}}, nil
	})
	return s
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type harness struct {
	proxy  *mcpproxy.Proxy
	client *mcp.ClientSession
	logs   *syncBuffer
	served chan error
	server *mcp.Server
}

func start(t *testing.T, opts mcpproxy.Options, copts *mcp.ClientOptions) *harness {
	t.Helper()
	return startWith(t, fakeServer(t), opts, copts)
}

// startWith runs a proxy in front of server s and a client in front of it.
func startWith(t *testing.T, s *mcp.Server, opts mcpproxy.Options, copts *mcp.ClientOptions) *harness {
	t.Helper()
	h := &harness{logs: &syncBuffer{}, server: s}
	opts.Logger = hclog.New(&hclog.LoggerOptions{Output: h.logs, Level: hclog.Debug, DisableTime: true})
	h.proxy, _ = connect(t, s, opts)
	h.client, h.served = serve(t, h.proxy, copts)
	t.Cleanup(func() {
		_ = h.client.Close()
		select {
		case <-h.served:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after the client closed")
		}
	})
	return h
}

// connect connects a proxy with opts to server s, and returns it with the
// server's session.
func connect(t *testing.T, s *mcp.Server, opts mcpproxy.Options) (*mcpproxy.Proxy, *mcp.ServerSession) {
	t.Helper()
	ctx := context.Background()
	upA, upB := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, upB, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := mcpproxy.Connect(ctx, upA, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p, ss
}

// serve runs p.Serve for a client with copts, and returns the client's
// session and the channel that receives what Serve returns.
func serve(t *testing.T, p *mcpproxy.Proxy, copts *mcp.ClientOptions) (*mcp.ClientSession, chan error) {
	t.Helper()
	ctx := context.Background()
	downA, downB := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, downA) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts).Connect(ctx, downB, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, served
}

// serveInput runs p.Serve for a client that sends in, then closes its end,
// and returns what Serve returns. The test fails if Serve has not returned
// within 10 seconds: "Serve did not return after " + after.
func serveInput(t *testing.T, p *mcpproxy.Proxy, in, after string) error {
	t.Helper()
	var out syncBuffer
	served := make(chan error, 1)
	go func() {
		served <- p.Serve(context.Background(), &mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(in)), Writer: nopWriteCloser{&out}})
	}()
	select {
	case err := <-served:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after " + after)
	}
	return nil
}

func (h *harness) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := h.client.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func TestProxyMirrorsServer(t *testing.T) {
	h := start(t, mcpproxy.Options{}, nil)
	init := h.client.InitializeResult()
	if init.ServerInfo.Name != "fake" || init.ServerInfo.Version != "9.9" {
		t.Errorf("serverInfo = %+v, want the server's own", init.ServerInfo)
	}
	if init.Instructions != "use the tools" {
		t.Errorf("instructions = %q", init.Instructions)
	}
	if init.Capabilities.Tools == nil || !init.Capabilities.Tools.ListChanged {
		t.Errorf("tools capability = %+v, want listChanged", init.Capabilities.Tools)
	}
	var names []string
	for tool, err := range h.client.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		if tool.Name == "big" && tool.OutputSchema == nil {
			t.Error("big lost its outputSchema")
		}
	}
	if got, want := strings.Join(names, ","), "big,blocks,fail,mcp.fs.read,proto,slow,small"; got != want {
		t.Errorf("tools = %s, want %s", got, want)
	}
	pr, err := h.client.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "greet"})
	if err != nil || pr.Messages[0].Content.(*mcp.TextContent).Text != "hello" {
		t.Errorf("GetPrompt = %v, %v", pr, err)
	}
	rr, err := h.client.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file:///readme"})
	if err != nil || rr.Contents[0].Text != "read me" {
		t.Errorf("ReadResource = %v, %v", rr, err)
	}
}

func TestProxyCapsTextAndStructured(t *testing.T) {
	h := start(t, mcpproxy.Options{}, nil)
	res := h.call(t, "big", nil)
	if res.IsError {
		t.Fatalf("a cut result became an error: %s", textOf(res))
	}
	text := textOf(res)
	if len(text) > manifest.DefaultMaxBytes {
		t.Errorf("text is %d bytes, over %d", len(text), manifest.DefaultMaxBytes)
	}
	if !strings.HasSuffix(text, " bytes dropped, refine your query]") {
		t.Errorf("text does not end in the marker: ...%q", text[max(0, len(text)-80):])
	}
	sc, ok := res.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("structuredContent = %T, want an object", res.StructuredContent)
	}
	if sc["content"] != text {
		t.Errorf("structuredContent.content differs from the capped text")
	}
	if !strings.Contains(h.logs.String(), "tool result truncated") {
		t.Errorf("the cut was not logged:\n%s", h.logs)
	}
}

func TestProxySmallResultUnchanged(t *testing.T) {
	h := start(t, mcpproxy.Options{}, nil)
	via := h.call(t, "small", map[string]any{})

	// The same call straight to the server.
	upA, upB := mcp.NewInMemoryTransports()
	if _, err := h.server.Connect(context.Background(), upB, nil); err != nil {
		t.Fatal(err)
	}
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "d"}, nil).Connect(context.Background(), upA, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	want, err := direct.CallTool(context.Background(), &mcp.CallToolParams{Name: "small", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(via)
	if !bytes.Equal(a, b) {
		t.Errorf("result through the proxy differs:\ndirect %s\nproxy  %s", a, b)
	}
}

func TestProxyPerToolOverride(t *testing.T) {
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{
		PerTool: map[string]int{"mcp.fs.read": 1000, "no_such_tool": 2000, "smal": 3000},
	}}
	h := start(t, mcpproxy.Options{Manifest: m}, nil)
	if got := len(textOf(h.call(t, "mcp.fs.read", nil))); got > 1000 || got < 900 {
		t.Errorf("mcp.fs.read text = %d bytes, want its per_tool 1000", got)
	}
	if got := len(textOf(h.call(t, "big", nil))); got != manifest.DefaultMaxBytes {
		t.Errorf("big text = %d bytes, want the default %d", got, manifest.DefaultMaxBytes)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, "no_such_tool") || !strings.Contains(logs, "did_you_mean=small") {
		t.Errorf("unknown per_tool names not warned about with a suggestion:\n%s", logs)
	}
}

func TestProxyErrors(t *testing.T) {
	h := start(t, mcpproxy.Options{}, nil)
	res := h.call(t, "fail", nil)
	if !res.IsError {
		t.Error("isError result lost its flag")
	}
	if text := textOf(res); len(text) > manifest.DefaultMaxBytes || !strings.HasPrefix(text, "Access denied") {
		t.Errorf("error text = %d bytes %q...", len(text), text[:min(40, len(text))])
	}

	_, err := h.client.CallTool(context.Background(), &mcp.CallToolParams{Name: "proto"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != -32042 || werr.Message != "server says no" {
		t.Errorf("protocol error = %v, want the server's code and message", err)
	}
	_, err = h.client.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope"})
	if err == nil {
		t.Error("unknown tool: no error")
	}
}

func TestProxyBlocks(t *testing.T) {
	h := start(t, mcpproxy.Options{}, nil)
	res := h.call(t, "blocks", nil)
	var kinds []string
	for _, c := range res.Content {
		switch b := c.(type) {
		case *mcp.TextContent:
			kind := "text"
			if strings.HasPrefix(b.Text, "[toolcap: dropped") {
				kind = "note"
			}
			kinds = append(kinds, kind)
		case *mcp.ImageContent:
			kinds = append(kinds, "image")
		}
	}
	// In order: text a (kept), the small image, text b (cut, marker), the
	// big image replaced by a note; text c dropped.
	if diff := cmp.Diff([]string{"text", "image", "text", "note"}, kinds); diff != "" {
		t.Errorf("blocks (-want +got):\n%s", diff)
	}
	// The notes count: everything the client gets is within the limit.
	if n := shape.ContentSize(res.Content); n > manifest.DefaultMaxBytes {
		t.Errorf("blocks and notes hold %d bytes, over the limit", n)
	}
}

// TestProxyContentBudget: whatever mix of blocks a result holds, they
// share one budget, notes included.
func TestProxyContentBudget(t *testing.T) {
	huge := strings.Repeat("E", 1<<20)
	textAndImages := func() []mcp.Content {
		cs := []mcp.Content{&mcp.TextContent{Text: strings.Repeat("t", 100000)}}
		for range 20 {
			cs = append(cs, &mcp.ImageContent{MIMEType: "image/png", Data: bytes.Repeat([]byte{1}, 100000)})
		}
		return cs
	}
	tests := []struct {
		name    string
		content func() []mcp.Content
		limit   int
		want    map[string]int // blocks of each kind the client gets
	}{
		{"50 images and 50 text resources", func() []mcp.Content {
			var cs []mcp.Content
			for range 50 {
				cs = append(cs, &mcp.ImageContent{MIMEType: "image/png", Data: bytes.Repeat([]byte{1}, 12000)},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///x", Text: strings.Repeat("r", 16000)}})
			}
			return append(cs, &mcp.ResourceLink{URI: "file:///y", Name: "y", Description: huge})
		}, manifest.DefaultMaxBytes, map[string]int{"image": 1, "resource": 1, "note": 1}},
		{"text and 20 images", textAndImages, manifest.DefaultMaxBytes, map[string]int{"text": 1, "note": 1}},
		{"text and images at the smallest limit", textAndImages, manifest.MinMaxBytes, map[string]int{"text": 1, "note": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := oneTool(func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: tt.content()}, nil
			})
			m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{DefaultMaxBytes: tt.limit}}
			h := startWith(t, s, mcpproxy.Options{Manifest: m}, nil)
			res := h.call(t, "t", nil)
			got := map[string]int{}
			for _, c := range res.Content {
				switch b := c.(type) {
				case *mcp.TextContent:
					if strings.HasPrefix(b.Text, "[toolcap: ") {
						got["note"]++
					} else {
						got["text"]++
					}
				case *mcp.ImageContent:
					got["image"]++
				case *mcp.EmbeddedResource:
					got["resource"]++
				case *mcp.ResourceLink:
					got["link"]++
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("blocks at the client (-want +got):\n%s", diff)
			}
			if n := shape.ContentSize(res.Content); n > tt.limit {
				t.Errorf("content holds %d bytes, over the limit of %d", n, tt.limit)
			}
			if !strings.Contains(h.logs.String(), "blocks_dropped=") {
				t.Errorf("the dropped blocks were not logged:\n%s", h.logs)
			}
		})
	}
}

func TestProxyProgressAndCancel(t *testing.T) {
	var mu sync.Mutex
	var got []float64
	h := start(t, mcpproxy.Options{}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params.Progress)
			mu.Unlock()
		},
	})
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}
	params.SetProgressToken("tok-1")
	if _, err := h.client.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	if len(got) != 3 {
		t.Errorf("progress notifications = %v, want 3", got)
	}
	mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := h.client.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"hang": true}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled call: %v", err)
	}
	// The proxy is still usable.
	if text := textOf(h.call(t, "small", nil)); text == "" {
		t.Error("no answer after a cancelled call")
	}
}

func TestProxyListChanged(t *testing.T) {
	changed := make(chan struct{}, 4)
	h := start(t, mcpproxy.Options{}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	h.server.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("z", 20000)}}}, nil
		})
	h.server.RemoveTools("proto")
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed reached the client")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		names := strings.Join(h.proxy.Tools(), ",")
		if strings.Contains(names, "late") && !strings.Contains(names, "proto") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("proxy tools = %s", names)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := len(textOf(h.call(t, "late", nil))); got != manifest.DefaultMaxBytes {
		t.Errorf("late tool text = %d bytes, want it capped", got)
	}
}

func TestProxyMiddlewareSeeCappedText(t *testing.T) {
	var seen int
	grow := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			r := next(ctx, call)
			if r.Content != nil {
				seen = len(*r.Content)
				s := *r.Content + strings.Repeat("!", 500)
				r.Content = &s
			}
			return r
		}
	}
	h := start(t, mcpproxy.Options{Middleware: []chain.Middleware{grow}}, nil)
	text := textOf(h.call(t, "mcp.fs.read", nil))
	if seen != manifest.DefaultMaxBytes {
		t.Errorf("middleware saw %d bytes, want the capped %d", seen, manifest.DefaultMaxBytes)
	}
	if len(text) > manifest.DefaultMaxBytes {
		t.Errorf("ceiling let %d bytes through", len(text))
	}
}

// TestConnectTimeout: a server that never answers initialize.
func TestConnectTimeout(t *testing.T) {
	r, w := io.Pipe()
	defer r.Close()
	defer w.Close()
	go func() { _, _ = io.Copy(io.Discard, r) }()
	silent := &mcp.IOTransport{Reader: io.NopCloser(blockingReader{}), Writer: w}
	start := time.Now()
	_, err := mcpproxy.Connect(context.Background(), silent, mcpproxy.Options{InitTimeout: 200 * time.Millisecond})
	if !errors.Is(err, mcpproxy.ErrInitTimeout) {
		t.Fatalf("Connect = %v, want ErrInitTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Connect took %s", d)
	}
}

type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

func TestServeServerExits(t *testing.T) {
	p, ss := connect(t, fakeServer(t), mcpproxy.Options{})
	cs, served := serve(t, p, nil)
	defer cs.Close()
	_ = ss.Close()
	select {
	case err := <-served:
		if !errors.Is(err, mcpproxy.ErrServerExited) {
			t.Errorf("Serve = %v, want ErrServerExited", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the server went away")
	}
}

func TestServeMalformedMessage(t *testing.T) {
	p, _ := connect(t, fakeServer(t), mcpproxy.Options{})
	err := serveInput(t, p, "this is not json\n", "a malformed message")
	if err == nil || errors.Is(err, mcpproxy.ErrServerExited) {
		t.Errorf("Serve = %v, want a client connection error", err)
	}
}

// initializeLine is a client's initialize request, one line.
const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}` + "\n"

func TestServeClientEOF(t *testing.T) {
	p, _ := connect(t, fakeServer(t), mcpproxy.Options{})
	if err := serveInput(t, p, initializeLine, "the client's EOF"); err != nil {
		t.Errorf("Serve = %v, want nil after the client's EOF", err)
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func TestServeClientEOFDuringCall(t *testing.T) {
	p, _ := connect(t, fakeServer(t), mcpproxy.Options{})
	in := initializeLine + `{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"hang":true}}}
`
	if err := serveInput(t, p, in, "the client's EOF with a call in flight"); err != nil {
		t.Errorf("Serve = %v, want nil after the client's EOF", err)
	}
}

// rawServer speaks JSON-RPC on the server's end of an in-memory transport
// without the SDK's server, so a test can send what the SDK never would
// (a notification in the middle of initialize, a tool without a name). For
// each request it sends the notifications listed under its method first,
// then the answer of respond, given the method and how many times it was
// called (from 1). It returns the proxy's end.
func rawServer(t *testing.T, notify map[string][]string, respond func(method string, n int) (any, *jsonrpc.Error)) mcp.Transport {
	t.Helper()
	ctx := context.Background()
	proxySide, serverSide := mcp.NewInMemoryTransports()
	conn, err := serverSide.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	go func() {
		calls := map[string]int{}
		for {
			msg, err := conn.Read(ctx)
			if err != nil {
				return
			}
			req, ok := msg.(*jsonrpc.Request)
			if !ok || !req.IsCall() {
				continue
			}
			for _, m := range notify[req.Method] {
				_ = conn.Write(ctx, &jsonrpc.Request{Method: m, Params: json.RawMessage(`{}`)})
			}
			calls[req.Method]++
			result, rpcErr := respond(req.Method, calls[req.Method])
			if req.Method == "initialize" && result == nil && rpcErr == nil {
				result = map[string]any{
					"protocolVersion": "2025-06-18",
					"capabilities": map[string]any{
						"tools":   map[string]any{"listChanged": true},
						"prompts": map[string]any{"listChanged": true},
					},
					"serverInfo": map[string]any{"name": "raw", "version": "1"},
				}
			}
			if result == nil && rpcErr == nil {
				result = map[string]any{}
			}
			res := &jsonrpc.Response{ID: req.ID}
			if rpcErr != nil {
				res.Error = rpcErr
			} else if res.Result, err = json.Marshal(result); err != nil {
				panic(err)
			}
			_ = conn.Write(ctx, res)
		}
	}()
	return proxySide
}

func toolList(names ...string) map[string]any {
	tools := []any{}
	for _, n := range names {
		tools = append(tools, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
	}
	return map[string]any{"tools": tools}
}

// changingTools is a rawServer whose first tools/list holds the tools
// named first, and every later one those named second; it announces the
// change with a tools/list_changed sent during initialize.
func changingTools(t *testing.T, first, second []string) mcp.Transport {
	t.Helper()
	return rawServer(t, map[string][]string{"initialize": {"notifications/tools/list_changed"}},
		func(method string, n int) (any, *jsonrpc.Error) {
			if method == "tools/list" {
				if n == 1 {
					return toolList(first...), nil
				}
				return toolList(second...), nil
			}
			return nil, nil
		})
}

// waitTools waits until the proxy mirrors want, and returns what it mirrors.
func waitTools(p *mcpproxy.Proxy, want []string) []string {
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := p.Tools()
		if cmp.Equal(want, got, cmpopts.EquateEmpty()) || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestConnectEarlyListChanged: list_changed notifications sent while the
// proxy is still connecting (during initialize, during the first listing)
// neither crash it nor race (run with -race), and are not lost: the proxy
// re-lists once ready.
func TestConnectEarlyListChanged(t *testing.T) {
	changed := []string{"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"}
	tests := []struct {
		name      string
		notify    map[string][]string
		failList  bool // the first tools/list fails, so Connect fails
		wantTools []string
	}{
		{"during initialize", map[string][]string{"initialize": changed}, false, []string{"t", "u"}},
		{"during the first listing", map[string][]string{"tools/list": changed[:1], "prompts/list": changed[1:2]}, false, []string{"t", "u"}},
		{"Connect fails", map[string][]string{"initialize": changed}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := rawServer(t, tt.notify, func(method string, n int) (any, *jsonrpc.Error) {
				switch method {
				case "tools/list":
					if tt.failList {
						return nil, &jsonrpc.Error{Code: -32603, Message: "no list today"}
					}
					if n == 1 {
						return toolList("t"), nil
					}
					return toolList("t", "u"), nil // the change the notification announced
				case "prompts/list":
					return map[string]any{"prompts": []any{}}, nil
				}
				return nil, nil
			})
			p, err := mcpproxy.Connect(context.Background(), up, mcpproxy.Options{InitTimeout: 5 * time.Second})
			if tt.failList {
				if err == nil {
					t.Fatal("Connect succeeded with a failing tools/list")
				}
				time.Sleep(50 * time.Millisecond) // a crashing resync would crash here
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if diff := cmp.Diff(tt.wantTools, waitTools(p, tt.wantTools)); diff != "" {
				t.Errorf("tools after the early list_changed (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProxySkipsUnnamedTools: a tool without a name is skipped with a
// warning, at Connect and when the list changes, instead of stopping the
// proxy (the worker refuses empty names).
func TestProxySkipsUnnamedTools(t *testing.T) {
	tests := []struct {
		name   string
		first  []string // the first tools/list
		second []string // after the list_changed sent during initialize
		want   []string
	}{
		{"at Connect", []string{"", "t"}, []string{"", "t"}, []string{"t"}},
		{"on list_changed", []string{"t"}, []string{"t", "", "u", "u"}, []string{"t", "u"}},
		{"only unnamed tools", []string{""}, []string{""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := changingTools(t, tt.first, tt.second)
			logs := &syncBuffer{}
			p, err := mcpproxy.Connect(context.Background(), up, mcpproxy.Options{
				Logger: hclog.New(&hclog.LoggerOptions{Output: logs, DisableTime: true}),
			})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer p.Close()
			if diff := cmp.Diff(tt.want, waitTools(p, tt.want), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if !strings.Contains(logs.String(), "tool without a name") {
				t.Errorf("no warning about the unnamed tool:\n%s", logs)
			}
		})
	}
}

// TestProxyResyncFailureKeepsTools: when the worker for a changed list
// cannot be built, the proxy keeps its previous tools whole, on its server
// (what the client lists) as in its worker: no new tool is registered
// without a worker that knows it.
func TestProxyResyncFailureKeepsTools(t *testing.T) {
	up := changingTools(t, []string{"t"}, []string{"t", "u"})
	var builds atomic.Int32
	broken := func(next chain.Handler) chain.Handler {
		if builds.Add(1) > 1 {
			return nil // the worker for the changed list cannot be built
		}
		return next
	}
	logs := &syncBuffer{}
	p, err := mcpproxy.Connect(context.Background(), up, mcpproxy.Options{
		Middleware: []chain.Middleware{broken},
		Logger:     hclog.New(&hclog.LoggerOptions{Output: logs, DisableTime: true}),
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "could not refresh") {
		if time.Now().After(deadline) {
			t.Fatalf("the failed resync was not logged:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}

	cs, served := serve(t, p, nil)
	var listed []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, tool.Name)
	}
	_ = cs.Close()
	<-served
	got := map[string][]string{"worker": p.Tools(), "client": listed}
	want := map[string][]string{"worker": {"t"}, "client": {"t"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools after a failed resync (-want +got):\n%s", diff)
	}
}

// oneTool is a server with a single tool, "t", answering with h.
func oneTool(h mcp.ToolHandler) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "one", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}}, h)
	return s
}

// TestProxyCapsProtocolErrors: a JSON-RPC error from the server reaches
// the client with its code, and with a message and data within the tool's
// limit.
func TestProxyCapsProtocolErrors(t *testing.T) {
	const limit = 1000
	long := strings.Repeat("E", 1<<20)
	cut := func(s string, n int) string { c, _ := middleware.Truncate(s, n); return c }
	longMsg := cut(long, limit)
	quoted := func(s string) json.RawMessage { return json.RawMessage(`"` + s + `"`) }
	tests := []struct {
		name string
		err  *jsonrpc.Error
		want *jsonrpc.Error
	}{
		{"small, unchanged",
			&jsonrpc.Error{Code: -32042, Message: "no", Data: quoted("why")},
			&jsonrpc.Error{Code: -32042, Message: "no", Data: quoted("why")}},
		{"huge message and data",
			&jsonrpc.Error{Code: -32054, Message: long, Data: quoted(long)},
			&jsonrpc.Error{Code: -32054, Message: longMsg}},
		{"huge data only: dropped",
			&jsonrpc.Error{Code: -32053, Message: "no", Data: quoted(long)},
			&jsonrpc.Error{Code: -32053, Message: "no"}},
		{"message and data exactly at the limit",
			&jsonrpc.Error{Code: -32052, Message: long[:900], Data: quoted(strings.Repeat("d", 98))},
			&jsonrpc.Error{Code: -32052, Message: long[:900], Data: quoted(strings.Repeat("d", 98))}},
		{"small data kept, message cut to the rest",
			&jsonrpc.Error{Code: -32050, Message: long, Data: quoted(strings.Repeat("d", 248))},
			&jsonrpc.Error{Code: -32050, Message: cut(long, limit-250), Data: quoted(strings.Repeat("d", 248))}},
		{"data over a quarter of the limit dropped",
			&jsonrpc.Error{Code: -32051, Message: long, Data: quoted(strings.Repeat("d", 249))},
			&jsonrpc.Error{Code: -32051, Message: longMsg}},
		// The SDK's client reads -32003 as its own "client is closing" and
		// fails the call with a plain error quoting the message: the proxy
		// passes on a plain error, cut too.
		{"a code the SDK takes for its own",
			&jsonrpc.Error{Code: -32003, Message: long},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := oneTool(func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, tt.err
			})
			m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{DefaultMaxBytes: limit}}
			h := startWith(t, s, mcpproxy.Options{Manifest: m}, nil)
			_, err := h.client.CallTool(context.Background(), &mcp.CallToolParams{Name: "t"})
			if err == nil {
				t.Fatal("CallTool succeeded")
			}
			if tt.want == nil {
				if n := len(err.Error()); n > limit+100 { // the SDK adds a prefix of its own
					t.Errorf("error text holds %d bytes, over %d", n, limit)
				}
				return
			}
			var got *jsonrpc.Error
			if !errors.As(err, &got) {
				t.Fatalf("CallTool = %v, want a JSON-RPC error", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("error at the client (-want +got):\n%s", diff)
			}
			if n := len(got.Message) + len(got.Data); n > limit {
				t.Errorf("message and data hold %d bytes, over %d", n, limit)
			}
		})
	}
}
