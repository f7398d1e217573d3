//go:build toolcap_nomcp

package cli

import (
	"context"
	"fmt"
	"io"
)

// runMCP is "toolcap mcp" in a toolcap built with -tags toolcap_nomcp: a
// build without the MCP relay, whose start-up (the hook's, run once per tool
// call) does not pay for the relay's packages (net/http, TLS, JSON Schema).
// It says so, and how to get the full build.
func runMCP(_ context.Context, _ *options, _ []string, _ io.Reader, _, stderr io.Writer, _ []string) int {
	fmt.Fprintln(stderr, "toolcap mcp: this toolcap was built with -tags toolcap_nomcp, without the MCP relay; "+
		"install the full build: go install github.com/toolcap/toolcap/cmd/toolcap@latest")
	return exitUsage
}
