package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// goBuild builds ./ (package main) to dir/name with the given go build
// flags and environment, and returns the binary's path.
func goBuild(t *testing.T, dir, name string, env []string, flags ...string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", append(append([]string{"build", "-o", out}, flags...), ".")...)
	cmd.Env = append(append(os.Environ(), "GOFLAGS="), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", flags, err, b)
	}
	return out
}

// slackToken is a Slack bot token of the shape gitleaks' rule tests make
// (no live credential), and gitleaksOnly a tool's output holding it, as
// a JSON string's contents: the built-in rules find no secret in it.
const (
	slackToken   = "xoxb-781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD"
	gitleaksOnly = `deploy: ok\nSLACK_BOT_TOKEN=` + slackToken + `\n`
)

// keptFile is the random part of a kept file's name in a marker.
var keptFile = regexp.MustCompile(`/[a-z0-9]+\.txt`)

// TestHookOnlyBuild: toolcap built with -tags toolcap_nomcp, as
// docs/adapters/claude-code.md documents it, links none of the relay's
// packages, nor the exact tokenizers or the Redis client, answers the
// hook byte for byte as the full build does, and
// says what it lacks when asked for mcp.
func TestHookOnlyBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds toolcap twice")
	}
	deps, err := exec.Command("go", "list", "-tags", "toolcap_nomcp", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range []string{"net/http", "crypto/tls", "github.com/google/jsonschema-go/jsonschema", "github.com/toolcap/toolcap/mcpproxy",
		"github.com/toolcap/toolcap/tiktoken", "github.com/tiktoken-go/tokenizer", "github.com/redis/go-redis/v9"} {
		for _, dep := range strings.Fields(string(deps)) {
			if dep == pkg {
				t.Errorf("the hook-only build links %s", pkg)
			}
		}
	}

	dir := t.TempDir()
	full := goBuild(t, dir, "toolcap", nil)
	slim := goBuild(t, dir, "toolcap-nomcp", []string{"CGO_ENABLED=0"}, "-tags", "toolcap_nomcp", "-ldflags", "-s -w")

	big := strings.Repeat("0123456789abcdef\n", 4000) // 68,000 bytes: cut to 16 KiB
	for _, tt := range []struct {
		name    string
		payload string
	}{
		{"fits", `{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"a\nb\n","stderr":"","interrupted":false,"isImage":false}}`},
		{"cut", `{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"cat f"},"tool_response":{"stdout":"` + strings.ReplaceAll(big, "\n", `\n`) + `","stderr":"","interrupted":false,"isImage":false}}`},
		// Secrets that gitleaks' rules find and the built-in ones do not:
		// both builds redact with gitleaks'.
		{"secrets", `{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"cat .env"},"tool_response":{"stdout":"` + gitleaksOnly + `","stderr":"","interrupted":false,"isImage":false}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := func(bin string) string {
				cmd := exec.Command(bin, "hook", "claude-code")
				// Each build keeps the rest in a cache of its own, in a
				// file of a random name: both are put as names.
				cache := t.TempDir()
				cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
				cmd.Stdin = strings.NewReader(tt.payload)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("%s hook claude-code: %v\n%s", filepath.Base(bin), err, stderr.String())
				}
				got := strings.ReplaceAll(stdout.String(), cache, "$XDG_CACHE_HOME")
				return keptFile.ReplaceAllString(got, "/$FILE.txt")
			}
			want, got := run(full), run(slim)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the hook-only build's answer differs from the full build's (-want +got):\n%s", diff)
			}
			if tt.name == "cut" && !strings.Contains(got, "truncated") {
				t.Errorf("the hook did not cut %d bytes: %.300s", len(big), got)
			}
			if tt.name == "secrets" && (strings.Contains(got, slackToken) || !strings.Contains(got, "[redacted: slack-bot-token]")) {
				t.Errorf("the hook did not redact with gitleaks' rules: %s", got)
			}
		})
	}

	var stderr bytes.Buffer
	cmd := exec.Command(slim, "mcp", "--", "server")
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("toolcap-nomcp mcp: %v, want exit status 2", err)
	}
	const want = "toolcap mcp: this toolcap was built with -tags toolcap_nomcp, without the MCP relay; install the full build: go install github.com/toolcap/toolcap/cmd/toolcap@latest\n"
	if diff := cmp.Diff(want, stderr.String()); diff != "" {
		t.Errorf("toolcap-nomcp mcp's message (-want +got):\n%s", diff)
	}
}
