package mcpproxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
