package mcpproxy_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/mcpproxy"
)

// Through a --listen proxy with ForwardAuth in front of an upstream that
// requires a bearer token: a client without the token gets the upstream's
// 401 and WWW-Authenticate as they are (so it can start OAuth), and holds
// no session; with the token, the session starts and every request carries
// the client's token upstream, a refreshed one from the next request on.
func TestListenForwardsAuth(t *testing.T) {
	up := &authServer{want: "Bearer good"}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	p := hsProxy(t, hclog.NewNullLogger())
	h, hs := hsServe(t, p, mcpproxy.HTTPOptions{
		ForwardAuth: true,
		Dial: func(ctx context.Context) (mcpproxy.Conn, error) {
			return mcpproxy.DialHTTP(ctx, ups.URL, nil, hclog.NewNullLogger(), mcpproxy.ForwardAuth())
		},
	})

	// No token: the upstream's refusal, unchanged.
	resp := hsPost(t, hs.URL, "", hsInit, nil)
	body, _ := io.ReadAll(resp.Body)
	got := struct {
		Status          int
		WWWAuthenticate string
		Session         string
		Body            string
	}{resp.StatusCode, resp.Header.Get("WWW-Authenticate"), resp.Header.Get("Mcp-Session-Id"), string(body)}
	want := got
	want.Status, want.WWWAuthenticate, want.Session, want.Body = http.StatusUnauthorized, resourceMetadata, "", `{"error":"invalid_token"}`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("initialize without a token (-want +got):\n%s", diff)
	}
	waitFor(t, "the refused session to end", func() bool { return h.Sessions() == 0 })

	// The token: a session, and the token reaches the upstream.
	withToken := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", tok) }
	}
	session := hsInitialize(t, hs.URL, withToken("Bearer good"))
	resp = hsPost(t, hs.URL, session, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, withToken("Bearer good"))
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"id":2`) {
		t.Errorf("ping with the token: %s %.200s", resp.Status, b)
	}
	// A token the upstream no longer takes: its 401, for this request.
	resp = hsPost(t, hs.URL, session, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, withToken("Bearer expired"))
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != resourceMetadata {
		t.Errorf("ping with an expired token: %s, WWW-Authenticate %q; want 401 and the upstream's", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	wantAuths := []string{"initialize", "initialize Bearer good", "ping Bearer good", "ping Bearer expired"}
	if diff := cmp.Diff(wantAuths, up.requests()); diff != "" {
		t.Errorf("what the upstream saw (-want +got):\n%s", diff)
	}
}
