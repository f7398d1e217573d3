package mcpproxy

import "net/url"

// Bridges for the black-box tests of the resource metadata's origin rule.

// FetchesMetadataFrom reports whether the proxy for the upstream endpoint
// at upstream would fetch protected resource metadata from rawURL: whether
// it is on the upstream's origin, with no userinfo.
func FetchesMetadataFrom(upstream, rawURL string) (bool, error) {
	m, err := newResourceMetadata(upstream, "", nil)
	if err != nil {
		return false, err
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false, err
	}
	return m.sameOrigin(u), nil
}

// What a client is told when the metadata cannot be served.
const (
	MetadataUnavailable = metadataUnavailable
	MetadataNone        = metadataNone
)
