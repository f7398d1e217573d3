//go:build !toolcap_nomcp

package cli

// --call-timeout (issue 21): a request the server leaves unanswered gets a
// JSON-RPC error after it, the server is told the request is cancelled,
// and the answer it sends later is dropped, so each request still gets
// exactly one answer.

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMCPCallTimeout(t *testing.T) {
	bin, server := buildBinary(t), buildFaultServer(t)
	const timeout = 500 * time.Millisecond
	s := startFault(t, bin, server, "--call-timeout", timeout.String())

	// ask: the server asks the client for its roots and waits for the
	// answer, which the test withholds.
	start := time.Now()
	id := s.request("tools/call", map[string]any{"name": "ask", "arguments": map[string]any{}})
	var asked *frame
	resp, _ := s.await(id, 10*time.Second, func(f *frame) {
		if f.Method == "roots/list" {
			asked = f
		}
	})
	took := time.Since(start)
	if resp == nil {
		t.Fatalf("no answer to the call; stderr:\n%s", tail(s.stderr.String()))
	}
	if resp.Error == nil || !strings.Contains(resp.Error.Message, "did not answer tools/call within 500ms (--call-timeout)") {
		t.Errorf("the answer is %s, want the call timeout's JSON-RPC error", resp.raw)
	}
	if took < timeout || took > timeout+3*time.Second {
		t.Errorf("the error came after %v, want soon after %v", took, timeout)
	}
	if asked == nil {
		t.Fatalf("the server's roots/list never came; stderr:\n%s", tail(s.stderr.String()))
	}

	// Answering the server now makes it answer the call: that late answer
	// is dropped, and the session goes on.
	s.write(map[string]any{"jsonrpc": "2.0", "id": asked.ID, "result": map[string]any{"roots": []any{}}})
	echo := s.request("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "after"}})
	var again []string
	resp, _ = s.await(echo, 10*time.Second, func(f *frame) {
		if f.isResponse() {
			again = append(again, string(f.ID))
		}
	})
	if got := s.result("echo", resp).text(); got != "after" {
		t.Errorf("echo = %q", got)
	}
	// No second answer to ask reached the client.
	if diff := cmp.Diff([]string(nil), again); diff != "" {
		t.Errorf("responses other than echo's reached the client (-want +got):\n%s", diff)
	}
	if !strings.Contains(s.stderr.String(), "did not answer a request within the call timeout") {
		t.Errorf("the timeout was not logged; stderr:\n%s", tail(s.stderr.String()))
	}

	// The late answer came, and was dropped rather than forwarded.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(s.stderr.String(), "dropped a response from the server to no pending request"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server's late answer was not dropped; stderr:\n%s", tail(s.stderr.String()))
		}
	}
	if code := s.close(); code != exitOK {
		t.Errorf("exit %d; stderr:\n%s", code, tail(s.stderr.String()))
	}
}
