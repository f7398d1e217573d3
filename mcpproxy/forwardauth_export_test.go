package mcpproxy

import "net/http"

// Bridges for the black-box tests of the server's half of forwarding
// authorization, which package mcpproxy's HTTP server calls unexported.

// RelayUpstreamAuth is relayUpstreamAuth, WWW-Authenticate unchanged.
func RelayUpstreamAuth(w http.ResponseWriter, err error) bool {
	return relayUpstreamAuth(w, err, nil)
}

// GuardStream is upstreamAuth.guard, WWW-Authenticate unchanged, with
// whether the refusal was relayed.
func GuardStream(a *upstreamAuth, w http.ResponseWriter, ids []string) (http.ResponseWriter, func() bool) {
	g := a.guard(w, ids, nil)
	return g, g.relayed
}

// RewriteAuthParam is rewriteAuthParam.
var RewriteAuthParam = rewriteAuthParam
