package mcpproxy

import "net/http"

// Names the black-box tests of this package use, not exported by the
// package itself.
type (
	UpstreamAuth      = upstreamAuth
	UpstreamHTTPError = upstreamHTTPError
)

var (
	DefaultProtocolVersions = defaultProtocolVersions
	WithUpstreamAuth        = withUpstreamAuth
)

// ResourceMetadataPath is where a client looks for OAuth protected
// resource metadata.
const ResourceMetadataPath = resourceMetadataPath

// MetadataHandlerForTest and LegacyAuthorizationHandlerForTest are the
// handlers Mount mounts.
func (h *HTTPHandler) MetadataHandlerForTest() http.Handler { return h.metadataHandler() }

func (h *HTTPHandler) LegacyAuthorizationHandlerForTest() http.Handler {
	return h.legacyAuthorizationHandler()
}
