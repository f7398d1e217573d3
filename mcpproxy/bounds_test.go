package mcpproxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/mcpproxy"
)

// nested returns inner inside n levels of arrays.
func nested(n int, inner string) string {
	return strings.Repeat("[", n) + inner + strings.Repeat("]", n)
}

// longID is a string id of n bytes, as JSON.
func longID(n int) string { return `"` + strings.Repeat("i", n-2) + `"` }

// answer is what the tests look at of a response: its id, and the code of
// its error (0 for a result).
type answer struct {
	ID   string
	Code int
}

// readAnswer parses a response the client (or the server) received, and
// returns it with its error's message.
func readAnswer(t *testing.T, frame string) (answer, string) {
	t.Helper()
	var got struct {
		ID     json.RawMessage
		Result json.RawMessage
		Error  *struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal([]byte(frame), &got); err != nil {
		t.Fatalf("an answer that is not JSON, %.200q: %v", frame, err)
	}
	if got.Error == nil {
		if got.Result == nil {
			t.Fatalf("an answer with neither a result nor an error: %.200q", frame)
		}
		return answer{ID: string(got.ID)}, ""
	}
	return answer{ID: string(got.ID), Code: got.Error.Code}, got.Error.Message
}

// TestRelayAnswersEveryRequestAtTheBounds: valid JSON the scanner used to
// refuse (issue 22, item 3) is answered, once, in order: a request or a
// result nested 600 levels goes through (the bound is 10,000, that of Go's
// encoding/json), a 1,100-byte id too; past the bound (20,000 levels), or
// when a message is not valid JSON after its id, the request gets a
// JSON-RPC error naming why, whether the id comes before or after the deep
// value, and the server never sees a refused request.
func TestRelayAnswersEveryRequestAtTheBounds(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}`
	result := func(id, structured string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"ok"}],"structuredContent":{"v":` + structured + `}}}`
	}
	resultIDAfter := func(id, structured string) string {
		return `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"ok"}],"structuredContent":{"v":` + structured + `}},"id":` + id + `}`
	}
	deepCall := func(id string, levels int) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"t","arguments":{"v":` + nested(levels, "1") + `}}}`
	}
	for _, tc := range []struct {
		name      string
		opts      mcpproxy.Options
		send      string // the client's message
		forwarded bool   // the server receives it as sent
		reply     string // the server's answer to it, when forwarded
		want      []answer
		wantIn    string // in the message of the first answer's error
	}{
		{name: "result nested 600 levels", send: call, forwarded: true,
			reply: result("1", nested(598, "1")), want: []answer{{ID: "1"}}},
		{name: "result nested 600 levels, id after it", send: call, forwarded: true,
			reply: resultIDAfter("1", nested(598, "1")), want: []answer{{ID: "1"}}},
		{name: "result nested 20,000 levels", send: call, forwarded: true,
			reply: result("1", nested(20000, "1")), want: []answer{{ID: "1", Code: -32603}}, wantIn: "deeper than 10000 levels"},
		{name: "result nested 20,000 levels, id after it", send: call, forwarded: true,
			reply: resultIDAfter("1", nested(20000, "1")), want: []answer{{ID: "1", Code: -32603}}, wantIn: "deeper than 10000 levels"},
		{name: "result nested 20,000 levels in a member toolcap does not know", send: call, forwarded: true,
			reply: `{"jsonrpc":"2.0","result":{"content":[],"x":` + nested(20000, "") + `},"id":1}`,
			want:  []answer{{ID: "1", Code: -32603}}, wantIn: "deeper than 10000 levels"},
		{name: "result not valid JSON after its id", send: call, forwarded: true,
			reply: `{"jsonrpc":"2.0","id":1,"result":{"content":[tru]}}`,
			want:  []answer{{ID: "1", Code: -32603}}, wantIn: "not valid JSON"},
		{name: "request nested 600 levels", send: deepCall("2", 597), forwarded: true,
			reply: result("2", "1"), want: []answer{{ID: "2"}}},
		{name: "request nested 20,000 levels", send: deepCall("2", 20000),
			want: []answer{{ID: "2", Code: -32600}}, wantIn: "deeper than 10000 levels"},
		{name: "request nested 20,000 levels, id after it",
			send: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t","arguments":` + nested(20000, `"]]}}"`) + `},"id":"late"}`,
			want: []answer{{ID: `"late"`, Code: -32600}}, wantIn: "deeper than 10000 levels"},
		{name: "batch nested 20,000 levels", send: `[` + deepCall("2", 20000) + `]`,
			want: []answer{{ID: "null", Code: -32600}}, wantIn: "deeper than 10000 levels"},
		{name: "1,100-byte id", send: `{"jsonrpc":"2.0","id":` + longID(1100) + `,"method":"tools/call","params":{"name":"t"}}`, forwarded: true,
			reply: result(longID(1100), "1"), want: []answer{{ID: longID(1100)}}},
		{name: "1,100-byte id past the bound", send: deepCall(longID(1100), 20000),
			want: []answer{{ID: longID(1100), Code: -32600}}, wantIn: "deeper than 10000 levels"},
		{name: "2,000-byte id of a request over the message bound", opts: mcpproxy.Options{MaxMessageBytes: 8192},
			send: `{"jsonrpc":"2.0","id":` + longID(2000) + `,"method":"tools/call","params":{"name":"t","arguments":{"v":"` + strings.Repeat("x", 10000) + `"}}}`,
			want: []answer{{ID: longID(2000), Code: -32603}}, wantIn: "over the proxy's bound of 8192 bytes"},
		{name: "request not valid JSON after its id", send: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":tru}}`,
			want: []answer{{ID: "3", Code: -32700}}, wantIn: "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawSession(t, tc.opts)
			// The client's frames, read as they come, so that the proxy
			// never waits on the client while the test waits on the
			// server.
			frames := make(chan string, 16)
			go func() {
				for {
					l, err := s.cr.ReadString('\n')
					if err != nil {
						close(frames)
						return
					}
					frames <- strings.TrimSuffix(l, "\n")
				}
			}()
			// Each write ends before the next starts: the order of the
			// frames on each side is the order of the case.
			write := func(w io.Writer, frame string) <-chan struct{} {
				done := make(chan struct{})
				go func() { _, _ = io.WriteString(w, frame+"\n"); close(done) }()
				return done
			}
			sent := write(s.client, tc.send)
			if tc.forwarded {
				if got := s.atServer(); got != tc.send {
					t.Fatalf("the server got %.200q, want the message as sent", got)
				}
				<-write(s.server, tc.reply)
			}
			<-sent
			// A request sent after it: the first thing the server sees
			// when the first was refused, and the last answer the client
			// gets.
			const ping = `{"jsonrpc":"2.0","id":"next","method":"ping"}`
			<-write(s.client, ping)
			if got := s.atServer(); got != ping {
				t.Fatalf("the server got %.200q, want the next request", got)
			}
			<-write(s.server, `{"jsonrpc":"2.0","id":"next","result":{}}`)
			var got []answer
			var msgs []string
			for len(got) < 10 {
				var frame string
				select {
				case f, ok := <-frames:
					if !ok {
						t.Fatal("the client's side ended")
					}
					frame = f
				case <-time.After(10 * time.Second):
					t.Fatalf("no answer to the next request within 10s; answers before it: %v", got)
				}
				a, msg := readAnswer(t, frame)
				if a.ID == `"next"` {
					break
				}
				got, msgs = append(got, a), append(msgs, msg)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the client's answers before the next one (-want +got):\n%s", diff)
			}
			if tc.wantIn != "" && len(msgs) > 0 && !strings.Contains(msgs[0], tc.wantIn) {
				t.Errorf("the error %q does not say %q", msgs[0], tc.wantIn)
			}
		})
	}
}

// TestRelayAnswersDeepServerRequests: a request of the server's nested past
// the bound is answered to the server with an invalid-request error, and
// the client never sees it; a notification is dropped.
func TestRelayAnswersDeepServerRequests(t *testing.T) {
	s := newRawSession(t, mcpproxy.Options{})
	s.toClient(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":` + nested(20000, "") + `}}`)
	s.toClient(`{"jsonrpc":"2.0","method":"sampling/createMessage","params":{"messages":` + nested(20000, "") + `},"id":7}`)
	got, msg := readAnswer(t, s.atServer())
	if diff := cmp.Diff(answer{ID: "7", Code: -32600}, got); diff != "" {
		t.Errorf("the server's answer (-want +got):\n%s", diff)
	}
	if !strings.Contains(msg, "deeper than 10000 levels") {
		t.Errorf("the error %q does not name the bound", msg)
	}
	const next = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	s.toClient(next)
	if out := s.atClient(); out != next {
		t.Errorf("the client got %.200q, want the next notification", out)
	}
}

// TestHTTPAnswersEveryRequestAtTheBounds: over HTTP, each POST of a
// request nested 600 or 20,000 levels, with a 1,100-byte id, or whose
// tools/call result nests 20,000 levels, gets exactly one JSON-RPC answer
// for its id on its stream (issue 22, item 3).
func TestHTTPAnswersEveryRequestAtTheBounds(t *testing.T) {
	p, err := mcpproxy.New(mcpproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	serverEnd, proxyUp := pipePair()
	dial := func(context.Context) (mcpproxy.Conn, error) { return mcpproxy.StreamConn(proxyUp), nil }
	hs := httptest.NewServer(p.HTTPHandler(mcpproxy.HTTPOptions{Dial: dial}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { serverEnd.Close() })
	// The server: it answers every request it reads with replies[its id],
	// or an empty result.
	replies := map[string]string{
		`5`: `{"jsonrpc":"2.0","id":5,"result":{"content":[],"structuredContent":{"v":` + nested(20000, "") + `}}}`,
	}
	go func() {
		sr := bufio.NewReaderSize(serverEnd.r, 1<<20)
		for {
			l, err := sr.ReadString('\n')
			if err != nil {
				return
			}
			var req struct {
				ID     json.RawMessage
				Method string
			}
			if json.Unmarshal([]byte(l), &req) != nil || req.ID == nil || req.Method == "" {
				continue
			}
			reply, ok := replies[string(req.ID)]
			if !ok {
				reply = `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
			}
			_, _ = io.WriteString(serverEnd, reply+"\n")
		}
	}()
	post := func(session, body string) (*http.Response, []answer) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got []answer
		for _, data := range hsEvents(t, resp.Body) {
			a, _ := readAnswer(t, data)
			got = append(got, a)
		}
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading the answer to %.100q: %v", body, err)
		}
		return resp, got
	}
	init, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	session := init.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize: %s, no session", init.Status)
	}
	for _, tc := range []struct {
		name string
		body string
		want []answer
	}{
		{"request nested 600 levels", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{"v":` + nested(597, "") + `}}}`,
			[]answer{{ID: "2"}}},
		{"request nested 20,000 levels", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t","arguments":{"v":` + nested(20000, "") + `}},"id":3}`,
			[]answer{{ID: "3", Code: -32600}}},
		{"1,100-byte id", `{"jsonrpc":"2.0","id":` + longID(1100) + `,"method":"ping"}`,
			[]answer{{ID: longID(1100)}}},
		{"result nested 20,000 levels", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}}`,
			[]answer{{ID: "5", Code: -32603}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, got := post(session, tc.body)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status %s, want 200", resp.Status)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the answers on the POST's stream (-want +got):\n%s", diff)
			}
		})
	}
}
