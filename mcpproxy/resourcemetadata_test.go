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

	"github.com/toolcap/toolcap/internal/httpauth"
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
// request with 401 and challenge, and serves docs, by path, and redirects,
// by path to Location; it records the Authorization and the path of every
// request for a document.
type metaUpstream struct {
	challenge string
	docs      map[string]metaDoc
	redirects map[string]string

	mu    sync.Mutex
	auths []string
	paths []string
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
	u.paths = append(u.paths, r.URL.Path)
	u.mu.Unlock()
	if to, ok := u.redirects[r.URL.Path]; ok {
		http.Redirect(w, r, to, http.StatusFound)
		return
	}
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
// metadata at the two well-known places, the 2025-03-26 fallback
// authorization endpoints at theirs.
func metaServe(t *testing.T, upstream string, logger hclog.Logger, publicOrigin ...string) *httptest.Server {
	t.Helper()
	p := hsProxy(t, logger)
	h := p.HTTPHandler(mcpproxy.HTTPOptions{
		ForwardAuth:  true,
		UpstreamURL:  upstream,
		PublicOrigin: strings.Join(publicOrigin, ""),
		Dial: func(ctx context.Context) (mcpproxy.Conn, error) {
			return mcpproxy.DialHTTP(ctx, upstream, nil, hclog.NewNullLogger(), mcpproxy.ForwardAuth())
		},
	})
	mux := http.NewServeMux()
	h.Mount(mux, "/mcp")
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
			hs := metaServe(t, ups.URL+"/v1/mcp", hclog.NewNullLogger())
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
	h.MetadataHandlerForTest().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, mcpproxy.ResourceMetadataPath+"/mcp", nil))
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
	hs := metaServe(t, ups.URL+"/v1/mcp", hclog.NewNullLogger(), public)

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
		if httpauth.CheckPublicOrigin(bad) == nil {
			t.Errorf("CheckPublicOrigin(%q) = nil, want an error", bad)
		}
	}
	if err := httpauth.CheckPublicOrigin(public); err != nil {
		t.Errorf("CheckPublicOrigin(%q) = %v", public, err)
	}
}

// The proxy fetches metadata from the upstream's origin (--url's scheme,
// host and port) and nowhere else, since any client may make it fetch:
// a resource_metadata naming another origin is ignored (the upstream's
// own well-known document is served) and logged once; a redirect is
// followed within the origin only.
func TestListenResourceMetadataOnlyFromUpstreamOrigin(t *testing.T) {
	const (
		// Placeholders, replaced once the servers' addresses are known.
		up     = "UPSTREAM" // the upstream's origin, http://127.0.0.1:PORT
		upPort = "UPPORT"   // its port
		other  = "OTHER"    // another server on 127.0.0.1, another port
		proxy  = "PROXY"    // the proxy's origin
		wk     = "/.well-known/oauth-protected-resource/v1/mcp"
	)
	doc := func(resource, as string) string {
		return `{"resource":"` + resource + `","authorization_servers":["` + as + `"]}`
	}
	for _, tt := range []struct {
		name       string
		challenges []string          // the resource_metadata of the upstream's refusals, one initialize each
		redirects  map[string]string // the upstream's redirects, by path
		status     int
		as         string   // the authorization server of the document served: says which it is
		fetched    []string // the paths of the upstream's documents the proxy fetched
		ignored    int      // the warnings that a resource_metadata was ignored
		logHas     string   // in the log
	}{
		{
			name:       "on the upstream's origin: fetched",
			challenges: []string{up + "/custom/meta.json", up + "/custom/meta.json"},
			status:     200, as: "https://custom.as", fetched: []string{"/custom/meta.json"},
		},
		{
			name:       "another port of the same host: ignored, logged once",
			challenges: []string{other + "/meta.json", other + "/meta.json"},
			status:     200, as: "https://as.example", fetched: []string{wk}, ignored: 1,
		},
		{
			name:       "another host name on the same port: ignored",
			challenges: []string{"http://localhost:" + upPort + "/custom/meta.json", "http://localhost:" + upPort + "/custom/meta.json"},
			status:     200, as: "https://as.example", fetched: []string{wk}, ignored: 1,
		},
		{
			name:       "https for an http upstream: ignored",
			challenges: []string{"https://127.0.0.1:" + upPort + "/custom/meta.json", "https://127.0.0.1:" + upPort + "/custom/meta.json"},
			status:     200, as: "https://as.example", fetched: []string{wk}, ignored: 1,
		},
		{
			name:       "userinfo on the upstream's origin: ignored, never sent",
			challenges: []string{"http://user:pw@127.0.0.1:" + upPort + "/custom/meta.json", "http://user:pw@127.0.0.1:" + upPort + "/custom/meta.json"},
			status:     200, as: "https://as.example", fetched: []string{wk}, ignored: 1,
		},
		{
			name:       "another origin after one on the origin: the well-known document again",
			challenges: []string{up + "/custom/meta.json", other + "/meta.json"},
			status:     200, as: "https://as.example", fetched: []string{wk}, ignored: 1,
		},
		{
			name:      "a redirect within the origin: followed",
			redirects: map[string]string{wk: "/static/meta.json"},
			status:    200, as: "https://static.as", fetched: []string{wk, "/static/meta.json"},
		},
		{
			name:      "a redirect to another origin: not followed, 502",
			redirects: map[string]string{wk: other + "/meta.json"},
			status:    502, fetched: []string{wk}, logHas: other + "/meta.json",
		},
		{
			name:      "a redirect to https on the same host and port: not followed",
			redirects: map[string]string{wk: "https://127.0.0.1:" + upPort + "/static/meta.json"},
			status:    502, fetched: []string{wk}, logHas: "is not followed",
		},
		{
			name:      "a redirect with userinfo: not followed",
			redirects: map[string]string{wk: "http://user:pw@127.0.0.1:" + upPort + "/static/meta.json"},
			status:    502, fetched: []string{wk}, logHas: "is not followed",
		},
		{
			name:      "redirects in a loop within the origin: given up, 502",
			redirects: map[string]string{wk: "/loop", "/loop": wk},
			status:    502, fetched: []string{wk, "/loop", wk, "/loop", wk, "/loop"}, logHas: "more than 5 redirects",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := &metaUpstream{docs: map[string]metaDoc{}, redirects: map[string]string{}}
			ups := httptest.NewServer(u)
			t.Cleanup(ups.Close)
			o := &metaUpstream{docs: map[string]metaDoc{}}
			oth := httptest.NewServer(o)
			t.Cleanup(oth.Close)
			var logs syncBuffer
			hs := metaServe(t, ups.URL+"/v1/mcp", hclog.New(&hclog.LoggerOptions{Output: &logs, JSONFormat: true, DisableTime: true, Level: hclog.Debug}))
			real := strings.NewReplacer(up, ups.URL, upPort, ups.URL[strings.LastIndexByte(ups.URL, ':')+1:], other, oth.URL, proxy, hs.URL)

			u.docs[wk] = metaDoc{200, doc(ups.URL+"/v1/mcp", "https://as.example")}
			u.docs["/custom/meta.json"] = metaDoc{200, doc(ups.URL+"/v1/mcp", "https://custom.as")}
			u.docs["/static/meta.json"] = metaDoc{200, doc(ups.URL+"/v1/mcp", "https://static.as")}
			o.docs["/meta.json"] = metaDoc{200, doc(ups.URL+"/v1/mcp", "https://other.as")}
			for from, to := range tt.redirects {
				u.redirects[from] = real.Replace(to)
			}

			for _, named := range tt.challenges {
				u.challenge = `Bearer resource_metadata="` + real.Replace(named) + `"`
				resp := hsPost(t, hs.URL+"/mcp", "", hsInit, nil)
				// Whatever it named, the client is sent to the proxy's copy.
				want := `Bearer resource_metadata="` + hs.URL + `/.well-known/oauth-protected-resource/mcp"`
				if diff := cmp.Diff([]any{401, want}, []any{resp.StatusCode, resp.Header.Get("WWW-Authenticate")}); diff != "" {
					t.Errorf("the refused initialize: status, WWW-Authenticate (-want +got):\n%s", diff)
				}
			}
			resp, err := http.Get(hs.URL + "/.well-known/oauth-protected-resource/mcp")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("GET the metadata: %s %s, want %d", resp.Status, body, tt.status)
			}
			if tt.status == 200 {
				var got struct{ Authorization_Servers []string }
				if err := json.Unmarshal(body, &got); err != nil {
					t.Fatalf("GET the metadata: %q: %v", body, err)
				}
				if diff := cmp.Diff([]string{tt.as}, got.Authorization_Servers); diff != "" {
					t.Errorf("the document served: authorization_servers (-want +got):\n%s", diff)
				}
			} else if diff := cmp.Diff(mcpproxy.MetadataUnavailable+"\n", string(body)); diff != "" {
				t.Errorf("GET the metadata: the body (-want +got):\n%s", diff)
			}

			u.mu.Lock()
			fetched := u.paths
			for _, a := range u.auths {
				if a != "" {
					t.Errorf("the upstream's document was fetched with Authorization %q, want none", a)
				}
			}
			u.mu.Unlock()
			if diff := cmp.Diff(tt.fetched, fetched); diff != "" {
				t.Errorf("the upstream's documents fetched (-want +got):\n%s", diff)
			}
			o.mu.Lock()
			if len(o.paths) != 0 {
				t.Errorf("the other origin was asked for %q, want nothing", o.paths)
			}
			o.mu.Unlock()

			log := logs.String()
			if got := strings.Count(log, "protected resource metadata on another origin"); got != tt.ignored {
				t.Errorf("%d warnings of a resource_metadata ignored, want %d; the log:\n%s", got, tt.ignored, log)
			}
			if tt.logHas != "" && !strings.Contains(log, real.Replace(tt.logHas)) {
				t.Errorf("the log does not say %q:\n%s", real.Replace(tt.logHas), log)
			}
		})
	}
}

// A client is told that the metadata is missing or unavailable in fixed
// words: the error's text names the upstream's address and port, which may
// be internal, and goes to the proxy's log instead.
func TestListenResourceMetadataAnswersNameNoAddress(t *testing.T) {
	const wk = "/.well-known/oauth-protected-resource/v1/mcp"
	for _, tt := range []struct {
		name   string
		down   bool     // the upstream is not listening
		doc    *metaDoc // the upstream's endpoint document; nil for none
		status int
		body   string
		logHas string // in the log, besides the upstream's address
	}{
		{name: "an upstream not listening", down: true, status: 502, body: mcpproxy.MetadataUnavailable, logHas: "dial tcp"},
		{name: "an upstream failing", doc: &metaDoc{500, "oops"}, status: 502, body: mcpproxy.MetadataUnavailable, logHas: "500 Internal Server Error"},
		{name: "a document that is not a JSON object", doc: &metaDoc{200, `["x"]`}, status: 502, body: mcpproxy.MetadataUnavailable, logHas: "not a JSON object"},
		{name: "an upstream with none", status: 404, body: mcpproxy.MetadataNone, logHas: "publishes no protected resource metadata"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := &metaUpstream{docs: map[string]metaDoc{}}
			if tt.doc != nil {
				u.docs[wk] = *tt.doc
			}
			ups := httptest.NewServer(u)
			t.Cleanup(ups.Close)
			if tt.down {
				ups.Close()
			}
			var logs syncBuffer
			hs := metaServe(t, ups.URL+"/v1/mcp", hclog.New(&hclog.LoggerOptions{Output: &logs, JSONFormat: true, DisableTime: true, Level: hclog.Debug}))
			resp, err := http.Get(hs.URL + "/.well-known/oauth-protected-resource/mcp")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if diff := cmp.Diff([]any{tt.status, tt.body + "\n"}, []any{resp.StatusCode, string(body)}); diff != "" {
				t.Errorf("GET the metadata: status, body (-want +got):\n%s", diff)
			}
			addr := strings.TrimPrefix(ups.URL, "http://")
			if strings.Contains(string(body), addr) {
				t.Errorf("the answer %q names the upstream's address %s", body, addr)
			}
			log := logs.String()
			for _, want := range []string{addr, tt.logHas} {
				if !strings.Contains(log, want) {
					t.Errorf("the log does not say %q:\n%s", want, log)
				}
			}
		})
	}
}

func TestFetchesMetadataFrom(t *testing.T) {
	for _, tt := range []struct {
		upstream, url string
		want          bool
	}{
		{"http://up.example/v1/mcp", "http://up.example/custom/meta.json", true},
		{"http://up.example/v1/mcp", "http://UP.Example:80/x", true},
		{"http://up.example/v1/mcp", "HTTP://up.example/x", true},
		{"http://up.example:80/v1/mcp", "http://up.example/x", true},
		{"https://up.example/mcp", "https://up.example:443/x", true},
		{"https://[::1]:8443/mcp", "https://[::1]:8443/x", true},
		{"http://up.example/v1/mcp", "https://up.example/x", false},
		{"https://up.example/mcp", "http://up.example/x", false},
		{"http://up.example/v1/mcp", "http://up.example:8080/x", false},
		{"https://up.example/mcp", "https://up.example:80/x", false},
		{"https://[::1]:8443/mcp", "https://[::1]/x", false},
		{"http://up.example/v1/mcp", "http://evil.example/x", false},
		{"http://up.example/v1/mcp", "http://up.example.evil.example/x", false},
		{"http://up.example/v1/mcp", "http://user:pw@up.example/x", false},
		{"http://up.example/v1/mcp", "http://user@up.example/x", false},
		{"http://up.example/v1/mcp", "http://up.example@evil.example/x", false},
		{"http://up.example/v1/mcp", "//up.example/x", false},
		{"http://up.example/v1/mcp", "/x", false},
	} {
		got, err := mcpproxy.FetchesMetadataFrom(tt.upstream, tt.url)
		if err != nil || got != tt.want {
			t.Errorf("for --url %s, FetchesMetadataFrom(%q) = %v, %v; want %v", tt.upstream, tt.url, got, err, tt.want)
		}
	}
}
