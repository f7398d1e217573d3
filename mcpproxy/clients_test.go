package mcpproxy_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// TestRelayClientLimits: the relay holds every result, and every page of
// the read tool, to the limit of the client that asked, as initialize's
// clientInfo names it or, in the stateless revision, the request's own
// _meta clientInfo (issue 41: Codex keeps 12,000 bytes of a result whole
// and cuts the middle out of a longer one, out of toolcap's sight).
func TestRelayClientLimits(t *testing.T) {
	text := strings.Repeat("0123456789abcdef\n", 1000) // 17,000 bytes
	m, err := manifest.Load(context.Background(), manifest.Bytes("t.toml", []byte("[worker.tool_output.clients]\nsmall-agent = 4096\n")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		initialize string // the client's name in initialize, "" for none
		meta       string // the client's name in the call's _meta
		limit      int
	}{
		{"no clientInfo: the default", "", "", manifest.DefaultMaxBytes},
		{"Claude Code: the default", "claude-code", "", manifest.DefaultMaxBytes},
		{"Codex: the built-in limit", "codex-mcp-client", "", 11776},
		{"a client of the manifest", "small-agent", "", 4096},
		{"the stateless revision's _meta", "", "codex-mcp-client", 11776},
		{"_meta over initialize", "small-agent", "codex-mcp-client", 11776},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, m), Rest: rest.NewMemory(rest.Config{})})
			if tc.initialize != "" {
				s.toServer(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` + tc.initialize + `","version":"1"}}}`)
				s.atServer()
				s.toClient(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`)
				s.atClient()
			}
			meta := ""
			if tc.meta != "" {
				meta = `,"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"` + tc.meta + `","version":"1"}}`
			}
			s.toServer(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{}` + meta + `}}`)
			s.atServer()
			answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
				"content": []any{map[string]any{"type": "text", "text": text}}}})
			s.toClient(string(answer))
			got := resultText(t, s.atClient())
			if len(got) > tc.limit || len(got) < tc.limit-200 {
				t.Fatalf("the result is %d bytes; want the client's limit, %d", len(got), tc.limit)
			}
			// Every page the markers name is within the client's limit too,
			// and the pages give the text back.
			read := ""
			for id := 2; ; id++ {
				ms := cut.FindMarkers(got)
				if len(ms) == 0 {
					read += got
					break
				}
				mk := ms[len(ms)-1]
				if mk.Rest == nil {
					t.Fatalf("the marker names no read: %q", got[mk.Start:])
				}
				read += got[:mk.Start]
				s.toServer(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"` + mk.Rest.Tool + `","arguments":` + mk.Rest.Args + meta + `}}`)
				got = resultText(t, s.atClient())
				if len(got) > tc.limit {
					t.Fatalf("a page of %d bytes, over the client's limit %d", len(got), tc.limit)
				}
			}
			if read != text {
				t.Errorf("the result and its pages give %d bytes; want the text's %d", len(read), len(text))
			}
		})
	}
}

// resultText returns the text of a tools/call response's one text block.
func resultText(t *testing.T, frame string) string {
	t.Helper()
	var r struct {
		Result struct {
			Content []struct{ Text string }
			IsError bool
		}
	}
	if err := json.Unmarshal([]byte(frame), &r); err != nil || len(r.Result.Content) != 1 || r.Result.IsError {
		t.Fatalf("want a success with one text block: %.300q", frame)
	}
	return r.Result.Content[0].Text
}

// A _meta of another shape than MCP's names no client, and never makes a
// call fail to decode: a read of the read tool is still answered by the
// proxy, its ref never sent to the server.
func TestRelayOddMeta(t *testing.T) {
	text := strings.Repeat("0123456789abcdef\n", 2000)
	s := newRawSession(t, mcpproxy.Options{Rest: rest.NewMemory(rest.Config{})})
	s.toServer(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{},"_meta":[]}}`)
	s.atServer()
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": text}}}})
	s.toClient(string(answer))
	got := resultText(t, s.atClient())
	ms := cut.FindMarkers(got)
	if len(ms) == 0 || ms[len(ms)-1].Rest == nil {
		t.Fatalf("the cut names no read: %q", got[max(0, len(got)-200):])
	}
	mk := ms[len(ms)-1]
	for i, meta := range []string{`[]`, `{"io.modelcontextprotocol/clientInfo":"codex"}`, `{"io.modelcontextprotocol/clientInfo":{"name":1}}`} {
		s.toServer(`{"jsonrpc":"2.0","id":` + strconv.Itoa(10+i) + `,"method":"tools/call","params":{"name":"` + mk.Rest.Tool + `","arguments":` + mk.Rest.Args + `,"_meta":` + meta + `}}`)
		page := resultText(t, s.atClient())
		if !strings.HasPrefix(text[len(got[:mk.Start]):], page[:64]) {
			t.Errorf("_meta %s: the read answered %.100q, not the text where the cut stopped", meta, page)
		}
	}
}
