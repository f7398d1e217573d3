//go:build !toolcap_nomcp

package cli

// /metrics of "toolcap mcp" (issue 21): labels only for the tools the
// server listed, so that client-chosen names cannot grow it, and a token
// off loopback, as for --listen.

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
)

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// scrape gets /metrics with the Authorization header auth ("" for none)
// and returns the status and the body.
func scrape(t *testing.T, addr, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	var resp *http.Response
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err = http.DefaultClient.Do(req); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

var toolLabel = regexp.MustCompile(`tool="([^"]*)"`)

// TestMCPMetricsLabels: end to end, a result of a tool the server listed
// is counted under its name, the read tool's under its own, and calls of
// names the server never listed, however many and however long, add no
// label: /metrics stays the same size whatever they are. (The fault server
// answers them with a JSON-RPC error, which is not a result; results of
// unlisted names are TestMCPMetricsUnlisted's.)
func TestMCPMetricsLabels(t *testing.T) {
	bin, server := buildBinary(t), buildFaultServer(t)
	addr := freeAddr(t)
	s := startFault(t, bin, server, "--metrics", addr)
	if resp, _ := s.await(s.request("tools/list", map[string]any{}), 30*time.Second, nil); resp == nil || resp.Error != nil {
		t.Fatalf("tools/list: %v; stderr:\n%s", resp, tail(s.stderr.String()))
	}
	s.call("big", map[string]any{"bytes": 100000}, nil)
	s.echo("the listed tools")
	s.call("toolcap_read", map[string]any{"ref": "aaaaaaaaaaaaaaaaaaaaaaaaaa", "offset": 0}, nil)
	_, small := scrape(t, addr, "")
	const unlisted = 50
	for i := range unlisted {
		name := strings.Repeat(string(rune('a'+i%26)), 10000) + strings.Repeat("z", i)
		if resp, _ := s.call(name, nil, nil); resp == nil {
			t.Fatalf("call %d: no answer; stderr:\n%s", i, tail(s.stderr.String()))
		}
	}
	_, body := scrape(t, addr, "")

	labels := map[string]bool{}
	for _, m := range toolLabel.FindAllStringSubmatch(body, -1) {
		labels[m[1]] = true
	}
	want := map[string]bool{"big": true, "echo": true, "toolcap_read": true}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("/metrics tool labels (-want +got):\n%s\n%s", diff, body)
	}
	for _, line := range []string{
		`toolcap_tool_results_total{outcome="cut",tool="big"} 1`,
		`toolcap_tool_results_total{outcome="fits",tool="echo"} 1`,
	} {
		if !strings.Contains(body, line) {
			t.Errorf("/metrics lacks %q:\n%s", line, body)
		}
	}
	if len(body) != len(small) {
		t.Errorf("/metrics went from %d to %d bytes with %d unlisted names, want no change", len(small), len(body), unlisted)
	}
	if code := s.close(); code != exitOK {
		t.Errorf("exit %d", code)
	}
}

// TestMCPMetricsUnlisted: the results of names the server did not list
// are counted together under tool="(unlisted)": 1000 names of 10 KB add
// one label, not 10 MB of them. Before the first tools/list, every name is
// unlisted; the read tool is listed when the proxy lists it.
func TestMCPMetricsUnlisted(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tools    []string
		readTool string
		want     map[string]bool
	}{
		{"no list yet", nil, "", map[string]bool{"(unlisted)": true}},
		{"listed", []string{"search", "fetch"}, "", map[string]bool{"search": true, "fetch": true, "(unlisted)": true}},
		{"read tool", []string{"search"}, "toolcap_read", map[string]bool{"search": true, "toolcap_read": true, "(unlisted)": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &mcpMetrics{tools: func() []string { return tc.tools }}
			m.setReadTool(tc.readTool)
			h := m.middleware(func(context.Context, chain.Call) chain.Result {
				text := "ok"
				return chain.Result{Content: &text}
			})
			names := append([]string{"search", "fetch", "toolcap_read"}, tc.tools...)
			for i := range 1000 {
				names = append(names, strings.Repeat("x", 10000)+strconv.Itoa(i))
			}
			for _, name := range names {
				h(context.Background(), chain.Call{Tool: name})
			}
			b := httptest.NewRecorder()
			m.ServeHTTP(b, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			got := map[string]bool{}
			for _, l := range toolLabel.FindAllStringSubmatch(b.Body.String(), -1) {
				got[l[1]] = true
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("tool labels (-want +got):\n%s", diff)
			}
			if b.Body.Len() > 16<<10 {
				t.Errorf("/metrics is %d bytes for %d names, want a few KB", b.Body.Len(), len(names))
			}
			// Every result is counted, under some label.
			total := 0
			for _, l := range regexp.MustCompile(`toolcap_tool_results_total\{[^}]*\} (\d+)`).FindAllStringSubmatch(b.Body.String(), -1) {
				n, _ := strconv.Atoi(l[1])
				total += n
			}
			if total != len(names) {
				t.Errorf("results counted %d, want %d", total, len(names))
			}
		})
	}
}

// TestMCPMetricsToken: --metrics off loopback needs --token, and with a
// token every scrape must carry it, the bearer scheme in any case.
func TestMCPMetricsToken(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics", "0.0.0.0:9464", "--", "x"}, "--metrics 0.0.0.0:9464 is not a loopback address: it needs --token"},
		{[]string{"--metrics", "[::]:9464", "--", "x"}, "--metrics [::]:9464 is not a loopback address: it needs --token"},
		{[]string{"--token", "t", "--", "x"}, "--token needs --listen or --metrics"},
		{[]string{"--max-sessions", "3", "--", "x"}, "--max-sessions needs --listen"},
		{[]string{"--session-idle", "1m", "--", "x"}, "--session-idle needs --listen"},
		{[]string{"--listen", "127.0.0.1:0", "--max-sessions", "0", "--", "x"}, "--max-sessions 0: must be positive"},
		{[]string{"--listen", "127.0.0.1:0", "--session-idle", "0s", "--", "x"}, "--session-idle 0s: must be positive"},
		{[]string{"--stateless-servers", "2", "--", "x"}, "--stateless-servers needs --listen"},
		{[]string{"--listen", "127.0.0.1:0", "--stateless-servers", "-1", "--", "x"}, "--stateless-servers -1: must not be negative"},
	} {
		code, _, stderr := mcpRun(t, strings.NewReader(""), nil, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("toolcap mcp %q = %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}

	bin, server := buildBinary(t), buildFaultServer(t)
	addr := freeAddr(t)
	s := startFault(t, bin, server, "--metrics", addr, "--token", "s3cret")
	for _, tc := range []struct {
		auth string
		want int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"Basic s3cret", http.StatusUnauthorized},
		{"Bearer s3cret", http.StatusOK},
		{"bearer s3cret", http.StatusOK},
		{"BEARER s3cret", http.StatusOK},
	} {
		if code, body := scrape(t, addr, tc.auth); code != tc.want {
			t.Errorf("GET /metrics with Authorization %q: %d, want %d: %s", tc.auth, code, tc.want, body)
		}
	}
	if code := s.close(); code != exitOK {
		t.Errorf("exit %d", code)
	}
}

// TestMCPMetricsLabelsStateless: stateless clients (MCP 2026-07-28)
// through --listen, whose calls a shared server carries, grow /metrics no
// more than a session's do: labels for the listed tools only, whatever
// names the calls give.
func TestMCPMetricsLabelsStateless(t *testing.T) {
	bin, server := buildBinary(t), buildFaultServer(t)
	addr := freeAddr(t)
	c := &httpMCPClient{t: t, url: startListen(t, bin, "--metrics", addr, "--", server), stateless: true}
	if resp := c.post(c.requestBody("tools/list", map[string]any{}), true); resp.Error != nil {
		t.Fatalf("tools/list: %s", resp.raw)
	}
	c.callText("echo")
	if resp := c.post(c.requestBody("tools/call", map[string]any{"name": "big", "arguments": map[string]any{"bytes": 100000}}), true); resp.Error != nil {
		t.Fatalf("big: %s", resp.raw)
	}
	_, small := scrape(t, addr, "")
	for i := range 50 {
		name := strings.Repeat(string(rune('a'+i%26)), 10000) + strings.Repeat("z", i)
		if resp := c.post(c.requestBody("tools/call", map[string]any{"name": name, "arguments": map[string]any{}}), true); resp == nil {
			t.Fatalf("call %d: no answer", i)
		}
	}
	_, body := scrape(t, addr, "")
	labels := map[string]bool{}
	for _, m := range toolLabel.FindAllStringSubmatch(body, -1) {
		labels[m[1]] = true
	}
	if diff := cmp.Diff(map[string]bool{"big": true, "echo": true}, labels); diff != "" {
		t.Errorf("/metrics tool labels (-want +got):\n%s\n%s", diff, body)
	}
	for _, line := range []string{
		`toolcap_tool_results_total{outcome="cut",tool="big"} 1`,
		`toolcap_tool_results_total{outcome="fits",tool="echo"} 1`,
	} {
		if !strings.Contains(body, line) {
			t.Errorf("/metrics lacks %q:\n%s", line, body)
		}
	}
	if len(body) != len(small) {
		t.Errorf("/metrics went from %d to %d bytes with 50 unlisted names, want no change", len(small), len(body))
	}
}
