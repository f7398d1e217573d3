//go:build !toolcap_nomcp

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/tokens"
	"github.com/toolcap/toolcap/worker"
)

// frontEndLog is a test log of about 180 KB whose failures are spread
// through it, as the measurement used.
func frontEndLog() string {
	var b strings.Builder
	for i := 0; b.Len() < 180_000; i++ {
		switch {
		case i%997 == 500:
			fmt.Fprintf(&b, "--- FAIL: TestCase%d (0.%02ds)\n", i, i%100)
		case i%13 == 0:
			fmt.Fprintf(&b, "=== RUN   TestCase%d/sub_%d\n", i, i%7)
		default:
			fmt.Fprintf(&b, "ok  \tgithub.com/example/project/pkg%d/internal/sub%d\t0.%03ds\tcoverage: %d.%d%% of statements\n", i%61, i%17, i%1000, i%100, i%10)
		}
	}
	return b.String()
}

// TestFrontEndsAgree runs the same text under the same per-tool policy
// through every front end of the CLI and the worker, and checks that the
// model gets the same bytes from each: the worker (the library), toolcap
// cap, toolcap mcp (a text block of a tools/call result) and toolcap hook
// claude-code (the text block of an MCP tool's output). One rule, one home:
// each of them fits the text with package shape.
func TestFrontEndsAgree(t *testing.T) {
	log := frontEndLog()
	policies := []struct {
		name  string
		entry string
	}{
		{"the issue's: head_tail, keep_lines and a token limit", `{ max_bytes = 12000, max_tokens = 2500, keep = "head_tail", keep_lines = ['FAIL'] }`},
		{"head_tail by bytes", `{ max_bytes = 6000, keep = "head_tail", tail_share = 0.3, keep_lines = ['FAIL'] }`},
		{"head by bytes", `4096`},
		{"json falls back to head_tail for text", `{ max_bytes = 5000, keep = "json", fallback = "head_tail" }`},
	}
	bin := buildBinary(t)
	server := buildFaultServer(t)
	for _, pc := range policies {
		t.Run(pc.name, func(t *testing.T) {
			dir := t.TempDir()
			// keep_rest = false: the front ends keep the rest each in
			// their own way (a ref, a file the hook points Read at), and
			// the comparison is of the rule that fits a text.
			doc := "[worker.tool_output]\nkeep_rest = false\n[worker.tool_output.per_tool]\necho = " + pc.entry + "\nmcp__fault__echo = " + pc.entry + "\n"
			file := writeFile(t, dir, "toolcap.toml", doc)
			m, err := manifest.Load(context.Background(), manifest.File(file))
			if err != nil {
				t.Fatal(err)
			}
			policies, err := m.Policies()
			if err != nil {
				t.Fatal(err)
			}
			p := policies.For("echo")
			if p.MaxTokens > 0 {
				p.Counter = tokens.NewCalibrated()
			}

			got := map[string]string{}

			// The library: a worker whose tool returns the log.
			echo := worker.Func("echo", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
				return worker.ToolOutput{Content: &log}, nil
			})
			w, err := worker.New([]worker.Tool{echo}, worker.WithPolicies(policytest.Of(t, m)))
			if err != nil {
				t.Fatal(err)
			}
			got["worker"] = *w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: "echo"}})[0].Content

			// toolcap cap.
			r := runWith(t, cleanEnv(), strings.NewReader(log), "cap", "--tool", "echo", "--manifest", file)
			if r.code != exitOK {
				t.Fatalf("toolcap cap: exit %d: %s", r.code, r.stderr)
			}
			got["cap"] = r.stdout

			// toolcap hook claude-code, as Claude Code calls it after an MCP
			// tool.
			payload, err := json.Marshal(map[string]any{
				"hook_event_name": "PostToolUse", "tool_name": "mcp__fault__echo", "tool_use_id": "toolu_1",
				"tool_response": []any{map[string]any{"type": "text", "text": log}},
			})
			if err != nil {
				t.Fatal(err)
			}
			r = runWith(t, cleanEnv(), strings.NewReader(string(payload)), "hook", "claude-code", "--manifest", file)
			if r.code != exitOK || r.stdout == "" {
				t.Fatalf("toolcap hook: exit %d, stdout %q: %s", r.code, r.stdout, r.stderr)
			}
			var reply struct {
				HookSpecificOutput struct {
					UpdatedToolOutput []struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"updatedToolOutput"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &reply); err != nil {
				t.Fatalf("hook reply %.300s: %v", r.stdout, err)
			}
			if blocks := reply.HookSpecificOutput.UpdatedToolOutput; len(blocks) == 1 {
				got["hook"] = blocks[0].Text
			} else {
				t.Errorf("hook: %d blocks, want 1: %.300s", len(blocks), r.stdout)
			}

			// toolcap mcp in front of a server whose echo tool returns it.
			s := startFault(t, bin, server, "--manifest", file)
			resp, _ := s.call("echo", map[string]any{"text": log}, nil)
			res := s.result("echo", resp)
			if len(res.Content) == 1 {
				got["mcp"] = res.Content[0].Text
			} else {
				t.Errorf("mcp: %d blocks, want 1", len(res.Content))
			}

			// The same call of MCP's stateless revision (2026-07-28): over
			// stdio with no initialize, and through --listen with no
			// session, on the server the stateless requests share.
			meta := map[string]any{
				"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
				"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			}
			s26 := startRaw(t, bin, "--manifest", file, "--", server)
			resp, _ = s26.call("echo", map[string]any{"text": log}, meta)
			if res := s26.result("echo 2026", resp); len(res.Content) == 1 {
				got["mcp 2026"] = res.Content[0].Text
			} else {
				t.Errorf("mcp 2026: %d blocks, want 1", len(res.Content))
			}
			c := &httpMCPClient{t: t, url: startListen(t, bin, "--manifest", file, "--", server), stateless: true}
			resp = c.post(c.requestBody("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": log}}), true)
			var lr toolResult
			if resp.Error != nil || json.Unmarshal(resp.Result, &lr) != nil || len(lr.Content) != 1 {
				t.Errorf("listen 2026: %.300s", resp.raw)
			} else {
				got["listen 2026"] = lr.Content[0].Text
			}

			want := got["worker"]
			if want == log {
				t.Fatalf("the worker did not cut the %d-byte log", len(log))
			}
			if err := capcheck.Text(log, want, p); err != nil {
				t.Errorf("the worker's output: %v", err)
			}
			for _, fe := range []string{"cap", "mcp", "hook", "mcp 2026", "listen 2026"} {
				if diff := cmp.Diff(want, got[fe]); diff != "" {
					t.Errorf("toolcap %s differs from the worker (-worker +%s):\n%s", fe, fe, diff)
				}
			}
		})
	}
}
