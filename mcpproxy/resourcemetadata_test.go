package mcpproxy_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/mcpproxy"
)

func TestRewriteAuthParam(t *testing.T) {
	to := func(old string) string { return "NEW(" + old + ")" }
	for _, tt := range []struct {
		name, in, want string
	}{
		{"a quoted value", `Bearer resource_metadata="https://a/x", scope="s"`, `Bearer resource_metadata="NEW(https://a/x)", scope="s"`},
		{"a token value, quoted in its place", `Bearer resource_metadata=abc`, `Bearer resource_metadata="NEW(abc)"`},
		{"the name in any case, spaces around =", `Bearer Resource_Metadata = "u"`, `Bearer Resource_Metadata = "NEW(u)"`},
		{"escapes in the value are undone", `Bearer resource_metadata="a\"b"`, `Bearer resource_metadata="NEW(a\"b)"`},
		{"the name inside another's quoted value is not a parameter", `Bearer error_description="resource_metadata=x", realm="r"`, `Bearer error_description="resource_metadata=x", realm="r"`},
		{"every challenge", `Bearer resource_metadata="u1", DPoP algs="ES256", resource_metadata="u2"`, `Bearer resource_metadata="NEW(u1)", DPoP algs="ES256", resource_metadata="NEW(u2)"`},
		{"none: unchanged", `Bearer error="invalid_token", scope="a b"`, `Bearer error="invalid_token", scope="a b"`},
		{"a token68: unchanged", `Basic dXNlcjpwYXNz==`, `Basic dXNlcjpwYXNz==`},
		{"an unclosed quote: kept", `Bearer realm="open`, `Bearer realm="open`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, mcpproxy.RewriteAuthParam(tt.in, "resource_metadata", to)); diff != "" {
				t.Errorf("rewriteAuthParam(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// metaUpstream is an upstream MCP endpoint at /v1/mcp that refuses every
// request with 401 and challenge, and serves docs, by path; it records the
// Authorization of every request for a document.
type metaUpstream struct {
	challenge string
	docs      map[string]metaDoc

	mu    sync.Mutex
	auths []string
}

type metaDoc struct {
	status int
	body   string
}

func (u *metaUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/mcp" {
		w.Header().Set("WWW-Authenticate", u.challenge)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":"invalid_token"}`)
		return
	}
	u.mu.Lock()
	u.auths = append(u.auths, r.Header.Get("Authorization"))
	u.mu.Unlock()
	d, ok := u.docs[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=60")
	w.WriteHeader(d.status)
	io.WriteString(w, d.body)
}

// metaServe serves a proxy with ForwardAuth in front of upstream's /v1/mcp
// the way `toolcap mcp --listen --forward-auth` does: MCP at /mcp, the
// metadata at the two well-known places.
func metaServe(t *testing.T, upstream string, publicOrigin ...string) *httptest.Server {
	t.Helper()
	p := hsProxy(t, hclog.NewNullLogger())
	h := p.HTTPHandler(mcpproxy.HTTPOptions{
		ForwardAuth:  true,
		UpstreamURL:  upstream,
		PublicOrigin: strings.Join(publicOrigin, ""),
		Dial: func(ctx context.Context) (mcpproxy.Conn, error) {
			return mcpproxy.DialHTTP(ctx, upstream, nil, hclog.NewNullLogger(), mcpproxy.ForwardAuth())
		},
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle(mcpproxy.ResourceMetadataPath+"/mcp", h.ResourceMetadata())
	mux.Handle(mcpproxy.ResourceMetadataPath, h.ResourceMetadata())
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		hs.Close()
	})
	return hs
}

// The proxy stands for its upstream in the OAuth protected resource
// metadata a client reads: the upstream's document, fetched from where
// the upstream's refusal said or from its well-known places, with the
// resource rewritten from the upstream's URL (or origin) to the proxy's,
// and the refusal's resource_metadata naming the proxy's copy. Any other
// resource is relayed as it is, for the client to refuse.
func TestListenServesResourceMetadata(t *testing.T) {
	const (
		// Placeholders, replaced once the servers' addresses are known.
		up    = "UPSTREAM" // the upstream's origin
		proxy = "PROXY"    // the proxy's origin
	)
	doc := func(resource string) string {
		return `{"resource":"` + resource + `","authorization_servers":["https://as.example"],"scopes_supported":["mcp:read"],"bearer_methods_supported":["header"]}`
	}
	for _, tt := range []struct {
		name      string
		challenge string             // the upstream's WWW-Authenticate
		docs      map[string]metaDoc // the upstream's documents, by path
		refuse    bool               // a client's initialize is refused first
		get       string             // the proxy's path the client GETs
		status    int
		resource  string // the document's resource; "" when the answer is not a document
		wantWWW   string // the refusal's WWW-Authenticate, when refuse
	}{
		{
			name: "the endpoint's document, at the upstream's well-known path for its endpoint",
			docs: map[string]metaDoc{"/.well-known/oauth-protected-resource/v1/mcp": {200, doc(up + "/v1/mcp")}},
			get:  "/.well-known/oauth-protected-resource/mcp", status: 200, resource: proxy + "/mcp",
		},
		{
			name:      "the document the refusal named, which the relayed refusal names the proxy's copy of",
			challenge: `Bearer error="invalid_token", resource_metadata="` + up + `/custom/meta.json", scope="mcp:read"`,
			docs:      map[string]metaDoc{"/custom/meta.json": {200, doc(up + "/v1/mcp")}},
			refuse:    true,
			get:       "/.well-known/oauth-protected-resource/mcp", status: 200, resource: proxy + "/mcp",
			wantWWW: `Bearer error="invalid_token", resource_metadata="` + proxy + `/.well-known/oauth-protected-resource/mcp", scope="mcp:read"`,
		},
		{
			name: "the root document: the upstream's origin becomes the proxy's",
			docs: map[string]metaDoc{"/.well-known/oauth-protected-resource": {200, doc(up)}},
			get:  "/.well-known/oauth-protected-resource", status: 200, resource: proxy,
		},
		{
			name:      "a refusal naming the upstream's root document names the proxy's",
			challenge: `Bearer resource_metadata="` + up + `/.well-known/oauth-protected-resource"`,
			docs:      map[string]metaDoc{"/.well-known/oauth-protected-resource": {200, doc(up)}},
			refuse:    true,
			get:       "/.well-known/oauth-protected-resource", status: 200, resource: proxy,
			wantWWW: `Bearer resource_metadata="` + proxy + `/.well-known/oauth-protected-resource"`,
		},
		{
			name: "another resource is relayed as it is",
			docs: map[string]metaDoc{"/.well-known/oauth-protected-resource/v1/mcp": {200, doc("https://evil.example/mcp")}},
			get:  "/.well-known/oauth-protected-resource/mcp", status: 200, resource: "https://evil.example/mcp",
		},
		{
			name: "the endpoint's document is not looked for at the root",
			docs: map[string]metaDoc{"/.well-known/oauth-protected-resource": {200, doc(up)}},
			get:  "/.well-known/oauth-protected-resource/mcp", status: 404,
		},
		{
			name: "an upstream with none: 404",
			get:  "/.well-known/oauth-protected-resource", status: 404,
		},
		{
			name: "a document that is not a JSON object: 502",
			docs: map[string]metaDoc{"/.well-known/oauth-protected-resource/v1/mcp": {200, `["` + up + `/v1/mcp"]`}},
			get:  "/.well-known/oauth-protected-resource/mcp", status: 502,
		},
		{
			name: "an upstream failing: 502",
			docs: map[string]metaDoc{"/.well-known/oauth-protected-resource/v1/mcp": {500, `oops`}},
			get:  "/.well-known/oauth-protected-resource/mcp", status: 502,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := &metaUpstream{docs: map[string]metaDoc{}}
			ups := httptest.NewServer(u)
			t.Cleanup(ups.Close)
			hs := metaServe(t, ups.URL+"/v1/mcp")
			real := strings.NewReplacer(up, ups.URL, proxy, hs.URL)
			u.challenge = real.Replace(tt.challenge)
			if u.challenge == "" {
				u.challenge = `Bearer error="invalid_token"`
			}
			for path, d := range tt.docs {
				u.docs[path] = metaDoc{d.status, real.Replace(d.body)}
			}

			if tt.refuse {
				resp := hsPost(t, hs.URL+"/mcp", "", hsInit, nil)
				if diff := cmp.Diff([]any{401, real.Replace(tt.wantWWW)}, []any{resp.StatusCode, resp.Header.Get("WWW-Authenticate")}); diff != "" {
					t.Errorf("the refused initialize: status, WWW-Authenticate (-want +got):\n%s", diff)
				}
			}
			req, err := http.NewRequest(http.MethodGet, hs.URL+tt.get, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The client's credentials are not the metadata's business.
			req.Header.Set("Authorization", "Bearer secret")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("GET %s: %s %s, want %d", tt.get, resp.Status, body, tt.status)
			}
			for _, a := range u.auths {
				if a != "" {
					t.Errorf("the upstream's document was fetched with Authorization %q, want none", a)
				}
			}
			if tt.resource == "" {
				return
			}
			var got, want map[string]any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("GET %s: %q: %v", tt.get, body, err)
			}
			// The upstream's document, but for the resource.
			_ = json.Unmarshal([]byte(doc(real.Replace(tt.resource))), &want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("GET %s: the document (-want +got):\n%s", tt.get, diff)
			}
			if diff := cmp.Diff([]string{"application/json", "max-age=60"}, []string{resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control")}); diff != "" {
				t.Errorf("GET %s: Content-Type, Cache-Control (-want +got):\n%s", tt.get, diff)
			}
		})
	}
}

// Without UpstreamURL the proxy has no metadata to serve, and relays the
// upstream's WWW-Authenticate as it came.
func TestListenResourceMetadataWithoutUpstreamURL(t *testing.T) {
	p := hsProxy(t, hclog.NewNullLogger())
	h := p.HTTPHandler(mcpproxy.HTTPOptions{ForwardAuth: true})
	rec := httptest.NewRecorder()
	h.ResourceMetadata().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, mcpproxy.ResourceMetadataPath+"/mcp", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("GET the metadata: %d, want 404", rec.Code)
	}
}

// Behind a front that terminates TLS the proxy names itself by its public
// origin, whatever its requests name: in the documents it serves and in the
// WWW-Authenticate it relays.
func TestListenResourceMetadataPublicOrigin(t *testing.T) {
	const public = "https://mcp.example.com"
	u := &metaUpstream{docs: map[string]metaDoc{}}
	ups := httptest.NewServer(u)
	t.Cleanup(ups.Close)
	u.challenge = `Bearer resource_metadata="` + ups.URL + `/.well-known/oauth-protected-resource/v1/mcp"`
	u.docs["/.well-known/oauth-protected-resource/v1/mcp"] = metaDoc{200, `{"resource":"` + ups.URL + `/v1/mcp","authorization_servers":["https://as.example"]}`}
	u.docs["/.well-known/oauth-protected-resource"] = metaDoc{200, `{"resource":"` + ups.URL + `","authorization_servers":["https://as.example"]}`}
	hs := metaServe(t, ups.URL+"/v1/mcp", public)

	resp := hsPost(t, hs.URL+"/mcp", "", hsInit, nil)
	if diff := cmp.Diff([]any{401, `Bearer resource_metadata="` + public + `/.well-known/oauth-protected-resource/mcp"`},
		[]any{resp.StatusCode, resp.Header.Get("WWW-Authenticate")}); diff != "" {
		t.Errorf("the refused initialize: status, WWW-Authenticate (-want +got):\n%s", diff)
	}
	for path, want := range map[string]string{
		"/.well-known/oauth-protected-resource/mcp": public + "/mcp",
		"/.well-known/oauth-protected-resource":     public,
	} {
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Resource string }
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || got.Resource != want {
			t.Errorf("GET %s: resource %q (%v), want %q", path, got.Resource, err, want)
		}
	}
	for _, bad := range []string{"mcp.example.com", "ftp://mcp.example.com", "https://mcp.example.com/mcp", "https://mcp.example.com?x=1", "https://"} {
		if mcpproxy.CheckPublicOrigin(bad) == nil {
			t.Errorf("CheckPublicOrigin(%q) = nil, want an error", bad)
		}
	}
	if err := mcpproxy.CheckPublicOrigin(public); err != nil {
		t.Errorf("CheckPublicOrigin(%q) = %v", public, err)
	}
}
