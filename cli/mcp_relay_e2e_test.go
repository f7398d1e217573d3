//go:build !toolcap_nomcp

package cli

// End-to-end tests of "toolcap mcp" as a transparent relay (issue 9) with the
// real npm servers and the real TypeScript SDK client, in test/mcp:
//
//	bash test/mcp/setup.sh
//	go test ./cli -run '^TestMCPRelay' -v
//
// TestMCPRelayEverything checks four modes: stdio, --url (HTTP upstream),
// --listen (HTTP downstream), and --listen with --token.
//
// They skip when node or test/mcp/node_modules is missing, unless
// TOOLCAP_MCP_E2E=1 (CI), which makes that a failure.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// mcpPeer returns test/mcp and the entry point of one of its npm packages,
// skipping (or failing, under TOOLCAP_MCP_E2E=1) when it is not installed.
func mcpPeer(t *testing.T, pkg string) (dir, entry string) {
	t.Helper()
	dir, _ = mcpNodeModules(t)
	entry = filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		msg := "the MCP end-to-end tests need @modelcontextprotocol/" + pkg + ": run bash test/mcp/setup.sh"
		if os.Getenv("TOOLCAP_MCP_E2E") == "1" {
			t.Fatalf("TOOLCAP_MCP_E2E=1 but %s (%v)", msg, err)
		}
		t.Skip(msg)
	}
	return dir, entry
}

// runNode runs a script of test/mcp with args and returns its stdout, its
// stderr going to the test log.
func runNode(t *testing.T, dir, script string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(dir, script)}, args...)...)
	// A HOME of the test's own: the SDK's stdio transport passes HOME (not
	// XDG_CACHE_HOME) to toolcap mcp, which keeps the rest under its cache.
	cmd.Env = append(cleanEnv(), "HOME="+t.TempDir())
	cmd.Stderr = &testLogWriter{t: t}
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, out)
	}
	return out
}

// everythingMode is one line of everything_client.mjs.
type everythingMode struct {
	Mode         string
	OK           bool
	Error        string
	ToolsEqual   bool
	DirectTools  []string
	ProxiedTools []string
	ToolsDiff    json.RawMessage
	Roots        check
	Sampling     check
	Elicitation  check
	Direct       struct{ Roots, Sampling, Elicitation check }
	// WithoutTokenStatus is the HTTP status of a POST without the token
	// (http-downstream-token only).
	WithoutTokenStatus int
}

// check is a tool call whose text must hold what the client answered.
type check struct {
	OK   bool
	Text string
}

func TestMCPRelayEverything(t *testing.T) {
	dir, _ := mcpPeer(t, "server-everything")
	bin := buildBinary(t)
	out := runNode(t, dir, "everything_client.mjs", bin)
	got := map[string]everythingMode{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m everythingMode
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("everything_client.mjs printed %q: %v", sc.Text(), err)
		}
		got[m.Mode] = m
	}
	for _, mode := range []string{"stdio", "http-upstream", "http-downstream", "http-downstream-token"} {
		t.Run(mode, func(t *testing.T) {
			m, ok := got[mode]
			if !ok {
				t.Fatalf("no line for mode %s in:\n%s", mode, out)
			}
			if m.Error != "" {
				t.Fatalf("%s: %s", mode, m.Error)
			}
			// The client's side works straight to the server; what follows
			// is about toolcap.
			for name, c := range map[string]check{"get-roots-list": m.Direct.Roots, "trigger-sampling-request": m.Direct.Sampling, "trigger-elicitation-request": m.Direct.Elicitation} {
				if !c.OK {
					t.Fatalf("straight to the server, %s does not return the client's answer: %s", name, c.Text)
				}
			}
			if len(m.DirectTools) < 16 {
				t.Errorf("the server lists %d tools straight to a client declaring roots, sampling and elicitation, want its 16 or more: %v", len(m.DirectTools), m.DirectTools)
			}
			if !m.ToolsEqual && !slices.Equal(append(slices.Clone(m.DirectTools), "toolcap_read"), m.ProxiedTools) {
				// toolcap mcp keeps the rest by default, and appends its
				// read tool to the server's last page: that is the one
				// difference allowed.
				t.Errorf("tools/list through toolcap differs from the direct one: %s\nnames (-direct +proxied):\n%s",
					m.ToolsDiff, cmp.Diff(m.DirectTools, m.ProxiedTools))
			}
			for name, c := range map[string]check{"get-roots-list": m.Roots, "trigger-sampling-request": m.Sampling, "trigger-elicitation-request": m.Elicitation} {
				if !c.OK {
					t.Errorf("through toolcap, %s does not return what the client answered: %s", name, c.Text)
				}
			}
			if mode == "http-downstream-token" && m.WithoutTokenStatus != 401 {
				t.Errorf("a POST without the bearer token got HTTP %d, want 401", m.WithoutTokenStatus)
			}
			t.Logf("%s: %d tools direct, %d through toolcap, deep-equal %v; roots, sampling, elicitation answered: %v %v %v",
				mode, len(m.DirectTools), len(m.ProxiedTools), m.ToolsEqual, m.Roots.OK, m.Sampling.OK, m.Elicitation.OK)
		})
	}
}

// TestMCPRelayMemory checks the structured results of the real memory
// server through toolcap (issue 10): with 400 entities and 400 relations,
// read_graph stays a success whose structuredContent, within the limit as
// JSON, keeps the first whole entities and relations (the TypeScript SDK
// validates it against the tool's outputSchema) and says "kept K of M" in a
// note; its text block is valid JSON on its own.
func TestMCPRelayMemory(t *testing.T) {
	dir, _ := mcpPeer(t, "server-memory")
	bin := buildBinary(t)
	memory := filepath.Join(t.TempDir(), "memory.jsonl")
	out := runNode(t, dir, "memory_client.mjs", bin, memory)
	var got struct {
		CreateEntitiesIsError, CreateRelationsIsError bool
		CreateEntitiesStructuredBytes                 int
		CreateRelationsStructuredBytes                int
		IsError                                       bool
		StructuredContentBytes                        int
		TextIsJSON                                    bool
		EntitiesKept, RelationsKept                   int
		ContentTextBytes                              int
		Truncation                                    json.RawMessage
		Tail                                          string
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &got); err != nil {
		t.Fatalf("memory_client.mjs printed %q: %v", out, err)
	}
	t.Logf("read_graph of 400 entities and 400 relations through toolcap: %s", bytes.TrimSpace(out))
	if got.CreateEntitiesIsError || got.CreateRelationsIsError {
		t.Errorf("creating the graph failed: %s", out)
	}
	if got.IsError || !got.TextIsJSON || got.ContentTextBytes == 0 || got.ContentTextBytes > 16384 {
		t.Errorf("read_graph: isError %v, text valid JSON %v, %d text bytes; want a success, valid JSON, within 16384", got.IsError, got.TextIsJSON, got.ContentTextBytes)
	}
	if got.StructuredContentBytes <= 0 || got.StructuredContentBytes > 16384 || got.EntitiesKept <= 0 || got.RelationsKept <= 0 {
		t.Errorf("read_graph structuredContent: %d bytes, %d entities, %d relations; want both kept, within 16384", got.StructuredContentBytes, got.EntitiesKept, got.RelationsKept)
	}
	want := fmt.Sprintf("kept %d of 400 items of /entities, %d of 400 items of /relations", got.EntitiesKept, got.RelationsKept)
	if !strings.Contains(got.Tail, want) {
		t.Errorf("the note does not say %q: %q", want, got.Tail)
	}
	for name, n := range map[string]int{"create_entities": got.CreateEntitiesStructuredBytes, "create_relations": got.CreateRelationsStructuredBytes} {
		if n > 16384 {
			t.Errorf("%s: structuredContent is %d bytes as JSON, over 16384", name, n)
		}
	}
}
