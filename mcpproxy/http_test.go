//lint:file-ignore SA1019 roots, deprecated by MCP 2026-07-28, are relayed and tested while clients still use them

package mcpproxy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// testServer is a go-sdk server with a large tool and one that asks the
// client for its roots.
func testServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	s.AddTool(textTool("big", bigText(1<<20)))
	s.AddTool(&mcp.Tool{Name: "roots", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			var names []string
			for _, root := range r.Roots {
				names = append(names, root.Name)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(names, ",")}}}, nil
		})
	return s
}

// checkSession calls both tools through cs.
func checkSession(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if len(text) > manifest.DefaultMaxBytes || !markerRE.MatchString(text) || res.Meta["toolcap/truncation"] == nil {
		t.Errorf("big: %d bytes, ending %q, _meta %v", len(text), text[max(0, len(text)-60):], res.Meta)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "roots"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("home,work", res.Content[0].(*mcp.TextContent).Text); diff != "" {
		t.Errorf("roots (-want +got):\n%s", diff)
	}
}

func newRootsClient() *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	c.AddRoots(&mcp.Root{URI: "file:///home", Name: "home"}, &mcp.Root{URI: "file:///work", Name: "work"})
	return c
}

func TestRelayHTTPUpstream(t *testing.T) {
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testServer() }, nil))
	defer hs.Close()
	p, err := mcpproxy.New(mcpproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	up, err := mcpproxy.DialHTTP(ctx, hs.URL, http.Header{"X-Test": {"1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	clientEnd, proxyDown := pipePair()
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, mcpproxy.StreamConn(proxyDown), up) }()
	cs, err := newRootsClient().Connect(ctx, sdkEnd(clientEnd), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSession(t, cs)
	cs.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("Serve did not return")
	}
}

func TestRelayHTTPDownstream(t *testing.T) {
	p, err := mcpproxy.New(mcpproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dial := func(ctx context.Context) (mcpproxy.Conn, error) {
		serverEnd, proxyUp := pipePair()
		if _, err := testServer().Connect(ctx, sdkEnd(serverEnd), nil); err != nil {
			return nil, err
		}
		return mcpproxy.StreamConn(proxyUp), nil
	}
	// The server asks its client for roots while it serves a call, which
	// only a 2025 session can (2026-07-28 asks through input_required
	// results): no stateless requests, so the go-sdk client, refused
	// 2026-07-28 (-32022), falls back to initialize.
	hs := httptest.NewServer(p.HTTPHandler(mcpproxy.HTTPOptions{Token: "secret", Dial: dial, StatelessServers: -1}))
	defer hs.Close()
	ctx := context.Background()

	// Without the token: refused.
	if _, err := newRootsClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil); err == nil {
		t.Error("a client without the token connected")
	}
	hc := &http.Client{Transport: bearer{"secret"}}
	cs, err := newRootsClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSession(t, cs)
	cs.Close()
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
