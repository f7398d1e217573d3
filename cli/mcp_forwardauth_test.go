//go:build !toolcap_nomcp

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// --forward-auth is for --listen in front of --url, and takes the clients'
// Authorization header from --token's hands; off loopback it stands in
// for --token (the upstream authenticates every request).
func TestMCPForwardAuthFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--forward-auth", "--url", "http://127.0.0.1:1/mcp"}, "--forward-auth needs --listen"},
		{[]string{"--listen", "127.0.0.1:0", "--forward-auth", "--", "x"}, "--forward-auth needs --url"},
		{[]string{"--listen", "127.0.0.1:0", "--forward-auth", "--token", "t", "--url", "http://127.0.0.1:1/mcp"}, "--token guards only --metrics"},
		{[]string{"--listen", "0.0.0.0:0", "--url", "http://127.0.0.1:1/mcp"}, "it needs --token (or --forward-auth"},
		{[]string{"--listen", "127.0.0.1:0", "--public-origin", "https://mcp.example.com", "--url", "http://127.0.0.1:1/mcp"}, "--public-origin needs --forward-auth"},
		{[]string{"--listen", "127.0.0.1:0", "--forward-auth", "--public-origin", "https://mcp.example.com/mcp", "--url", "http://127.0.0.1:1/mcp"}, `--public-origin: public origin "https://mcp.example.com/mcp": want a scheme and a host only`},
		{[]string{"--public-origin", "https://mcp.example.com", "--url", "http://127.0.0.1:1/mcp"}, "--public-origin needs --listen"},
	} {
		code, _, stderr := mcpRun(t, strings.NewReader(""), nil, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("toolcap mcp %q = %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}

// `toolcap mcp --listen --forward-auth --url` serves the upstream's
// protected resource metadata where a client of the proxy looks for it
// (RFC 9728: under /.well-known/oauth-protected-resource, followed by the
// endpoint's path), its resource mapped from the upstream's URL, or
// origin, to the proxy's.
func TestMCPListenServesResourceMetadata(t *testing.T) {
	var ups *httptest.Server
	ups = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resource := map[string]string{
			"/.well-known/oauth-protected-resource/v1/mcp": ups.URL + "/v1/mcp",
			"/.well-known/oauth-protected-resource":        ups.URL,
		}
		res, ok := resource[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"resource":%q,"authorization_servers":["https://as.example"]}`, res)
	}))
	defer ups.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	done := make(chan int, 1)
	args := []string{"--listen", "127.0.0.1:0", "--forward-auth", "--url", ups.URL + "/v1/mcp"}
	go func() {
		done <- runMCP(ctx, &options{}, args, strings.NewReader(""), io.Discard, &stderr, []string{"XDG_CACHE_HOME=" + t.TempDir()})
	}()
	serving := regexp.MustCompile(`serving (http://\S+)/mcp`)
	var origin string
	for deadline := time.Now().Add(10 * time.Second); origin == ""; time.Sleep(10 * time.Millisecond) {
		if m := serving.FindStringSubmatch(stderr.String()); m != nil {
			origin = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("toolcap mcp %q did not say where it serves:\n%s", args, stderr.String())
		}
	}

	for _, tc := range []struct{ path, want string }{
		{"/.well-known/oauth-protected-resource/mcp", origin + "/mcp"},
		{"/.well-known/oauth-protected-resource", origin},
	} {
		resp, err := http.Get(origin + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
		}
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s, %v", tc.path, resp.Status, err)
		}
		if diff := cmp.Diff([]any{tc.want, []string{"https://as.example"}}, []any{doc.Resource, doc.AuthorizationServers}); diff != "" {
			t.Errorf("GET %s: resource, authorization_servers (-want +got):\n%s", tc.path, diff)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("toolcap mcp exited %d:\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("toolcap mcp did not exit once cancelled")
	}
}
