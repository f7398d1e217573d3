package mcpproxy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// costlyPattern takes about 16 ms for each line of 1 KiB of letters that
// it does not match: over the 2 MiB of keptRef, half a minute, minutes
// under the race detector.
const costlyPattern = `(\w+\s*){1,100}q`

// keptRef has s's server answer a call with 2 MiB of lines of 1 KiB, and
// returns the ref of the read its cut names.
func keptRef(t *testing.T, s *rawSession) string {
	t.Helper()
	text := strings.Repeat(strings.Repeat("abcdefghij", 102)+"\n", 2048)
	send(t, s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{}}}`)
	s.atServer()
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": text}}}})
	s.toClient(string(answer))
	got := resultText(t, s.atClient())
	ms := cut.FindMarkers(got)
	if len(ms) == 0 || ms[len(ms)-1].Rest == nil {
		t.Fatalf("the cut names no read: %q", got[max(0, len(got)-200):])
	}
	a, err := rest.ParseReadArgs(json.RawMessage(ms[len(ms)-1].Rest.Args))
	if err != nil {
		t.Fatal(err)
	}
	return a.Ref
}

// send writes frame from the client, and returns once the proxy has read
// it: frames sent so arrive in order (rawSession.toServer's may not).
func send(t *testing.T, s *rawSession, frame string) {
	t.Helper()
	if _, err := io.WriteString(s.client, frame+"\n"); err != nil {
		t.Fatal(err)
	}
}

// errorText returns the text of frame, an error result with one text
// block.
func errorText(t *testing.T, frame string) string {
	t.Helper()
	var r struct {
		Result struct {
			Content []struct{ Text string }
			IsError bool
		}
	}
	if err := json.Unmarshal([]byte(frame), &r); err != nil || len(r.Result.Content) != 1 || !r.Result.IsError {
		t.Fatalf("want an error result with one text block: %.300q", frame)
	}
	return r.Result.Content[0].Text
}

// readCall is a tools/call of the read tool, with id, of ref with pattern
// ("" for a page).
func readCall(id int, ref, pattern string) string {
	args := map[string]any{"ref": ref}
	if pattern != "" {
		args["pattern"] = pattern
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": rest.DefaultTool, "arguments": args}})
	return string(b)
}

// Issue 39, item 2: a read with a costly pattern runs off the session's
// loop, so that what the client sends meanwhile goes on (a ping reaches
// the server and its answer the client); it stops at the call timeout,
// answered with an error that says so, and when the client cancels it,
// answered with nothing; the cancellation, of a request the server never
// saw, is not forwarded.
func TestReadRunsOffTheSession(t *testing.T) {
	t.Run("call timeout", func(t *testing.T) {
		// Long enough for the call that keeps the text to be answered
		// under the race detector on a loaded machine; the read would
		// take minutes there.
		const timeout = 2 * time.Second
		s := newRawSession(t, mcpproxy.Options{Rest: rest.NewMemory(rest.Config{}), CallTimeout: timeout})
		ref := keptRef(t, s)
		start := time.Now()
		send(t, s, readCall(2, ref, costlyPattern))
		send(t, s, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
		if diff := cmp.Diff("ping", frameSummary(t, s.atServer())); diff != "" {
			t.Fatalf("what the server got during the read (-want +got):\n%s", diff)
		}
		pinged := time.Since(start)
		s.toClient(`{"jsonrpc":"2.0","id":3,"result":{}}`)
		frames := []string{s.atClient(), s.atClient()}
		took := time.Since(start)
		if frameSummary(t, frames[0]) != "result 3" {
			// The read's answer came first: the ping did not wait for it
			// all the same (pinged, below).
			frames[0], frames[1] = frames[1], frames[0]
		}
		got := []string{frameSummary(t, frames[0]), frameSummary(t, frames[1]), errorText(t, frames[1])}
		want := []string{"result 3", "result 2",
			"toolcap_read: the read did not finish within 2s (--call-timeout) and was stopped: its pattern costs too much over this output; use a simpler pattern, or read pages without one"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("what the client got (-want +got):\n%s", diff)
		}
		if pinged >= timeout {
			t.Errorf("the ping reached the server after %v, not before the read's timeout of %v", pinged, timeout)
		}
		if took > timeout+10*time.Second {
			t.Errorf("the read was answered after %v, past its timeout of %v", took, timeout)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		var logs logBuffer
		logger := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})
		s := newRawSession(t, mcpproxy.Options{Rest: rest.NewMemory(rest.Config{}), Logger: logger})
		ref := keptRef(t, s)
		send(t, s, readCall(2, ref, costlyPattern))
		send(t, s, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the user pressed Esc"}}`)
		waitFor(t, "the read to stop", func() bool { return logs.count("was cancelled by its client and stopped") == 1 })
		// The server got neither the read nor its cancellation: its next
		// frame is this ping. The client's next answer is the next read's.
		send(t, s, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
		got := []string{frameSummary(t, s.atServer())}
		send(t, s, readCall(4, ref, ""))
		got = append(got, frameSummary(t, s.atClient()))
		if diff := cmp.Diff([]string{"ping", "result 4"}, got); diff != "" {
			t.Errorf("after the cancellation (-want +got):\n%s", diff)
		}
	})
	t.Run("reads at once", func(t *testing.T) {
		s := newRawSession(t, mcpproxy.Options{Rest: rest.NewMemory(rest.Config{})})
		ref := keptRef(t, s)
		for i := range 8 {
			send(t, s, readCall(10+i, ref, costlyPattern))
		}
		send(t, s, readCall(20, ref, costlyPattern))
		frame := s.atClient()
		want := "toolcap_read: 8 reads are running in this session already; wait for one to finish"
		if diff := cmp.Diff(want, errorText(t, frame)); diff != "" {
			t.Errorf("the ninth read's answer (-want +got):\n%s", diff)
		}
		if id := frameSummary(t, frame); id != "result 20" {
			t.Errorf("the read refused: %s, want the ninth (20)", id)
		}
		for i := range 8 {
			send(t, s, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, 10+i))
		}
	})
}
