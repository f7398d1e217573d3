package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpBinaries builds toolcap and the benchmark's MCP server once.
var mcpBinaries = sync.OnceValues(func() (dir string, err error) {
	dir, err = os.MkdirTemp("", "toolcap-bench-mcp")
	if err != nil {
		return "", err
	}
	for _, pkg := range []string{"../cmd/toolcap", "./internal/mcpserver", "./internal/passthru"} {
		cmd := exec.Command("go", "build", "-o", dir, pkg)
		cmd.Env = append(os.Environ(), "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", &buildError{pkg, string(out), err}
		}
	}
	return dir, nil
})

type buildError struct {
	pkg, out string
	err      error
}

func (e *buildError) Error() string { return "building " + e.pkg + ": " + e.err.Error() + "\n" + e.out }

// BenchmarkMCPRoundTrip times one tools/call from a go-sdk client to a
// go-sdk server over stdio: direct, and through "toolcap mcp" (a process
// between them, which reads, checks and forwards every message). "relay"
// gives the tool a limit above the result (64 MiB), so that the proxy
// forwards it untouched: the cost of the relay alone; at 10 MB, past the
// proxy's read buffer (4 MiB), the result goes out as the bytes it came in
// from the proxy's copy of it. "capped" is the default limit, which cuts
// the 1 MB and 10 MB results to 16 KiB: what a user of the proxy gets.
// "copy" puts a process that only copies bytes between them: the cost of
// the extra hop itself, which no proxy process can avoid.
func BenchmarkMCPRoundTrip(b *testing.B) {
	dir, err := mcpBinaries()
	if err != nil {
		b.Fatal(err)
	}
	server := filepath.Join(dir, "mcpserver")
	toolcap := filepath.Join(dir, "toolcap")
	passthru := filepath.Join(dir, "passthru")
	manifest := filepath.Join(b.TempDir(), "toolcap.toml")
	if err := os.WriteFile(manifest, []byte("[worker.tool_output.per_tool]\ntext = 67108864\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	// The relay with redaction off: what the command's redaction (gitleaks'
	// rules) costs the relay.
	unredacted := filepath.Join(b.TempDir(), "unredacted.toml")
	if err := os.WriteFile(unredacted, []byte("[worker.tool_output]\nredact = false\n[worker.tool_output.per_tool]\ntext = 67108864\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	impls := []struct {
		name string
		cmd  func() *exec.Cmd
	}{
		{"direct", func() *exec.Cmd { return exec.Command(server) }},
		{"copy", func() *exec.Cmd { return exec.Command(passthru, server) }},
		{"relay", func() *exec.Cmd { return exec.Command(toolcap, "mcp", "--manifest", manifest, "--", server) }},
		{"relay-unredacted", func() *exec.Cmd { return exec.Command(toolcap, "mcp", "--manifest", unredacted, "--", server) }},
		{"capped", func() *exec.Cmd { return exec.Command(toolcap, "mcp", "--", server) }},
	}
	for _, size := range []struct {
		name  string
		bytes int
	}{{"small", 64}, {"1MB", 1 << 20}, {"10MB", 10 << 20}} {
		for _, impl := range impls {
			if impl.name == "capped" && size.bytes <= 16384 {
				continue // the same as relay
			}
			b.Run("size="+size.name+"/impl="+impl.name, func(b *testing.B) {
				ctx := context.Background()
				client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
				cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: impl.cmd()}, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				params := &mcp.CallToolParams{Name: "text", Arguments: map[string]any{"bytes": size.bytes}}
				if _, err := cs.CallTool(ctx, params); err != nil { // warm up both processes
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
}
