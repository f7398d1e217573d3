package mcpproxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
	"github.com/toolcap/toolcap/tokens"
)

// TestRelayErrorLimit: a JSON-RPC error answering a tools/call is held to
// the call's limits as a result is (issue 22, item 7): with
// default_max_tokens = 100, a 5,000-byte tool error reaches the client
// within 100 tokens whatever member carries it, and a message that is not
// a string is still answered. An error within the limit goes as it came.
func TestRelayErrorLimit(t *testing.T) {
	words := func(n int) string { return strings.Repeat("error ", n/6+1)[:n] }
	quoted := func(s string) string { enc, _ := json.Marshal(s); return string(enc) }
	tz := tokens.NewCalibrated() // what the proxy counts with
	for _, tc := range []struct {
		name       string
		manifest   string
		err        string // the error object the server sends
		maxBytes   int    // of message, data and members other than code, as the client reads them
		maxTok     int
		asSent     bool
		wantKeys   []string
		wantMarker bool // the message is cut
	}{
		{"message", "default_max_tokens = 100", `{"code":-32000,"message":` + quoted(words(5000)) + `}`,
			16384, 100, false, []string{"code", "message"}, true},
		{"message and large data", "default_max_tokens = 100", `{"code":-32000,"message":` + quoted(words(5000)) + `,"data":` + quoted(words(3000)) + `}`,
			16384, 100, false, []string{"code", "message"}, true},
		{"message past the buffer", "default_max_tokens = 100", `{"code":-32000,"message":` + quoted(words(3<<20)) + `}`,
			16384, 100, false, []string{"code", "message"}, true},
		{"member JSON-RPC does not define", "default_max_tokens = 100", `{"code":-32000,"message":"failed","detail":` + quoted(words(5000)) + `}`,
			16384, 100, false, []string{"code", "message"}, false},
		{"small members kept", "default_max_tokens = 100", `{"code":-32000,"message":` + quoted(words(5000)) + `,"hint":"x"}`,
			16384, 100, false, []string{"code", "hint", "message"}, true},
		{"message not a string", "default_max_tokens = 100", `{"code":-32000,"message":[` + quoted(words(5000)) + `]}`,
			16384, 100, false, []string{"code", "message"}, true},
		{"member over a byte limit", "default_max_bytes = 1000", `{"code":-32000,"message":"failed","detail":` + quoted(words(5000)) + `}`,
			1000, 0, false, []string{"code", "message"}, false},
		{"within the limits", "default_max_tokens = 100", `{"code":-32000,"message":"failed","data":{"path":"/x"},"hint":"retry"}`,
			16384, 100, true, []string{"code", "data", "hint", "message"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := manifest.Load(context.Background(), manifest.Bytes("m.toml", []byte("[worker.tool_output]\n"+tc.manifest+"\n")))
			if err != nil {
				t.Fatal(err)
			}
			s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, m), MaxMessageBytes: 8 << 20})
			s.toServer(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}`)
			s.atServer()
			sent := `{"jsonrpc":"2.0","id":3,"error":` + tc.err + `}`
			s.toClient(sent)
			out := s.atClient()
			if tc.asSent {
				if diff := cmp.Diff(sent, out); diff != "" {
					t.Errorf("an error within the limits changed (-want +got):\n%s", diff)
				}
			}
			var got struct {
				ID    json.RawMessage
				Error map[string]json.RawMessage
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("the client's answer %.200q: %v", out, err)
			}
			var keys []string
			bytes, toks := 0, 0
			for k, v := range got.Error {
				keys = append(keys, k)
				if k == "code" {
					continue
				}
				text := string(v)
				if k == "message" {
					if err := json.Unmarshal(v, &text); err != nil {
						t.Fatalf("message %.100s is not a string: %v", v, err)
					}
				}
				bytes += len(text)
				toks += tz.Count(text)
			}
			slices.Sort(keys)
			if diff := cmp.Diff(tc.wantKeys, keys); diff != "" {
				t.Errorf("members of the error (-want +got):\n%s", diff)
			}
			if bytes > tc.maxBytes || tc.maxTok > 0 && toks > tc.maxTok {
				t.Errorf("%d bytes, %d tokens reach the client, want at most %d bytes and %d tokens: %.300s", bytes, toks, tc.maxBytes, tc.maxTok, out)
			}
			if string(got.ID) != "3" {
				t.Errorf("id %s, want 3", got.ID)
			}
			if tc.wantMarker {
				var msg string
				_ = json.Unmarshal(got.Error["message"], &msg)
				if _, _, ok := cut.SplitMarker(msg); !ok {
					t.Errorf("a cut message does not end in the marker: %q", msg[max(0, len(msg)-60):])
				}
			}
		})
	}
}

// TestRelayEmptyBatch: over stdio an empty batch is an invalid request
// (issue 22, item 9): the client gets one JSON-RPC error with a null id,
// and the server never sees it.
func TestRelayEmptyBatch(t *testing.T) {
	for _, batch := range []string{`[]`, `[ ]`} {
		t.Run(batch, func(t *testing.T) {
			s := newRawSession(t, mcpproxy.Options{})
			s.toServer(batch)
			var got struct {
				JSONRPC string
				ID      json.RawMessage
				Error   struct{ Code int }
			}
			out := s.atClient()
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%q: %v", out, err)
			}
			want := struct {
				JSONRPC string
				ID      json.RawMessage
				Error   struct{ Code int }
			}{"2.0", json.RawMessage("null"), struct{ Code int }{-32600}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the answer (-want +got):\n%s", diff)
			}
			// The next message the server reads is the one sent next.
			next := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
			s.toServer(next)
			if diff := cmp.Diff(next, s.atServer()); diff != "" {
				t.Errorf("the server's next message (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHTTPEmptyBatch: over HTTP an empty batch in a session is answered
// 400 and not forwarded (issue 22, item 9).
func TestHTTPEmptyBatch(t *testing.T) {
	p, err := mcpproxy.New(mcpproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	serverEnd, proxyUp := pipePair()
	dial := func(context.Context) (mcpproxy.Conn, error) { return mcpproxy.StreamConn(proxyUp), nil }
	hs := httptest.NewServer(p.HTTPHandler(mcpproxy.HTTPOptions{Dial: dial}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { serverEnd.Close() }) // first: the session ends, then the server
	// What the server reads, line by line, read as it comes so that the
	// proxy never blocks on it.
	lines := make(chan string, 16)
	go func() {
		sr := bufio.NewReader(serverEnd.r)
		for {
			l, err := sr.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- strings.TrimSuffix(l, "\n")
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case l := <-lines:
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("the server read nothing within 10s")
			return ""
		}
	}
	post := func(session, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}

	// A session: the server answers initialize.
	go func() {
		<-lines
		_, _ = io.WriteString(serverEnd, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`+"\n")
	}()
	init := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	session := init.Header.Get("Mcp-Session-Id")
	if init.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %s, session %q", init.Status, session)
	}
	_, _ = io.ReadAll(init.Body)

	for _, batch := range []string{`[]`, ` [ ] `} {
		if resp := post(session, batch); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%q: %s, want 400", batch, resp.Status)
		}
	}
	notif := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	if resp := post(session, notif); resp.StatusCode != http.StatusAccepted {
		t.Errorf("a notification: %s, want 202", resp.Status)
	}
	if diff := cmp.Diff(notif, next()); diff != "" {
		t.Errorf("the server's next message (-want +got):\n%s", diff)
	}
}
