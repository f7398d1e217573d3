//go:build !toolcap_nomcp

package cli

import (
	"bytes"
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/logtest"
)

// jsonLines parses every line of log as a JSON object with an RFC 3339
// @timestamp, an @level and an @message, failing the test on any other
// line, and returns the lines' messages.
func jsonLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	if strings.Contains("\n"+log, "\n\n") {
		t.Errorf("the log has an empty line, which is not JSON:\n%s", log)
	}
	lines := logtest.Lines(t, bytes.NewBufferString(log))
	for _, m := range lines {
		ts, _ := m["@timestamp"].(string)
		if _, err := time.Parse(time.RFC3339, ts); err != nil {
			t.Errorf("log line %v: @timestamp %q is not RFC 3339", m, ts)
		}
		for _, k := range []string{"@level", "@message"} {
			if s, _ := m[k].(string); s == "" {
				t.Errorf("log line %v has no %s", m, k)
			}
		}
	}
	return lines
}

// messages returns each line's level and message.
func messages(lines []map[string]any) []string {
	var out []string
	for _, m := range lines {
		out = append(out, m["@level"].(string)+" "+m["@message"].(string))
	}
	return out
}

// TestLogFormats: every command's log has --log-format text (the default)
// or json and --log-level, every line an RFC 3339 time, and one line per
// cut; a bad value is a usage error that names the flag and the value.
func TestLogFormats(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 2000) // 34,000 bytes
	run := func(stdin string, args ...string) result {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr, nil)
		return result{code, stdout.String(), stderr.String()}
	}

	t.Run("json", func(t *testing.T) {
		got := run(big, "cap", "--tool", "Read", "-v", "--log-format", "json")
		if got.code != exitOK {
			t.Fatalf("exit %d: %s", got.code, got.stderr)
		}
		want := []string{"info limit in force", "info tool result truncated"}
		if diff := cmp.Diff(want, messages(jsonLines(t, got.stderr))); diff != "" {
			t.Errorf("cap -v --log-format json (-want +got):\n%s", diff)
		}
	})
	t.Run("text", func(t *testing.T) {
		got := run(big, "cap", "--tool", "Read", "-v")
		lines := strings.Split(strings.TrimSuffix(got.stderr, "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("cap -v logged %d lines, want 2:\n%s", len(lines), got.stderr)
		}
		for _, line := range lines {
			ts, _, _ := strings.Cut(line, " ")
			if _, err := time.Parse(time.RFC3339, ts); err != nil || !logTime.MatchString(line) {
				t.Errorf("line %q does not begin with an RFC 3339 time", line)
			}
		}
	})
	for _, tt := range []struct {
		name string
		args []string
		want int // lines logged
	}{
		{"default: warnings", []string{"cap", "--tool", "Read"}, 0},
		{"--log-level info, no -v", []string{"cap", "--tool", "Read", "--log-level", "info"}, 2},
		{"--log-level over -v", []string{"cap", "--tool", "Read", "-v", "--log-level", "warn"}, 0},
		{"--log-level off", []string{"cap", "--tool", "Read", "-v", "-v", "--log-level", "off"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := run(big, tt.args...)
			if n := strings.Count(got.stderr, "\n"); got.code != exitOK || n != tt.want {
				t.Errorf("exit %d, %d lines logged; want 0 and %d:\n%s", got.code, n, tt.want, got.stderr)
			}
		})
	}
	for _, cmd := range []string{"demo", "cap", "read", "config", "mcp", "hook", "version"} {
		for _, tt := range []struct{ flag, value, want string }{
			{"--log-format", "yaml", `toolcap ` + cmd + `: invalid value "yaml" for flag -log-format: "yaml": want text or json`},
			{"--log-level", "loud", `toolcap ` + cmd + `: invalid value "loud" for flag -log-level: "loud": want trace, debug, info, warn, error or off`},
		} {
			t.Run(cmd+" "+tt.flag, func(t *testing.T) {
				got := run("", cmd, tt.flag, tt.value)
				if got.code != exitUsage || !strings.HasPrefix(got.stderr, tt.want+"\n") {
					t.Errorf("toolcap %s %s %s: exit %d, stderr %q; want %d and %q", cmd, tt.flag, tt.value, got.code, got.stderr, exitUsage, tt.want)
				}
			})
		}
	}
}

// TestMCPListenLogsJSON: toolcap mcp --listen --log-format json, as a team
// runs it, writes nothing on stderr but JSON lines, each with an RFC 3339
// timestamp, a level and a message: where it serves, each cut (one line
// for one cut), and its stop on SIGTERM. The server's own stderr is not
// toolcap's, and the fault server writes none.
func TestMCPListenLogsJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("builds toolcap")
	}
	bin, server := buildBinary(t), buildFaultServer(t)
	cmd, stderr, url := startProxy(t, bin, "--listen", "127.0.0.1:0", "--log-format", "json", "-v", "--", server)
	c := &httpMCPClient{t: t, url: url}
	c.initialize()
	if text := c.callText("big"); len(text) > 16384 || !strings.Contains(text, "[truncated: ") {
		t.Errorf("big: %d bytes reached the client, want at most 16384, cut", len(text))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	lines := jsonLines(t, stderr.String())
	cuts := 0
	for _, m := range lines {
		if m["@message"] == "tool result truncated" {
			cuts++
			if m["tool"] != "big" || m["@level"] != "info" {
				t.Errorf("the cut's line %v: want tool big at info", m)
			}
		}
	}
	if cuts != 1 {
		t.Errorf("%d log lines for one cut, want 1:\n%s", cuts, stderr)
	}
	want := []string{"info keeping the rest of cut results", "info serving " + url, "info tool result truncated",
		"info shut down: every session ended and its server stopped"}
	if diff := cmp.Diff(want, messages(lines)); diff != "" {
		t.Errorf("the log's lines (-want +got):\n%s", diff)
	}
}
