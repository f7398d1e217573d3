package mcpproxy_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// The tests of the stateless revision of MCP (2026-07-28): requests with
// no session and no initialize, served on the handler's lanes.

const slVersion = "2026-07-28"

// slBody returns a request of the stateless revision: params (nil for
// none) with the _meta every such request carries, merged with the
// _meta params gives.
func slBody(t testing.TB, id any, method string, params map[string]any) string {
	t.Helper()
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    slVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	if m, ok := p["_meta"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	p["_meta"] = meta
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": p})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// slRequest returns a request (a POST, for a body) with the headers a
// stateless client sends (SEP-2243: the version, the method, the name),
// changed by edit.
func slRequest(ctx context.Context, method, url, body string, edit func(*http.Request)) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", slVersion)
	var m struct {
		Method string
		Params struct {
			Name *string
			URI  *string
		}
	}
	if json.Unmarshal([]byte(body), &m) == nil && m.Method != "" {
		req.Header.Set("Mcp-Method", m.Method)
		switch {
		case m.Params.Name != nil && (m.Method == "tools/call" || m.Method == "prompts/get"):
			req.Header.Set("Mcp-Name", *m.Params.Name)
		case m.Params.URI != nil && m.Method == "resources/read":
			req.Header.Set("Mcp-Name", *m.Params.URI)
		}
	}
	if edit != nil {
		edit(req)
	}
	return req, nil
}

// slAnswer is what a stateless POST got back.
type slAnswer struct {
	Status      int
	ContentType string   // the media type alone
	Msgs        []string // the JSON body, or the data of each event
	Header      http.Header
}

// slTry posts body and reads its answer to the end; safe to call from any
// goroutine.
func slTry(ctx context.Context, url, body string, edit func(*http.Request)) (slAnswer, error) {
	return slDo(ctx, http.MethodPost, url, body, edit)
}

// slDo is slTry for any HTTP method.
func slDo(ctx context.Context, method, url, body string, edit func(*http.Request)) (slAnswer, error) {
	req, err := slRequest(ctx, method, url, body, edit)
	if err != nil {
		return slAnswer{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return slAnswer{}, err
	}
	defer resp.Body.Close()
	a := slAnswer{Status: resp.StatusCode, Header: resp.Header}
	a.ContentType, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if a.ContentType == "text/event-stream" {
		br := bufio.NewReader(resp.Body)
		for {
			ev, err := nextEvent(br)
			if err != nil {
				break
			}
			a.Msgs = append(a.Msgs, ev.Data)
		}
		return a, nil
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return a, err
	}
	if len(b) > 0 {
		a.Msgs = []string{strings.TrimSpace(string(b))}
	}
	return a, nil
}

// slPost is slTry for the test's goroutine.
func slPost(t *testing.T, url, body string, edit func(*http.Request)) slAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := slTry(ctx, url, body, edit)
	if err != nil {
		t.Fatalf("POST %.200s: %v", body, err)
	}
	return a
}

// slAuth sets a request's Authorization.
func slAuth(v string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("Authorization", v) }
}

// slRPC is a JSON-RPC response, decoded.
type slRPC struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *slRPCError     `json:"error,omitempty"`
}

type slRPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// slResponse returns the last message of a, a response.
func slResponse(t *testing.T, a slAnswer) slRPC {
	t.Helper()
	if len(a.Msgs) == 0 {
		t.Fatalf("an answer of %d %s with no message", a.Status, a.ContentType)
	}
	var r slRPC
	if err := json.Unmarshal([]byte(a.Msgs[len(a.Msgs)-1]), &r); err != nil {
		t.Fatalf("the answer %.300q: %v", a.Msgs[len(a.Msgs)-1], err)
	}
	return r
}

// slToolText is the text of a tools/call result and whether it is an error
// result, and its resultType.
type slToolText struct {
	Text       string
	IsError    bool
	ResultType string
}

func slTool(t *testing.T, r slRPC) slToolText {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("a tools/call got the error %d %q", r.Error.Code, r.Error.Message)
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError    bool   `json:"isError"`
		ResultType string `json:"resultType"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("a tools/call result %.300s: %v, want one block", r.Result, err)
	}
	return slToolText{res.Content[0].Text, res.IsError, res.ResultType}
}

// slJSON decodes each message, so that answers compare by value, whatever
// the order of their members.
func slJSON(t *testing.T, msgs []string) []any {
	t.Helper()
	out := make([]any, len(msgs))
	for i, m := range msgs {
		if err := json.Unmarshal([]byte(m), &out[i]); err != nil {
			t.Fatalf("message %d, %.200q: %v", i, m, err)
		}
	}
	return out
}

// slMsg is a message a scripted server read.
type slMsg struct {
	Server int             `json:"-"` // which server read it: 0 for the first dialled
	ID     json.RawMessage // nil for a notification
	Method string
	Params map[string]json.RawMessage
	Line   string `json:"-"`
}

// arg returns the string argument name of a tools/call, or "".
func (m slMsg) arg(name string) string {
	var args map[string]json.RawMessage
	_ = json.Unmarshal(m.Params["arguments"], &args)
	var s string
	_ = json.Unmarshal(args[name], &s)
	return s
}

// param returns params[name] as a string, or "".
func (m slMsg) param(name string) string {
	var s string
	_ = json.Unmarshal(m.Params[name], &s)
	return s
}

// token returns the progress token in its _meta, as JSON, or "".
func (m slMsg) token() string {
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(m.Params["_meta"], &meta)
	return string(meta["progressToken"])
}

// slServer is one scripted server: one per dial.
type slServer struct {
	mu  sync.Mutex
	end pipeConn
}

// send writes lines from the server, a line each.
func (s *slServer) send(lines ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range lines {
		if _, err := io.WriteString(s.end, l+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// kill ends the server: its output and its input close, as when its
// process dies.
func (s *slServer) kill() { _ = s.end.Close() }

// slUpstream dials scripted servers. serve gets every message each server
// reads (requests, notifications, responses), in the server's reading
// goroutine: it must not block. A nil serve, or one that returns false
// for a request, answers it with slDefault.
type slUpstream struct {
	serve func(s *slServer, m slMsg) bool
	// wrap, when set, is the proxy's end of each server's pipes.
	wrap func(pipeConn) io.ReadWriteCloser

	dials atomic.Int32 // servers started
	ended atomic.Int32 // servers whose input ended

	mu      sync.Mutex
	got     []slMsg     // what every server read, in order
	servers []*slServer // in the order dialled
}

func (u *slUpstream) dial(context.Context) (mcpproxy.Conn, error) {
	serverEnd, proxyUp := pipePair()
	s := &slServer{end: serverEnd}
	u.mu.Lock()
	u.servers = append(u.servers, s)
	u.mu.Unlock()
	n := u.dials.Add(1)
	go func() {
		defer u.ended.Add(1)
		sr := bufio.NewReaderSize(serverEnd.r, 1<<20)
		for {
			line, err := sr.ReadString('\n')
			if err != nil {
				return
			}
			m := slMsg{Server: int(n) - 1}
			if json.Unmarshal([]byte(line), &m) != nil {
				continue
			}
			m.Line = strings.TrimSpace(line)
			u.mu.Lock()
			u.got = append(u.got, m)
			u.mu.Unlock()
			if u.serve != nil && u.serve(s, m) {
				continue
			}
			if m.ID != nil && m.Method != "" {
				if s.send(slDefault(m)) != nil {
					return
				}
			}
		}
	}()
	var rw io.ReadWriteCloser = proxyUp
	if u.wrap != nil {
		rw = u.wrap(proxyUp)
	}
	return mcpproxy.StreamConn(rw), nil
}

// server returns the ith server dialled.
func (u *slUpstream) server(i int) *slServer {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.servers[i]
}

// seen returns the messages of method the servers read ("" for
// responses).
func (u *slUpstream) seen(method string) []slMsg {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []slMsg
	for _, m := range u.got {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// requests returns how many requests the servers read.
func (u *slUpstream) requests() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, m := range u.got {
		if m.ID != nil && m.Method != "" {
			n++
		}
	}
	return n
}

// slDefault is a scripted server's answer to a request: a text result
// naming the tool called, initialize's result, or an empty result.
func slDefault(m slMsg) string {
	switch m.Method {
	case "tools/call":
		return slText(m.ID, "called "+m.param("name"))
	case "initialize":
		return hsResult(string(m.ID))
	}
	return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`
}

// slText is a tools/call result of one text block.
func slText(id json.RawMessage, text string) string {
	b, _ := json.Marshal(text)
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":` + string(b) + `}]}}`
}

// slError is a JSON-RPC error answering id.
func slError(id json.RawMessage, code int, msg string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg)
}

// TestStatelessSameIDs: two clients whose requests have the same id and
// the same progress token share a lane (one server); the server, which
// sees two ids and two tokens, answers them out of order, and each client
// gets its own progress and its own response under its own id and token.
// A log line that names no request, sent while both are in flight, reaches
// neither: it could be either's.
func TestStatelessSameIDs(t *testing.T) {
	var mu sync.Mutex
	var held []slMsg
	up := &slUpstream{serve: func(s *slServer, m slMsg) bool {
		if m.Method != "tools/call" {
			return false
		}
		mu.Lock()
		held = append(held, m)
		pair := slices.Clone(held)
		mu.Unlock()
		if len(pair) < 2 {
			return true // answered with the second
		}
		progress := func(m slMsg) string {
			return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + m.token() + `,"progress":1,"message":"for ` + m.arg("who") + `"}}`
		}
		_ = s.send(
			progress(pair[1]),
			progress(pair[0]),
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"whose?"}}`,
			slText(pair[1].ID, "for "+pair[1].arg("who")),
			slText(pair[0].ID, "for "+pair[0].arg("who")),
		)
		return true
	}}
	_, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: up.dial, StatelessServers: 1})

	who := []string{"A", "B"}
	answers := make([]slAnswer, len(who))
	errs := make([]error, len(who))
	var wg sync.WaitGroup
	for i, w := range who {
		body := slBody(t, 1, "tools/call", map[string]any{
			"name": "echo", "arguments": map[string]any{"who": w},
			"_meta": map[string]any{"progressToken": "t"},
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			answers[i], errs[i] = slTry(ctx, hs.URL, body, nil)
		}()
	}
	wg.Wait()
	for i, w := range who {
		if errs[i] != nil {
			t.Fatalf("client %s: %v", w, errs[i])
		}
		want := []string{
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"message":"for ` + w + `"}}`,
			slText(json.RawMessage("1"), "for "+w),
		}
		if diff := cmp.Diff(slJSON(t, want), slJSON(t, answers[i].Msgs)); diff != "" {
			t.Errorf("client %s's answer (-want +got):\n%s", w, diff)
		}
	}
	calls := up.seen("tools/call")
	if len(calls) != 2 {
		t.Fatalf("the server read %d calls, want 2", len(calls))
	}
	if string(calls[0].ID) == string(calls[1].ID) || calls[0].token() == calls[1].token() {
		t.Errorf("the server read ids %s and %s, tokens %s and %s: want each its own", calls[0].ID, calls[1].ID, calls[0].token(), calls[1].token())
	}
	if n := up.dials.Load(); n != 1 {
		t.Errorf("%d servers dialled, want the one lane", n)
	}
}

// TestStatelessServerRequestRefused: a request of the server's on a lane
// has no client to ask: the server gets a method-not-found error for it,
// and the client sees nothing of it, only its response.
func TestStatelessServerRequestRefused(t *testing.T) {
	up := &slUpstream{serve: func(s *slServer, m slMsg) bool {
		if m.Method != "tools/call" {
			return false
		}
		_ = s.send(`{"jsonrpc":"2.0","id":"ask-1","method":"roots/list","params":{}}`)
		return true
	}}
	_, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: up.dial, StatelessServers: 1})
	done := make(chan slAnswer, 1)
	body := slBody(t, 9, "tools/call", map[string]any{"name": "x"})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		a, err := slTry(ctx, hs.URL, body, nil)
		if err != nil {
			t.Errorf("POST: %v", err)
		}
		done <- a
	}()
	var answer string
	waitFor(t, "the server's request to be answered", func() bool {
		for _, m := range up.seen("") {
			if string(m.ID) == `"ask-1"` {
				answer = m.Line
				return true
			}
		}
		return false
	})
	var r slRPC
	if err := json.Unmarshal([]byte(answer), &r); err != nil || r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("the server's request was answered %s; want a -32601 error", answer)
	}
	call := up.seen("tools/call")[0]
	if err := up.server(0).send(slText(call.ID, "done")); err != nil {
		t.Fatal(err)
	}
	a := <-done
	want := []string{slText(json.RawMessage("9"), "done")}
	if diff := cmp.Diff(slJSON(t, want), slJSON(t, a.Msgs)); diff != "" {
		t.Errorf("the client's answer (-want +got):\n%s", diff)
	}
}

// slSDKDial dials a go-sdk server made by newServer, over pipes, for each
// lane: it serves the stateless revision without initialize.
func slSDKDial(newServer func() *mcp.Server) func(ctx context.Context) (mcpproxy.Conn, error) {
	return func(ctx context.Context) (mcpproxy.Conn, error) {
		serverEnd, proxyUp := pipePair()
		if _, err := newServer().Connect(ctx, sdkEnd(serverEnd), nil); err != nil {
			return nil, err
		}
		return mcpproxy.StreamConn(proxyUp), nil
	}
}

// TestStatelessKeptRest: a result over its limit, called through a lane,
// is cut with the marker naming the read of the rest; a later stateless
// POST of the same principal (no session) reads the next page, a complete
// result (SEP-2322), and a POST with another Authorization, or none, gets
// the unknown ref's error.
func TestStatelessKeptRest(t *testing.T) {
	big := bigText(200_000)
	p, err := mcpproxy.New(mcpproxy.Options{Rest: rest.NewMemory(rest.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: slSDKDial(func() *mcp.Server {
		server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
		server.AddTool(textTool("big", big))
		return server
	})})

	first := slTool(t, slResponse(t, slPost(t, hs.URL, slBody(t, "c-1", "tools/call", map[string]any{"name": "big", "arguments": map[string]any{}}), slAuth("Bearer a"))))
	if !strings.Contains(first.Text, "[truncated: ") {
		t.Fatalf("the result of %d bytes came back as %d bytes with no marker: %.100q", len(big), len(first.Text), first.Text[max(0, len(first.Text)-100):])
	}
	a, start, ok := readMarker(t, first.Text)
	if !ok {
		t.Fatalf("the marker names no read: %q", first.Text[max(0, len(first.Text)-200):])
	}
	if len(first.Text) > manifest.DefaultMaxBytes || !strings.HasPrefix(big, first.Text[:start]) || a.Offset != int64(start) {
		t.Fatalf("the cut result: %d bytes (limit %d), a head of the text %v, the read at %d (the head is %d bytes)",
			len(first.Text), manifest.DefaultMaxBytes, strings.HasPrefix(big, first.Text[:start]), a.Offset, start)
	}

	read := func(id any, auth string) slToolText {
		t.Helper()
		body := slBody(t, id, "tools/call", map[string]any{"name": rest.DefaultTool, "arguments": map[string]any{"ref": a.Ref, "offset": a.Offset}})
		var edit func(*http.Request)
		if auth != "" {
			edit = slAuth(auth)
		}
		r := slResponse(t, slPost(t, hs.URL, body, edit))
		if got, want := string(r.ID), fmt.Sprintf("%q", id); got != want {
			t.Errorf("the read's response has id %s, want %s", got, want)
		}
		return slTool(t, r)
	}
	next := read("c-2", "Bearer a")
	page := next.Text
	if _, end, ok := readMarker(t, page); ok {
		page = page[:end]
	}
	if next.IsError || next.ResultType != "complete" || page == "" || !strings.HasPrefix(big[a.Offset:], page) {
		t.Errorf("the next page: isError %v, resultType %q, %d bytes, the text's next %v; want the text from %d, complete",
			next.IsError, next.ResultType, len(page), page != "" && strings.HasPrefix(big[a.Offset:], page), a.Offset)
	}
	for _, auth := range []string{"Bearer b", ""} {
		other := read("c-3", auth)
		if !other.IsError || !strings.Contains(other.Text, rest.ErrUnknown.Error()) {
			t.Errorf("a read with Authorization %q: isError %v, %.200q; want the unknown ref's error", auth, other.IsError, other.Text)
		}
	}
}

// TestStatelessListen: a server keeps one listen a session (the go-sdk's
// does), and a lane is one session for many clients, so the lane listens
// upstream once, for what its clients' listens ask together, and gives
// each client its own acknowledgement and the notifications it asked
// for, under its own id (here the same, "sub-1", for both). A client that
// leaves ends nothing upstream while another listens; the last one ends
// every listen the lane sent.
func TestStatelessListen(t *testing.T) {
	const subID = "io.modelcontextprotocol/subscriptionId"
	notify := func(method, sub, extra string) string {
		return `{"jsonrpc":"2.0","method":"` + method + `","params":{"_meta":{"` + subID + `":` + sub + `}` + extra + `}}`
	}
	var mu sync.Mutex
	var current slMsg // the listen the server holds: the last it read
	up := &slUpstream{serve: func(s *slServer, m slMsg) bool {
		if m.Method != "subscriptions/listen" {
			return false
		}
		mu.Lock()
		current = m
		mu.Unlock()
		_ = s.send(notify("notifications/subscriptions/acknowledged", string(m.ID), `,"notifications":`+string(m.Params["notifications"])))
		return true
	}}
	_, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: up.dial, StatelessServers: 1})
	held := func() slMsg {
		mu.Lock()
		defer mu.Unlock()
		return current
	}

	type listener struct {
		cancel context.CancelFunc
		events *bufio.Reader
	}
	open := func(filter map[string]any) listener {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		body := slBody(t, "sub-1", "subscriptions/listen", map[string]any{"notifications": filter})
		req, err := slRequest(ctx, http.MethodPost, hs.URL, body, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
			t.Fatalf("listen %v: %s, %s; want a stream of events", filter, resp.Status, ct)
		}
		return listener{cancel, bufio.NewReader(resp.Body)}
	}
	next := func(l listener, who string) string {
		t.Helper()
		ev, err := nextEvent(l.events)
		if err != nil {
			t.Fatalf("listener %s's stream: %v", who, err)
		}
		if ev.ID != "" {
			// The revision resumes no stream: an id would promise it.
			t.Errorf("listener %s's event has the id %q, want none", who, ev.ID)
		}
		return ev.Data
	}
	want := func(who string, l listener, wantEvent string) {
		t.Helper()
		if diff := cmp.Diff(slJSON(t, []string{wantEvent}), slJSON(t, []string{next(l, who)})); diff != "" {
			t.Errorf("listener %s's next event (-want +got):\n%s", who, diff)
		}
	}

	a := open(map[string]any{"toolsListChanged": true})
	want("A", a, notify("notifications/subscriptions/acknowledged", `"sub-1"`, `,"notifications":{"toolsListChanged":true}`))
	b := open(map[string]any{"promptsListChanged": true, "resourceSubscriptions": []string{"r://1"}})
	want("B", b, notify("notifications/subscriptions/acknowledged", `"sub-1"`, `,"notifications":{"promptsListChanged":true,"resourceSubscriptions":["r://1"]}`))
	hub := held()
	var asked map[string]any
	if err := json.Unmarshal(hub.Params["notifications"], &asked); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": []any{"r://1"}}, asked); diff != "" {
		t.Errorf("what the server's listen asks for (-want +got):\n%s", diff)
	}

	// Each notification reaches the listeners that asked for it: a tools
	// one A alone, a prompts one and an update of r://1 B alone, one of
	// r://2 nobody.
	if err := up.server(0).send(
		notify("notifications/tools/list_changed", string(hub.ID), ""),
		notify("notifications/resources/updated", string(hub.ID), `,"uri":"r://2"`),
		notify("notifications/prompts/list_changed", string(hub.ID), ""),
		notify("notifications/resources/updated", string(hub.ID), `,"uri":"r://1"`),
	); err != nil {
		t.Fatal(err)
	}
	want("A", a, notify("notifications/tools/list_changed", `"sub-1"`, ""))
	want("B", b, notify("notifications/prompts/list_changed", `"sub-1"`, ""))
	want("B", b, notify("notifications/resources/updated", `"sub-1"`, `,"uri":"r://1"`))

	// A leaves: B still listens, so the server is told nothing.
	a.cancel()
	if err := up.server(0).send(notify("notifications/prompts/list_changed", string(hub.ID), "")); err != nil {
		t.Fatal(err)
	}
	want("B", b, notify("notifications/prompts/list_changed", `"sub-1"`, ""))
	if got := up.seen("notifications/cancelled"); len(got) > 0 {
		t.Errorf("the server was told of %d cancellations while B listened", len(got))
	}
	// B leaves: every listen the lane sent ends.
	b.cancel()
	var cancelled, sent []string
	for _, m := range up.seen("subscriptions/listen") {
		sent = append(sent, string(m.ID))
	}
	waitFor(t, "the server to get notifications/cancelled", func() bool {
		cancelled = nil
		for _, m := range up.seen("notifications/cancelled") {
			cancelled = append(cancelled, string(m.Params["requestId"]))
		}
		return len(cancelled) >= len(sent)
	})
	if diff := cmp.Diff(sent, cancelled, cmpopts.SortSlices(func(x, y string) bool { return x < y })); diff != "" {
		t.Errorf("the listens cancelled at the server (-want +got):\n%s", diff)
	}
}

// TestStatelessServerDies: a lane whose server ends while it holds a call
// answers that call with a JSON-RPC error under the client's id, rather
// than leaving it waiting, and the request sent on that answer starts
// another server, rather than landing on the lane that is ending. Many
// rounds, since the request follows the answer closely.
func TestStatelessServerDies(t *testing.T) {
	const rounds = 300
	up := &slUpstream{serve: func(s *slServer, m slMsg) bool {
		if m.Method == "tools/call" && m.param("name") == "die" {
			s.kill()
			return true
		}
		return false
	}}
	_, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: up.dial})
	for i := range rounds {
		r := slResponse(t, slPost(t, hs.URL, slBody(t, "d-1", "tools/call", map[string]any{"name": "die"}), nil))
		if string(r.ID) != `"d-1"` || r.Error == nil || r.Error.Code != -32603 {
			t.Fatalf("round %d: the call whose server died: %s %s %+v; want a -32603 error for \"d-1\"", i, r.ID, r.Result, r.Error)
		}
		r = slResponse(t, slPost(t, hs.URL, slBody(t, "d-2", "tools/call", map[string]any{"name": "live"}), nil))
		if r.Error != nil {
			t.Fatalf("round %d: the call after got the error %d %q; want a new server's answer", i, r.Error.Code, r.Error.Message)
		}
		if got := slTool(t, r).Text; got != "called live" {
			t.Fatalf("round %d: the call after: %q, want the new server's answer", i, got)
		}
	}
	if n := up.dials.Load(); n != rounds+1 {
		t.Errorf("%d servers dialled in %d rounds, want %d (one to replace each dead)", n, rounds, rounds+1)
	}
}

// TestStatelessServersBound: 20 calls in flight at once, each held by its
// server until all have arrived, run on at most StatelessServers servers,
// and each gets its own answer.
func TestStatelessServersBound(t *testing.T) {
	const calls, servers = 20, 2
	release := make(chan struct{})
	up := &slUpstream{}
	up.serve = func(s *slServer, m slMsg) bool {
		if m.Method != "tools/call" {
			return false
		}
		go func() {
			<-release
			_ = s.send(slText(m.ID, "for "+m.arg("who")))
		}()
		return true
	}
	_, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: up.dial, StatelessServers: servers})
	answers := make([]slAnswer, calls)
	var wg sync.WaitGroup
	for i := range calls {
		body := slBody(t, 7, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"who": fmt.Sprint(i)}})
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var err error
			if answers[i], err = slTry(ctx, hs.URL, body, nil); err != nil {
				t.Errorf("call %d: %v", i, err)
			}
		}()
	}
	waitFor(t, "every call to reach a server", func() bool { return len(up.seen("tools/call")) == calls })
	close(release)
	wg.Wait()
	if n := up.dials.Load(); n < 1 || n > servers {
		t.Errorf("%d servers dialled for %d calls at once, want 1 to %d", n, calls, servers)
	}
	for i, a := range answers {
		want := []string{slText(json.RawMessage("7"), fmt.Sprint("for ", i))}
		if diff := cmp.Diff(slJSON(t, want), slJSON(t, a.Msgs)); diff != "" {
			t.Errorf("call %d's answer (-want +got):\n%s", i, diff)
		}
	}
}

// slHeaderTool is a tool whose arguments x-mcp-header mirrors in headers
// (SEP-2243): a string, an integer, a boolean, a nested string, and one
// argument that is not mirrored.
const slHeaderTool = `{"name":"hdr","inputSchema":{"type":"object","properties":{` +
	`"region":{"type":"string","x-mcp-header":"Region"},` +
	`"priority":{"type":"integer","x-mcp-header":"Priority"},` +
	`"verbose":{"type":"boolean","x-mcp-header":"Verbose"},` +
	`"opts":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},` +
	`"query":{"type":"string"}}}}`

// slRefusal is what a test of errors compares of an answer.
type slRefusal struct {
	Status      int
	ContentType string
	Allow       string
	ID          string // as JSON; "" for an answer that is not JSON-RPC
	Code        int    // 0 for a result
	Data        any
}

func slRefusalOf(t *testing.T, a slAnswer) slRefusal {
	t.Helper()
	got := slRefusal{Status: a.Status, ContentType: a.ContentType, Allow: a.Header.Get("Allow")}
	if a.ContentType != "application/json" && a.ContentType != "text/event-stream" {
		return got
	}
	r := slResponse(t, a)
	got.ID = string(r.ID)
	if r.Error != nil {
		got.Code = r.Error.Code
		if r.Error.Data != nil {
			if err := json.Unmarshal(r.Error.Data, &got.Data); err != nil {
				t.Fatal(err)
			}
		}
	}
	return got
}

// TestStatelessErrors: with the proxy as the HTTP server its stateless
// clients reach (a server over stdio behind it), each error has the code
// and the status the go-sdk's server gives it, and echoes the request's
// id: the headers checked against the body (-32020), the _meta version
// (-32602), a version not served (-32022 with the versions served), the
// server's errors (-32601 404, -32602 400), GET and DELETE (405), and the
// x-mcp-header arguments of a tool seen in a tools/list.
func TestStatelessErrors(t *testing.T) {
	up := &slUpstream{serve: func(s *slServer, m slMsg) bool {
		switch {
		case m.Method == "tools/list":
			_ = s.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"tools":[` + slHeaderTool + `]}}`)
		case m.Method == "unknown/method":
			_ = s.send(slError(m.ID, -32601, "method not found"))
		case m.Method == "tools/call" && m.param("name") == "bad":
			_ = s.send(slError(m.ID, -32602, "unknown tool"))
		case m.Method == "tools/call" && m.param("name") == "broken":
			_ = s.send(slError(m.ID, -32603, "internal"))
		default:
			return false
		}
		return true
	}}
	_, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: up.dial})
	_, none := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: up.dial, StatelessServers: -1})

	// The tool's x-mcp-header arguments, learnt from a tools/list through
	// the proxy.
	if a := slPost(t, hs.URL, slBody(t, 1, "tools/list", nil), nil); a.Status != http.StatusOK || !strings.Contains(a.Msgs[len(a.Msgs)-1], `"x-mcp-header":"Region"`) {
		t.Fatalf("tools/list: %d %q", a.Status, a.Msgs)
	}

	all := mcpproxy.DefaultProtocolVersions
	sessionful := slices.DeleteFunc(slices.Clone(all), func(v string) bool { return v >= slVersion })
	versions := func(supported []string, requested string) any {
		s := make([]any, len(supported))
		for i, v := range supported {
			s[i] = v
		}
		return map[string]any{"supported": s, "requested": requested}
	}
	set := func(kv ...string) func(*http.Request) {
		return func(r *http.Request) {
			for i := 0; i < len(kv); i += 2 {
				if kv[i+1] == "" {
					r.Header.Del(kv[i])
				} else {
					r.Header.Set(kv[i], kv[i+1])
				}
			}
		}
	}
	call := func(name string, args map[string]any) string {
		return slBody(t, "r-1", "tools/call", map[string]any{"name": name, "arguments": args})
	}
	listTools := slBody(t, "r-1", "tools/list", nil)
	ok := slRefusal{Status: 200, ContentType: "application/json", ID: `"r-1"`}
	refused := func(status, code int) slRefusal {
		return slRefusal{Status: status, ContentType: "application/json", ID: `"r-1"`, Code: code}
	}
	const mismatch = -32020
	tests := []struct {
		name   string
		url    string
		method string // HTTP; POST when ""
		body   string
		edit   func(*http.Request)
		want   slRefusal
		served bool // the request reaches the server
	}{
		{name: "a request that is right", body: listTools, want: ok, served: true},
		{name: "no Mcp-Method", body: listTools, edit: set("Mcp-Method", ""), want: refused(400, mismatch)},
		{name: "Mcp-Method of another method", body: listTools, edit: set("Mcp-Method", "prompts/list"), want: refused(400, mismatch)},
		{name: "Mcp-Method in other case", body: listTools, edit: set("Mcp-Method", "TOOLS/LIST"), want: refused(400, mismatch)},
		{name: "Mcp-Method's name in upper case", body: listTools,
			edit: func(r *http.Request) { r.Header.Del("Mcp-Method"); r.Header["MCP-METHOD"] = []string{"tools/list"} }, want: ok, served: true},
		{name: "no Mcp-Name", body: call("hdr", nil), edit: set("Mcp-Name", ""), want: refused(400, mismatch)},
		{name: "Mcp-Name of another tool", body: call("hdr", nil), edit: set("Mcp-Name", "other"), want: refused(400, mismatch)},
		{name: "header version unlike _meta's", body: strings.Replace(listTools, slVersion, "2099-01-01", 1), want: refused(400, mismatch)},
		{name: "_meta version without the header", body: listTools, edit: set("MCP-Protocol-Version", ""), want: refused(400, mismatch)},
		{name: "no _meta version", body: `{"jsonrpc":"2.0","id":"r-1","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`,
			want: refused(400, -32602)},
		{name: "no params", body: `{"jsonrpc":"2.0","id":"r-1","method":"tools/list"}`, want: refused(400, -32602)},
		{name: "the server's method not found", body: slBody(t, "r-1", "unknown/method", nil), want: refused(404, -32601), served: true},
		{name: "the server's invalid params", body: call("bad", nil), want: refused(400, -32602), served: true},
		{name: "the server's internal error", body: call("broken", nil), want: refused(200, -32603), served: true},
		{name: "a version before the revision", body: listTools, edit: set("MCP-Protocol-Version", "2023-01-01"),
			want: slRefusal{Status: 400, ContentType: "application/json", ID: "null", Code: -32022, Data: versions(all, "2023-01-01")}},
		{name: "no lanes, the revision's header", url: none.URL, body: listTools,
			want: slRefusal{Status: 400, ContentType: "application/json", ID: "null", Code: -32022, Data: versions(sessionful, slVersion)}},
		{name: "no lanes, the revision's _meta", url: none.URL, body: listTools, edit: set("MCP-Protocol-Version", ""),
			want: slRefusal{Status: 400, ContentType: "application/json", ID: `"r-1"`, Code: -32022, Data: versions(sessionful, slVersion)}},
		{name: "a batch", body: "[" + listTools + "]", want: slRefusal{Status: 400, ContentType: "application/json", ID: "null", Code: -32600}},
		{name: "a notification without Mcp-Method", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, edit: set("Mcp-Method", ""),
			want: slRefusal{Status: 400, ContentType: "application/json", ID: "null", Code: mismatch}},
		{name: "GET", method: http.MethodGet, want: slRefusal{Status: 405, ContentType: "application/json", Allow: "POST", ID: "null", Code: -32600}},
		{name: "DELETE", method: http.MethodDelete, want: slRefusal{Status: 405, ContentType: "application/json", Allow: "POST", ID: "null", Code: -32600}},

		// x-mcp-header arguments (SEP-2243).
		{name: "param headers right", body: call("hdr", map[string]any{"region": "Hello", "priority": 42, "verbose": true, "opts": map[string]any{"zone": "z1"}}),
			edit: set("Mcp-Param-Region", "=?base64?SGVsbG8=?=", "Mcp-Param-Priority", "42", "Mcp-Param-Verbose", "true", "Mcp-Param-Zone", "z1"), want: ok, served: true},
		{name: "param plain string", body: call("hdr", map[string]any{"region": "us-west1"}), edit: set("Mcp-Param-Region", "us-west1"), want: ok, served: true},
		{name: "param header name in lower case", body: call("hdr", map[string]any{"region": "us"}), edit: func(r *http.Request) { r.Header["mcp-param-region"] = []string{"us"} }, want: ok, served: true},
		{name: "param base64 prefix alone is literal", body: call("hdr", map[string]any{"region": "=?base64?SGVsbG8="}), edit: set("Mcp-Param-Region", "=?base64?SGVsbG8="), want: ok, served: true},
		{name: "param integer written as a float", body: call("hdr", map[string]any{"priority": 42}), edit: set("Mcp-Param-Priority", "42.0"), want: ok, served: true},
		{name: "param null argument, no header", body: call("hdr", map[string]any{"region": nil}), want: ok, served: true},
		{name: "param header of no argument ignored", body: call("hdr", map[string]any{"query": "q"}), edit: set("Mcp-Param-Query", "other"), want: ok, served: true},
		{name: "param string mismatch", body: call("hdr", map[string]any{"region": "us"}), edit: set("Mcp-Param-Region", "eu"), want: refused(400, mismatch)},
		{name: "param header missing", body: call("hdr", map[string]any{"region": "us"}), want: refused(400, mismatch)},
		{name: "param header for an absent argument", body: call("hdr", map[string]any{}), edit: set("Mcp-Param-Region", "us"), want: refused(400, mismatch)},
		{name: "param header for a null argument", body: call("hdr", map[string]any{"region": nil}), edit: set("Mcp-Param-Region", "us"), want: refused(400, mismatch)},
		{name: "param base64 unpadded", body: call("hdr", map[string]any{"region": "Hello"}), edit: set("Mcp-Param-Region", "=?base64?SGVsbG8?="), want: refused(400, mismatch)},
		{name: "param base64 of another value", body: call("hdr", map[string]any{"region": "Hello"}), edit: set("Mcp-Param-Region", "=?base64?SGVsbG9v?="), want: refused(400, mismatch)},
		{name: "param integer mismatch", body: call("hdr", map[string]any{"priority": 42}), edit: set("Mcp-Param-Priority", "43"), want: refused(400, mismatch)},
		{name: "param integer not a number", body: call("hdr", map[string]any{"priority": 42}), edit: set("Mcp-Param-Priority", "forty-two"), want: refused(400, mismatch)},
		{name: "param boolean in other case", body: call("hdr", map[string]any{"verbose": true}), edit: set("Mcp-Param-Verbose", "True"), want: refused(400, mismatch)},
		{name: "param boolean mismatch", body: call("hdr", map[string]any{"verbose": false}), edit: set("Mcp-Param-Verbose", "true"), want: refused(400, mismatch)},
		{name: "param nested mismatch", body: call("hdr", map[string]any{"opts": map[string]any{"zone": "z1"}}), edit: set("Mcp-Param-Zone", "z2"), want: refused(400, mismatch)},
		{name: "param nested missing", body: call("hdr", map[string]any{"opts": map[string]any{"zone": "z1"}}), want: refused(400, mismatch)},
		{name: "param empty string argument", body: call("hdr", map[string]any{"region": ""}), edit: set("Mcp-Param-Region", ""), want: refused(400, mismatch)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := hs.URL
			if tt.url != "" {
				url = tt.url
			}
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			before := up.requests()
			a, err := slDo(ctx, method, url, tt.body, tt.edit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, slRefusalOf(t, a)); diff != "" {
				t.Errorf("the answer (-want +got):\n%s\n%q", diff, a.Msgs)
			}
			// A refusal of the proxy's is made before the request reaches
			// a server.
			if served := up.requests() > before; served != tt.served {
				t.Errorf("the request reached the server: %v, want %v", served, tt.served)
			}
		})
	}
}

// slHTTPSeen is what an HTTP upstream got of one request.
type slHTTPSeen struct {
	Method string // the body's
	Header http.Header
}

// slHTTPUpstream is a stateless streamable HTTP server scripted by the
// tool called: "ok" answers 200 with a result, "old" 400 with a JSON-RPC
// -32022 error and its data, "auth" 401 with WWW-Authenticate and a body
// that is not JSON-RPC, "hold" holds the request until its client leaves.
type slHTTPUpstream struct {
	mu     sync.Mutex
	seen   []slHTTPSeen
	closed chan string // the ids of held requests whose stream closed
}

// slMCPHeaders are the request headers an upstream's test compares.
var slMCPHeaders = []string{"Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Mcp-Param-Region", "Mcp-Param-Priority", "Mcp-Session-Id", "Authorization"}

func (u *slHTTPUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var m slMsg
	if r.Method != http.MethodPost || json.Unmarshal(body, &m) != nil {
		http.Error(w, "unexpected", http.StatusBadRequest)
		return
	}
	h := http.Header{}
	for _, k := range slMCPHeaders {
		if v := r.Header.Values(k); v != nil {
			h[k] = v
		}
	}
	u.mu.Lock()
	u.seen = append(u.seen, slHTTPSeen{m.Method, h})
	u.mu.Unlock()
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch m.param("name") {
	case "old":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}`)
	case "auth":
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", realm="up"`)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "no entry")
	case "hold":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"held"}}`+"\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		u.closed <- m.arg("who")
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, slText(m.ID, "called "+m.param("name")))
	}
}

// TestStatelessHTTPUpstream: through a lane to a stateless streamable HTTP
// upstream, each request goes up with its own client's MCP headers (as it
// sent them) and Authorization (ForwardAuth), and no session; the
// upstream's refusals come back as they were: a 400 with a JSON-RPC error
// as that error with its data, under the client's id, and a 401 with its
// WWW-Authenticate and body; a client that leaves closes its upstream
// request.
func TestStatelessHTTPUpstream(t *testing.T) {
	up := &slHTTPUpstream{closed: make(chan string, 1)}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	_, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{
		UpstreamURL: ups.URL,
		ForwardAuth: true,
		Dial: func(ctx context.Context) (mcpproxy.Conn, error) {
			return mcpproxy.DialHTTP(ctx, ups.URL, nil, hclog.NewNullLogger(), mcpproxy.ForwardAuth())
		},
	})
	call := func(id any, name string, args map[string]any) string {
		return slBody(t, id, "tools/call", map[string]any{"name": name, "arguments": args})
	}
	set := func(kv ...string) func(*http.Request) {
		return func(r *http.Request) {
			for i := 0; i < len(kv); i += 2 {
				r.Header.Set(kv[i], kv[i+1])
			}
		}
	}

	// Two clients' requests, each with headers of its own.
	a := slPost(t, hs.URL, call(1, "ok", map[string]any{"region": "Hello"}), set("Authorization", "Bearer one", "Mcp-Param-Region", "=?base64?SGVsbG8=?="))
	b := slPost(t, hs.URL, slBody(t, 1, "tools/list", nil), set("Authorization", "Bearer two"))
	c := slPost(t, hs.URL, call(2, "ok", map[string]any{"priority": 7}), set("Mcp-Param-Priority", "7"))
	for i, ans := range []slAnswer{a, b, c} {
		if ans.Status != http.StatusOK || slResponse(t, ans).Error != nil {
			t.Errorf("request %d: %d %q, want 200 and a result", i, ans.Status, ans.Msgs)
		}
	}
	wantSeen := []slHTTPSeen{
		{"tools/call", http.Header{"Mcp-Protocol-Version": {slVersion}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"ok"}, "Mcp-Param-Region": {"=?base64?SGVsbG8=?="}, "Authorization": {"Bearer one"}}},
		{"tools/list", http.Header{"Mcp-Protocol-Version": {slVersion}, "Mcp-Method": {"tools/list"}, "Authorization": {"Bearer two"}}},
		{"tools/call", http.Header{"Mcp-Protocol-Version": {slVersion}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"ok"}, "Mcp-Param-Priority": {"7"}}},
	}
	up.mu.Lock()
	seen := slices.Clone(up.seen)
	up.mu.Unlock()
	if diff := cmp.Diff(wantSeen, seen); diff != "" {
		t.Errorf("what the upstream got (-want +got):\n%s", diff)
	}

	// The upstream's 400 with its JSON-RPC error, under the client's id.
	old := slPost(t, hs.URL, call("old-1", "old", nil), nil)
	wantOld := slRefusal{Status: 400, ContentType: "application/json", ID: `"old-1"`, Code: -32022,
		Data: map[string]any{"supported": []any{slVersion}, "requested": slVersion}}
	if diff := cmp.Diff(wantOld, slRefusalOf(t, old)); diff != "" {
		t.Errorf("the upstream's -32022 (-want +got):\n%s", diff)
	}

	// The upstream's 401, as it came.
	auth := slPost(t, hs.URL, call(3, "auth", nil), set("Authorization", "Bearer stale"))
	gotAuth := []string{fmt.Sprint(auth.Status), auth.Header.Get("WWW-Authenticate"), auth.ContentType, strings.Join(auth.Msgs, "")}
	wantAuth := []string{"401", `Bearer error="invalid_token", realm="up"`, "text/plain", "no entry"}
	if diff := cmp.Diff(wantAuth, gotAuth); diff != "" {
		t.Errorf("the upstream's 401 (-want +got):\n%s", diff)
	}

	// A client that leaves: its upstream request ends too.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := slRequest(ctx, http.MethodPost, hs.URL, call(4, "hold", map[string]any{"who": "leaver"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ev, err := nextEvent(bufio.NewReader(resp.Body)); err != nil || !strings.Contains(ev.Data, `"held"`) {
		t.Fatalf("the held call's first event: %q, %v", ev.Data, err)
	}
	cancel()
	select {
	case who := <-up.closed:
		if who != "leaver" {
			t.Errorf("the upstream request of %q ended, want the leaver's", who)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("the upstream request of a client that left was still open 30s later")
	}
}

// TestStatelessMessageBounds: the proxy's bound of a message holds on a
// lane: a stateless POST whose body is over it is refused 413, unread,
// and a server's response over it becomes a JSON-RPC error for its
// request, under the client's id; the lane goes on.
func TestStatelessMessageBounds(t *testing.T) {
	const bound = 4096
	up := &slUpstream{serve: func(s *slServer, m slMsg) bool {
		if m.Method != "resources/read" {
			return false
		}
		_ = s.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"contents":[{"uri":"r:x","text":"` + strings.Repeat("a", 2*bound) + `"}]}}`)
		return true
	}}
	p, err := mcpproxy.New(mcpproxy.Options{MaxMessageBytes: bound})
	if err != nil {
		t.Fatal(err)
	}
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial})

	big := slPost(t, hs.URL, slBody(t, 1, "tools/call", map[string]any{"name": "x", "arguments": map[string]any{"pad": strings.Repeat("b", 2*bound)}}), nil)
	if big.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the bound: %d %q, want 413", big.Status, big.Msgs)
	}
	if n := up.requests(); n != 0 {
		t.Errorf("the servers read %d requests, want none", n)
	}
	r := slResponse(t, slPost(t, hs.URL, slBody(t, "big-1", "resources/read", map[string]any{"uri": "r:x"}), nil))
	if string(r.ID) != `"big-1"` || r.Error == nil || !strings.Contains(r.Error.Message, "over the proxy's bound") {
		t.Errorf("a response over the bound: id %s, error %+v; want an error naming the bound for \"big-1\"", r.ID, r.Error)
	}
	if got := slTool(t, slResponse(t, slPost(t, hs.URL, slBody(t, 2, "tools/call", map[string]any{"name": "after"}), nil))); got.Text != "called after" {
		t.Errorf("a call after: %q", got.Text)
	}
}

// TestStatelessCallTimeout: a stateless call the server never answers gets
// the call timeout's error under the client's id, and the server a
// notifications/cancelled naming the lane's id of it.
func TestStatelessCallTimeout(t *testing.T) {
	up := &slUpstream{serve: func(s *slServer, m slMsg) bool {
		return m.Method == "tools/call" // never answered
	}}
	p, err := mcpproxy.New(mcpproxy.Options{CallTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial})
	r := slResponse(t, slPost(t, hs.URL, slBody(t, "t-1", "tools/call", map[string]any{"name": "never"}), nil))
	if string(r.ID) != `"t-1"` || r.Error == nil || !strings.Contains(r.Error.Message, "did not answer tools/call within 50ms") {
		t.Errorf("a call never answered: id %s, error %+v; want the call timeout's error for \"t-1\"", r.ID, r.Error)
	}
	call := up.seen("tools/call")[0]
	waitFor(t, "the server to get notifications/cancelled", func() bool { return len(up.seen("notifications/cancelled")) > 0 })
	if got := string(up.seen("notifications/cancelled")[0].Params["requestId"]); got != string(call.ID) {
		t.Errorf("the server got notifications/cancelled for %s, want %s, its id of the call", got, call.ID)
	}
}

// TestStatelessAdmission: a stateless request is admitted as any other: a
// foreign Host or Origin on a loopback listener is refused 403, before
// it reaches a server.
func TestStatelessAdmission(t *testing.T) {
	up := &slUpstream{}
	_, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: up.dial})
	body := slBody(t, 1, "tools/list", nil)
	tests := []struct {
		name string
		edit func(*http.Request)
		want int
	}{
		{"foreign Host", func(r *http.Request) { r.Host = "evil.example" }, http.StatusForbidden},
		{"foreign Origin", func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, http.StatusForbidden},
		{"localhost Host and Origin", func(r *http.Request) { r.Host = "localhost"; r.Header.Set("Origin", "http://localhost") }, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := up.requests()
			a := slPost(t, hs.URL, body, tt.edit)
			if a.Status != tt.want {
				t.Errorf("%d %q, want %d", a.Status, a.Msgs, tt.want)
			}
			if served := up.requests() > before; served != (tt.want == http.StatusOK) {
				t.Errorf("the request reached the server: %v", served)
			}
		})
	}
}

// TestStatelessCloseStopsServers: Close ends every lane: its server's
// input is closed, the calls it held are answered, and a later stateless
// request is refused.
func TestStatelessCloseStopsServers(t *testing.T) {
	up := &slUpstream{serve: func(s *slServer, m slMsg) bool {
		return m.Method == "tools/call" // held
	}}
	h, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: up.dial, StatelessServers: 2})
	answers := make(chan slAnswer, 2)
	for i := range 2 {
		body := slBody(t, i, "tools/call", map[string]any{"name": "held"})
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			a, err := slTry(ctx, hs.URL, body, nil)
			if err != nil {
				t.Errorf("call %d: %v", i, err)
			}
			answers <- a
		}()
		// One call at a time, so that the second finds the first's lane
		// busy and starts another.
		waitFor(t, "the call to reach a server", func() bool { return len(up.seen("tools/call")) == i+1 })
	}
	if n := up.dials.Load(); n != 2 {
		t.Fatalf("%d servers dialled for 2 calls in flight, want 2", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitFor(t, "the servers' input to end", func() bool { return up.ended.Load() == 2 })
	for range 2 {
		a := <-answers
		if r := slResponse(t, a); r.Error == nil {
			t.Errorf("a call held at Close: %q, want an error", a.Msgs)
		}
	}
	if a := slPost(t, hs.URL, slBody(t, 3, "tools/list", nil), nil); a.Status != http.StatusServiceUnavailable {
		t.Errorf("a request after Close: %d %q, want 503", a.Status, a.Msgs)
	}
	if n := up.dials.Load(); n != 2 {
		t.Errorf("%d servers dialled in all, want 2", n)
	}
}

// TestStatelessBesideSessions: one handler serves a 2025 client's session
// (initialize, Mcp-Session-Id) and stateless requests side by side, each
// on a server of its own, with the same ids.
func TestStatelessBesideSessions(t *testing.T) {
	up := &slUpstream{}
	_, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: up.dial})
	session := hsInitialize(t, hs.URL, nil)
	inSession := hsPost(t, hs.URL, session, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"in-session"}}`, nil)
	sessionAnswer := hsEvents(t, inSession.Body)
	stateless := slPost(t, hs.URL, slBody(t, 5, "tools/call", map[string]any{"name": "stateless"}), nil)
	again := hsEvents(t, hsPost(t, hs.URL, session, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"in-session"}}`, nil).Body)

	got := [][]any{slJSON(t, sessionAnswer), slJSON(t, stateless.Msgs), slJSON(t, again)}
	want := [][]any{
		slJSON(t, []string{slText(json.RawMessage("5"), "called in-session")}),
		slJSON(t, []string{slText(json.RawMessage("5"), "called stateless")}),
		slJSON(t, []string{slText(json.RawMessage("6"), "called in-session")}),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the answers (-want +got):\n%s", diff)
	}
	if stateless.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("a stateless answer named the session %q", stateless.Header.Get("Mcp-Session-Id"))
	}
	var where []string
	for _, m := range up.seen("tools/call") {
		where = append(where, fmt.Sprint(m.Server, " ", m.param("name")))
	}
	if diff := cmp.Diff([]string{"0 in-session", "1 stateless", "0 in-session"}, where); diff != "" {
		t.Errorf("which server read each call (-want +got):\n%s", diff)
	}
}

// TestMirrorHeaders: a stateless request of a client over stdio goes up to
// an HTTP server with the headers the go-sdk's client sets (SEP-2243): its
// version, method and name, and each x-mcp-header argument of its tool
// (from the tools/list seen), a string as it is when it is plain visible
// ASCII, in =?base64?...?= otherwise (non-ASCII, spaces or tabs at its
// ends, control characters, or a value that looks encoded already), an
// integer in the safe range in decimal, a boolean as true or false; null,
// fractions, objects and arrays are not mirrored.
func TestMirrorHeaders(t *testing.T) {
	const schema = `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"V"},` +
		`"opts":{"type":"object","properties":{"deep":{"type":"integer","x-mcp-header":"Deep"}}},"plain":{"type":"string"}}}`
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + slVersion + `","io.modelcontextprotocol/clientCapabilities":{}}`
	callWith := func(args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":` + args + `,` + meta + `}}`
	}
	base := http.Header{"Mcp-Protocol-Version": {slVersion}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"t"}}
	with := func(kv ...string) http.Header {
		h := base.Clone()
		for i := 0; i < len(kv); i += 2 {
			h[kv[i]] = []string{kv[i+1]}
		}
		return h
	}
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	tests := []struct {
		name string
		msg  string
		want http.Header
	}{
		{"plain ASCII", callWith(`{"v":"us-west1"}`), with("Mcp-Param-V", "us-west1")},
		{"inner space", callWith(`{"v":"a b"}`), with("Mcp-Param-V", "a b")},
		{"visible punctuation", callWith(`{"v":"~!@#$%^&*()"}`), with("Mcp-Param-V", "~!@#$%^&*()")},
		{"empty", callWith(`{"v":""}`), with("Mcp-Param-V", "")},
		{"non-ASCII", callWith(`{"v":"café"}`), with("Mcp-Param-V", b64("café"))},
		{"CJK", callWith(`{"v":"日本"}`), with("Mcp-Param-V", b64("日本"))},
		{"leading space", callWith(`{"v":" x"}`), with("Mcp-Param-V", b64(" x"))},
		{"trailing space", callWith(`{"v":"x "}`), with("Mcp-Param-V", b64("x "))},
		{"leading tab", callWith(`{"v":"\tx"}`), with("Mcp-Param-V", b64("\tx"))},
		{"CRLF", callWith(`{"v":"a\r\nb"}`), with("Mcp-Param-V", b64("a\r\nb"))},
		{"NUL", callWith(`{"v":"a\u0000b"}`), with("Mcp-Param-V", b64("a\x00b"))},
		{"DEL", callWith(`{"v":"a\u007fb"}`), with("Mcp-Param-V", b64("a\x7fb"))},
		{"looks encoded", callWith(`{"v":"=?base64?SGVsbG8=?="}`), with("Mcp-Param-V", b64("=?base64?SGVsbG8=?="))},
		{"encoded prefix alone", callWith(`{"v":"=?base64?SGVsbG8="}`), with("Mcp-Param-V", "=?base64?SGVsbG8=")},
		{"integer", callWith(`{"v":42}`), with("Mcp-Param-V", "42")},
		{"negative integer", callWith(`{"v":-7}`), with("Mcp-Param-V", "-7")},
		{"integer with a zero fraction", callWith(`{"v":42.0}`), with("Mcp-Param-V", "42")},
		{"integer with an exponent", callWith(`{"v":1e3}`), with("Mcp-Param-V", "1000")},
		{"largest safe integer", callWith(`{"v":9007199254740991}`), with("Mcp-Param-V", "9007199254740991")},
		{"smallest safe integer", callWith(`{"v":-9007199254740991}`), with("Mcp-Param-V", "-9007199254740991")},
		{"past the safe integers", callWith(`{"v":9007199254740992}`), base},
		{"true", callWith(`{"v":true}`), with("Mcp-Param-V", "true")},
		{"false", callWith(`{"v":false}`), with("Mcp-Param-V", "false")},
		{"null", callWith(`{"v":null}`), base},
		{"float", callWith(`{"v":1.5}`), base},
		{"object", callWith(`{"v":{"a":1}}`), base},
		{"array", callWith(`{"v":["a"]}`), base},
		{"absent", callWith(`{"plain":"p"}`), base},
		{"nested", callWith(`{"opts":{"deep":3},"v":"x"}`), with("Mcp-Param-Deep", "3", "Mcp-Param-V", "x")},
		{"no arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t",` + meta + `}}`, base},
		{"a tool without x-mcp-header", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"other","arguments":{"v":"x"},` + meta + `}}`,
			http.Header{"Mcp-Protocol-Version": {slVersion}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"other"}}},
		{"resources/read", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a%20b",` + meta + `}}`,
			http.Header{"Mcp-Protocol-Version": {slVersion}, "Mcp-Method": {"resources/read"}, "Mcp-Name": {"file:///a%20b"}}},
		{"prompts/get", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","arguments":{"v":"x"},` + meta + `}}`,
			http.Header{"Mcp-Protocol-Version": {slVersion}, "Mcp-Method": {"prompts/get"}, "Mcp-Name": {"p"}}},
		{"tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`,
			http.Header{"Mcp-Protocol-Version": {slVersion}, "Mcp-Method": {"tools/list"}}},
		{"a session's request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"v":"x"}}}`, nil},
		{"an earlier version", strings.Replace(callWith(`{"v":"x"}`), slVersion, "2025-11-25", 1), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcpproxy.MirrorHeaders(tt.msg, map[string]string{"t": schema})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("MirrorHeaders(%s) (-want +got):\n%s", tt.msg, diff)
			}
		})
	}
}

// slGatedConn is a server's end of the proxy whose writes of a message
// holding match wait for release: the relay is then held writing to the
// server, as a server that is busy writing holds it.
type slGatedConn struct {
	pipeConn
	match   string
	writing chan struct{} // closed when that write begins
	release chan struct{}
	once    sync.Once
}

func (c *slGatedConn) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.match) {
		c.once.Do(func() { close(c.writing) })
		<-c.release
	}
	return c.pipeConn.Write(p)
}

// TestStatelessServerRequestWhileWriting: a request of the server's that
// comes while the relay is still writing a client's request to the server
// (which, busy writing, does not read it yet) is refused without holding
// up what the server sends after it: the response it sends next reaches
// its client before the server reads on.
func TestStatelessServerRequestWhileWriting(t *testing.T) {
	gate := &slGatedConn{match: `"gated"`, writing: make(chan struct{}), release: make(chan struct{})}
	var released sync.Once
	release := func() { released.Do(func() { close(gate.release) }) }
	defer release()
	up := &slUpstream{
		serve: func(s *slServer, m slMsg) bool {
			return m.Method == "tools/call" && m.param("name") == "first" // answered below
		},
		wrap: func(c pipeConn) io.ReadWriteCloser { gate.pipeConn = c; return gate },
	}
	_, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: up.dial, StatelessServers: 1})
	post := func(body string) chan slAnswer {
		done := make(chan slAnswer, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			a, err := slTry(ctx, hs.URL, body, nil)
			if err != nil {
				t.Errorf("POST %.100s: %v", body, err)
			}
			done <- a
		}()
		return done
	}
	first := post(slBody(t, 1, "tools/call", map[string]any{"name": "first"}))
	waitFor(t, "the first call to reach the server", func() bool { return len(up.seen("tools/call")) == 1 })
	second := post(slBody(t, 2, "tools/call", map[string]any{"name": "gated"}))
	<-gate.writing // the relay is writing the second call to the server
	call := up.seen("tools/call")[0]
	go func() {
		// The server asks, then answers the first call.
		_ = up.server(0).send(`{"jsonrpc":"2.0","id":"ask-1","method":"ping"}`, slText(call.ID, "first done"))
	}()
	a := <-first
	release()
	if diff := cmp.Diff(slJSON(t, []string{slText(json.RawMessage("1"), "first done")}), slJSON(t, a.Msgs)); diff != "" {
		t.Errorf("the first call's answer (-want +got):\n%s", diff)
	}
	b := <-second
	if diff := cmp.Diff(slJSON(t, []string{slText(json.RawMessage("2"), "called gated")}), slJSON(t, b.Msgs)); diff != "" {
		t.Errorf("the second call's answer (-want +got):\n%s", diff)
	}
	waitFor(t, "the server's request to be answered", func() bool {
		for _, m := range up.seen("") {
			if string(m.ID) == `"ask-1"` {
				return true
			}
		}
		return false
	})
}

// TestStatelessLeastBusyLane: a request goes to the lane with the fewest
// calls in flight: with one lane holding a call and another idle, the
// idle one.
func TestStatelessLeastBusyLane(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	up := &slUpstream{serve: func(s *slServer, m slMsg) bool {
		if m.Method != "tools/call" || m.param("name") != "held" {
			return false
		}
		go func() {
			<-release
			_ = s.send(slText(m.ID, "released"))
		}()
		return true
	}}
	_, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: up.dial, StatelessServers: 2})
	held := slBody(t, 1, "tools/call", map[string]any{"name": "held"})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = slTry(ctx, hs.URL, held, nil)
	}()
	waitFor(t, "the held call to reach a server", func() bool { return len(up.seen("tools/call")) == 1 })
	// The first lane is busy: a second starts, and serves this call.
	slPost(t, hs.URL, slBody(t, 2, "tools/call", map[string]any{"name": "quick"}), nil)
	// Both lanes exist; the second is idle.
	slPost(t, hs.URL, slBody(t, 3, "tools/call", map[string]any{"name": "quick"}), nil)
	var where []string
	for _, m := range up.seen("tools/call") {
		where = append(where, fmt.Sprint(m.Server, " ", m.param("name")))
	}
	if diff := cmp.Diff([]string{"0 held", "1 quick", "1 quick"}, where); diff != "" {
		t.Errorf("which server read each call (-want +got):\n%s", diff)
	}
}

// TestStatelessStuckServer: a server that stops reading its input holds
// the relay, and a lane's queue fills behind it; a POST then waits for
// room only as long as its client does, so that every handler returns
// once its client has left, never held by the server.
func TestStatelessStuckServer(t *testing.T) {
	dial := func(context.Context) (mcpproxy.Conn, error) {
		serverEnd, proxyUp := pipePair()
		_ = serverEnd // the server reads nothing and answers nothing
		return mcpproxy.StreamConn(proxyUp), nil
	}
	h := hsProxy(t, nil).HTTPHandler(mcpproxy.HTTPOptions{Dial: dial, StatelessServers: 1})
	var held atomic.Int32 // handlers running
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held.Add(1)
		defer held.Add(-1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		_ = h.Close(context.Background())
		hs.Close()
	})
	const posts = 100 // past the lane's queue
	var wg sync.WaitGroup
	for i := range posts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if _, err := slDo(ctx, http.MethodPost, hs.URL, slBody(t, i, "tools/call", map[string]any{"name": "x"}), nil); err == nil {
				t.Errorf("post %d was answered by a server that reads nothing", i)
			}
		}()
	}
	wg.Wait()
	waitFor(t, "every handler to return once its client left", func() bool { return held.Load() == 0 })
}
