//go:build !toolcap_nomcp

package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/toolcap/toolcap/internal/httpauth"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
	"github.com/toolcap/toolcap/middleware"
	"github.com/toolcap/toolcap/tokens"
)

const mcpHelp = `Usage: toolcap mcp [flags] -- SERVER_COMMAND [ARGS...]
       toolcap mcp [flags] --url URL [--header 'Name: value']...
       toolcap mcp [flags] --listen ADDR [--token TOKEN | --forward-auth] [--max-sessions N] [--stateless-servers N] [--max-conns N] [--session-idle D] (-- SERVER_COMMAND... | --url URL)

Relays MCP between a client and a server, forwarding every message as it
came and in the order it came, except that each tools/call result is capped
to its tool's limit (per_tool keys are the server's tool names) while it is
read, whatever its size: its content blocks together, notes included, and
its structuredContent on its own. A capped result carries the figures in
_meta["toolcap/truncation"]. A token limit (default_max_tokens, max_tokens)
holds as well for the text of a result, counted by the tokenizer the
manifest names ("calibrated" at its conservative default, or exactly with
o200k_base or cl100k_base); a reload keeps the tokenizer toolcap mcp
started with.

Keeping the rest (keep_rest, on by default): the whole text of a result
that is cut is kept in a bounded store, a private directory under the user
cache directory ($XDG_CACHE_HOME/toolcap/rest or ~/.cache/toolcap/rest; set
[worker.tool_output.rest] dir, max_bytes, max_entry_bytes, ttl, or store =
"memory"), and the marker names the read of the rest:
  [truncated: N bytes dropped, refine your query or read the rest: toolcap_read {"ref":"…","offset":K}]
The proxy appends the read tool (toolcap_read, renamed by
[worker.tool_output.rest] tool) to the server's tools/list and answers its
calls itself, page after page, each page within the read tool's limit;
they never reach the server. A ref is readable only from the client session
that got it. keep_rest = false in [worker.tool_output] turns it off (per
tool: Name = { keep_rest = false }); a store that cannot be opened is a
warning and the proxy cuts without keeping.

With --call-timeout D, a request the server has not answered within D gets
a JSON-RPC error, and the server a notifications/cancelled for it; an
answer that comes later is dropped. By default the proxy waits as long as
the server takes.

With --metrics ADDR, http://ADDR/metrics serves Prometheus counters of the
results per tool: fits, cut or error, bytes original and kept. Only the
tools the server listed get a label of their own; calls of any other name
are counted under tool="(unlisted)". --token, when given, guards /metrics
too; off loopback it is required.

The server is SERVER_COMMAND, run over stdio in a process group of its own,
or the streamable HTTP endpoint URL. The client speaks on standard input and
output, or, with --listen, over streamable HTTP at http://ADDR/mcp (one
server process per session when the server is a command; at most
--max-sessions sessions at once, each ended after --session-idle without
use, and at most --max-conns client connections open at once; under an
open-file limit too low for them, those not given are lowered to fit, with
a warning). A client of
MCP's stateless revision (2026-07-28: no initialize, no session; its
requests name their version in _meta and the MCP-Protocol-Version header)
is served beside them, its requests carried by at most --stateless-servers
server connections (processes, for a command) shared by every such client,
each request under an id of its own; its refs are readable by its later
requests with the same Authorization. Logs go to
standard error only. The --manifest files are watched, and SIGHUP re-reads
them: new limits apply to the next tools/call; an invalid edit, or a file
that is no longer a regular file (a FIFO, a device), keeps the old limits
and is logged once.

SIGINT or SIGTERM ends every session and stops every server the proxy
started: its stdin is closed, then after a grace of 2s its process group
gets SIGTERM, then after another 2s SIGKILL. No server outlives the proxy.

Put it in front of a server in any MCP client's configuration:

  "command": "toolcap",
  "args": ["mcp", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/path"]

Exit status: 0 when the client closed the connection, 1 when the server
failed, exited or could not be reached, 2 for a usage or configuration
error. See docs/mcp.md.
`

// mcpGrace is how long the server is given to exit after its stdin is
// closed, and again after SIGTERM, before its process group is killed.
const mcpGrace = 2 * time.Second

// mcpFlags are the flags of "toolcap mcp".
type mcpFlags struct {
	layers  layerFlags
	v       verbosity
	maxMsg  int
	url     string
	headers stringsFlag
	listen  string
	token   string
	metrics string
	// callTimeout bounds the wait for each answer of the server's; 0: none.
	callTimeout time.Duration
	// The bounds of --listen's sessions.
	maxSessions int
	// statelessServers bounds the server connections of the stateless
	// revision's requests; 0 serves none.
	statelessServers int
	maxConns         int
	maxConnsSet      bool // --max-conns was given, not its default
	maxSessionsSet   bool // --max-sessions was given, not its default
	publicURL        string
	sessionIdle      time.Duration
	// forwardAuth passes each client's Authorization on to --url.
	forwardAuth bool
	// listenOnly are the flags given that only --listen uses.
	listenOnly []string
	command    []string
}

func (f *mcpFlags) register(fs *flag.FlagSet) {
	f.layers.register(fs)
	fs.Var(&f.v, "v", "log each cut (-v) and each call (-v -v) to stderr")
	fs.IntVar(&f.maxMsg, "max-message", mcpproxy.DefaultMaxMessageBytes, "the largest `BYTES` a message other than a tools/call result may have to be forwarded")
	fs.StringVar(&f.url, "url", "", "the server's streamable HTTP endpoint `URL`, instead of a command")
	fs.Var(&f.headers, "header", "an HTTP header `'Name: value'` for every request to --url; repeat it")
	fs.StringVar(&f.listen, "listen", "", "serve streamable HTTP at http://`ADDR`/mcp instead of stdio (host:port; the host defaults to 127.0.0.1)")
	fs.StringVar(&f.token, "token", "", "with --listen or --metrics: the bearer `TOKEN` every request must carry (required off loopback)")
	fs.IntVar(&f.maxSessions, "max-sessions", mcpproxy.DefaultMaxSessions, "with --listen: the most sessions open at once (each has a server process of its own); an initialize beyond is refused 503")
	fs.IntVar(&f.statelessServers, "stateless-servers", mcpproxy.DefaultStatelessServers, "with --listen: the most server connections (processes, for a command) that the requests of stateless clients (MCP 2026-07-28) share; 0 serves none (they are told the revision is unsupported, -32022)")
	fs.IntVar(&f.maxConns, "max-conns", defaultMaxConns, "with --listen: the most client connections open at once; past them new connections wait until one closes")
	fs.DurationVar(&f.sessionIdle, "session-idle", mcpproxy.DefaultSessionIdle, "with --listen: end a session, and stop its server, after this `DURATION` without a request or an open stream")
	fs.BoolVar(&f.forwardAuth, "forward-auth", false, "with --listen and --url: pass each client's Authorization header on to the upstream, relay its 401 or 403 (with WWW-Authenticate), and serve its protected resource metadata for the proxy's URL, so clients do OAuth with the upstream through the proxy")
	fs.StringVar(&f.publicURL, "public-origin", "", "with --forward-auth: the proxy's `ORIGIN` as clients reach it (https://mcp.example.com behind a front that terminates TLS), which its OAuth metadata names instead of the one each request names")
	fs.DurationVar(&f.callTimeout, "call-timeout", 0, "answer a request the server has not answered within `DURATION` with a JSON-RPC error, and cancel it (0: wait as long as it takes)")
	fs.StringVar(&f.metrics, "metrics", "", "serve Prometheus metrics of the results at http://`ADDR`/metrics (host:port or a port; the host defaults to 127.0.0.1)")
}

// check validates the flags, and returns the usage error.
func (f *mcpFlags) check() error {
	switch {
	case len(f.command) == 0 && f.url == "":
		return errors.New("no server: give a command after -- or --url; usage: toolcap mcp [flags] -- SERVER_COMMAND [ARGS...]")
	case len(f.command) > 0 && f.url != "":
		return errors.New("give either a server command or --url, not both")
	case len(f.headers) > 0 && f.url == "":
		return errors.New("--header needs --url")
	case f.token != "" && f.listen == "" && f.metrics == "":
		return errors.New("--token needs --listen or --metrics")
	case len(f.listenOnly) > 0 && f.listen == "":
		return fmt.Errorf("--%s needs --listen", f.listenOnly[0])
	case f.forwardAuth && f.url == "":
		return errors.New("--forward-auth needs --url: a server command has no Authorization to take")
	case f.forwardAuth && f.token != "" && f.metrics == "":
		return errors.New("--forward-auth and --token both want the clients' Authorization header: with --forward-auth the upstream checks it, and --token guards only --metrics")
	case f.maxMsg <= 0:
		return fmt.Errorf("--max-message %d: must be positive", f.maxMsg)
	case f.maxMsg < minMaxMessage:
		return fmt.Errorf("--max-message %d: at least %d: an initialize with its capabilities, or a short tools/list, is bigger than that", f.maxMsg, minMaxMessage)
	case f.maxSessions <= 0:
		return fmt.Errorf("--max-sessions %d: must be positive", f.maxSessions)
	case f.statelessServers < 0:
		return fmt.Errorf("--stateless-servers %d: must not be negative", f.statelessServers)
	case f.maxConns <= 0:
		return fmt.Errorf("--max-conns %d: must be positive", f.maxConns)
	case f.publicURL != "" && !f.forwardAuth:
		return errors.New("--public-origin needs --forward-auth: it is the origin the proxy's OAuth metadata names")
	case f.callTimeout < 0:
		return fmt.Errorf("--call-timeout %s: must not be negative", f.callTimeout)
	case f.sessionIdle <= 0:
		return fmt.Errorf("--session-idle %s: must be positive", f.sessionIdle)
	}
	if f.publicURL != "" {
		if err := httpauth.CheckPublicOrigin(f.publicURL); err != nil {
			return fmt.Errorf("--public-origin: %v", err)
		}
	}
	for _, h := range f.headers {
		if name, _, ok := strings.Cut(h, ":"); !ok || strings.TrimSpace(name) == "" {
			return fmt.Errorf("--header %q: want 'Name: value'", h)
		}
	}
	if f.metrics != "" {
		addr, err := listenAddr(f.metrics)
		if err != nil {
			return fmt.Errorf("--metrics %w", err)
		}
		f.metrics = addr
		if !loopbackHost(addr) && f.token == "" {
			return fmt.Errorf("--metrics %s is not a loopback address: it needs --token", addr)
		}
	}
	if f.listen != "" {
		addr, err := listenAddr(f.listen)
		if err != nil {
			return fmt.Errorf("--listen %w", err)
		}
		f.listen = addr
		if !loopbackHost(addr) && f.token == "" && !f.forwardAuth {
			return fmt.Errorf("--listen %s is not a loopback address: it needs --token (or --forward-auth, for an upstream that authenticates every request)", addr)
		}
	}
	return nil
}

// minMaxMessage is the least --max-message: below it, the handshake of a
// real client and server is refused.
const minMaxMessage = 4096

// loopbackHost reports whether addr (host:port) listens on loopback only.
func loopbackHost(addr string) bool {
	host, _, _ := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// listenAddr completes a --listen address: a bare port or ":port" listens
// on 127.0.0.1.
func listenAddr(s string) (string, error) {
	if !strings.Contains(s, ":") {
		s = ":" + s
	}
	host, port, err := net.SplitHostPort(s)
	if _, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil {
		return "", fmt.Errorf("%q: want host:port or a port (0 to 65535)", strings.TrimPrefix(s, ":"))
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// runMCP is "toolcap mcp": a capping relay in front of an MCP server.
func runMCP(ctx context.Context, o *options, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	fs, logs := newFlags("mcp")
	var f mcpFlags
	f.register(fs)
	// Flags stop at the first operand: what follows is the server's command
	// line, flags included.
	if err := fs.Parse(args); err != nil {
		return parseFailed(fs, mcpHelp, err, stdout, stderr)
	}
	f.command = fs.Args()
	fs.Visit(func(fl *flag.Flag) {
		f.maxConnsSet = f.maxConnsSet || fl.Name == "max-conns"
		f.maxSessionsSet = f.maxSessionsSet || fl.Name == "max-sessions"
		if fl.Name == "max-sessions" || fl.Name == "stateless-servers" || fl.Name == "max-conns" || fl.Name == "session-idle" || fl.Name == "forward-auth" || fl.Name == "public-origin" {
			f.listenOnly = append(f.listenOnly, fl.Name)
		}
	})
	if err := f.check(); err != nil {
		fmt.Fprintf(stderr, "toolcap mcp: %s\n", err)
		return exitUsage
	}

	logger := logs.logger(stderr, f.v).Named("mcp")
	status := logs.status(stderr, logger, "mcp")
	res, err := f.layers.resolve(ctx, env, logger)
	var given tokens.Tokenizer // an exact tokenizer, which the proxy is given
	if err == nil {
		// The proxy counts "calibrated" with one of its own per manifest.
		var tz tokens.Tokenizer
		if tz, err = o.counterFor(res); tz != nil && tz.Name() != tokens.CalibratedName {
			given = tz
		}
	}
	if err != nil {
		return configError(stderr, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dial := func(ctx context.Context) (mcpproxy.Conn, error) {
		if f.url != "" {
			var opts []mcpproxy.HTTPClientOption
			if f.forwardAuth {
				opts = append(opts, mcpproxy.ForwardAuth())
			}
			return mcpproxy.DialHTTP(ctx, f.url, httpHeaders(f.headers), logger, opts...)
		}
		cmd := exec.Command(f.command[0], f.command[1:]...)
		cmd.Env = env
		cmd.Stderr = stderr // the server's logs join ours; stdout is the protocol
		return mcpproxy.Command(cmd, mcpGrace)
	}
	server := f.url
	if server == "" {
		server = f.command[0]
	}

	// Over stdio the server is started as soon as the limits are known
	// to be valid: its start-up (a runtime, an interpreter, npx) is most
	// of a session's start, and the rest of the proxy's own (the store's
	// index, the proxy, the watch) is done while it starts, not before.
	var upstream mcpproxy.Conn
	if f.listen != "" && f.url == "" {
		// Each session starts a server of its own, later: a command that
		// cannot start fails now, as over stdio, not every session after.
		if _, err := exec.LookPath(f.command[0]); err != nil {
			status.Error(server + ": " + oneLine(err.Error()))
			return exitFailed
		}
	}
	if f.listen == "" {
		if upstream, err = dial(ctx); err != nil {
			status.Error(server + ": " + oneLine(err.Error()))
			return exitFailed
		}
		// Until Serve owns it: a failure below stops the server again.
		defer func() {
			if upstream != nil {
				_ = upstream.Close()
			}
		}()
	}

	policies, err := res.Manifest.Policies()
	if err != nil {
		return configError(stderr, err)
	}
	opts := mcpproxy.Options{
		Policies:        o.redacting(policies),
		Logger:          logger,
		MaxMessageBytes: f.maxMsg,
		CallTimeout:     f.callTimeout,
		Tokenizer:       given,
	}
	var storeFixed, storePer int // the store's descriptors (storeDescriptors)
	if l := res.Manifest.Limits(); l.KeepsRest() {
		// keep_rest is on by default; a store that cannot be opened is a
		// warning, never a reason not to relay: cuts then keep nothing.
		rs, err := o.openRestStore(l, logger.Named("rest"))
		if err != nil {
			logger.Warn("keep_rest: the store could not be opened; results are cut without keeping the rest", "error", oneLine(err.Error()))
		} else {
			defer rs.Close()
			opts.Rest = rs.store
			storeFixed, storePer = storeDescriptors(l.RestConfig(), true)
			logger.Info("keeping the rest of cut results", "store", rs.where, "read_tool", l.RestTool())
		}
	}
	if f.v >= 2 {
		opts.Middleware = append(opts.Middleware, middleware.Logging(logger))
	}
	var metrics *mcpMetrics
	if f.metrics != "" {
		metrics = &mcpMetrics{}
		opts.Middleware = append(opts.Middleware, metrics.middleware)
	}
	stopTelemetry, ok := o.startTelemetry(ctx, env, logger, &opts, stderr)
	if !ok {
		return exitUsage
	}
	defer stopTelemetry()
	proxy, err := mcpproxy.New(opts)
	if err != nil {
		return configError(stderr, err)
	}

	var applied func(*manifest.WorkerManifest)
	if metrics != nil {
		metrics.tools = proxy.Tools
		// The read tool is listed, and so labelled, only when there is a
		// store to read from; its name may change with a reload.
		applied = func(m *manifest.WorkerManifest) {
			name := ""
			if l := m.Limits(); opts.Rest != nil && l.KeepsRest() {
				name = l.RestTool()
			}
			metrics.setReadTool(name)
		}
		applied(res.Manifest)
	}

	go o.watchManifests(ctx, &f.layers, env, logger, proxy, given, applied)
	if metrics != nil {
		if err := serveMetrics(ctx, metrics, f.metrics, f.token, logger); err != nil {
			status.Error("--metrics: " + oneLine(err.Error()))
			return exitFailed
		}
	}

	if f.listen != "" {
		token := f.token
		if f.forwardAuth {
			token = "" // the clients' Authorization is the upstream's; --token guards /metrics
		}
		// A stateless lane's server holds descriptors as a session's does.
		conns, sessions, warning := fitDescriptors(descriptorPlan{
			conns: f.maxConns, sessions: f.maxSessions, stateless: f.statelessServers,
			connsSet: f.maxConnsSet, sessionsSet: f.maxSessionsSet,
			storeFixed: storeFixed, storePer: storePer,
		}, openFileLimit())
		if warning != "" {
			logger.Warn(warning)
		}
		return serveHTTP(ctx, proxy, f.listen, mcpproxy.HTTPOptions{
			Token:           token,
			ForwardAuth:     f.forwardAuth,
			UpstreamURL:     f.url,
			PublicOrigin:    f.publicURL,
			Dial:            dial,
			MaxMessageBytes: f.maxMsg,
			MaxSessions:     sessions,
			// 0 is the option's default; -1 serves none.
			StatelessServers: cmp.Or(f.statelessServers, -1),
			SessionIdle:      f.sessionIdle,
		}, conns, status, logger)
	}

	logger.Debug("relaying", "server", server)
	conn := upstream
	upstream = nil // Serve closes it
	err = proxy.Serve(ctx, mcpproxy.StreamConn(stdioConn{stdin, stdout}), conn)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, mcpproxy.ErrServerExited):
		status.Error(server + ": " + oneLine(err.Error()))
	case ctx.Err() != nil:
		status.Info("interrupted; the server was shut down")
	default:
		status.Error(oneLine(err.Error()))
	}
	return exitFailed
}

// stdioConn is the client's side over the process's stdin and stdout,
// which the proxy never closes.
type stdioConn struct {
	io.Reader
	io.Writer
}

func (stdioConn) Close() error { return nil }
