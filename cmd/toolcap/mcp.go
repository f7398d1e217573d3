package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/mcpproxy"
	"github.com/toolcap/toolcap/middleware"
)

const mcpHelp = `Usage: toolcap mcp [--manifest FILE]... [-v] [--init-timeout D] -- SERVER_COMMAND [ARGS...]

Runs SERVER_COMMAND as an MCP server over stdio and serves MCP on standard
input and output itself, forwarding everything, except that every tools/call
result is capped to its tool's limit (per_tool keys are the server's tool
names) before it reaches the client: its content blocks together, notes
included, and its structuredContent on its own. Logs go to standard error
only.

Put it in front of a server in any MCP client's configuration:

  "command": "toolcap",
  "args": ["mcp", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/path"]

Exit status: 0 when the client closed the connection, 1 when the server
failed, exited or did not answer in time, or the client sent a malformed
message, 2 for a usage or configuration error. See docs/mcp.md.
`

// mcpTerminate is how long the server is given to exit after its stdin is
// closed, and again after SIGTERM, before it is killed.
const mcpTerminate = 2 * time.Second

// runMCP is "toolcap mcp": a capping proxy in front of an MCP server.
func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	fs := newFlags("mcp")
	var layers layerFlags
	layers.register(fs)
	var v verbosity
	fs.Var(&v, "v", "log each cut (-v) and each call (-v -v) to stderr")
	initTimeout := fs.Duration("init-timeout", mcpproxy.DefaultInitTimeout, "how long the server may take to answer initialize and list its features")

	// Flags stop at the first operand: what follows is the server's command
	// line, flags included.
	if err := fs.Parse(args); err != nil {
		return parseFailed(fs, mcpHelp, err, stdout, stderr)
	}
	command := fs.Args()
	if len(command) == 0 {
		fmt.Fprintf(stderr, "toolcap mcp: no server command; usage: toolcap mcp [flags] -- SERVER_COMMAND [ARGS...]\n")
		return exitUsage
	}
	if *initTimeout <= 0 {
		fmt.Fprintf(stderr, "toolcap mcp: --init-timeout must be positive\n")
		return exitUsage
	}

	logger := newLogger(stderr, v.level()).Named("mcp")
	res, err := layers.resolve(ctx, env, logger)
	if err != nil {
		return configError(stderr, err)
	}

	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = env
	cmd.Stderr = stderr // the server's logs join ours; stdout is the protocol
	cmd.WaitDelay = mcpTerminate
	upstream := &mcp.CommandTransport{Command: cmd, TerminateDuration: mcpTerminate}

	opts := mcpproxy.Options{
		Manifest:    res.Manifest,
		Logger:      logger,
		InitTimeout: *initTimeout,
	}
	if v >= 2 {
		opts.Middleware = append(opts.Middleware, middleware.Logging(logger))
	}
	proxy, err := mcpproxy.Connect(ctx, upstream, opts)
	if err != nil {
		fmt.Fprintf(stderr, "toolcap mcp: %s: %s\n", command[0], oneLine(err.Error()))
		return exitFailed
	}
	logger.Info("proxying", "server", command[0], "tools", len(proxy.Tools()))

	in, ok := stdin.(io.ReadCloser)
	if !ok {
		in = io.NopCloser(stdin)
	}
	downstream := &mcp.IOTransport{Reader: in, Writer: nopWriteCloser{stdout}}
	err = proxy.Serve(ctx, downstream)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, mcpproxy.ErrServerExited):
		fmt.Fprintf(stderr, "toolcap mcp: %s: %s\n", command[0], oneLine(err.Error()))
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "toolcap mcp: interrupted; the server was shut down\n")
	default:
		fmt.Fprintf(stderr, "toolcap mcp: %s\n", oneLine(err.Error()))
	}
	return exitFailed
}

// nopWriteCloser keeps the proxy from closing the process's stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
