package mcpproxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
)

// noRedirects is a client that hands a redirect back, as the 2025-03-26
// client's fetch of a metadata document would see it.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// metaAnswer is what a client got from the proxy.
type metaAnswer struct {
	Status                                 int
	Body, ContentType, CacheControl, Where string
}

func getMeta(t *testing.T, url string) metaAnswer {
	t.Helper()
	resp, err := noRedirects.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return metaAnswer{resp.StatusCode, string(body), resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"), resp.Header.Get("Location")}
}

// A 2025-03-26 client of an upstream that publishes no protected resource
// metadata reads the authorization server metadata at the origin it
// connects to, the proxy's: the proxy relays both documents' paths to the
// upstream's origin, and the answers as they came, with the bounds of the
// fallback endpoints: a GET only, a body of at most 64 KiB, a redirect
// handed back and not followed (wherever it points), and 10 s.
func TestLegacyAuthorizationMetadata(t *testing.T) {
	const doc = `{"issuer":"http://up/oauth","authorization_endpoint":"http://up/oauth/authorize","token_endpoint":"http://up/oauth/token"}`
	var elsewhereHit atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhereHit.Add(1) }))
	t.Cleanup(elsewhere.Close)
	big := `{"issuer":"` + strings.Repeat("x", 70<<10) + `"}`
	var slow atomic.Bool
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case slow.Load():
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		case r.URL.Path == "/.well-known/oauth-authorization-server" && r.URL.RawQuery == "big":
			io.WriteString(w, big)
		case r.URL.Path == "/.well-known/oauth-authorization-server" && r.URL.RawQuery == "moved":
			http.Redirect(w, r, elsewhere.URL+"/meta.json", http.StatusFound)
		case r.URL.Path == "/.well-known/oauth-authorization-server":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "max-age=300")
			w.Header().Set("X-Internal", "up-7")
			io.WriteString(w, doc)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(up.Close)
	var logs syncBuffer
	hs := metaServe(t, up.URL+"/v1/mcp", hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn}))
	const unavailable = "toolcap: the upstream's authorization endpoint is unavailable (the proxy's log says why)\n"

	for _, tt := range []struct {
		name, path string
		want       metaAnswer
	}{
		{"the document", "/.well-known/oauth-authorization-server", metaAnswer{200, doc, "application/json", "max-age=300", ""}},
		{"none", "/.well-known/openid-configuration", metaAnswer{404, "404 page not found\n", "text/plain; charset=utf-8", "", ""}},
		{"over 64 KiB", "/.well-known/oauth-authorization-server?big", metaAnswer{502, unavailable, "text/plain; charset=utf-8", "", ""}},
		{"moved to another origin", "/.well-known/oauth-authorization-server?moved", metaAnswer{302, "", "", "", elsewhere.URL + "/meta.json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := getMeta(t, hs.URL+tt.path)
			if tt.want.Status == 302 {
				got.Body, got.ContentType = "", "" // net/http's own words for a redirect
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("GET %s (-want +got):\n%s", tt.path, diff)
			}
		})
	}
	if n := elsewhereHit.Load(); n != 0 {
		t.Errorf("the proxy followed a redirect to another origin: %d requests there", n)
	}

	resp, err := http.Post(hs.URL+"/.well-known/oauth-authorization-server", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET" {
		t.Errorf("POST of the metadata: %d, Allow %q; want 405 and GET", resp.StatusCode, resp.Header.Get("Allow"))
	}

	// A slow upstream: the client gets 502 after the relay's 10 s, and the
	// upstream's request ends with it.
	slow.Store(true)
	start := time.Now()
	got := getMeta(t, hs.URL+"/.well-known/oauth-authorization-server")
	if took := time.Since(start); got.Status != http.StatusBadGateway || got.Body != unavailable || took > 20*time.Second {
		t.Errorf("a slow upstream: %d %q after %v; want 502 %q after about 10 s", got.Status, got.Body, took, unavailable)
	}
	if !strings.Contains(logs.String(), "Client.Timeout") && !strings.Contains(logs.String(), "deadline") {
		t.Errorf("the log does not say the upstream timed out:\n%s", logs.String())
	}
}
