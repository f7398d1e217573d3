package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// claudeCodeTypes returns test/claude-code, where setup.sh installs the
// Claude Agent SDK and TypeScript, and its tsc. It skips the test when node
// or the install is missing, and fails it when TOOLCAP_MCP_E2E=1 (CI) says
// they must be there.
func claudeCodeTypes(t *testing.T) (dir, tsc string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "test", "claude-code"))
	if err != nil {
		t.Fatal(err)
	}
	tsc = filepath.Join(dir, "node_modules", ".bin", "tsc")
	sdk := filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-agent-sdk", "sdk-tools.d.ts")
	_, nodeErr := exec.LookPath("node")
	_, tscErr := os.Stat(tsc)
	_, sdkErr := os.Stat(sdk)
	if nodeErr == nil && tscErr == nil && sdkErr == nil {
		return dir, tsc
	}
	msg := "the hook's type check needs node and test/claude-code/node_modules: run bash test/claude-code/setup.sh"
	if os.Getenv("TOOLCAP_MCP_E2E") == "1" {
		t.Fatalf("TOOLCAP_MCP_E2E=1 but %s (%v, %v, %v)", msg, nodeErr, tscErr, sdkErr)
	}
	t.Skip(msg)
	return "", ""
}

// TestHookTypes type-checks what the hook prints for each case, from 1 MiB
// payloads, against the Claude Agent SDK's own types: the whole reply as a
// SyncHookJSONOutput (whose hookSpecificOutput is a
// PostToolUseHookSpecificOutput), and the replacement as the tool's output
// type of sdk-tools.d.ts. It also checks the settings.json entry the docs
// show against the SDK's Settings type. A check that cannot fail is no check,
// so it first makes sure tsc rejects a BashOutput without stdout.
func TestHookTypes(t *testing.T) {
	dir, tsc := claudeCodeTypes(t)
	work, err := os.MkdirTemp(dir, "check-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	writeFile(t, work, "tsconfig.json", `{
  "compilerOptions": {
    "strict": true, "noEmit": true, "skipLibCheck": true,
    "target": "es2022", "module": "nodenext", "moduleResolution": "nodenext", "types": []
  },
  "files": ["check.mts"]
}
`)
	typecheck := func(body string) (string, error) {
		src := `import type { BashOutput, FileReadOutput, GlobOutput, GrepOutput, WebFetchOutput, McpOutput } from "@anthropic-ai/claude-agent-sdk/sdk-tools";
import type { SyncHookJSONOutput, Settings } from "@anthropic-ai/claude-agent-sdk";
` + body
		writeFile(t, work, "check.mts", src)
		cmd := exec.Command(tsc, "-p", work)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	for _, bad := range []string{
		`const bad: BashOutput = {"stderr": "", "interrupted": false};`,
		`const bad: GlobOutput = {"durationMs": 1, "numFiles": 0, "filenames": [], "truncated": false, "extra": 1};`,
		`const bad: SyncHookJSONOutput = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedOutput": 1}};`,
	} {
		if out, err := typecheck(bad + "\n"); err == nil {
			t.Fatalf("tsc accepted %s: the check checks nothing\n%s", bad, out)
		}
	}

	var body strings.Builder
	env := []string{"TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES=4096"}
	for i, tc := range hookCases() {
		reply, _ := replacement(t, env, tc)
		fmt.Fprintf(&body, "// %s\nconst reply%d: SyncHookJSONOutput = %s;\n", tc.name, i, reply)
		fmt.Fprintf(&body, "const output%d: %s = %s;\n", i, tc.tsType, updatedOf(t, reply))
	}
	settings, err := os.ReadFile(filepath.Join("..", "docs", "adapters", "claude-code.md"))
	if err != nil {
		t.Fatal(err)
	}
	entry := jsonBlock(t, string(settings), "settings.json")
	fmt.Fprintf(&body, "const settings: Settings = %s;\n", entry)
	if out, err := typecheck(body.String()); err != nil {
		t.Errorf("tsc rejected the replacements: %v\n%s", err, out)
	}
}

// updatedOf returns the updatedToolOutput of a reply as JSON text.
func updatedOf(t *testing.T, reply []byte) string {
	t.Helper()
	const key = `"updatedToolOutput":`
	s := string(reply)
	i := strings.Index(s, key)
	if i < 0 || !strings.HasSuffix(s, "}}") {
		t.Fatalf("reply has no updatedToolOutput: %.100s", s)
	}
	return s[i+len(key) : len(s)-2]
}

// jsonBlock returns the first ```json block of doc after a line that
// mentions name.
func jsonBlock(t *testing.T, doc, name string) string {
	t.Helper()
	i := strings.Index(doc, name)
	if i < 0 {
		t.Fatalf("the doc does not mention %s", name)
	}
	_, rest, ok := strings.Cut(doc[i:], "```json\n")
	if !ok {
		t.Fatalf("no ```json block after %s", name)
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("unterminated ```json block after %s", name)
	}
	return block
}
