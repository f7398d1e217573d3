package mcpproxy_test

import (
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// pipeConn is one end of two pipes.
type pipeConn struct {
	r *io.PipeReader
	w *io.PipeWriter
}

func (c pipeConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c pipeConn) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c pipeConn) Close() error {
	c.w.Close()
	c.r.Close()
	return nil
}

// pipePair returns two connected ends: what one writes the other reads.
func pipePair() (pipeConn, pipeConn) {
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	return pipeConn{r: ar, w: aw}, pipeConn{r: br, w: bw}
}

// sdkEnd adapts a pipe end to the SDK's IOTransport.
func sdkEnd(c pipeConn) *mcp.IOTransport {
	return &mcp.IOTransport{Reader: c.r, Writer: c.w}
}

// relay serves server through a Proxy with opts and returns a client
// session connected to the proxy, and the proxy.
func relay(t *testing.T, server *mcp.Server, opts mcpproxy.Options, copts *mcp.ClientOptions) (*mcp.ClientSession, *mcpproxy.Proxy) {
	t.Helper()
	ctx := context.Background()
	p, err := mcpproxy.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	serverEnd, proxyUp := pipePair()
	clientEnd, proxyDown := pipePair()
	ss, err := server.Connect(ctx, sdkEnd(serverEnd), nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, mcpproxy.StreamConn(proxyDown), mcpproxy.StreamConn(proxyUp)) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts)
	cs, err := client.Connect(ctx, sdkEnd(clientEnd), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve = %v, want nil after the client closed", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return after the client closed")
		}
		ss.Close()
	})
	return cs, p
}

var markerRE = regexp.MustCompile(`\n\[truncated: (\d+) bytes dropped, refine your query\]$`)

func textTool(name, text string) (*mcp.Tool, mcp.ToolHandler) {
	return &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}
}

func TestRelayCapsTextResults(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 100_000) // 1.7 MB
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	server.AddTool(textTool("big", big))
	server.AddTool(textTool("small", "hello"))
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"small": {MaxBytes: 4096}}}}
	cs, _ := relay(t, server, mcpproxy.Options{Policies: policytest.Of(t, m)}, nil)
	ctx := context.Background()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if len(text) != manifest.DefaultMaxBytes {
		t.Errorf("capped text is %d bytes, want %d", len(text), manifest.DefaultMaxBytes)
	}
	mm := markerRE.FindStringSubmatch(text)
	if mm == nil {
		t.Fatalf("no marker at the end of %q", text[len(text)-80:])
	}
	n, _ := strconv.Atoi(mm[1])
	kept := len(text) - len(mm[0])
	if n != len(big)-kept || !strings.HasPrefix(big, text[:kept]) {
		t.Errorf("marker says %d dropped, kept %d of %d", n, kept, len(big))
	}
	var fig map[string]any
	raw, _ := json.Marshal(res.Meta["toolcap/truncation"])
	_ = json.Unmarshal(raw, &fig)
	want := map[string]any{"unit": "bytes", "limit": 16384.0, "original": float64(len(big)), "kept": float64(kept), "dropped": float64(n)}
	if diff := cmp.Diff(want, fig); diff != "" {
		t.Errorf("_meta figures (-want +got):\n%s", diff)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "small"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "hello" || res.Meta["toolcap/truncation"] != nil {
		t.Errorf("small = %q, _meta %v; want it untouched", got, res.Meta)
	}
}
