package mcpproxy

import "net/http"

// Bridges for the black-box tests of the server's half of forwarding
// authorization, which package mcpproxy's HTTP server calls unexported.

// RelayUpstreamAuth is relayUpstreamAuth.
var RelayUpstreamAuth = relayUpstreamAuth

// GuardStream is UpstreamAuth.guard, with whether the refusal was relayed.
func GuardStream(a *UpstreamAuth, w http.ResponseWriter, ids []string) (http.ResponseWriter, func() bool) {
	g := a.guard(w, ids)
	return g, g.relayed
}
