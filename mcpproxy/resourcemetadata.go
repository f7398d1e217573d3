package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/toolcap/toolcap/internal/httpauth"
)

// resourceMetadataPath is where OAuth protected resource metadata is
// published (RFC 9728, section 3): at this path for a resource at the
// root of its origin, and at this path followed by the resource's path
// (/.well-known/oauth-protected-resource/mcp for an endpoint at /mcp)
// otherwise. A proxy serving HTTP with [HTTPOptions.ForwardAuth] serves
// its copy of the upstream's metadata there: see
// [HTTPHandler.Mount].
const resourceMetadataPath = "/.well-known/oauth-protected-resource"

// Bounds of fetching the upstream's protected resource metadata: a
// document is a few hundred bytes, a client is waiting, and a redirect is
// followed only within the upstream's origin, where a few are plenty.
const (
	maxResourceMetadata       = 64 << 10
	resourceMetadataWait      = 10 * time.Second
	maxResourceMetadataRedirs = 5
)

// What a client is told when the upstream's metadata cannot be served: the
// same words whatever went wrong, since the error's text names the
// upstream's address and port, which may be internal. The proxy's log has
// the detail.
const (
	metadataUnavailable = "toolcap: the upstream's protected resource metadata is unavailable (the proxy's log says why)"
	metadataNone        = "toolcap: the upstream publishes no protected resource metadata"
)

// resourceMetadata maps the upstream's OAuth protected resource metadata
// to the proxy's own URL, so that a client that reaches the upstream
// through the proxy can authorize with the upstream's authorization
// server: the client checks that the metadata names, as its resource, the
// URL it connects to (RFC 9728, section 3.3; the MCP authorization spec
// says the same), which is the proxy's, not the upstream's.
//
// Exactly two values are rewritten, the way a reverse proxy rewrites the
// Location of a redirect: the upstream's endpoint URL (the --url, as
// given) becomes the proxy's endpoint URL, and the upstream's origin
// (scheme://host:port, the resource of metadata at the root) becomes the
// proxy's origin; the proxy's URL is the one the request to it named
// (its Host). Any other resource is relayed as it is, so that a client
// still refuses metadata that names another resource, as it would
// directly. The rest of the document (authorization_servers,
// scopes_supported, ...) is the upstream's: the client authorizes with
// the upstream's authorization server itself, not through the proxy.
//
// Every document is fetched from the upstream's origin (the scheme, host
// and port of its URL) and from nowhere else: a resource_metadata naming
// another origin is ignored, and a redirect is followed only within the
// origin. Any client may GET the metadata, so a document the upstream
// could place anywhere would let anyone make the proxy fetch any URL it
// can reach (its loopback, its private network) and learn from the answer.
type resourceMetadata struct {
	upstream       string // the upstream's endpoint URL, as given
	upstreamOrigin string // scheme://host of upstream
	pathDoc        string // where the upstream's metadata for its endpoint is: resourceMetadataPath + its path
	rootDoc        string // where the upstream's metadata for its origin is
	client         *http.Client
	log            hclog.Logger

	// The upstream's origin, as sameOrigin compares it: the scheme, the
	// host in lower case, the port with the scheme's default filled in.
	scheme, host, port string

	// public is the proxy's origin as its clients reach it
	// (HTTPOptions.PublicOrigin); "" takes it from each request.
	public string

	// announced is the last resource_metadata URL the upstream's
	// WWW-Authenticate named for its endpoint (not its root document): the
	// proxy's document for its endpoint is fetched from there first, as
	// the client would have fetched it. It is always on the upstream's
	// origin.
	announced atomic.Pointer[string]
	// ignored is the last resource_metadata on another origin the
	// upstream named, so that it is logged once, not with every refusal.
	ignored atomic.Pointer[string]
}

// newResourceMetadata returns the mapping for the upstream endpoint at
// rawURL, an http:// or https:// URL, to the proxy at public, its origin as
// clients reach it ("" for the one each request names). What clients are
// not told (why a fetch failed, a resource_metadata ignored) goes to
// logger; nil logs nothing.
func newResourceMetadata(rawURL, public string, logger hclog.Logger) (*resourceMetadata, error) {
	if public != "" {
		if err := httpauth.CheckPublicOrigin(public); err != nil {
			return nil, err
		}
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http:// or https:// URL", rawURL)
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	origin := u.Scheme + "://" + u.Host
	m := &resourceMetadata{
		upstream:       rawURL,
		upstreamOrigin: origin,
		rootDoc:        origin + resourceMetadataPath,
		log:            logger,
		scheme:         u.Scheme,
		host:           strings.ToLower(u.Hostname()),
		port:           originPort(u),
		public:         strings.TrimSuffix(public, "/"),
	}
	// Its own client: the document is public, so none of the upstream
	// connection's headers go with it, and a client is waiting for it.
	m.client = &http.Client{Timeout: resourceMetadataWait, CheckRedirect: m.checkRedirect}
	// RFC 9728, section 3.1: the well-known path goes between the host
	// and the path; a path of "/" alone is the root.
	m.pathDoc = m.rootDoc
	if p := u.EscapedPath(); p != "" && p != "/" {
		m.pathDoc = origin + resourceMetadataPath + p
	}
	return m, nil
}

// originPort returns u's port, or its scheme's default port when it names
// none, so that http://up and http://up:80 are one origin.
func originPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch u.Scheme {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// sameOrigin reports whether u is on the upstream's origin (RFC 6454: the
// same scheme, host and port), with no userinfo: the proxy fetches
// documents there and nowhere else. A URL with userinfo is refused even on
// the origin, since the fetch would send it as Basic credentials, which
// the upstream never gave the proxy.
func (m *resourceMetadata) sameOrigin(u *url.URL) bool {
	return u.User == nil && u.Scheme == m.scheme && strings.ToLower(u.Hostname()) == m.host && originPort(u) == m.port
}

// checkRedirect follows a redirect of a document's fetch only within the
// upstream's origin, and only a few times. A redirect within it reaches
// nothing the proxy does not reach already (it relays the upstream's MCP
// there), and a server may well answer its well-known path with one (a
// trailing slash, a static file); one to another origin would take the
// fetch wherever the upstream pointed, which is what the origin rule
// forbids.
func (m *resourceMetadata) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxResourceMetadataRedirs {
		return fmt.Errorf("more than %d redirects", maxResourceMetadataRedirs)
	}
	if !m.sameOrigin(req.URL) {
		return fmt.Errorf("a redirect to %s, not on the upstream's origin %s, is not followed", req.URL.Redacted(), m.upstreamOrigin)
	}
	return nil
}

// proxyURLs returns the proxy's origin and its endpoint URL, for an
// endpoint at path: the public origin when there is one, else as the
// request r named them; ok is false when neither names a host.
func (m *resourceMetadata) proxyURLs(r *http.Request, path string) (origin, endpoint string, ok bool) {
	if m.public != "" {
		return m.public, m.public + path, true
	}
	if r.Host == "" {
		return "", "", false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	origin = scheme + "://" + r.Host
	return origin, origin + path, true
}

// challengeRewriter returns the rewriting of the upstream's
// WWW-Authenticate values for the client of r, a request to the proxy's
// endpoint: each resource_metadata parameter names the proxy's copy of the
// document it named instead (see [resourceMetadata]), its endpoint
// document unless it named the upstream's root one. A document on another
// origin than the upstream's is not fetched: the proxy's copy is then the
// upstream's own well-known one. It returns nil when m is nil or r named
// no host: the values are then relayed as they came.
func (m *resourceMetadata) challengeRewriter(r *http.Request) func(string) string {
	if m == nil {
		return nil
	}
	origin, _, ok := m.proxyURLs(r, r.URL.Path)
	if !ok {
		return nil
	}
	return func(v string) string {
		return rewriteAuthParam(v, "resource_metadata", func(named string) string {
			u, err := url.Parse(named)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return named // not a document the proxy could fetch: as it came
			}
			switch {
			case !m.sameOrigin(u):
				m.ignore(named)
				m.announced.Store(nil)
			case named == m.rootDoc:
				return origin + resourceMetadataPath
			default:
				m.announced.Store(&named)
			}
			return origin + resourceMetadataPath + r.URL.Path
		})
	}
}

// ignore logs that the upstream named a resource_metadata on another
// origin, the first time it names that one: the upstream says so with
// every refusal, and once is enough for the operator.
func (m *resourceMetadata) ignore(named string) {
	if prev := m.ignored.Swap(&named); prev != nil && *prev == named {
		return
	}
	m.log.Warn("the upstream's WWW-Authenticate names protected resource metadata on another origin: not fetched, the upstream's own well-known document is served instead",
		"resource_metadata", named, "upstream_origin", m.upstreamOrigin)
}

// ServeHTTP answers a GET of the proxy's protected resource metadata:
// the document for its root at [resourceMetadataPath], the one for its
// endpoint at [resourceMetadataPath] followed by the endpoint's path. It
// fetches the upstream's document afresh (its endpoint document from the
// resource_metadata its last refusal named, else from its own well-known
// path; its root document from its root), rewrites the resource, and
// answers it; an upstream that has none is answered 404, one that cannot
// be reached or answers something else than a JSON object 502. Neither
// answer says more than that (the error names the upstream's address,
// which may be internal): the detail goes to the log.
func (m *resourceMetadata) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "toolcap: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	path, ok := strings.CutPrefix(r.URL.Path, resourceMetadataPath)
	if !ok || (path != "" && !strings.HasPrefix(path, "/")) {
		http.NotFound(w, r)
		return
	}
	origin, endpoint, ok := m.proxyURLs(r, path)
	if !ok {
		http.Error(w, "toolcap: the request names no host", http.StatusBadRequest)
		return
	}
	sources := []string{m.rootDoc}
	if path != "" {
		sources = []string{m.pathDoc}
		if a := m.announced.Load(); a != nil && *a != m.pathDoc {
			sources = []string{*a, m.pathDoc}
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), resourceMetadataWait)
	defer cancel()
	var doc []byte
	var header http.Header
	var err error
	for _, src := range sources {
		doc, header, err = m.fetch(ctx, src)
		if !errors.Is(err, errNoMetadata) {
			break
		}
	}
	switch {
	case errors.Is(err, errNoMetadata):
		// An upstream without metadata is a normal case, not a fault.
		m.log.Debug("the upstream publishes no protected resource metadata", "sources", sources)
		http.Error(w, metadataNone, http.StatusNotFound)
		return
	case err != nil:
		m.log.Warn("cannot fetch the upstream's protected resource metadata", "sources", sources, "error", err)
		http.Error(w, metadataUnavailable, http.StatusBadGateway)
		return
	}
	doc, err = rewriteResource(doc, map[string]string{m.upstream: endpoint, m.upstreamOrigin: origin})
	if err != nil {
		m.log.Warn("the upstream's protected resource metadata cannot be served", "sources", sources, "error", err)
		http.Error(w, metadataUnavailable, http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if cc := header.Get("Cache-Control"); cc != "" {
		w.Header().Set("Cache-Control", cc)
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(doc)))
	if r.Method == http.MethodGet {
		_, _ = w.Write(doc)
	}
}

// errNoMetadata is an upstream's answer that it has no document there.
var errNoMetadata = errors.New("no protected resource metadata")

// fetch GETs the upstream's document at src, with no credentials: the
// metadata is public, and a client fetches it without any. src must be on
// the upstream's origin.
func (m *resourceMetadata) fetch(ctx context.Context, src string) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, nil, err
	}
	if !m.sameOrigin(req.URL) {
		// challengeRewriter keeps only documents on the origin: this is
		// the last guard, not the rule.
		return nil, nil, fmt.Errorf("%s is not on the upstream's origin %s", req.URL.Redacted(), m.upstreamOrigin)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return nil, nil, fmt.Errorf("%s: %w", src, errNoMetadata)
	case resp.StatusCode != http.StatusOK:
		return nil, nil, fmt.Errorf("%s answered %s", src, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResourceMetadata+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", src, err)
	}
	if len(body) > maxResourceMetadata {
		return nil, nil, fmt.Errorf("%s: the document is over %d bytes", src, maxResourceMetadata)
	}
	return body, resp.Header, nil
}

// rewriteResource returns the metadata document doc, a JSON object, with
// its resource member replaced by to[resource] when to has it; any other
// resource, or none, leaves the document's members as they were.
func rewriteResource(doc []byte, to map[string]string) ([]byte, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(doc, &members); err != nil || members == nil {
		return nil, errors.New("not a JSON object")
	}
	var resource string
	if raw, ok := members["resource"]; !ok || json.Unmarshal(raw, &resource) != nil {
		return doc, nil
	}
	mapped, ok := to[resource]
	if !ok {
		return doc, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(mapped); err != nil {
		return nil, err
	}
	members["resource"] = bytes.TrimSpace(b.Bytes())
	b.Reset()
	enc = json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(members); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// rewriteAuthParam returns the WWW-Authenticate value v with the value of
// every auth-param called name (in any case) replaced by to(value), as a
// quoted string (RFC 9110, section 11.2: auth-param = token BWS "=" BWS
// ( token / quoted-string )). Everything else is kept byte for byte,
// quoted strings included, so that a parameter's name inside another's
// quoted value is not taken for one.
func rewriteAuthParam(v, name string, to func(string) string) string {
	var b strings.Builder
	i := 0
	for i < len(v) {
		switch c := v[i]; {
		case c == '"':
			j := quotedEnd(v, i)
			b.WriteString(v[i:j])
			i = j
		case isTokenChar(c):
			j := i
			for j < len(v) && isTokenChar(v[j]) {
				j++
			}
			k := skipBWS(v, j)
			if k == len(v) || v[k] != '=' || !strings.EqualFold(v[i:j], name) {
				b.WriteString(v[i:j])
				i = j
				continue
			}
			k = skipBWS(v, k+1)
			end, value := k, ""
			if k < len(v) && v[k] == '"' {
				end = quotedEnd(v, k)
				value = unquote(v[k:end])
			} else {
				for end < len(v) && isTokenChar(v[end]) {
					end++
				}
				value = v[k:end]
			}
			b.WriteString(v[i:k])
			b.WriteString(quote(to(value)))
			i = end
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// isTokenChar reports whether c may be in an HTTP token (RFC 9110,
// section 5.6.2).
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// skipBWS returns the index of the first byte of v at or after i that is
// not a space or a tab.
func skipBWS(v string, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	return i
}

// quotedEnd returns the index just past the quoted string that starts at
// v[i] (a '"'), or len(v) when it is not closed.
func quotedEnd(v string, i int) int {
	for j := i + 1; j < len(v); j++ {
		switch v[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(v)
}

// unquote returns the content of the quoted string q, its escapes undone.
func unquote(q string) string {
	q = strings.TrimPrefix(q, `"`)
	q = strings.TrimSuffix(q, `"`)
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		if q[i] == '\\' && i+1 < len(q) {
			i++
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// quote returns s as an HTTP quoted string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}
