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
)

// ResourceMetadataPath is where OAuth protected resource metadata is
// published (RFC 9728, section 3): at this path for a resource at the
// root of its origin, and at this path followed by the resource's path
// (/.well-known/oauth-protected-resource/mcp for an endpoint at /mcp)
// otherwise. A proxy serving HTTP with [HTTPOptions.ForwardAuth] serves
// its copy of the upstream's metadata there: see
// [HTTPHandler.ResourceMetadata].
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// Bounds of fetching the upstream's protected resource metadata: a
// document is a few hundred bytes, and a client is waiting.
const (
	maxResourceMetadata  = 64 << 10
	resourceMetadataWait = 10 * time.Second
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
type resourceMetadata struct {
	upstream       string // the upstream's endpoint URL, as given
	upstreamOrigin string // scheme://host of upstream
	pathDoc        string // where the upstream's metadata for its endpoint is: ResourceMetadataPath + its path
	rootDoc        string // where the upstream's metadata for its origin is
	client         *http.Client

	// public is the proxy's origin as its clients reach it
	// (HTTPOptions.PublicOrigin); "" takes it from each request.
	public string

	// announced is the last resource_metadata URL the upstream's
	// WWW-Authenticate named for its endpoint (not its root document): the
	// proxy's document for its endpoint is fetched from there first, as
	// the client would have fetched it.
	announced atomic.Pointer[string]
}

// newResourceMetadata returns the mapping for the upstream endpoint at
// rawURL, an http:// or https:// URL, to the proxy at public, its origin as
// clients reach it ("" for the one each request names).
func newResourceMetadata(rawURL, public string) (*resourceMetadata, error) {
	if public != "" {
		if err := CheckPublicOrigin(public); err != nil {
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
	origin := u.Scheme + "://" + u.Host
	m := &resourceMetadata{
		upstream:       rawURL,
		upstreamOrigin: origin,
		rootDoc:        origin + ResourceMetadataPath,
		// Its own client: the document is public, so none of the
		// upstream connection's headers go with it, and a client is
		// waiting for it.
		client: &http.Client{Timeout: resourceMetadataWait},
		public: strings.TrimSuffix(public, "/"),
	}
	// RFC 9728, section 3.1: the well-known path goes between the host
	// and the path; a path of "/" alone is the root.
	m.pathDoc = m.rootDoc
	if p := u.EscapedPath(); p != "" && p != "/" {
		m.pathDoc = origin + ResourceMetadataPath + p
	}
	return m, nil
}

// CheckPublicOrigin reports what is wrong with origin as an
// [HTTPOptions.PublicOrigin]: it must be an http:// or https:// URL with a
// host and no path, query or fragment.
func CheckPublicOrigin(origin string) error {
	u, err := url.Parse(origin)
	switch {
	case err != nil:
		return fmt.Errorf("public origin %q: %v", origin, err)
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("public origin %q: want http:// or https:// and a host", origin)
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("public origin %q: want a scheme and a host only, no path, query, fragment or user", origin)
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
// document unless it named the upstream's root one. It returns nil when m
// is nil or r named no host: the values are then relayed as they came.
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
			if named == m.rootDoc {
				return origin + ResourceMetadataPath
			}
			m.announced.Store(&named)
			return origin + ResourceMetadataPath + r.URL.Path
		})
	}
}

// ServeHTTP answers a GET of the proxy's protected resource metadata:
// the document for its root at [ResourceMetadataPath], the one for its
// endpoint at [ResourceMetadataPath] followed by the endpoint's path. It
// fetches the upstream's document afresh (its endpoint document from the
// resource_metadata its last refusal named, else from its own well-known
// path; its root document from its root), rewrites the resource, and
// answers it; an upstream that has none is answered 404, one that cannot
// be reached or answers something else than a JSON object 502.
func (m *resourceMetadata) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "toolcap: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	path, ok := strings.CutPrefix(r.URL.Path, ResourceMetadataPath)
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
		http.Error(w, fmt.Sprintf("toolcap: the upstream publishes no protected resource metadata (%s)", strings.Join(sources, ", ")), http.StatusNotFound)
		return
	case err != nil:
		http.Error(w, "toolcap: the upstream's protected resource metadata: "+err.Error(), http.StatusBadGateway)
		return
	}
	doc, err = rewriteResource(doc, map[string]string{m.upstream: endpoint, m.upstreamOrigin: origin})
	if err != nil {
		http.Error(w, fmt.Sprintf("toolcap: the upstream's protected resource metadata (%s): %v", sources[0], err), http.StatusBadGateway)
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
// metadata is public, and a client fetches it without any.
func (m *resourceMetadata) fetch(ctx context.Context, src string) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, nil, err
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
