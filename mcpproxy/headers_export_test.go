package mcpproxy

import (
	"encoding/json"
	"net/http"
)

// MirrorHeaders exposes mirrorHeaders to the black-box tests: the headers
// a request msg of a client over stdio goes up to an HTTP server with,
// the x-mcp-header arguments of each tool read from its input schema in
// schemas.
func MirrorHeaders(msg string, schemas map[string]string) (http.Header, error) {
	env, err := envelopeOfMessage([]byte(msg))
	if err != nil {
		return nil, err
	}
	return mirrorHeaders([]byte(msg), env, func(tool string) []paramBinding {
		s, ok := schemas[tool]
		if !ok {
			return nil
		}
		return paramBindings(json.RawMessage(s))
	}), nil
}
