package mcpproxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/mcpproxy"
)

// batchUpstream dials a server per session that answers every request it
// reads, alone or in a batch, with an empty result (one line per answer),
// and never answers an id of null, which JSON-RPC makes a notification.
func batchUpstream(context.Context) (mcpproxy.Conn, error) {
	serverEnd, proxyUp := pipePair()
	go func() {
		sr := bufio.NewReaderSize(serverEnd.r, 1<<20)
		for {
			l, err := sr.ReadString('\n')
			if err != nil {
				return
			}
			elems := []json.RawMessage{json.RawMessage(l)}
			if strings.HasPrefix(l, "[") && json.Unmarshal([]byte(l), &elems) != nil {
				continue
			}
			for _, e := range elems {
				var m struct {
					ID     json.RawMessage
					Method string
				}
				if json.Unmarshal(e, &m) != nil || m.ID == nil || string(m.ID) == "null" || m.Method == "" {
					continue
				}
				if _, err := io.WriteString(serverEnd, hsResult(string(m.ID))+"\n"); err != nil {
					return
				}
			}
		}
	}()
	return mcpproxy.StreamConn(proxyUp), nil
}

// postIDs posts body and returns the status and the ids of the responses
// on its stream (or its JSON answer), in order; it fails the test when the POST is not
// answered in full within 5s.
func postIDs(t *testing.T, url, session, body string) (int, []string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("POST %.80q: %v", body, err)
	}
	defer resp.Body.Close()
	var ids []string
	for _, d := range hsEvents(t, resp.Body) {
		var m struct{ ID json.RawMessage }
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("an event that is not JSON: %.200q", d)
		}
		ids = append(ids, string(m.ID))
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("POST %.80q: the answer did not end within 5s: %v", body, err)
	}
	return resp.StatusCode, ids
}

// TestHTTPAnswersEveryPOST: every POST ends, with an answer for each of
// its requests, whatever the nesting of a batch or the ids it carries: a
// batch is measured as the relay measures it (the batch's bracket is a
// level), and an id of null is no id.
func TestHTTPAnswersEveryPOST(t *testing.T) {
	p := hsProxy(t, nil)
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: batchUpstream})
	session := hsInitialize(t, hs.URL, nil)
	// deep is a request whose params hold arrays n deep: the request is
	// n+2 levels deep, n+3 in a batch.
	deep := func(id, n int) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"ping","params":{"v":` +
			strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`
	}
	const maxDepth = 10000 // encoding/json's and the relay's
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantIDs    []string
	}{
		{"batch at the relay's bound", `[` + deep(2, maxDepth-3) + `]`, http.StatusOK, []string{"2"}},
		// Refused whole, with one JSON-RPC error whose id is null (the
		// batch was not read), as JSON-RPC answers a batch it cannot read.
		{"batch whose element is at encoding/json's bound", `[` + deep(3, maxDepth-2) + `]`, http.StatusBadRequest, []string{"null"}},
		{"batch whose element is at the bound, after a shallow one", `[{"jsonrpc":"2.0","id":4,"method":"ping"},` + deep(5, maxDepth-2) + `]`, http.StatusBadRequest, []string{"null"}},
		{"request with an id of null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, http.StatusAccepted, nil},
		{"batch with an id of null", `[{"jsonrpc":"2.0","id":null,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"ping"}]`, http.StatusOK, []string{"6"}},
		// Again: the null id is not pending (it was never waited for).
		{"batch with an id of null, again", `[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","method":"ping","id":null}]`, http.StatusOK, []string{"6"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, ids := postIDs(t, hs.URL, session, tc.body)
			if diff := cmp.Diff(tc.wantStatus, status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantIDs, ids); diff != "" {
				t.Errorf("the ids answered on the POST's stream (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHTTPIdleBodiesDoNotLockOutPOSTs: connections that announce bodies
// as large as the bound and send nothing hold next to nothing of the
// budget of bodies, so that other POSTs are still taken; a Content-Length
// over the bound is answered 413 at once.
func TestHTTPIdleBodiesDoNotLockOutPOSTs(t *testing.T) {
	const size = 1 << 20
	p := hsProxy(t, nil)
	up := &hsUpstream{}
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial, MaxMessageBytes: size, MaxBodyBytes: 4 * (size + 1), BodyTimeout: 20 * time.Second})
	session := hsInitialize(t, hs.URL, nil)
	addr := strings.TrimPrefix(hs.URL, "http://")
	head := func(length int) string {
		return "POST / HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
			"Mcp-Session-Id: " + session + "\r\nContent-Length: " + strconv.Itoa(length) + "\r\n\r\n"
	}
	for range 8 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, head(size)); err != nil {
			t.Fatal(err)
		}
	}
	// The idle POSTs reach their bodies' reads (no event says when).
	time.Sleep(300 * time.Millisecond)
	for i := range 5 {
		resp := hsPost(t, hs.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
		if resp.StatusCode != http.StatusAccepted {
			body, _ := io.ReadAll(resp.Body)
			t.Fatalf("POST %d beside 8 idle ones: %s %q, want 202", i, resp.Status, body)
		}
	}

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, head(size+1)); err != nil {
		t.Fatal(err)
	}
	// No byte of the body is sent: the answer cannot wait for it.
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a Content-Length over the bound, with no body sent: %v", err)
	}
	resp.Body.Close()
	if diff := cmp.Diff(http.StatusRequestEntityTooLarge, resp.StatusCode); diff != "" {
		t.Errorf("a Content-Length over the bound: status (-want +got):\n%s", diff)
	}
}

// TestHTTPCloseCancelsDial: Close cancels a server's dial in progress, so
// that the POST waiting for it is answered, 503, rather than waiting out
// an upstream that never answers.
func TestHTTPCloseCancelsDial(t *testing.T) {
	p := hsProxy(t, nil)
	dialing := make(chan struct{})
	dial := func(ctx context.Context) (mcpproxy.Conn, error) {
		close(dialing)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(30 * time.Second):
			return nil, errors.New("the dial was not cancelled")
		}
	}
	h, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: dial})
	status := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(hsInit))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	select {
	case <-dialing:
	case <-time.After(5 * time.Second):
		t.Fatal("the dial did not start within 5s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case got := <-status:
		if diff := cmp.Diff(http.StatusServiceUnavailable, got); diff != "" {
			t.Errorf("the POST whose dial Close cancelled: status (-want +got):\n%s", diff)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the POST was not answered within 5s of Close: its dial was not cancelled")
	}
}

// TestHTTPExpiryRefusesOrKeeps: a request that arrives as its session
// expires is either refused as for an ended session, or served by a
// session that then does not expire under it: never admitted and then
// told that the session ended.
func TestHTTPExpiryRefusesOrKeeps(t *testing.T) {
	p := hsProxy(t, nil)
	up := &hsUpstream{}
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial, SessionIdle: 2 * time.Millisecond, MaxSessions: 16})
	// post posts body and returns the status, the body and the session
	// the answer names.
	post := func(session, body string) (int, string, string, error) {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			return 0, "", "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id"), err
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []string
		expired  int
	)
	deadline := time.Now().Add(1500 * time.Millisecond)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail := func(f string) {
				mu.Lock()
				failures = append(failures, f)
				mu.Unlock()
			}
			for time.Now().Before(deadline) {
				status, body, session, err := post("", hsInit)
				if err != nil || status != http.StatusOK {
					fail(fmt.Sprintf("initialize: %d %.200q %v", status, body, err))
					return
				}
				for time.Now().Before(deadline) {
					// Around the idle time, so that some requests meet
					// the expiry.
					time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
					status, body, _, err := post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
					if err == nil && status == http.StatusAccepted {
						continue
					}
					if err != nil || status != http.StatusNotFound || !strings.Contains(body, "unknown or ended session") {
						fail(fmt.Sprintf("a request as its session expired: %d %q %v, want 202, or 404 for an ended session", status, body, err))
						return
					}
					mu.Lock()
					expired++
					mu.Unlock()
					break // a new session
				}
			}
		}()
	}
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	if expired == 0 {
		t.Errorf("no session expired in 1.5s with an idle time of 2ms: the test tested nothing")
	}
}

// TestHTTPLateResponseStaysOffOtherStreams: the response to a request
// whose client has left its POST stream is not sent on another request's
// stream, where it would pass for an answer.
func TestHTTPLateResponseStaysOffOtherStreams(t *testing.T) {
	p := hsProxy(t, nil)
	up := &hsUpstream{script: func(req hsRequest) []string {
		switch req.ID {
		case "2":
			return []string{} // answered with 3's answer
		case "3":
			return []string{hsResult("2"), hsResult("3")}
		}
		return nil
	}}
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial})
	session := hsInitialize(t, hs.URL, nil)

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The stream has begun: the request was forwarded. Its client leaves.
	cancel()
	resp.Body.Close()
	// The proxy sees the connection close (no event says when).
	time.Sleep(300 * time.Millisecond)

	status, ids := postIDs(t, hs.URL, session, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if status != http.StatusOK {
		t.Errorf("status %d, want 200", status)
	}
	if diff := cmp.Diff([]string{"3"}, ids); diff != "" {
		t.Errorf("the ids answered on the second POST's stream (-want +got):\n%s", diff)
	}
}
