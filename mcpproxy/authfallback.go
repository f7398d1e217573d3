package mcpproxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

// legacyAuthorizationPaths are the paths a client of the MCP 2025-03-26
// authorization spec looks for its authorization server at, on the MCP
// server's origin, when the server publishes no protected resource
// metadata: the authorization server metadata (RFC 8414, and the OpenID
// Connect form a client also tries), and, when there is none, the
// endpoints the spec falls back to. [HTTPHandler.LegacyAuthorization]
// serves them.
var legacyAuthorizationPaths = []string{
	"/.well-known/oauth-authorization-server",
	"/.well-known/openid-configuration",
	"/authorize", "/token", "/register",
}

// Bounds of relaying a legacy authorization endpoint: a token or
// registration request or answer is a few hundred bytes, and a client (or
// its user's browser) is waiting.
const (
	maxLegacyAuthBody = 64 << 10
	legacyAuthWait    = 10 * time.Second
)

// legacyAuthHeaders are the request headers relayed to the upstream's
// endpoint: what the endpoints read (the form or JSON body's type, the
// client's Basic credentials at /token), nothing that names the proxy's
// client otherwise.
var legacyAuthHeaders = []string{"Accept", "Authorization", "Content-Type", "User-Agent"}

// legacyAuthAnswerHeaders are the response headers relayed back: the
// redirect of /authorize to the client's redirect_uri, the body's type,
// and what OAuth says of caching and errors.
var legacyAuthAnswerHeaders = []string{"Cache-Control", "Content-Type", "Location", "Pragma", "WWW-Authenticate"}

// legacyAuthorizationHandler returns the handler of the 2025-03-26 authorization
// discovery and fallback endpoints (GET of the two metadata documents and
// of /authorize, POST /token, POST /register: [legacyAuthorizationPaths])
// for a proxy with [HTTPOptions.ForwardAuth] and [HTTPOptions.UpstreamURL];
// it answers 404 otherwise. [HTTPHandler.Mount] mounts it at each of those paths.
//
// Under the 2025-03-26 spec, a client of a server that publishes no
// protected resource metadata reads the authorization server metadata at
// the server's origin, and, when there is none, takes that origin for its
// authorization server and registers, authorizes and gets its token at
// the fallback paths; through the proxy, that origin is the proxy's. The
// metadata is relayed as the upstream wrote it: the endpoints it names
// (on the upstream's origin, or another) are reached by the client
// directly, as they would be without the proxy. Each request is relayed to the same path and
// query on the upstream's origin (scheme, host and port of the
// upstream's URL, and nowhere else), with its body (at most 64 KiB) and
// the headers the endpoints read; the answer comes back with its status,
// body and the headers OAuth uses, a redirect relayed rather than
// followed (the authorization endpoint's redirect goes to the client's
// redirect_uri). An upstream that cannot be reached gets 502 with fixed
// words, the detail in the proxy's log. Other paths of the upstream's
// origin are not relayed: an authorization server whose pages need more
// (a login form posting elsewhere on its origin) cannot be used through
// the proxy, and should publish protected resource metadata naming
// itself, as the 2025-06-18 spec requires.
func (h *HTTPHandler) legacyAuthorizationHandler() http.Handler {
	if h.meta == nil {
		return http.NotFoundHandler()
	}
	return legacyAuthorization{m: h.meta, client: &http.Client{
		Timeout: legacyAuthWait,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// legacyAuthorization relays the fallback endpoints to the upstream's
// origin.
type legacyAuthorization struct {
	m      *resourceMetadata
	client *http.Client
}

// legacyAuthUnavailable is what a client is told when the upstream's
// endpoint cannot be reached: the error names the upstream's address,
// which may be internal.
const legacyAuthUnavailable = "toolcap: the upstream's authorization endpoint is unavailable (the proxy's log says why)"

func (a legacyAuthorization) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	want := http.MethodPost
	if r.URL.Path == "/authorize" || strings.HasPrefix(r.URL.Path, "/.well-known/") {
		want = http.MethodGet
	}
	known := false
	for _, p := range legacyAuthorizationPaths {
		known = known || r.URL.Path == p
	}
	switch {
	case !known:
		http.NotFound(w, r)
		return
	case r.Method != want:
		w.Header().Set("Allow", want)
		http.Error(w, "toolcap: "+r.URL.Path+" takes "+want, http.StatusMethodNotAllowed)
		return
	}
	var body io.Reader
	if want == http.MethodPost {
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxLegacyAuthBody))
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			http.Error(w, "toolcap: the request body is over 64 KiB", http.StatusRequestEntityTooLarge)
			return
		case err != nil:
			http.Error(w, "toolcap: the request body could not be read", http.StatusBadRequest)
			return
		}
		body = bytes.NewReader(b)
	}
	target := a.m.upstreamOrigin + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target, body)
	if err != nil || !a.m.sameOrigin(req.URL) {
		a.m.log.Warn("a legacy authorization request was not relayed", "path", r.URL.Path, "error", err)
		http.Error(w, legacyAuthUnavailable, http.StatusBadGateway)
		return
	}
	for _, k := range legacyAuthHeaders {
		if v := r.Header.Values(k); len(v) > 0 {
			req.Header[k] = v
		}
	}
	resp, err := a.client.Do(req)
	if err != nil {
		a.m.log.Warn("the upstream's authorization endpoint could not be reached", "path", r.URL.Path, "error", err)
		http.Error(w, legacyAuthUnavailable, http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxLegacyAuthBody+1))
	if err != nil || len(answer) > maxLegacyAuthBody {
		a.m.log.Warn("the upstream's authorization endpoint answered no body of at most 64 KiB", "path", r.URL.Path, "status", resp.StatusCode, "error", err)
		http.Error(w, legacyAuthUnavailable, http.StatusBadGateway)
		return
	}
	for _, k := range legacyAuthAnswerHeaders {
		if v := resp.Header.Values(k); len(v) > 0 {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}
