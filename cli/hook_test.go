package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/claudecode"
	"github.com/toolcap/toolcap/internal/shape"
)

const oneMiB = 1 << 20

// keepRestOff turns keeping the rest off, for the tests that compare the
// hook's cut with the plain cut of the library or of toolcap cap.
const keepRestOff = "TOOLCAP_WORKER__TOOL_OUTPUT__KEEP_REST=false"

// hookCase is one PostToolUse payload of 1 MiB or so, for the hook tests and
// the type check against the Claude Agent SDK.
type hookCase struct {
	name     string
	tool     string
	response any
	// tsType is the SDK type (of sdk-tools.d.ts) the replacement must have.
	tsType string
	// text returns the text of a replacement that the limit holds.
	text func(t *testing.T, out map[string]any) []string
	// same lists fields that the cut must leave as they were.
	same []string
}

func hookCases() []hookCase {
	lines := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%s %06d\n", prefix, i)
		}
		return b.String()
	}
	names := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = fmt.Sprintf("src/pkg%05d/file_test.go", i)
		}
		return out
	}
	str := func(keys ...string) func(*testing.T, map[string]any) []string {
		return func(t *testing.T, out map[string]any) []string {
			var texts []string
			for _, k := range keys {
				v := any(out)
				for _, part := range strings.Split(k, ".") {
					v = v.(map[string]any)[part]
				}
				switch x := v.(type) {
				case string:
					texts = append(texts, x)
				case []any:
					var s []string
					for _, e := range x {
						s = append(s, e.(string))
					}
					texts = append(texts, strings.Join(s, "\n"))
				case nil:
				default:
					t.Fatalf("%s is %T", k, v)
				}
			}
			return texts
		}
	}
	blockTexts := func(blocks []any) []string {
		var texts []string
		for _, b := range blocks {
			if m := b.(map[string]any); m["type"] == "text" {
				texts = append(texts, m["text"].(string))
			}
		}
		return texts
	}
	return []hookCase{
		{
			name: "Bash stdout and a short stderr", tool: "Bash", tsType: "BashOutput",
			response: map[string]any{"stdout": lines("ok", oneMiB/10), "stderr": "FAIL: TestX", "interrupted": false, "isImage": false, "noOutputExpected": false},
			text:     str("stdout", "stderr"), same: []string{"interrupted", "isImage", "noOutputExpected"},
		},
		{
			name: "Bash both streams long", tool: "Bash", tsType: "BashOutput",
			response: map[string]any{"stdout": lines("out", oneMiB/11), "stderr": lines("err", oneMiB/11), "interrupted": true},
			text:     str("stdout", "stderr"), same: []string{"interrupted"},
		},
		{
			name: "Read text", tool: "Read", tsType: "FileReadOutput",
			response: map[string]any{"type": "text", "file": map[string]any{"filePath": "/p/big.go", "content": lines("// line", oneMiB/15), "numLines": oneMiB / 15, "startLine": 1, "totalLines": oneMiB / 15}},
			text:     str("file.content"), same: []string{"type"},
		},
		{
			name: "Grep content", tool: "Grep", tsType: "GrepOutput",
			response: map[string]any{"mode": "content", "numFiles": 2, "filenames": []any{"a.go", "b.go"}, "content": lines("a.go:1:TODO", oneMiB/19), "numLines": oneMiB / 19},
			text:     str("content", "filenames"), same: []string{"mode", "numLines"},
		},
		{
			name: "Grep files", tool: "Grep", tsType: "GrepOutput",
			response: map[string]any{"mode": "files_with_matches", "numFiles": 40000, "filenames": names(40000)},
			text:     str("content", "filenames"), same: []string{"mode"},
		},
		{
			name: "Glob", tool: "Glob", tsType: "GlobOutput",
			response: map[string]any{"durationMs": 12, "numFiles": 40000, "filenames": names(40000), "truncated": false},
			text:     str("filenames"), same: []string{"durationMs"},
		},
		{
			name: "WebFetch", tool: "WebFetch", tsType: "WebFetchOutput",
			response: map[string]any{"bytes": oneMiB, "code": 200, "codeText": "OK", "result": lines("<p>page", oneMiB/14), "durationMs": 300, "url": "https://example.com/"},
			text:     str("result"), same: []string{"bytes", "code", "codeText", "durationMs", "url"},
		},
		{
			name: "MCP content blocks", tool: "mcp__fs__read_file", tsType: "McpOutput",
			response: []any{
				map[string]any{"type": "text", "text": lines("row", oneMiB/10)},
				map[string]any{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
				map[string]any{"type": "text", "text": "note: done"},
			},
			text: func(t *testing.T, out map[string]any) []string { return blockTexts(out["$"].([]any)) },
		},
		{
			name: "MCP text", tool: "mcp__github__search_code", tsType: "McpOutput",
			response: lines("match", oneMiB/12),
			text:     func(t *testing.T, out map[string]any) []string { return []string{out["$"].(string)} },
		},
		{
			name: "MCP structured", tool: "mcp__db__query", tsType: "McpOutput",
			response: map[string]any{"rows": func() []any {
				rows := make([]any, 2000)
				for i := range rows {
					rows[i] = map[string]any{"id": i, "body": strings.Repeat("z", 512)}
				}
				return rows
			}(), "count": 2000},
			text: func(t *testing.T, out map[string]any) []string {
				enc, _ := json.Marshal(out)
				return []string{string(enc)}
			},
			same: []string{"count"},
		},
	}
}

// payload is a PostToolUse payload as Claude Code sends it.
func payload(t testing.TB, tool string, response any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"session_id":      "abc123",
		"transcript_path": "/home/u/.claude/projects/p/abc123.jsonl",
		"cwd":             "/home/u/p",
		"permission_mode": "default",
		"hook_event_name": "PostToolUse",
		"tool_name":       tool,
		"tool_input":      map[string]any{"command": "make test"},
		"tool_response":   response,
		"tool_use_id":     "toolu_01",
		"duration_ms":     1200,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// replacement runs the hook on tc and returns its whole reply and the
// updatedToolOutput in it (under "$" when it is not an object).
func replacement(t *testing.T, env []string, tc hookCase) (reply []byte, out map[string]any) {
	t.Helper()
	got := runWith(t, env, bytes.NewReader(payload(t, tc.tool, tc.response)), "hook", "claude-code")
	if got.code != exitOK || got.stderr != "" {
		t.Fatalf("exit %d, stderr %q; want 0 and nothing", got.code, got.stderr)
	}
	var r struct {
		HookSpecificOutput struct {
			HookEventName     string
			UpdatedToolOutput any
		}
	}
	d := json.NewDecoder(strings.NewReader(got.stdout))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		t.Fatalf("reply %.200q: %v", got.stdout, err)
	}
	if r.HookSpecificOutput.HookEventName != "PostToolUse" {
		t.Errorf("hookEventName = %q, want PostToolUse", r.HookSpecificOutput.HookEventName)
	}
	out, ok := r.HookSpecificOutput.UpdatedToolOutput.(map[string]any)
	if !ok {
		out = map[string]any{"$": r.HookSpecificOutput.UpdatedToolOutput}
	}
	return []byte(strings.TrimSpace(got.stdout)), out
}

// The command adds nothing to the library: for every tool, what it prints
// is the reply of claudecode.Hook.Cap under the tool's policy, byte for
// byte (keep_rest off, so that no ref differs). (What the cut does to each tool's output is tested in package
// claudecode.)
func TestHookCuts(t *testing.T) {
	for _, limit := range []int{16384, 4096} {
		env := []string{fmt.Sprintf("TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES=%d", limit), keepRestOff}
		for _, tc := range hookCases() {
			t.Run(fmt.Sprintf("%s/%d", tc.name, limit), func(t *testing.T) {
				reply, _ := replacement(t, env, tc)
				resp, err := json.Marshal(tc.response)
				if err != nil {
					t.Fatal(err)
				}
				in := claudecode.Input{HookEventName: "PostToolUse", ToolName: tc.tool, ToolResponse: resp}
				out, _, changed, err := (&claudecode.Hook{}).Cap(in, shape.Bytes(limit))
				if err != nil || !changed {
					t.Fatalf("Hook.Cap() = changed %v, error %v; want a cut", changed, err)
				}
				want, err := claudecode.MarshalReply(out)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(want, reply) {
					t.Errorf("the command's reply (%d bytes) differs from the library's (%d bytes):\n%.300s\nwant\n%.300s", len(reply), len(want), reply, want)
				}
			})
		}
	}
}

func TestHookLeavesAlone(t *testing.T) {
	big := strings.Repeat("A", oneMiB)
	tests := []struct {
		name     string
		tool     string
		response any
	}{
		{"small Bash", "Bash", map[string]any{"stdout": "hello\n", "stderr": "", "interrupted": false}},
		{"small MCP", "mcp__fs__list", []any{map[string]any{"type": "text", "text": "a\nb"}}},
		{"Bash image", "Bash", map[string]any{"stdout": big, "stderr": "", "interrupted": false, "isImage": true}},
		{"Read image", "Read", map[string]any{"type": "image", "file": map[string]any{"base64": big, "type": "image/png", "originalSize": oneMiB}}},
		{"no tool_response", "Bash", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, nil, bytes.NewReader(payload(t, tt.tool, tt.response)), "hook", "claude-code")
			if diff := cmp.Diff(result{code: exitOK}, got, cmp.AllowUnexported(result{})); diff != "" {
				t.Errorf("hook mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Malformed input never blocks the tool: exit 0, one warning line, no reply.
func TestHookFailsOpen(t *testing.T) {
	tests := []struct {
		name, stdin, warning string
	}{
		{"empty", "", "not a JSON hook payload"},
		{"not JSON", "{bad", "not a JSON hook payload"},
		{"an array", "[1,2]", "not a JSON hook payload"},
		{"another event", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}`, `hook_event_name is "PreToolUse"`},
		{"no tool name", `{"hook_event_name":"PostToolUse","tool_response":"x"}`, "no tool_name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, nil, strings.NewReader(tt.stdin), "hook", "claude-code")
			if got.code != exitOK || got.stdout != "" {
				t.Errorf("exit %d, stdout %q; want 0 and nothing", got.code, got.stdout)
			}
			if n := strings.Count(got.stderr, "\n"); n != 1 || !strings.HasPrefix(got.stderr, "[WARN]  toolcap: ") {
				t.Errorf("stderr = %q, want one warning line", got.stderr)
			}
			checkContains(t, "stderr", got.stderr, tt.warning, "tool output left as it is")
		})
	}
}

func TestHookLimits(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, dir, "toolcap.toml", "[worker.tool_output.per_tool]\nBash = 2048\n")
	text := strings.Repeat("x", 100000)
	tests := []struct {
		name string
		env  []string
		args []string
		tool string
		want int
	}{
		{"default", nil, nil, "Bash", 16384},
		{"manifest", nil, []string{"--manifest", m}, "Bash", 2048},
		{"environment over the manifest", []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash=3000"}, []string{"--manifest", m}, "Bash", 3000},
		{"an MCP tool by its Claude Code name", []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__mcp__fs__read=1000"}, nil, "mcp__fs__read", 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := any(map[string]any{"stdout": text, "stderr": "", "interrupted": false})
			if tt.tool != "Bash" {
				resp = text
			}
			args := append([]string{"hook"}, tt.args...)
			args = append(args, "claude-code")
			got := runWith(t, append(tt.env, keepRestOff), bytes.NewReader(payload(t, tt.tool, resp)), args...)
			var r struct {
				HookSpecificOutput struct{ UpdatedToolOutput any }
			}
			if err := json.Unmarshal([]byte(got.stdout), &r); err != nil {
				t.Fatalf("exit %d, stderr %q: %v", got.code, got.stderr, err)
			}
			kept := r.HookSpecificOutput.UpdatedToolOutput
			if m, ok := kept.(map[string]any); ok {
				kept = m["stdout"]
			}
			if n := len(kept.(string)); n != tt.want {
				t.Errorf("kept %d bytes, want the limit %d", n, tt.want)
			}
		})
	}
}

func TestHookErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.toml", "[worker.tool_output.per_tool]\nBash = 0\n")
	small := payload(t, "Bash", map[string]any{"stdout": "hi"})
	tests := []struct {
		name     string
		args     []string
		stdin    []byte
		code     int
		inStderr string
	}{
		{"bad manifest: reported, not blocking", []string{"hook", "--manifest", bad, "claude-code"}, small, exitFailed, "per_tool.Bash = 0"},
		{"no agent", []string{"hook"}, small, exitUsage, "name the agent"},
		{"unknown agent", []string{"hook", "codex"}, small, exitUsage, `unknown agent "codex"`},
		{"extra argument", []string{"hook", "claude-code", "x"}, small, exitUsage, `unexpected argument "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, nil, bytes.NewReader(tt.stdin), tt.args...)
			if got.code != tt.code || got.stdout != "" {
				t.Errorf("exit %d, stdout %q; want %d and nothing", got.code, got.stdout, tt.code)
			}
			checkContains(t, "stderr", got.stderr, tt.inStderr)
		})
	}
}

// The example of docs/adapters/claude-code.md is what the hook prints, byte
// for byte.
func TestHookDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "adapters", "claude-code.md"))
	if err != nil {
		t.Fatal(err)
	}
	in := jsonBlock(t, string(doc), "With `payload.json`")
	_, shell, ok := strings.Cut(string(doc), "\n$ ")
	if !ok {
		t.Fatal("no $ line in the doc")
	}
	command, rest, _ := strings.Cut(shell, "\n")
	want, _, _ := strings.Cut(rest, "\n```")
	env, _, ok := strings.Cut(command, " toolcap hook claude-code < payload.json")
	if !ok {
		t.Fatalf("unexpected command %q", command)
	}
	got := runWith(t, []string{env}, strings.NewReader(in), "hook", "claude-code")
	if diff := cmp.Diff(result{code: exitOK, stdout: want + "\n"}, got, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("the doc's example mismatch (-want +got):\n%s", diff)
	}
}

// The hook cuts text by the tool's strategy, as the worker does: a Bash
// manifest entry with keep = "head_tail" keeps the end of a build log, where
// its failure is, and rescues the keep_lines in between.
func TestHookStrategy(t *testing.T) {
	var log strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&log, "ok   step %05d\n", i)
		if i == 25000 {
			log.WriteString("ERROR: disk full\n")
		}
	}
	log.WriteString("FAIL: build failed\n")
	dir := t.TempDir()
	m := writeFile(t, dir, "toolcap.toml", `[worker.tool_output.per_tool]
Bash = { max_bytes = 4096, keep = "head_tail", keep_lines = ['ERROR'] }
`)
	resp := map[string]any{"stdout": log.String(), "stderr": "", "interrupted": false}
	got := runWith(t, []string{keepRestOff}, bytes.NewReader(payload(t, "Bash", resp)), "hook", "--manifest", m, "claude-code")
	var r struct {
		HookSpecificOutput struct{ UpdatedToolOutput struct{ Stdout string } }
	}
	if err := json.Unmarshal([]byte(got.stdout), &r); err != nil {
		t.Fatalf("exit %d, stderr %q: %v", got.code, got.stderr, err)
	}
	out := r.HookSpecificOutput.UpdatedToolOutput.Stdout
	if len(out) > 4096 || !strings.HasPrefix(out, "ok   step 00000\n") || !strings.HasSuffix(out, "FAIL: build failed\n") ||
		!strings.Contains(out, "\nERROR: disk full\n") || !strings.Contains(out, " bytes dropped, refine your query]\n") {
		t.Errorf("stdout (%d bytes) does not keep head, rescued line and tail within 4096:\n%.200s\n…\n%s", len(out), out, out[max(0, len(out)-200):])
	}
}

// An MCP tool's text comes out of the hook byte for byte as toolcap cap
// gives it, under the same per-tool policy (strategy, keep_lines, tokens),
// as a bare string and as the one text block of a result, text longer
// than the token window (32 bytes a token) included: cap cuts it as a
// stream (shape.Read), the hook holds it whole (shape.Text), and the two
// agree byte for byte.
func TestHookSameAsCap(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, dir, "toolcap.toml", `[worker.tool_output.per_tool]
mcp__ci__log = { max_bytes = 12000, max_tokens = 2500, keep = "head_tail", keep_lines = ['FAIL'] }
mcp__ci__head = { max_bytes = 3000 }
mcp__ci__tokens = { max_tokens = 700 }
`)
	testLog := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "=== RUN   TestStep%05d\n--- PASS: TestStep%05d (0.00s)\n", i, i)
			if i == n/2 {
				b.WriteString("--- FAIL: TestParse (0.01s)\n")
			}
		}
		return b.String()
	}
	for _, tt := range []struct {
		tool  string
		lines []int
	}{
		{"mcp__ci__log", []int{3600, 1400, 400, 60}},
		{"mcp__ci__head", []int{3600, 400, 60}},
		{"mcp__ci__tokens", []int{3600, 400, 60}},
	} {
		tool := tt.tool
		for _, n := range tt.lines {
			text := testLog(n)
			capped := runWith(t, nil, strings.NewReader(text), "cap", "--manifest", m, "--tool", tool)
			if capped.code != exitOK {
				t.Fatalf("cap: exit %d, stderr %q", capped.code, capped.stderr)
			}
			for _, resp := range []any{text, []any{map[string]any{"type": "text", "text": text}}} {
				t.Run(fmt.Sprintf("%s/%d/%T", tool, len(text), resp), func(t *testing.T) {
					got := runWith(t, []string{keepRestOff}, bytes.NewReader(payload(t, tool, resp)), "hook", "--manifest", m, "claude-code")
					if got.code != exitOK || got.stderr != "" {
						t.Fatalf("hook: exit %d, stderr %q", got.code, got.stderr)
					}
					if got.stdout == "" {
						if capped.stdout != text {
							t.Fatalf("the hook left the text alone, cap cut it to %d bytes", len(capped.stdout))
						}
						return
					}
					var r struct {
						HookSpecificOutput struct{ UpdatedToolOutput json.RawMessage }
					}
					if err := json.Unmarshal([]byte(got.stdout), &r); err != nil {
						t.Fatal(err)
					}
					var hooked string
					var blocks []struct{ Text string }
					if err := json.Unmarshal(r.HookSpecificOutput.UpdatedToolOutput, &hooked); err != nil {
						if err := json.Unmarshal(r.HookSpecificOutput.UpdatedToolOutput, &blocks); err != nil || len(blocks) != 1 {
							t.Fatalf("updatedToolOutput %.200s: neither a string nor one block (%v)", r.HookSpecificOutput.UpdatedToolOutput, err)
						}
						hooked = blocks[0].Text
					}
					if hooked != capped.stdout {
						t.Errorf("hook kept %d bytes, cap %d; they differ:\n%.300q\ncap:\n%.300q", len(hooked), len(capped.stdout), hooked, capped.stdout)
					}
				})
			}
		}
	}
}

// -v logs the limit in force and the cut, with the one field set of every
// front end (shape.LogFields).
func TestHookVerbose(t *testing.T) {
	resp := map[string]any{"stdout": strings.Repeat("x", 5000), "stderr": "", "interrupted": false}
	got := runWith(t, []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash=1000", keepRestOff}, bytes.NewReader(payload(t, "Bash", resp)), "hook", "-v", "claude-code")
	if got.code != exitOK || got.stdout == "" {
		t.Fatalf("exit %d, stdout %q; want 0 and a reply", got.code, got.stdout)
	}
	checkContains(t, "stderr", got.stderr,
		"limit in force: tool=Bash limit=1000 source=\"per_tool.Bash, set by env TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash\"",
		"tool result truncated: tool=Bash call_id=toolu_01 original_bytes=5000 kept_bytes=949 dropped_bytes=4051 limit=1000\n")
}

// A payload past claudecode.StreamAbove is cut as it streams, and the
// command's reply is the library's for the payload held whole, byte for
// byte; with the rest kept, the file the marker names holds the whole
// text. tool_name after tool_response (read from a copy) too.
func TestHookStreams(t *testing.T) {
	lines := strings.Repeat("0123456789abcdef ok\n", (claudecode.StreamAbove+oneMiB)/20)
	mcp := []any{map[string]any{"type": "text", "text": "head\n"}, map[string]any{"type": "text", "text": lines}}
	late := func(tool string, response any) []byte {
		b, err := json.Marshal(map[string]any{"tool_response": response})
		if err != nil {
			t.Fatal(err)
		}
		return append(b[:len(b)-1], []byte(`,"hook_event_name":"PostToolUse","tool_name":"`+tool+`","session_id":"abc123","tool_use_id":"toolu_01"}`)...)
	}
	for _, tc := range []struct {
		name, tool string
		payload    []byte
		text       string
	}{
		{"Bash", "Bash", payload(t, "Bash", map[string]any{"stdout": lines, "stderr": "warn\n", "interrupted": false}), lines + "\nwarn\n"},
		{"MCP blocks", "mcp__fs__read", payload(t, "mcp__fs__read", mcp), "head\n\n" + lines},
		{"tool_name last", "Bash", late("Bash", map[string]any{"stdout": lines, "stderr": ""}), lines},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.payload) <= claudecode.StreamAbove {
				t.Fatalf("a payload of %d bytes is not streamed", len(tc.payload))
			}
			got := runWith(t, []string{keepRestOff}, bytes.NewReader(tc.payload), "hook", "claude-code")
			in, err := claudecode.ParseInput(tc.payload)
			if err != nil {
				t.Fatal(err)
			}
			out, _, changed, err := (&claudecode.Hook{}).Cap(in, shape.Bytes(shape.DefaultMaxBytes))
			if err != nil || !changed {
				t.Fatalf("Hook.Cap() = changed %v, error %v", changed, err)
			}
			want, err := claudecode.MarshalReply(out)
			if err != nil {
				t.Fatal(err)
			}
			if got.code != exitOK || got.stderr != "" || strings.TrimSpace(got.stdout) != string(want) {
				t.Errorf("exit %d, stderr %q, reply of %d bytes:\n%.300s\nwant %d bytes:\n%.300s", got.code, got.stderr, len(got.stdout), got.stdout, len(want), want)
			}

			dir := t.TempDir()
			kept := runWith(t, []string{"TOOLCAP_WORKER__TOOL_OUTPUT__REST__DIR=" + dir}, bytes.NewReader(tc.payload), "hook", "claude-code")
			m := regexp.MustCompile(`read the rest: Read \{\\"file_path\\":\\"([^\\]+)\\"`).FindStringSubmatch(kept.stdout)
			if kept.code != exitOK || m == nil {
				t.Fatalf("exit %d, stderr %q, no Read of the rest in %.300s", kept.code, kept.stderr, kept.stdout)
			}
			file, err := os.ReadFile(m[1])
			if err != nil {
				t.Fatal(err)
			}
			if string(file) != tc.text {
				t.Errorf("the kept file holds %d bytes, want the %d of the output's text", len(file), len(tc.text))
			}
		})
	}
}
