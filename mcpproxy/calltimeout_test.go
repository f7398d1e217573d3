package mcpproxy_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/mcpproxy"
)

// frameSummary is a frame as these tests compare it: its method and the
// requestId of its params (for notifications/cancelled), or its id and
// error message.
func frameSummary(t *testing.T, frame string) string {
	t.Helper()
	var f struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(frame), &f); err != nil {
		t.Fatalf("not JSON: %.200s: %v", frame, err)
	}
	switch {
	case f.Method == "notifications/cancelled":
		return f.Method + " " + string(f.Params.RequestID)
	case f.Method != "":
		return f.Method
	case f.Error != nil:
		return "error " + string(f.ID) + ": " + f.Error.Message
	}
	return "result " + string(f.ID)
}

// lineWithin returns the next line of r if one comes within d. It is the
// last read of r: one that times out is left pending.
func lineWithin(r *bufio.Reader, d time.Duration) (string, bool) {
	ch := make(chan string, 1)
	go func() {
		if s, err := r.ReadString('\n'); err == nil {
			ch <- strings.TrimSuffix(s, "\n")
		}
	}()
	select {
	case s := <-ch:
		return s, true
	case <-time.After(d):
		return "", false
	}
}

// TestCallTimeoutCancels: a request the server leaves unanswered past the
// call timeout gets an error, and the server a notifications/cancelled for
// it, except for initialize, which MCP forbids cancelling.
func TestCallTimeoutCancels(t *testing.T) {
	tests := []struct {
		method string
		want   []string // what the server gets after the request
	}{
		{"initialize", []string{"ping"}},
		{"tools/call", []string{"notifications/cancelled 7", "ping"}},
		{"resources/read", []string{"notifications/cancelled 7", "ping"}},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			s := newRawSession(t, mcpproxy.Options{CallTimeout: 50 * time.Millisecond})
			s.toServer(fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":%q,"params":{}}`, tt.method))
			if got := frameSummary(t, s.atServer()); got != tt.method {
				t.Fatalf("the server got %q, want %q", got, tt.method)
			}
			wantErr := "error 7: toolcap: the MCP server did not answer " + tt.method + " within 50ms (--call-timeout); the request was cancelled"
			if diff := cmp.Diff(wantErr, frameSummary(t, s.atClient())); diff != "" {
				t.Fatalf("the client's answer (-want +got):\n%s", diff)
			}
			// A ping after it: the server gets the cancellation, when there
			// is one, in either order with the ping, and nothing more.
			s.toServer(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
			var got []string
			for range tt.want {
				got = append(got, frameSummary(t, s.atServer()))
			}
			if len(got) == 2 && got[0] == "ping" {
				got[0], got[1] = got[1], got[0]
			}
			if line, ok := lineWithin(s.sr, 200*time.Millisecond); ok {
				got = append(got, frameSummary(t, line))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("what the server got after the request (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCallTimeoutReleasedOnAnswer: an answered request's call timeout is
// stopped, so that it no longer holds the request's id (nor the session)
// for the rest of the timeout: 40 answered requests with ids of 256 KiB,
// under an hour's timeout, leave the heap far below the 10 MiB their
// timers would hold.
func TestCallTimeoutReleasedOnAnswer(t *testing.T) {
	s := newRawSession(t, mcpproxy.Options{CallTimeout: time.Hour})
	const n, idLen = 40, 256 << 10
	heap := func() int64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	// A message of this size moves each side's read buffer to a large one,
	// kept while such messages come: grown before the count starts, as it
	// is not what this measures.
	s.toServer(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":"` + strings.Repeat("w", idLen) + `"}}`)
	s.atServer()
	s.toClient(`{"jsonrpc":"2.0","method":"notifications/message","params":{"x":"` + strings.Repeat("w", idLen) + `"}}`)
	s.atClient()
	before := heap()
	for i := range n {
		id := fmt.Sprintf(`"%d-%s"`, i, strings.Repeat("i", idLen))
		s.toServer(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if got := frameSummary(t, s.atServer()); got != "ping" {
			t.Fatalf("the server got %.80q, want the ping", got)
		}
		s.toClient(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`)
		if got, want := frameSummary(t, s.atClient()), "result "+id; got != want {
			t.Fatalf("the client got %.80q, want %.80q", got, want)
		}
	}
	if grew, most := heap()-before, int64(n*idLen/4); grew > most {
		t.Errorf("the heap grew by %d bytes after %d answered requests with %d-byte ids, want at most %d: their call timeouts still hold them",
			grew, n, idLen, most)
	}
}
