package mcpproxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/mcpproxy"
)

// seenRequest is what the upstream's endpoint received.
type seenRequest struct {
	Method, Path, Query, Body    string
	Authorization, ContentType   string
	Cookie, XForwarded, Referrer string
}

// legacyAS is an upstream whose origin is its own authorization server,
// as the 2025-03-26 spec's fallback has it: /authorize redirects to the
// redirect_uri with a code, /token answers a token, /register a client.
func legacyAS(t *testing.T) (*httptest.Server, func() []seenRequest) {
	t.Helper()
	var mu sync.Mutex
	var seen []seenRequest
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, seenRequest{
			Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: string(body),
			Authorization: r.Header.Get("Authorization"), ContentType: r.Header.Get("Content-Type"),
			Cookie: r.Header.Get("Cookie"), XForwarded: r.Header.Get("X-Custom"), Referrer: r.Header.Get("Referer"),
		})
		mu.Unlock()
		switch r.URL.Path {
		case "/authorize":
			http.Redirect(w, r, r.URL.Query().Get("redirect_uri")+"?code=c0de&state="+r.URL.Query().Get("state"), http.StatusFound)
		case "/token":
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Internal", "up-7")
			io.WriteString(w, `{"access_token":"t0k","token_type":"Bearer"}`)
		case "/register":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"client_id":"cl1"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(up.Close)
	return up, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenRequest(nil), seen...)
	}
}

// A 2025-03-26 client of an upstream with no metadata authorizes at
// /authorize, /token and /register of the origin it connects to: the
// proxy relays each to the same path on the upstream's origin, a redirect
// relayed, not followed, and only the headers the endpoints read.
func TestLegacyAuthorizationRelayed(t *testing.T) {
	up, seen := legacyAS(t)
	hs := metaServe(t, up.URL+"/v1/mcp", hclog.NewNullLogger())
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	type answer struct {
		Status                           int
		Location, CacheControl, Internal string
		ContentType, Allow, Body         string
	}
	for _, tt := range []struct {
		name    string
		method  string
		path    string
		body    string
		headers map[string]string
		want    answer
		wantUp  []seenRequest
	}{
		{
			name: "authorize", method: "GET", path: "/authorize?response_type=code&client_id=cl1&redirect_uri=http%3A%2F%2Flocalhost%3A3000%2Fcallback&state=s1&code_challenge=x",
			headers: map[string]string{"Cookie": "session=proxy-users", "Referer": "http://elsewhere/"},
			want:    answer{Status: 302, Location: "http://localhost:3000/callback?code=c0de&state=s1", ContentType: "text/html; charset=utf-8", Body: "<a href=\"http://localhost:3000/callback?code=c0de&amp;state=s1\">Found</a>.\n\n"},
			wantUp:  []seenRequest{{Method: "GET", Path: "/authorize", Query: "response_type=code&client_id=cl1&redirect_uri=http%3A%2F%2Flocalhost%3A3000%2Fcallback&state=s1&code_challenge=x"}},
		},
		{
			name: "token", method: "POST", path: "/token", body: "grant_type=authorization_code&code=c0de",
			headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic Y2wxOnNlY3JldA==", "X-Custom": "no"},
			want:    answer{Status: 200, CacheControl: "no-store", ContentType: "application/json", Body: `{"access_token":"t0k","token_type":"Bearer"}`},
			wantUp:  []seenRequest{{Method: "POST", Path: "/token", Body: "grant_type=authorization_code&code=c0de", Authorization: "Basic Y2wxOnNlY3JldA==", ContentType: "application/x-www-form-urlencoded"}},
		},
		{
			name: "register", method: "POST", path: "/register", body: `{"client_name":"c"}`,
			headers: map[string]string{"Content-Type": "application/json"},
			want:    answer{Status: 201, ContentType: "application/json", Body: `{"client_id":"cl1"}`},
			wantUp:  []seenRequest{{Method: "POST", Path: "/register", Body: `{"client_name":"c"}`, ContentType: "application/json"}},
		},
		{
			name: "token by GET", method: "GET", path: "/token",
			want: answer{Status: 405, Allow: "POST", ContentType: "text/plain; charset=utf-8", Body: "toolcap: /token takes POST\n"},
		},
		{
			name: "authorize by POST", method: "POST", path: "/authorize", body: "x=1",
			want: answer{Status: 405, Allow: "GET", ContentType: "text/plain; charset=utf-8", Body: "toolcap: /authorize takes GET\n"},
		},
		{
			name: "a body over 64 KiB", method: "POST", path: "/register", body: strings.Repeat("x", 64<<10+1),
			want: answer{Status: 413, ContentType: "text/plain; charset=utf-8", Body: "toolcap: the request body is over 64 KiB\n"},
		},
		{
			name: "another path of the upstream's origin", method: "GET", path: "/login",
			want: answer{Status: 404, ContentType: "text/plain; charset=utf-8", Body: "404 page not found\n"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(seen())
			req, err := http.NewRequest(tt.method, hs.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got := answer{
				Status: resp.StatusCode, Location: resp.Header.Get("Location"), CacheControl: resp.Header.Get("Cache-Control"),
				Internal: resp.Header.Get("X-Internal"), ContentType: resp.Header.Get("Content-Type"), Allow: resp.Header.Get("Allow"),
				Body: string(body),
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("the proxy's answer (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantUp, seen()[before:], cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("what the upstream received (-want +got):\n%s", diff)
			}
		})
	}
}

// An upstream that cannot be reached gets fixed words, not its address;
// a proxy without ForwardAuth serves none of the endpoints.
func TestLegacyAuthorizationUnavailable(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	addr := up.Listener.Addr().String()
	up.Close()
	var logs strings.Builder
	logger := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})
	hs := metaServe(t, "http://"+addr+"/v1/mcp", logger)
	resp, err := http.Post(hs.URL+"/token", "application/x-www-form-urlencoded", strings.NewReader("grant_type=x"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	const want = "toolcap: the upstream's authorization endpoint is unavailable (the proxy's log says why)\n"
	if resp.StatusCode != http.StatusBadGateway || string(body) != want {
		t.Errorf("got %d %q, want 502 %q", resp.StatusCode, body, want)
	}
	if !strings.Contains(logs.String(), addr) {
		t.Errorf("the log does not name the upstream's address %s:\n%s", addr, logs.String())
	}

	p := hsProxy(t, nil)
	h := p.HTTPHandler(mcpproxy.HTTPOptions{})
	rec := httptest.NewRecorder()
	h.LegacyAuthorizationHandlerForTest().ServeHTTP(rec, httptest.NewRequest("POST", "/token", strings.NewReader("grant_type=x")))
	if rec.Code != http.StatusNotFound {
		t.Errorf("without ForwardAuth: %d, want 404", rec.Code)
	}
}
