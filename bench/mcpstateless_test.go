package bench

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCPStateless times one small tools/call (64 bytes) of MCP's
// stateless revision (2026-07-28: no initialize, no session; each request
// names its version in _meta and the MCP-Protocol-Version header) from a
// go-sdk client, which negotiates it by default with server/discover:
// "direct-http", the server's own stateless streamable HTTP handler (the
// SDK's, internal/mcpserver -http -stateless); "listen-url", through
// "toolcap mcp --listen --url" in front of that handler; "direct-stdio",
// the client running the server as a command; "listen", through "toolcap
// mcp --listen" in front of the server over stdio, where the request is
// carried on one of the proxy's lanes (a server process shared by every
// stateless client). The floors of the two proxies are internal/copyhttp's:
// "copy-url", a reverse proxy (net/http/httputil) in front of the SDK's
// handler, and "copy-http", a POST's body written to the server over stdio
// and its response answered as JSON. Each sub-benchmark fails unless the
// session negotiated 2026-07-28, so that none measures the 2025 path by
// mistake.
func BenchmarkMCPStateless(b *testing.B) {
	dir, err := mcpBinaries()
	if err != nil {
		b.Fatal(err)
	}
	server := filepath.Join(dir, "mcpserver")
	toolcap := filepath.Join(dir, "toolcap")
	copyhttp, err := copyHTTP()
	if err != nil {
		b.Fatal(err)
	}
	impls := []struct {
		name      string
		transport func(b *testing.B) mcp.Transport
	}{
		{"direct-http", func(b *testing.B) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: startServing(b, exec.Command(server, "-http", "127.0.0.1:0", "-stateless"))}
		}},
		{"copy-url", func(b *testing.B) mcp.Transport {
			up := startServing(b, exec.Command(server, "-http", "127.0.0.1:0", "-stateless"))
			url := startServing(b, exec.Command(copyhttp, "-http", "127.0.0.1:0", "-url", up))
			return &mcp.StreamableClientTransport{Endpoint: url}
		}},
		{"listen-url", func(b *testing.B) mcp.Transport {
			up := startServing(b, exec.Command(server, "-http", "127.0.0.1:0", "-stateless"))
			url := startServing(b, exec.Command(toolcap, "mcp", "--listen", "127.0.0.1:0", "--url", up))
			return &mcp.StreamableClientTransport{Endpoint: url}
		}},
		{"direct-stdio", func(*testing.B) mcp.Transport {
			return &mcp.CommandTransport{Command: exec.Command(server)}
		}},
		{"copy-http", func(b *testing.B) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: startServing(b, exec.Command(copyhttp, "-http", "127.0.0.1:0", server))}
		}},
		{"listen", func(b *testing.B) mcp.Transport {
			url := startServing(b, exec.Command(toolcap, "mcp", "--listen", "127.0.0.1:0", "--", server))
			return &mcp.StreamableClientTransport{Endpoint: url}
		}},
	}
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			ctx := context.Background()
			client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := client.Connect(ctx, impl.transport(b), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				b.Fatalf("the session negotiated %q, not the stateless 2026-07-28", v)
			}
			params := &mcp.CallToolParams{Name: "text", Arguments: map[string]any{"bytes": 64}}
			if _, err := cs.CallTool(ctx, params); err != nil { // warm up
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
