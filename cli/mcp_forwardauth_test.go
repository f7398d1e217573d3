package cli

import (
	"strings"
	"testing"
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
	} {
		code, _, stderr := mcpRun(t, strings.NewReader(""), nil, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("toolcap mcp %q = %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
