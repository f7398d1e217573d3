package bench

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// servingURL is the line toolcap mcp --listen and mcpserver -http write
// once they listen.
var servingURL = regexp.MustCompile(`serving (http://\S+/mcp)`)

// startServing starts cmd, which serves MCP over HTTP, and returns the URL
// it names on its standard error. The process is killed when b ends.
func startServing(b *testing.B, cmd *exec.Cmd) string {
	b.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		var seen strings.Builder
		buf := make([]byte, 4096)
		sent := false
		for {
			n, err := stderr.Read(buf)
			if !sent {
				seen.Write(buf[:n])
				if m := servingURL.FindStringSubmatch(seen.String()); m != nil {
					found <- m[1]
					sent = true
				}
			}
			if err != nil {
				if !sent {
					close(found)
				}
				return
			}
		}
	}()
	select {
	case url, ok := <-found:
		if !ok {
			b.Fatalf("%s exited without serving", cmd.Path)
		}
		return url
	case <-time.After(30 * time.Second):
		b.Fatalf("%s did not say where it serves within 30s", cmd.Path)
	}
	return ""
}

// copyHTTP builds the benchmark's floor of an HTTP front end
// (internal/copyhttp) once, beside the binaries of mcpBinaries.
var copyHTTP = sync.OnceValues(func() (string, error) {
	dir, err := mcpBinaries()
	if err != nil {
		return "", err
	}
	const pkg = "./internal/copyhttp"
	cmd := exec.Command("go", "build", "-o", dir, pkg)
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{pkg, string(out), err}
	}
	return filepath.Join(dir, "copyhttp"), nil
})

// BenchmarkMCPListen times one small tools/call (64 bytes) from a go-sdk
// client over streamable HTTP, against the same call over stdio:
// "direct-stdio", the client running the server as a command;
// "direct-http", the server's own HTTP handler (the SDK's); "listen",
// through "toolcap mcp --listen" in front of the server run over stdio
// (what a team runs); "listen-url", through "toolcap mcp --listen --url"
// in front of the server's HTTP handler; "copy-http", through the least an
// HTTP front end to the server over stdio does (internal/copyhttp: a POST's
// body written to the server, its response answered as application/json,
// nothing checked): what HTTP itself costs, the floor of "listen".
func BenchmarkMCPListen(b *testing.B) {
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
		{"direct-stdio", func(*testing.B) mcp.Transport {
			return &mcp.CommandTransport{Command: exec.Command(server)}
		}},
		{"direct-http", func(b *testing.B) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: startServing(b, exec.Command(server, "-http", "127.0.0.1:0"))}
		}},
		{"copy-http", func(b *testing.B) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: startServing(b, exec.Command(copyhttp, "-http", "127.0.0.1:0", server))}
		}},
		{"listen", func(b *testing.B) mcp.Transport {
			url := startServing(b, exec.Command(toolcap, "mcp", "--listen", "127.0.0.1:0", "--", server))
			return &mcp.StreamableClientTransport{Endpoint: url}
		}},
		{"listen-url", func(b *testing.B) mcp.Transport {
			up := startServing(b, exec.Command(server, "-http", "127.0.0.1:0"))
			url := startServing(b, exec.Command(toolcap, "mcp", "--listen", "127.0.0.1:0", "--url", up))
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

// BenchmarkMCPSessionStart times a session's start over stdio as a client
// sees it: the server's process started, initialize answered, the session
// closed (and its process waited for). "direct" runs the server; "copy" a
// process that only copies bytes in front of it (the floor of any process
// in between); "relay" toolcap mcp in front of it.
func BenchmarkMCPSessionStart(b *testing.B) {
	dir, err := mcpBinaries()
	if err != nil {
		b.Fatal(err)
	}
	server := filepath.Join(dir, "mcpserver")
	toolcap := filepath.Join(dir, "toolcap")
	passthru := filepath.Join(dir, "passthru")
	for _, impl := range []struct {
		name string
		cmd  func() *exec.Cmd
	}{
		{"direct", func() *exec.Cmd { return exec.Command(server) }},
		{"copy", func() *exec.Cmd { return exec.Command(passthru, server) }},
		{"relay", func() *exec.Cmd { return exec.Command(toolcap, "mcp", "--", server) }},
	} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			ctx := context.Background()
			client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			b.ReportAllocs()
			for b.Loop() {
				cmd := impl.cmd()
				cmd.Stderr = io.Discard
				cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := cs.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
