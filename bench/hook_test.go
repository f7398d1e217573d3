package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// hookBinaries builds, once, the processes BenchmarkHookProcess starts:
// toolcap as "go install" builds it; toolcap built for the hook alone, as
// docs/adapters/claude-code.md documents it (-tags toolcap_nomcp, static,
// stripped); and readall, a Go program that only reads its input.
var hookBinaries = sync.OnceValues(func() (dir string, err error) {
	dir, err = os.MkdirTemp("", "toolcap-bench-hook")
	if err != nil {
		return "", err
	}
	for _, build := range []struct {
		out, pkg string
		env      []string
		flags    []string
	}{
		{"toolcap", "../cmd/toolcap", nil, nil},
		{"toolcap-nomcp", "../cmd/toolcap", []string{"CGO_ENABLED=0"}, []string{"-tags", "toolcap_nomcp", "-ldflags", "-s -w"}},
		{"readall", "./internal/readall", nil, nil},
	} {
		args := append([]string{"build", "-o", filepath.Join(dir, build.out)}, build.flags...)
		cmd := exec.Command("go", append(args, build.pkg)...)
		cmd.Env = append(append(os.Environ(), "GOFLAGS="), build.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", &buildError{build.pkg, string(out), err}
		}
	}
	return dir, nil
})

// hookPayload is a PostToolUse payload as Claude Code sends it.
func hookPayload(b *testing.B, tool string, response any) []byte {
	p, err := json.Marshal(map[string]any{
		"session_id":      "0b6c6a4e-5a43-4f3e-9d1c-1f2a3b4c5d6e",
		"transcript_path": "/home/dev/.claude/projects/-home-dev-src/0b6c6a4e-5a43-4f3e-9d1c-1f2a3b4c5d6e.jsonl",
		"cwd":             "/home/dev/src",
		"permission_mode": "default",
		"hook_event_name": "PostToolUse",
		"tool_name":       tool,
		"tool_input":      map[string]any{"command": "make test"},
		"tool_response":   response,
		"tool_use_id":     "toolu_01",
	})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkHookProcess times "toolcap hook claude-code" as Claude Code
// runs it, once per tool call: a process started, fed the payload on its
// standard input, waited for. "readall" is the floor: a Go program that
// only reads the payload. "toolcap" is the binary "go install" builds,
// with the MCP relay linked in (its packages' start-up runs too);
// "toolcap-nomcp" the hook-only build. Bash-small fits the
// default limit (the common call: its cost is start-up); the 1 MiB outputs
// are cut to 16 KiB, the whole output kept for Read in a cache directory
// of the benchmark's. Beside ns/op it reports the 95th percentile.
func BenchmarkHookProcess(b *testing.B) {
	dir, err := hookBinaries()
	if err != nil {
		b.Fatal(err)
	}
	const mib = 1 << 20
	lines := strings.Repeat("0123456789abcde\n", mib/16)
	for _, tc := range []struct {
		name string
		tool string
		resp any
	}{
		{"Bash-small", "Bash", map[string]any{"stdout": "ok\n", "stderr": "", "interrupted": false, "isImage": false}},
		{"Bash-1MiB", "Bash", map[string]any{"stdout": lines, "stderr": "", "interrupted": false, "isImage": false}},
		{"mcp-1MiB", "mcp__fs__read", []any{map[string]any{"type": "text", "text": lines}}},
	} {
		payload := hookPayload(b, tc.tool, tc.resp)
		for _, impl := range []struct {
			name string
			args []string
		}{
			{"readall", nil},
			{"toolcap", []string{"hook", "claude-code"}},
			{"toolcap-nomcp", []string{"hook", "claude-code"}},
		} {
			b.Run("payload="+tc.name+"/impl="+impl.name, func(b *testing.B) {
				env := []string{"XDG_CACHE_HOME=" + b.TempDir(), "PATH=" + os.Getenv("PATH")}
				bin := filepath.Join(dir, impl.name)
				cut := impl.name != "readall" && tc.name != "Bash-small"
				var times []time.Duration
				b.ReportAllocs()
				for b.Loop() {
					cmd := exec.Command(bin, impl.args...)
					cmd.Env = env
					cmd.Stdin = bytes.NewReader(payload)
					var stdout, stderr bytes.Buffer
					cmd.Stdout, cmd.Stderr = &stdout, &stderr
					start := time.Now()
					err := cmd.Run()
					times = append(times, time.Since(start))
					if err != nil {
						b.Fatalf("%s: %v\n%s", impl.name, err, stderr.String())
					}
					if cut && !bytes.Contains(stdout.Bytes(), []byte("truncated")) {
						b.Fatalf("%s did not cut the %s output: %.300s", impl.name, tc.name, stdout.String())
					}
				}
				slices.Sort(times)
				p95 := times[min(len(times)-1, len(times)*95/100)]
				b.ReportMetric(float64(p95.Microseconds())/1000, "p95-ms")
			})
		}
	}
}
