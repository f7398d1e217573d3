package mcpproxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/mcpproxy"
)

// orderServer is a streamable HTTP server that records the order in which
// POSTs reach it, holds the answer to test/held (without headers, as the
// go-sdk's server does for a call that has sent nothing yet) until told,
// and answers everything else at once.
type orderServer struct {
	t *testing.T
	// initSSE answers initialize on a stream of events that stays open
	// until the session ends.
	initSSE bool
	release chan struct{} // test/held is answered once it is closed
	noted   chan struct{} // closed when the client's notification arrives

	mu       sync.Mutex
	entered  int      // POSTs that reached the handler
	arrivals []string // each POST's message, by the order it reached the handler
}

func (o *orderServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed) // no GET stream
		return
	}
	// The order is taken as the POST reaches the handler, before its body
	// is read: a request of many megabytes cannot have been written whole
	// before then, so whatever its sender sends next comes after.
	o.mu.Lock()
	seq := o.entered
	o.entered++
	o.arrivals = append(o.arrivals, "")
	o.mu.Unlock()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		o.t.Errorf("reading a POST: %v", err)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		o.t.Errorf("a POST of %d bytes is not a message: %v", len(body), err)
	}
	o.mu.Lock()
	o.arrivals[seq] = strings.TrimSpace(m.Method + " " + string(m.ID))
	o.mu.Unlock()
	if m.Method != "initialize" {
		if got := r.Header.Get("Mcp-Session-Id") + " " + r.Header.Get("Mcp-Protocol-Version"); got != "s1 2025-06-18" {
			o.t.Errorf("%s: session and version headers %q, want %q", m.Method, got, "s1 2025-06-18")
		}
	}
	switch {
	case m.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", "s1")
		result := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"order","version":"1"}}}`, m.ID)
		if !o.initSSE {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, result)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", result)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	case m.ID == nil: // a notification
		if m.Method == "notifications/roots/list_changed" {
			close(o.noted)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	case m.Method == "test/held":
		select {
		case <-o.release:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"method":%q}}`, m.ID, m.Method)
}

func TestDialHTTPKeepsOrderWithoutBlocking(t *testing.T) {
	for _, tt := range []struct {
		name    string
		initSSE bool
	}{
		{"initialize answered as JSON", false},
		{"initialize answered on a stream left open", true},
	} {
		t.Run(tt.name, func(t *testing.T) { testDialHTTPOrder(t, tt.initSSE) })
	}
}

func testDialHTTPOrder(t *testing.T, initSSE bool) {
	o := &orderServer{t: t, initSSE: initSSE, release: make(chan struct{}), noted: make(chan struct{})}
	hs := httptest.NewServer(o)
	defer hs.Close()
	released := sync.OnceFunc(func() { close(o.release) })
	defer released()

	// Requests larger than what the sockets between the two can buffer.
	const pad = 16 << 20
	p, err := mcpproxy.New(mcpproxy.Options{MaxMessageBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	up, err := mcpproxy.DialHTTP(ctx, hs.URL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close() // on a failure, Serve may not get to it
	clientEnd, proxyDown := pipePair()
	defer clientEnd.Close()
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, mcpproxy.StreamConn(proxyDown), up) }()
	answers := bufio.NewReaderSize(clientEnd.r, 1<<20)

	send := func(frames ...string) {
		go func() { _, _ = io.WriteString(clientEnd, strings.Join(frames, "\n")+"\n") }()
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if got := readLine(t, answers); !strings.Contains(got, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize answered %.200q", got)
	}
	big := func(id int, method string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"pad":%q}}`, id, method, strings.Repeat("x", pad))
	}
	// All at once, as a client that does not wait for answers sends them.
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		big(2, "test/held"),
		`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`,
		big(3, "test/big"),
		`{"jsonrpc":"2.0","id":4,"method":"test/small"}`)

	// The notification is not held up behind the request the server has
	// not answered yet (it is answered only once the notification is in).
	select {
	case <-o.noted:
	case <-time.After(20 * time.Second):
		t.Fatal("the notification did not reach the server within 20s: held up behind initialize or the request before it")
	}
	released()

	var ids []string
	for range 3 {
		var resp struct {
			ID     json.RawMessage `json:"id"`
			Result struct{ Method string }
		}
		line := readLine(t, answers)
		if err := json.Unmarshal([]byte(line), &resp); err != nil || resp.Result.Method == "" {
			t.Fatalf("an answer %.200q (%v), want a result", line, err)
		}
		ids = append(ids, string(resp.ID)+" "+resp.Result.Method)
	}
	slices.Sort(ids)
	if diff := cmp.Diff([]string{"2 test/held", "3 test/big", "4 test/small"}, ids); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}

	clientEnd.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	want := []string{
		"initialize 1",
		"notifications/initialized",
		"test/held 2",
		"notifications/roots/list_changed",
		"test/big 3",
		"test/small 4",
	}
	if diff := cmp.Diff(want, o.arrivals); diff != "" {
		t.Errorf("the order the server received the messages in (-want +got):\n%s", diff)
	}
}

// retryServer closes a request's stream of events after its priming event
// (an id and a retry field, no data), as a server that has the client
// poll does (SEP-1699), and answers on the GET that resumes it.
type retryServer struct {
	retry string // the retry field; "" for none
	id    string // the priming event's id; "" for none

	mu         sync.Mutex
	closedAt   time.Time // when the request's stream was ended
	resumedAt  time.Time
	lastEvent  string // the resuming GET's Last-Event-ID
	pendingID  json.RawMessage
	resumeGETs int
}

func (s *retryServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		s.mu.Lock()
		id, last := s.pendingID, r.Header.Get("Last-Event-ID")
		if last == "" {
			s.mu.Unlock()
			w.WriteHeader(http.StatusMethodNotAllowed) // no stream of its own
			return
		}
		s.resumedAt, s.lastEvent = time.Now(), last
		s.resumeGETs++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: after\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"resumed\":true}}\n\n", id)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // a stream left open: the client stops reading it
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &m)
	if m.Method != "test/poll" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if s.id != "" {
		fmt.Fprintf(w, "id: %s\n", s.id)
	}
	if s.retry != "" {
		fmt.Fprintf(w, "retry: %s\n", s.retry)
	}
	io.WriteString(w, "data: \n\n")
	w.(http.Flusher).Flush()
	s.mu.Lock()
	s.pendingID, s.closedAt = m.ID, time.Now()
	s.mu.Unlock()
}

func TestDialHTTPSSERetry(t *testing.T) {
	for _, tt := range []struct {
		name       string
		retry, id  string
		minDelay   time.Duration
		wantResult bool
	}{
		{"the retry field is waited, and Last-Event-ID sent", "400", "prime-1", 400 * time.Millisecond, true},
		{"no retry field: a short backoff", "", "prime-1", 0, true},
		{"no id: the request is answered with an error", "50", "", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := &retryServer{retry: tt.retry, id: tt.id}
			hs := httptest.NewServer(srv)
			defer hs.Close()
			c, err := mcpproxy.DialHTTP(context.Background(), hs.URL, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			r := bufio.NewReader(c)
			_ = exchange(t, c, r, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
			start := time.Now()
			a := exchange(t, c, r, `{"jsonrpc":"2.0","id":2,"method":"test/poll"}`)
			if string(a.ID) != "2" || (a.Error == nil) != tt.wantResult {
				t.Fatalf("test/poll answered id %s, error %+v, result %s; want a result: %v", a.ID, a.Error, a.Result, tt.wantResult)
			}
			if !tt.wantResult {
				if !strings.Contains(a.Error.Message, "no event id") {
					t.Errorf("the error %q does not say why the stream could not be resumed", a.Error.Message)
				}
				return
			}
			srv.mu.Lock()
			delay, last, gets := srv.resumedAt.Sub(srv.closedAt), srv.lastEvent, srv.resumeGETs
			srv.mu.Unlock()
			if diff := cmp.Diff([]any{tt.id, 1}, []any{last, gets}); diff != "" {
				t.Errorf("Last-Event-ID and resuming GETs (-want +got):\n%s", diff)
			}
			// Bounded: the server asked for the delay, not for much more.
			if delay < tt.minDelay || delay > tt.minDelay+2*time.Second {
				t.Errorf("resumed %v after the stream ended, want in [%v, %v]", delay, tt.minDelay, tt.minDelay+2*time.Second)
			}
			if took := time.Since(start); took > tt.minDelay+5*time.Second {
				t.Errorf("the answer took %v", took)
			}
		})
	}
}

func TestDialHTTPCloseDuringRetry(t *testing.T) {
	// A retry field of a day: Close does not wait for it, and the request
	// gets no late answer from a closed connection.
	srv := &retryServer{retry: "86400000", id: "p"}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c, err := mcpproxy.DialHTTP(context.Background(), hs.URL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	_ = exchange(t, c, r, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	if err := c.WriteMessage([]byte(`{"jsonrpc":"2.0","id":2,"method":"test/poll"}`)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		srv.mu.Lock()
		closed := !srv.closedAt.IsZero()
		srv.mu.Unlock()
		if closed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not end the request's stream")
		}
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for the server's retry delay")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Close took %v", took)
	}
	if _, err := r.ReadString('\n'); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("reading after Close = %v, want the end of the connection", err)
	}
}

// A server that answers a notification or a response with 200 and JSON,
// where the transport says 202 and no body (the conformance suite's
// client-scenario server answers {"jsonrpc":"2.0","result":{}}, a response
// with no id): that body answers nothing and is not relayed, so the next
// thing the client reads is the answer to its next request.
func TestDialHTTPDropsAnswerToNotification(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed) // no GET stream
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &m)
		w.Header().Set("Content-Type", "application/json")
		if m.ID == nil {
			io.WriteString(w, `{"jsonrpc":"2.0","result":{}}`)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"method":%q}}`, m.ID, m.Method)
	}))
	defer hs.Close()
	c, err := mcpproxy.DialHTTP(context.Background(), hs.URL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if a := exchange(t, c, r, initialize); a.Error != nil {
		t.Fatalf("initialize: %+v", a.Error)
	}
	for _, n := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"s1","result":{}}`, // a response to a request of the server's
	} {
		if err := c.WriteMessage([]byte(n)); err != nil {
			t.Fatalf("WriteMessage(%s) = %v", n, err)
		}
	}
	a := exchange(t, c, r, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if diff := cmp.Diff(`2 {"method":"tools/list"}`, string(a.ID)+" "+string(a.Result)); diff != "" {
		t.Errorf("the message read after the notification's answer: id and result (-want +got):\n%s", diff)
	}
}
