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
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/mcpproxy"
)

const resourceMetadata = `Bearer resource_metadata="https://as.example/.well-known/oauth-protected-resource/mcp", scope="tools"`

// authServer is a streamable HTTP endpoint that requires a bearer token:
// without want, it answers 401 with WWW-Authenticate, as an MCP server
// that starts OAuth does; it records the Authorization of every request.
type authServer struct {
	want string

	mu   sync.Mutex
	seen []string // "method Authorization", by arrival
}

func (a *authServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &m)
	auth := r.Header.Get("Authorization")
	a.mu.Lock()
	a.seen = append(a.seen, strings.TrimSpace(m.Method+" "+auth))
	a.mu.Unlock()
	if auth != a.want {
		w.Header().Set("WWW-Authenticate", resourceMetadata)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":"invalid_token"}`)
		return
	}
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18"}}`, m.ID)
}

func (a *authServer) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// rpcAnswer is what a test reads of an answer from the connection.
type rpcAnswer struct {
	ID    json.RawMessage `json:"id"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
}

func exchange(t *testing.T, c mcpproxy.Conn, r *bufio.Reader, msg string) rpcAnswer {
	t.Helper()
	// Written while the answer is read, as the proxy's relay does: the
	// answer to initialize is read before WriteMessage returns.
	werr := make(chan error, 1)
	go func() { werr <- c.WriteMessage([]byte(msg)) }()
	var a rpcAnswer
	line := readLine(t, r)
	if err := <-werr; err != nil {
		t.Fatalf("WriteMessage(%.60s) = %v", msg, err)
	}
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("an answer %.200q: %v", line, err)
	}
	return a
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

func TestDialHTTPAuthRefusal(t *testing.T) {
	for _, tt := range []struct {
		name        string
		forward     bool
		wantRefusal bool
	}{
		{"with ForwardAuth, the refusal is recorded whole", true, true},
		{"without, it is only a JSON-RPC error", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			up := &authServer{want: "Bearer good"}
			hs := httptest.NewServer(up)
			defer hs.Close()
			auth := &mcpproxy.UpstreamAuth{}
			var opts []mcpproxy.HTTPClientOption
			if tt.forward {
				opts = append(opts, mcpproxy.ForwardAuth())
			}
			c, err := mcpproxy.DialHTTP(mcpproxy.WithUpstreamAuth(context.Background(), auth), hs.URL, nil, nil, opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			a := exchange(t, c, bufio.NewReader(c), initialize)
			if a.Error == nil || string(a.ID) != "1" {
				t.Fatalf("initialize answered %+v, want a JSON-RPC error for id 1", a)
			}
			for _, part := range []string{"401 Unauthorized", `resource_metadata="https://as.example/`} {
				if !strings.Contains(a.Error.Message, part) {
					t.Errorf("the error %q does not name %q", a.Error.Message, part)
				}
			}
			got := auth.Refusal("1")
			if !tt.wantRefusal {
				if got != nil {
					t.Errorf("Refusal(1) = %v, want none without ForwardAuth", got)
				}
				return
			}
			if got == nil {
				t.Fatal("Refusal(1) = nil, want the upstream's 401")
			}
			want := struct {
				Status int
				WWW    []string
				Body   string
			}{http.StatusUnauthorized, []string{resourceMetadata}, `{"error":"invalid_token"}`}
			gotFields := struct {
				Status int
				WWW    []string
				Body   string
			}{got.Status, got.Header.Values("WWW-Authenticate"), string(got.Body)}
			if diff := cmp.Diff(want, gotFields); diff != "" {
				t.Errorf("the refusal (-want +got):\n%s", diff)
			}
			var asErr *mcpproxy.UpstreamHTTPError
			if !errors.As(fmt.Errorf("wrapped: %w", got), &asErr) {
				t.Error("errors.As does not find *UpstreamHTTPError")
			}
			if again := auth.Refusal("1"); again != nil {
				t.Errorf("Refusal(1) a second time = %v, want nil: it is taken once", again)
			}
		})
	}
}

func TestDialHTTPForwardsAuthorization(t *testing.T) {
	up := &authServer{want: "Bearer good"}
	hs := httptest.NewServer(up)
	defer hs.Close()
	auth := &mcpproxy.UpstreamAuth{}
	auth.SetAuthorization("Bearer good")
	static := http.Header{"Authorization": {"Bearer proxy-own"}}
	c, err := mcpproxy.DialHTTP(mcpproxy.WithUpstreamAuth(context.Background(), auth), hs.URL, static, nil, mcpproxy.ForwardAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if a := exchange(t, c, r, initialize); a.Error != nil {
		t.Fatalf("initialize with the client's token: %s", a.Error.Message)
	}
	// The client's token changes (refreshed): the next request carries
	// the new one, which the upstream refuses here.
	auth.SetAuthorization("Bearer refreshed")
	if a := exchange(t, c, r, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); a.Error == nil {
		t.Errorf("tools/list answered %s, want the refusal of the refreshed token", a.Result)
	}
	// None from the client: the dial's own header applies.
	auth.SetAuthorization("")
	_ = exchange(t, c, r, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	want := []string{"initialize Bearer good", "tools/list Bearer refreshed", "tools/list Bearer proxy-own"}
	if diff := cmp.Diff(want, up.requests()); diff != "" {
		t.Errorf("the upstream's requests (-want +got):\n%s", diff)
	}
}

func TestRelayUpstreamAuth(t *testing.T) {
	refusal := &mcpproxy.UpstreamHTTPError{
		URL:    "http://up.example/mcp",
		Status: http.StatusForbidden,
		Header: http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope", scope="tools admin"`}, "Content-Type": {"application/json"}},
		Body:   []byte(`{"error":"insufficient_scope"}`),
	}
	for _, tt := range []struct {
		name   string
		err    error
		want   bool
		status int
		www    string
		body   string
	}{
		{"a refusal, wrapped", fmt.Errorf("relay: %w", refusal), true, http.StatusForbidden, refusal.Header.Get("WWW-Authenticate"), string(refusal.Body)},
		{"another error", errors.New("broken pipe"), false, http.StatusOK, "", ""},
		{"a status that is not a refusal", &mcpproxy.UpstreamHTTPError{Status: http.StatusBadGateway}, false, http.StatusOK, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			rec.Header().Set("Content-Type", "text/event-stream")
			rec.Header().Set("Mcp-Session-Id", "s1")
			if got := mcpproxy.RelayUpstreamAuth(rec, tt.err); got != tt.want {
				t.Fatalf("relayUpstreamAuth = %v, want %v", got, tt.want)
			}
			if !tt.want {
				return
			}
			got := []string{fmt.Sprint(rec.Code), rec.Header().Get("WWW-Authenticate"), rec.Body.String(), rec.Header().Get("Content-Type"), rec.Header().Get("Mcp-Session-Id")}
			want := []string{fmt.Sprint(tt.status), tt.www, tt.body, "application/json", ""}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("status, WWW-Authenticate, body, Content-Type, session (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGuardedStream(t *testing.T) {
	for _, tt := range []struct {
		name       string
		refusedID  string // the request the upstream refused, "" for none
		auth       bool
		wantStatus int
		wantBody   string
		wantRelay  bool
	}{
		{"the stream's request was refused", "7", true, http.StatusUnauthorized, `{"error":"invalid_token"}`, true},
		{"another request was refused", "8", true, http.StatusOK, "event: message\n", false},
		{"no UpstreamAuth", "", false, http.StatusOK, "event: message\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var auth *mcpproxy.UpstreamAuth
			if tt.auth {
				auth = &mcpproxy.UpstreamAuth{}
				// A refusal comes to a guard through DialHTTP: record it so.
				recordRefusal(t, auth, tt.refusedID)
			}
			rec := httptest.NewRecorder()
			w, relayed := mcpproxy.GuardStream(auth, rec, []string{"7"})
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			if rec.Flushed {
				t.Fatal("the status was flushed before the stream's first byte")
			}
			_, err := io.WriteString(w, "event: message\n")
			if tt.wantRelay != (err != nil) {
				t.Errorf("the first write's error = %v, want one: %v", err, tt.wantRelay)
			}
			got := []any{rec.Code, rec.Body.String(), relayed()}
			want := []any{tt.wantStatus, tt.wantBody, tt.wantRelay}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("status, body, relayed (-want +got):\n%s", diff)
			}
			if tt.wantRelay && rec.Header().Get("WWW-Authenticate") != resourceMetadata {
				t.Errorf("WWW-Authenticate = %q, want the upstream's", rec.Header().Get("WWW-Authenticate"))
			}
		})
	}
}

// recordRefusal has a DialHTTP connection record an upstream's 401 for the
// request with id in auth, as the proxy's relay would.
func recordRefusal(t *testing.T, auth *mcpproxy.UpstreamAuth, id string) {
	t.Helper()
	if id == "" {
		return
	}
	hs := httptest.NewServer(&authServer{want: "never"})
	defer hs.Close()
	c, err := mcpproxy.DialHTTP(mcpproxy.WithUpstreamAuth(context.Background(), auth), hs.URL, nil, nil, mcpproxy.ForwardAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = exchange(t, c, bufio.NewReader(c), fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/list"}`, id))
}
