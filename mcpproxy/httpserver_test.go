package mcpproxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/mcpproxy"
)

// hsRequest is a request the scripted server read.
type hsRequest struct {
	ID     string // as JSON
	Method string
	Token  string // params._meta.progressToken, as JSON
}

// hsScript answers a request of the scripted server with the lines it
// writes back; nil for the default answer (an initialize result, or an
// empty result).
type hsScript func(req hsRequest) []string

// hsUpstream dials a scripted server per session; ended counts the servers
// whose input was closed (their session ended).
type hsUpstream struct {
	script hsScript
	dialed atomic.Int32
	ended  atomic.Int32
}

func (u *hsUpstream) dial(context.Context) (mcpproxy.Conn, error) {
	serverEnd, proxyUp := pipePair()
	u.dialed.Add(1)
	go func() {
		defer u.ended.Add(1)
		hsRequests(serverEnd.r, func(req hsRequest) bool {
			if req.Method == "server/discover" {
				return hsNoDiscover(serverEnd, req)
			}
			var out []string
			if u.script != nil {
				out = u.script(req)
			}
			if out == nil {
				out = []string{hsResult(req.ID)}
			}
			for _, o := range out {
				if _, err := io.WriteString(serverEnd, o+"\n"); err != nil {
					return false
				}
			}
			return true
		})
	}()
	return mcpproxy.StreamConn(proxyUp), nil
}

// hsRequests reads the requests the proxy sends a server from r, a line
// each, and hands each to serve until it reports false or r ends; other
// lines (notifications, responses) are skipped.
func hsRequests(r io.Reader, serve func(hsRequest) bool) {
	sr := bufio.NewReaderSize(r, 1<<20)
	for {
		l, err := sr.ReadString('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage
			Method string
			Params struct {
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
		}
		if json.Unmarshal([]byte(l), &m) != nil || m.ID == nil || m.Method == "" {
			continue
		}
		if !serve(hsRequest{ID: string(m.ID), Method: m.Method, Token: string(m.Params.Meta.ProgressToken)}) {
			return
		}
	}
}

// hsNoDiscover answers server/discover as a server of the 2025 revisions
// does (it has no such method), so that the go-sdk's client, which asks it
// first, falls back to initialize.
func hsNoDiscover(w io.Writer, req hsRequest) bool {
	_, err := io.WriteString(w, `{"jsonrpc":"2.0","id":`+req.ID+`,"error":{"code":-32601,"message":"method not found"}}`+"\n")
	return err == nil
}

func hsResult(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
}

const hsInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// hsServe serves a handler for opts on 127.0.0.1.
func hsServe(t *testing.T, p *mcpproxy.Proxy, opts mcpproxy.HTTPOptions) (*mcpproxy.HTTPHandler, *httptest.Server) {
	t.Helper()
	h := p.HTTPHandler(opts)
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		// Close first: it ends the streams the server's Close waits for.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		hs.Close()
	})
	return h, hs
}

func hsProxy(t *testing.T, logger hclog.Logger) *mcpproxy.Proxy {
	t.Helper()
	p, err := mcpproxy.New(mcpproxy.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// hsPost posts body with the transport's headers, changed by edit.
func hsPost(t *testing.T, url, session, body string, edit func(*http.Request)) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if edit != nil {
		edit(req)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// hsInitialize starts a session and returns its id.
func hsInitialize(t *testing.T, url string, edit func(*http.Request)) string {
	t.Helper()
	resp := hsPost(t, url, "", hsInit, edit)
	body, _ := io.ReadAll(resp.Body)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %s, session %q, %.200s", resp.Status, id, body)
	}
	return id
}

// hsEvents reads the messages of a POST's answer until it ends: the data
// of every event of an SSE body, or the message of a JSON body (the
// response alone, which the proxy answers as application/json).
func hsEvents(t *testing.T, body io.Reader) []string {
	t.Helper()
	br := bufio.NewReader(body)
	if b, err := br.Peek(1); err == nil && b[0] == '{' {
		msg, err := io.ReadAll(br)
		if err != nil {
			t.Errorf("reading a JSON answer: %v", err)
		}
		return []string{string(msg)}
	}
	var out []string
	sc := bufio.NewScanner(br)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// spyBody counts the bytes the handler read of a request's body.
type spyBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b spyBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// TestHTTPAdmission: each refusal the headers decide is made before a byte
// of the body is read, with the status the spec and the go-sdk use.
func TestHTTPAdmission(t *testing.T) {
	p := hsProxy(t, nil)
	up := &hsUpstream{}
	h := p.HTTPHandler(mcpproxy.HTTPOptions{Token: "secret", Dial: up.dial, MaxMessageBytes: 4096})
	var read atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = spyBody{r.Body, &read}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		_ = h.Close(context.Background())
		hs.Close()
	})
	auth := func(r *http.Request) { r.Header.Set("Authorization", "Bearer secret") }
	session := hsInitialize(t, hs.URL, auth)

	tests := []struct {
		name    string
		method  string
		session string
		body    string
		edit    func(*http.Request)
		want    int
		// readsBody: the request is admitted, so its body is read.
		readsBody bool
	}{
		{name: "no token", method: "POST", body: hsInit, edit: func(*http.Request) {}, want: 401},
		{name: "wrong token", method: "POST", body: hsInit, edit: func(r *http.Request) { r.Header.Set("Authorization", "Bearer secreT") }, want: 401},
		{name: "another scheme", method: "POST", body: hsInit, edit: func(r *http.Request) { r.Header.Set("Authorization", "Basic secret") }, want: 401},
		{name: "scheme in lower case", method: "POST", body: hsInit, edit: func(r *http.Request) { r.Header.Set("Authorization", "bearer secret") }, want: 200, readsBody: true},
		{name: "scheme in upper case, two spaces", method: "POST", body: hsInit, edit: func(r *http.Request) { r.Header.Set("Authorization", "BEARER  secret") }, want: 200, readsBody: true},
		{name: "foreign Host on loopback", method: "POST", session: session, body: hsInit, edit: func(r *http.Request) { auth(r); r.Host = "evil.example:80" }, want: 403},
		{name: "localhost Host", method: "POST", session: session, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, edit: func(r *http.Request) { auth(r); r.Host = "localhost" }, want: 202, readsBody: true},
		{name: "foreign Origin", method: "POST", session: session, body: hsInit, edit: func(r *http.Request) { auth(r); r.Header.Set("Origin", "https://evil.example") }, want: 403},
		{name: "unsupported protocol version", method: "POST", session: session, body: hsInit, edit: func(r *http.Request) { auth(r); r.Header.Set("MCP-Protocol-Version", "1999-01-01") }, want: 400},
		{name: "no Accept", method: "POST", session: session, body: hsInit, edit: func(r *http.Request) { auth(r); r.Header.Del("Accept") }, want: 406},
		{name: "Accept without events", method: "POST", session: session, body: hsInit, edit: func(r *http.Request) { auth(r); r.Header.Set("Accept", "application/json") }, want: 406},
		{name: "Content-Type text/plain", method: "POST", session: session, body: hsInit, edit: func(r *http.Request) { auth(r); r.Header.Set("Content-Type", "text/plain") }, want: 415},
		{name: "unknown session", method: "POST", session: "nope", body: hsInit, edit: auth, want: 404},
		{name: "GET without event-stream", method: "GET", session: session, edit: func(r *http.Request) { auth(r); r.Header.Set("Accept", "application/json") }, want: 406},
		{name: "GET without a session", method: "GET", edit: auth, want: 400},
		{name: "body over the bound", method: "POST", session: session, body: `{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("a", 8000) + `"}`, edit: auth, want: 413},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			read.Store(0)
			req, _ := http.NewRequest(tc.method, hs.URL, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.method == "GET" {
				req.Header.Set("Accept", "text/event-stream")
			}
			if tc.session != "" {
				req.Header.Set("Mcp-Session-Id", tc.session)
			}
			tc.edit(req)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if diff := cmp.Diff(tc.want, resp.StatusCode); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if n := read.Load(); !tc.readsBody && n != 0 {
				t.Errorf("the handler read %d bytes of a body it refused on the headers", n)
			} else if tc.want == 413 && n > 4096+512 {
				t.Errorf("the handler read %d bytes of a body over a bound of 4096", n)
			}
		})
	}
}

// TestHTTPBodyBudget: bodies held at once are bounded across requests: with
// a budget of two bodies, 48 POSTs of 64 KiB at once that send all of
// their bodies but the last byte get at most 2 held and the others a 503
// with Retry-After and a JSON-RPC error, as their bytes arrive; once the
// stalled ones end, a POST is taken again.
func TestHTTPBodyBudget(t *testing.T) {
	const size = 64 << 10
	p := hsProxy(t, nil)
	up := &hsUpstream{}
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial, MaxMessageBytes: size, MaxBodyBytes: 2 * (size + 1)})
	session := hsInitialize(t, hs.URL, nil)

	const n = 48
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		status = map[int]int{}
		conns  []net.Conn
	)
	addr := strings.TrimPrefix(hs.URL, "http://")
	head := "POST / HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		"Mcp-Session-Id: " + session + "\r\nContent-Length: " + strconv.Itoa(size) + "\r\n\r\n" + strings.Repeat(" ", size-1)
	for range n {
		// A raw connection: the headers and the body but its last byte go
		// at once, then the body stalls.
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return // a slow body cut short below
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable {
				var e struct {
					Error struct{ Code int }
				}
				if json.Unmarshal(body, &e) != nil || e.Error.Code != -32000 || resp.Header.Get("Retry-After") == "" {
					t.Errorf("a 503 without Retry-After or a JSON-RPC error: %q", body)
				}
			}
			mu.Lock()
			status[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		refused := status[http.StatusServiceUnavailable]
		mu.Unlock()
		if refused >= n-2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s, %d of %d stalled POSTs refused, want at least %d (statuses %v)", refused, n, n-2, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range conns {
		c.Close()
	}
	wg.Wait()
	// The proxy sees the slow bodies end, and gives their bytes back.
	waitFor(t, "a POST to be taken after the slow ones ended", func() bool {
		resp := hsPost(t, hs.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
		return resp.StatusCode == http.StatusAccepted
	})
}

// TestHTTPBodyTimeout: a body sent too slowly is answered 408 after the
// timeout, and its connection is not held.
func TestHTTPBodyTimeout(t *testing.T) {
	p := hsProxy(t, nil)
	up := &hsUpstream{}
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial, BodyTimeout: 200 * time.Millisecond})
	session := hsInitialize(t, hs.URL, nil)
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte("{")) }()
	req, _ := http.NewRequest(http.MethodPost, hs.URL, pr)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("a stalled body: %s, want 408", resp.Status)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a stalled body was answered after %s, want about 200ms", took)
	}
}

// TestHTTPSessionCap: beyond MaxSessions an initialize gets a 503 with a
// JSON-RPC error, and a session ended makes room.
func TestHTTPSessionCap(t *testing.T) {
	p := hsProxy(t, nil)
	up := &hsUpstream{}
	h, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial, MaxSessions: 3})
	var ids []string
	for range 3 {
		ids = append(ids, hsInitialize(t, hs.URL, nil))
	}
	resp := hsPost(t, hs.URL, "", hsInit, nil)
	body, _ := io.ReadAll(resp.Body)
	var e struct {
		ID    json.RawMessage
		Error struct {
			Code    int
			Message string
		}
	}
	if resp.StatusCode != http.StatusServiceUnavailable || json.Unmarshal(body, &e) != nil || e.Error.Code != -32000 ||
		!strings.Contains(e.Error.Message, "maximum of 3 sessions") || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a fourth session: %s, %q", resp.Status, body)
	}
	if got := up.dialed.Load(); got != 3 {
		t.Errorf("%d servers started, want 3", got)
	}
	req, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
	req.Header.Set("Mcp-Session-Id", ids[0])
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	waitFor(t, "the ended session to go", func() bool { return h.Sessions() == 2 })
	hsInitialize(t, hs.URL, nil)
}

// waitFor waits up to 10s for cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHTTPSessionIdle: a session with no request and no stream for
// SessionIdle ends and its server is stopped; an open GET stream keeps it.
func TestHTTPSessionIdle(t *testing.T) {
	p := hsProxy(t, nil)
	up := &hsUpstream{}
	h, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial, SessionIdle: 300 * time.Millisecond})
	kept := hsInitialize(t, hs.URL, nil)
	hsInitialize(t, hs.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", kept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	waitFor(t, "the idle session to end", func() bool { return h.Sessions() == 1 && up.ended.Load() == 1 })
	time.Sleep(600 * time.Millisecond)
	if n := h.Sessions(); n != 1 {
		t.Errorf("with its GET stream open, %d sessions left, want 1", n)
	}
	cancel()
	waitFor(t, "the session whose stream closed to end", func() bool { return h.Sessions() == 0 && up.ended.Load() == 2 })
}

// TestHTTPRoutesRelatedMessages: a progress notification goes on the stream
// of the request that gave its token, before its response, never on the
// GET stream or another request's; a message of unknown relation goes on
// the only pending request's stream, and on the GET stream when two are
// pending.
func TestHTTPRoutesRelatedMessages(t *testing.T) {
	progress := func(tok string, i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d}}`, tok, i)
	}
	const logLine = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	var mu sync.Mutex
	var held []hsRequest
	script := func(req hsRequest) []string {
		switch req.Method {
		case "solo":
			return []string{logLine, progress(req.Token, 1), progress(req.Token, 2), hsResult(req.ID)}
		case "pair":
			mu.Lock()
			defer mu.Unlock()
			held = append(held, req)
			if len(held) < 2 {
				return []string{} // answered with the second
			}
			var out []string
			out = append(out, logLine)
			for _, r := range held {
				out = append(out, progress(r.Token, 1), progress(r.Token, 2), progress(r.Token, 3))
			}
			for _, r := range held {
				out = append(out, hsResult(r.ID))
			}
			held = nil
			return out
		}
		return nil
	}
	p := hsProxy(t, nil)
	up := &hsUpstream{script: script}
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial})
	session := hsInitialize(t, hs.URL, nil)
	getCtx, stopGet := context.WithCancel(context.Background())
	defer stopGet()
	greq, _ := http.NewRequestWithContext(getCtx, http.MethodGet, hs.URL, nil)
	greq.Header.Set("Accept", "text/event-stream")
	greq.Header.Set("Mcp-Session-Id", session)
	gresp, err := http.DefaultClient.Do(greq)
	if err != nil {
		t.Fatal(err)
	}
	getEvents := make(chan []string, 1)
	go func() { getEvents <- hsEvents(t, gresp.Body) }()

	call := func(id, method, tok string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{"_meta":{"progressToken":` + tok + `}}}`
	}
	// One request pending: everything before its response is on its stream.
	got := hsEvents(t, hsPost(t, hs.URL, session, call("10", "solo", `"s"`), nil).Body)
	want := []string{logLine, progress(`"s"`, 1), progress(`"s"`, 2), hsResult("10")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the only pending request's stream (-want +got):\n%s", diff)
	}
	// Two pending: each stream has its own progress; the log line goes to
	// the GET stream.
	var wg sync.WaitGroup
	streams := make([][]string, 2)
	for i, c := range []string{call("20", "pair", `"a"`), call(`"21"`, "pair", `7`)} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			streams[i] = hsEvents(t, hsPost(t, hs.URL, session, c, nil).Body)
		}()
	}
	wg.Wait()
	wantA := []string{progress(`"a"`, 1), progress(`"a"`, 2), progress(`"a"`, 3), hsResult("20")}
	wantB := []string{progress(`7`, 1), progress(`7`, 2), progress(`7`, 3), hsResult(`"21"`)}
	if diff := cmp.Diff(wantA, streams[0]); diff != "" {
		t.Errorf("request 20's stream (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantB, streams[1]); diff != "" {
		t.Errorf("request \"21\"'s stream (-want +got):\n%s", diff)
	}
	time.Sleep(100 * time.Millisecond) // what the GET stream would get
	stopGet()
	if diff := cmp.Diff([]string{logLine}, <-getEvents); diff != "" {
		t.Errorf("the GET stream (-want +got):\n%s", diff)
	}
}

// TestHTTPRefusesPendingID: a request whose id is pending in the session
// is refused with a JSON-RPC error and not forwarded.
func TestHTTPRefusesPendingID(t *testing.T) {
	var forwarded atomic.Int32
	script := func(req hsRequest) []string {
		if req.Method == "hang" {
			forwarded.Add(1)
			return []string{}
		}
		return nil
	}
	p := hsProxy(t, nil)
	up := &hsUpstream{script: script}
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial})
	session := hsInitialize(t, hs.URL, nil)
	first := hsPost(t, hs.URL, session, `{"jsonrpc":"2.0","id":5,"method":"hang"}`, nil)
	if first.StatusCode != http.StatusOK {
		t.Fatalf("the first request: %s", first.Status)
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":5,"method":"hang"}`,
		`[{"jsonrpc":"2.0","id":6,"method":"hang"},{"jsonrpc":"2.0","id":6,"method":"hang"}]`,
	} {
		resp := hsPost(t, hs.URL, session, body, nil)
		msg, _ := io.ReadAll(resp.Body)
		var e struct {
			ID    json.RawMessage
			Error struct{ Code int }
		}
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(msg, &e) != nil || e.Error.Code != -32600 || string(e.ID) != "null" {
			t.Errorf("%s: %s %q, want 400 with an invalid-request error", body, resp.Status, msg)
		}
	}
	// The server reads the session's messages in order: once it answered
	// a request sent after the refused ones, it would have read them.
	if got := hsEvents(t, hsPost(t, hs.URL, session, `{"jsonrpc":"2.0","id":7,"method":"mark"}`, nil).Body); len(got) != 1 || got[0] != hsResult("7") {
		t.Fatalf("the request after the refused ones: %q, want its result", got)
	}
	if n := forwarded.Load(); n != 1 {
		t.Errorf("the server read %d hanging requests, want 1", n)
	}
}

// TestHTTPCutsOffUnreadGETStream: a GET stream whose client does not read
// it is cut off once the messages waiting for it pass StreamBuffer, rather
// than held: 20,000 notifications of 1 KiB (20 MiB) leave the proxy
// holding at most the buffer, and the session goes on.
func TestHTTPCutsOffUnreadGETStream(t *testing.T) {
	const n, buffer = 20000, 256 << 10
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("x", 1000) + `"}}`
	script := func(req hsRequest) []string {
		if req.Method != "flood" {
			return nil
		}
		out := []string{hsResult(req.ID)} // then nothing is pending: all go to the GET stream
		for range n {
			out = append(out, note)
		}
		return out
	}
	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := hclog.New(&hclog.LoggerOptions{Output: &lockedWriter{w: &logs, mu: &logMu}, Level: hclog.Warn})
	p := hsProxy(t, logger)
	up := &hsUpstream{script: script}
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial, StreamBuffer: buffer})
	session := hsInitialize(t, hs.URL, nil)
	greq, _ := http.NewRequest(http.MethodGet, hs.URL, nil)
	greq.Header.Set("Accept", "text/event-stream")
	greq.Header.Set("Mcp-Session-Id", session)
	gresp, err := http.DefaultClient.Do(greq)
	if err != nil {
		t.Fatal(err)
	}
	defer gresp.Body.Close()
	hsEvents(t, hsPost(t, hs.URL, session, `{"jsonrpc":"2.0","id":2,"method":"flood"}`, nil).Body)
	waitFor(t, "the GET stream to be cut off", func() bool {
		logMu.Lock()
		defer logMu.Unlock()
		return strings.Contains(logs.String(), "fell behind on its GET stream")
	})
	// The stream ends: what the socket held, then the end.
	done := make(chan int64, 1)
	go func() {
		n, _ := io.Copy(io.Discard, gresp.Body)
		done <- n
	}()
	select {
	case got := <-done:
		if got >= int64(n*len(note)) {
			t.Errorf("the GET stream carried %d bytes, all of the flood", got)
		}
		t.Logf("the cut-off GET stream carried %d of %d bytes", got, n*(len(note)+22))
	case <-time.After(10 * time.Second):
		t.Fatal("the cut-off GET stream did not end within 10s")
	}
	// The session goes on.
	if got := hsEvents(t, hsPost(t, hs.URL, session, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil).Body); len(got) == 0 {
		t.Error("no answer after the flood")
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestHTTPResumesGETStream: GET stream events have ids (stream 0's), and a GET with
// Last-Event-ID gets the events after it, those sent while no stream was
// open included.
func TestHTTPResumesGETStream(t *testing.T) {
	note := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}`, i)
	}
	var next atomic.Int32
	script := func(req hsRequest) []string {
		if req.Method != "notes" {
			return nil
		}
		out := []string{hsResult(req.ID)}
		for range 3 {
			out = append(out, note(int(next.Add(1))))
		}
		return out
	}
	p := hsProxy(t, nil)
	up := &hsUpstream{script: script}
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial})
	session := hsInitialize(t, hs.URL, nil)
	get := func(lastID string) (*http.Response, *bufio.Reader) {
		req, _ := http.NewRequest(http.MethodGet, hs.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp, bufio.NewReader(resp.Body)
	}
	// event reads one event: its id and data.
	event := func(br *bufio.Reader) (string, string) {
		var id, data string
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the GET stream: %v", err)
			}
			l = strings.TrimSuffix(l, "\n")
			switch {
			case l == "" && data != "":
				return id, data
			case strings.HasPrefix(l, "id: "):
				id = l[4:]
			case strings.HasPrefix(l, "data: "):
				data = l[6:]
			}
		}
	}
	resp, br := get("")
	hsEvents(t, hsPost(t, hs.URL, session, `{"jsonrpc":"2.0","id":2,"method":"notes"}`, nil).Body)
	var got [][2]string
	for range 3 {
		id, data := event(br)
		got = append(got, [2]string{id, data})
	}
	resp.Body.Close()
	want := [][2]string{{"0_1", note(1)}, {"0_2", note(2)}, {"0_3", note(3)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the first GET stream (-want +got):\n%s", diff)
	}
	// With no stream open, three more wait; resuming after event 2 gets
	// event 3 again, then those.
	time.Sleep(100 * time.Millisecond) // the proxy sees the stream closed
	hsEvents(t, hsPost(t, hs.URL, session, `{"jsonrpc":"2.0","id":3,"method":"notes"}`, nil).Body)
	resp, br = get("0_2")
	defer resp.Body.Close()
	got = nil
	for range 4 {
		id, data := event(br)
		got = append(got, [2]string{id, data})
	}
	want = [][2]string{{"0_3", note(3)}, {"0_4", note(4)}, {"0_5", note(5)}, {"0_6", note(6)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the resumed GET stream (-want +got):\n%s", diff)
	}
}
