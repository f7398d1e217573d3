package mcpproxy_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// spanRecorder is an Options.Trace that records each span as it starts
// and as it ends, and gives each request its own span id in the trace it
// came with.
type spanRecorder struct {
	mu      sync.Mutex
	started []mcpproxy.Span
	ended   []mcpproxy.Span
	n       int
}

type recorderKey struct{}

func (r *spanRecorder) trace(ctx context.Context, s *mcpproxy.Span) (context.Context, func()) {
	r.mu.Lock()
	r.started = append(r.started, *s)
	r.n++
	n := r.n
	r.mu.Unlock()
	if len(s.TraceParent) == 55 {
		// The span's own id in the client's trace, as a tracer does.
		s.TraceParent = s.TraceParent[:36] + strings.Repeat(string(rune('0'+n)), 16) + "-01"
	}
	return context.WithValue(ctx, recorderKey{}, s.Method+" "+s.Tool), func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.ended = append(r.ended, *s)
	}
}

// endedFor returns the ended span of method and tool, waiting for it.
func (r *spanRecorder) endedFor(t *testing.T, method, tool string) mcpproxy.Span {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		for _, s := range r.ended {
			if s.Method == method && s.Tool == tool {
				r.mu.Unlock()
				return s
			}
		}
		r.mu.Unlock()
	}
	t.Fatalf("no span of %s %s ended", method, tool)
	return mcpproxy.Span{}
}

const clientParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestTraceSpans: with Options.Trace, each request of the client's is a
// span that starts with what the proxy knows of it and its _meta's trace
// context, the server gets the trace context the hook gave, the chain's
// middleware get the hook's context, and the span ends with the figures
// of the cut, of a result that fitted and of a read of the rest, and an
// error's code; content never.
func TestTraceSpans(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 2000) // 34,000 bytes
	var (
		mu       sync.Mutex
		received = map[string]any{} // tool: the traceparent its call came with
	)
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	for name, text := range map[string]string{"big": big, "small": "hello"} {
		server.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				mu.Lock()
				received[name] = req.Params.Meta["traceparent"]
				mu.Unlock()
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
			})
	}
	var rec spanRecorder
	var chainSaw []any
	seen := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			mu.Lock()
			chainSaw = append(chainSaw, ctx.Value(recorderKey{}))
			mu.Unlock()
			return next(ctx, call)
		}
	}
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"big": {MaxBytes: 4096}}}}
	cs, _ := relay(t, server, mcpproxy.Options{
		Policies:   policytest.Of(t, m),
		Rest:       rest.NewMemory(rest.Config{}),
		Middleware: []chain.Middleware{seen},
		Trace:      rec.trace,
	}, nil)
	ctx := context.Background()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "big", Meta: mcp.Meta{"traceparent": clientParent, "tracestate": "a=1"}})
	if err != nil {
		t.Fatal(err)
	}
	var fig struct {
		Ref    string `json:"ref"`
		Resume int    `json:"resume"`
	}
	raw, _ := json.Marshal(res.Meta["toolcap/truncation"])
	if err := json.Unmarshal(raw, &fig); err != nil || fig.Ref == "" {
		t.Fatalf("no ref in the cut's _meta: %s", raw)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "small"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "toolcap_read", Arguments: map[string]any{"ref": fig.Ref, "offset": fig.Resume},
		Meta: mcp.Meta{"traceparent": clientParent}}); err != nil {
		t.Fatal(err)
	}

	gotBig := rec.endedFor(t, "tools/call", "big")
	wantBig := mcpproxy.Span{
		Method: "tools/call", Tool: "big", Listed: true, RequestID: "3", ProtocolVersion: gotBig.ProtocolVersion,
		TraceParent: clientParent[:36] + "3333333333333333-01", TraceState: "a=1",
		Content: &chain.Truncation{Limit: 4096, OriginalBytes: len(big), KeptBytes: gotBig.Content.KeptBytes,
			DroppedBytes: len(big) - gotBig.Content.KeptBytes, Ref: fig.Ref, Resume: fig.Resume},
	}
	if diff := cmp.Diff(wantBig, gotBig); diff != "" {
		t.Errorf("the cut call's span (-want +got):\n%s", diff)
	}
	if gotBig.ProtocolVersion == "" || gotBig.Content.KeptBytes <= 0 || gotBig.Content.KeptBytes >= 4096 {
		t.Errorf("span: protocol version %q, kept %d bytes", gotBig.ProtocolVersion, gotBig.Content.KeptBytes)
	}
	wantSmall := mcpproxy.Span{Method: "tools/call", Tool: "small", Listed: true, RequestID: "4", ProtocolVersion: gotBig.ProtocolVersion,
		Content: &chain.Truncation{Limit: manifest.DefaultMaxBytes, OriginalBytes: 5, KeptBytes: 5}}
	if diff := cmp.Diff(wantSmall, rec.endedFor(t, "tools/call", "small")); diff != "" {
		t.Errorf("the fitting call's span (-want +got):\n%s", diff)
	}
	gotRead := rec.endedFor(t, "tools/call", "toolcap_read")
	if !gotRead.Read || !gotRead.Listed || gotRead.ErrorType != "" || gotRead.Content == nil || gotRead.Content.OriginalBytes == 0 ||
		gotRead.TraceParent != clientParent[:36]+"5555555555555555-01" {
		t.Errorf("the read's span = %+v, want Read, Listed, a page, and its own trace context", gotRead)
	}
	rec.endedFor(t, "tools/list", "")

	mu.Lock()
	defer mu.Unlock()
	wantReceived := map[string]any{"big": clientParent[:36] + "3333333333333333-01", "small": nil}
	if diff := cmp.Diff(wantReceived, received); diff != "" {
		t.Errorf("the traceparent the server got (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"tools/call big", "tools/call small", "tools/call toolcap_read"}, chainSaw); diff != "" {
		t.Errorf("the hook's context in the chain (-want +got):\n%s", diff)
	}
}

// TestTraceErrors: a span ends with why the request got no result: the
// JSON-RPC error's code, the call timeout, the server's exit.
func TestTraceErrors(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	release := make(chan struct{})
	server.AddTool(&mcp.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{}, nil
		})
	server.AddTool(&mcp.Tool{Name: "fails", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no"}}}, nil
		})
	defer close(release)
	var rec spanRecorder
	cs, _ := relay(t, server, mcpproxy.Options{Trace: rec.trace, CallTimeout: 200 * time.Millisecond}, nil)
	ctx := context.Background()
	_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
	_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fails"})
	_, _ = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "none"})

	got := map[string]string{}
	for _, key := range [][2]string{{"tools/call", "slow"}, {"tools/call", "fails"}, {"prompts/get", ""}} {
		got[key[0]+" "+key[1]] = rec.endedFor(t, key[0], key[1]).ErrorType
	}
	want := map[string]string{"tools/call slow": "timeout", "tools/call fails": "tool_error", "prompts/get ": "-32602"}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("error types (-want +got):\n%s", diff)
	}
}
