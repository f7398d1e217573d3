package mcpproxy

import "bytes"

// Bridges for the black-box tests of the proxy's JSON string writer.

// JSONText is writeText: s as a JSON string, as the proxy writes a text.
func JSONText(s string) string {
	var b bytes.Buffer
	writeText(&b, s)
	return b.String()
}
