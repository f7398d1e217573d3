// Command refclient is toolcap's reference MCP client for the client
// scenarios of the official MCP conformance suite: the suite plays the
// server, runs this command with the server's URL as its last argument and
// the scenario's name in MCP_CONFORMANCE_SCENARIO, and checks what the
// client did. cli/conformance_e2e_test.go runs it directly and with -via, so
// that the same client reaches the suite's server through `toolcap mcp
// --url`: then the suite checks toolcap's client side (its HTTP transport to
// the server), and toolcap must pass whatever refclient passes directly.
//
// It implements the scenarios that need no authorization: initialize,
// tools_call, elicitation-sep1034-client-defaults and sse-retry. Any other
// scenario exits 2 naming it, so the suite records a failure both ways.
// The auth/ ones need HTTP between the client and toolcap (stdio carries
// no Authorization) and a client that does OAuth: the test plays them with
// the go-sdk's own conformance client through `toolcap mcp --listen
// --forward-auth` (see ../vialisten).
//
// Usage:
//
//	refclient [-via TOOLCAP] URL
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scenarios maps each scenario refclient plays to the tool it calls, with
// its arguments; "" calls none (initialize only lists the tools).
var scenarios = map[string]struct {
	tool string
	args map[string]any
}{
	"initialize":                          {},
	"tools_call":                          {"add_numbers", map[string]any{"a": 5, "b": 3}},
	"elicitation-sep1034-client-defaults": {"test_client_elicitation_defaults", map[string]any{}},
	"sse-retry":                           {"test_reconnection", map[string]any{}},
}

func main() {
	via := flag.String("via", "", "reach the server through `TOOLCAP mcp --url URL` over stdio instead of directly")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: refclient [-via TOOLCAP] URL (scenario in MCP_CONFORMANCE_SCENARIO)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	sc, ok := scenarios[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "refclient: scenario %q is not implemented\n", name)
		os.Exit(2)
	}
	// The suite gives a scenario 30 s; end before it does, with a reason.
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := play(ctx, flag.Arg(0), *via, sc.tool, sc.args); err != nil {
		fmt.Fprintf(os.Stderr, "refclient: scenario %s: %v\n", name, err)
		os.Exit(1)
	}
}

// play connects to the server at url (through toolcap when via names it),
// lists its tools and, when tool is set, calls it with args.
func play(ctx context.Context, url, via, tool string, args map[string]any) error {
	var transport mcp.Transport = &mcp.StreamableClientTransport{Endpoint: url}
	if via != "" {
		cmd := exec.Command(via, "mcp", "--url", url)
		// toolcap's log is part of what the suite saves of a run.
		cmd.Stderr = os.Stderr
		transport = &mcp.CommandTransport{Command: cmd}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolcap-conformance-refclient", Version: "1.0.0"},
		&mcp.ClientOptions{
			// elicitation-sep1034-client-defaults: accepting with nothing
			// filled in leaves the SDK to apply the schema's defaults.
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
			},
		})
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", url, err)
	}
	defer session.Close()
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	if tool == "" {
		return nil
	}
	found := false
	for _, t := range tools.Tools {
		found = found || t.Name == tool
	}
	if !found {
		return fmt.Errorf("the server lists no tool %s", tool)
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return fmt.Errorf("tools/call %s: %w", tool, err)
	}
	if res.IsError {
		return errors.New("tools/call " + tool + ": the result is an error")
	}
	return nil
}
