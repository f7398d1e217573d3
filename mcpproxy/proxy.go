package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy/internal/shape"
	"github.com/toolcap/toolcap/worker"
)

// DefaultInitTimeout is how long [Connect] waits for the server to answer
// the initialize handshake and list its features, unless
// [Options.InitTimeout] says otherwise.
const DefaultInitTimeout = 30 * time.Second

// Options configures a [Proxy].
type Options struct {
	// Manifest holds the limits, keyed by the server's tool names. Nil caps
	// every tool at [manifest.DefaultMaxBytes].
	Manifest *manifest.WorkerManifest
	// Middleware are user middleware, in onion order (the first listed is
	// the outermost). As in any [worker.Worker], they run after the byte cap
	// and before the ceiling.
	Middleware []chain.Middleware
	// Logger receives the proxy's logs: cuts, warnings, failures. A command
	// line program passes a logger writing to stderr, never to the protocol's
	// stdout. Nil means silent.
	Logger hclog.Logger
	// InitTimeout bounds the initialize handshake with the server and the
	// listing of its tools, prompts and resources. Zero means
	// [DefaultInitTimeout].
	InitTimeout time.Duration
	// Implementation is what the proxy tells the client it is. Nil means the
	// server's own name and version, so clients see the server they asked for.
	Implementation *mcp.Implementation
}

// ErrServerExited is returned (wrapped) by [Proxy.Serve] when the server
// ended its side of the connection before the client did.
var ErrServerExited = errors.New("the MCP server exited")

// ErrInitTimeout is returned (wrapped) by [Connect] when the server does not
// complete the handshake within [Options.InitTimeout].
var ErrInitTimeout = errors.New("the MCP server did not answer initialize in time")

// A Proxy stands between one MCP client and one MCP server. It mirrors the
// server's tools, prompts and resources, forwards requests and
// notifications both ways, and passes every tools/call result through a
// [worker.Worker], so the client only receives results within their tool's
// limit (content blocks together, structuredContent on its own; see the
// package documentation). Build one with [Connect], run it with
// [Proxy.Serve].
type Proxy struct {
	opts   Options
	logger hclog.Logger
	client *mcp.Client
	cs     *mcp.ClientSession // upstream: the real server
	server *mcp.Server

	ss atomic.Pointer[mcp.ServerSession] // downstream: the client, once served

	// state of the mirrored tools, replaced whole on each tools/list_changed.
	state   atomic.Pointer[toolState]
	syncMu  sync.Mutex // serialises the sync* methods
	prompts map[string]bool
	res     map[string]bool
	tmpls   map[string]bool

	seq atomic.Int64 // call ids

	// ready is closed at the end of a successful Connect, once cs and server
	// are set and the first lists are mirrored; done is closed when Connect
	// fails or the proxy is closed. A list_changed notification can arrive
	// while Connect is still running (during initialize, even): its resync
	// waits for ready, and gives up on done.
	ready    chan struct{}
	done     chan struct{}
	doneOnce sync.Once
}

// toolState is one generation of the mirrored tools.
type toolState struct {
	worker  *worker.Worker
	schemas map[string]*jsonschema.Resolved // output schemas, by tool
}

// Connect connects to the MCP server over upstream (usually an
// [mcp.CommandTransport] running the server), completes the handshake,
// lists the server's tools, prompts and resources, and returns a Proxy ready
// to [Proxy.Serve] a client. It logs a warning for each per_tool limit that
// names no tool of the server.
//
// When the server does not answer within [Options.InitTimeout], the error
// wraps [ErrInitTimeout]; the connection is closed in every failure case.
func Connect(ctx context.Context, upstream mcp.Transport, opts Options) (*Proxy, error) {
	p := &Proxy{
		opts:    opts,
		logger:  opts.Logger,
		prompts: map[string]bool{},
		res:     map[string]bool{},
		tmpls:   map[string]bool{},
		ready:   make(chan struct{}),
		done:    make(chan struct{}),
	}
	if p.logger == nil {
		p.logger = hclog.NewNullLogger()
	}
	if err := opts.Manifest.Validate(); err != nil {
		return nil, fmt.Errorf("mcpproxy: %w", err)
	}
	timeout := opts.InitTimeout
	if timeout <= 0 {
		timeout = DefaultInitTimeout
	}

	p.client = mcp.NewClient(&mcp.Implementation{Name: "toolcap-mcp", Version: "1"}, &mcp.ClientOptions{
		// Roots, sampling and elicitation are not forwarded: advertise none,
		// so the server uses its own configuration (its command line).
		Capabilities:                &mcp.ClientCapabilities{},
		ToolListChangedHandler:      func(ctx context.Context, _ *mcp.ToolListChangedRequest) { p.resync(p.syncTools) },
		PromptListChangedHandler:    func(ctx context.Context, _ *mcp.PromptListChangedRequest) { p.resync(p.syncPrompts) },
		ResourceListChangedHandler:  func(ctx context.Context, _ *mcp.ResourceListChangedRequest) { p.resync(p.syncResources) },
		ProgressNotificationHandler: p.forwardProgress,
		LoggingMessageHandler:       p.forwardLog,
	})

	initCtx, cancel := context.WithTimeoutCause(ctx, timeout, ErrInitTimeout)
	defer cancel()
	cs, err := p.client.Connect(initCtx, upstream, nil)
	if err != nil {
		p.stop()
		if errors.Is(context.Cause(initCtx), ErrInitTimeout) {
			return nil, fmt.Errorf("%w (%s): %v", ErrInitTimeout, timeout, err)
		}
		return nil, fmt.Errorf("connecting to the MCP server: %w", err)
	}
	p.cs = cs
	init := cs.InitializeResult()

	impl := opts.Implementation
	if impl == nil {
		impl = init.ServerInfo
	}
	if impl == nil {
		impl = &mcp.Implementation{Name: "toolcap-mcp", Version: "1"}
	}
	caps := &mcp.ServerCapabilities{}
	if c := init.Capabilities; c != nil {
		if c.Tools != nil {
			// The proxy re-lists on the server's notification and tells the
			// client, so it can always promise listChanged.
			caps.Tools = &mcp.ToolCapabilities{ListChanged: true}
		}
		if c.Prompts != nil {
			caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
		}
		if c.Resources != nil {
			caps.Resources = &mcp.ResourceCapabilities{ListChanged: true}
		}
		if c.Logging != nil {
			caps.Logging = &mcp.LoggingCapabilities{}
		}
		if c.Completions != nil {
			caps.Completions = &mcp.CompletionCapabilities{}
		}
	}
	sopts := &mcp.ServerOptions{
		Instructions: init.Instructions,
		Capabilities: caps,
	}
	if caps.Completions != nil {
		sopts.CompletionHandler = func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			res, err := p.cs.Complete(ctx, req.Params)
			return res, wireError(err)
		}
	}
	p.server = mcp.NewServer(impl, sopts)
	if caps.Logging != nil {
		p.server.AddReceivingMiddleware(p.forwardSetLevel)
	}

	syncs := []func(context.Context) error{}
	if caps.Tools != nil {
		syncs = append(syncs, p.syncTools)
	} else {
		// No tools: still build a worker, so per_tool names get their warning.
		if err := p.setTools(nil); err != nil {
			p.stop()
			_ = cs.Close()
			return nil, err
		}
	}
	if caps.Prompts != nil {
		syncs = append(syncs, p.syncPrompts)
	}
	if caps.Resources != nil {
		syncs = append(syncs, p.syncResources)
	}
	for _, sync := range syncs {
		if err := sync(initCtx); err != nil {
			p.stop()
			_ = cs.Close()
			if errors.Is(context.Cause(initCtx), ErrInitTimeout) {
				return nil, fmt.Errorf("%w (%s): %v", ErrInitTimeout, timeout, err)
			}
			return nil, err
		}
	}
	close(p.ready)
	return p, nil
}

// stop ends the resyncs waiting for ready, and any later one.
func (p *Proxy) stop() { p.doneOnce.Do(func() { close(p.done) }) }

// Tools returns the names of the server's tools the proxy mirrors, sorted.
func (p *Proxy) Tools() []string {
	return p.state.Load().worker.Tools()
}

// Limit returns the limit applied to results of tool.
func (p *Proxy) Limit(tool string) int {
	return p.state.Load().worker.Limit(tool)
}

// Serve serves one client over downstream (usually an [mcp.StdioTransport])
// until one side ends, then closes the other, and returns.
//
// It returns nil when the client closed the connection (its stdin reached
// EOF) and the server then shut down cleanly. It returns an error wrapping
// [ErrServerExited] when the server went away first, and the connection's
// error when the client's side broke (a malformed message, for example).
// When ctx ends, both sides are closed and ctx's error is returned.
func (p *Proxy) Serve(ctx context.Context, downstream mcp.Transport) error {
	defer p.stop()
	ss, err := p.server.Connect(ctx, downstream, nil)
	if err != nil {
		_ = p.cs.Close()
		return fmt.Errorf("serving the client: %w", err)
	}
	p.ss.Store(ss)

	clientDone := make(chan error, 1)
	serverDone := make(chan error, 1)
	go func() { clientDone <- ss.Wait() }()
	go func() { serverDone <- p.cs.Wait() }()

	select {
	case err := <-clientDone:
		// The client is gone: shut the server down (close its stdin, then
		// signal it if it lingers).
		closeErr := p.cs.Close()
		if err != nil && !isEOF(err) {
			return fmt.Errorf("reading from the client: %w", err)
		}
		if closeErr != nil && !isEOF(closeErr) {
			p.logger.Warn("the MCP server did not shut down cleanly", "error", closeErr)
		}
		return nil
	case err := <-serverDone:
		closeErr := p.cs.Close() // reaps the process and reports its exit status
		_ = ss.Close()
		why := closeErr
		if why == nil || isEOF(why) {
			why = err
		}
		if why == nil || isEOF(why) {
			return ErrServerExited
		}
		return fmt.Errorf("%w: %v", ErrServerExited, why)
	case <-ctx.Done():
		_ = ss.Close()
		_ = p.cs.Close()
		return ctx.Err()
	}
}

// Close closes both sides. Serve closes them itself when it returns.
func (p *Proxy) Close() error {
	p.stop()
	if ss := p.ss.Load(); ss != nil {
		_ = ss.Close()
	}
	return p.cs.Close()
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, mcp.ErrConnectionClosed)
}

// resync runs a sync after a list_changed notification, off the
// notification's goroutine. The notification may come before Connect has
// finished (a server may send it during initialize): the sync then waits
// until the proxy is ready, and runs after the first listing, so the
// mirrored lists end up current. It is dropped when the proxy stops first.
func (p *Proxy) resync(sync func(context.Context) error) {
	go func() {
		select {
		case <-p.ready:
		case <-p.done:
			return
		}
		select {
		case <-p.done:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), DefaultInitTimeout)
		defer cancel()
		if err := sync(ctx); err != nil {
			p.logger.Warn("could not refresh the list after the server's list_changed notification", "error", err)
		}
	}()
}

// syncTools lists the server's tools and mirrors them: new and changed
// tools are added, tools gone are removed, and a new worker is built for the
// new list.
func (p *Proxy) syncTools(ctx context.Context) error {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	var tools []*mcp.Tool
	for t, err := range p.cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing the server's tools: %w", err)
		}
		tools = append(tools, t)
	}
	return p.setTools(tools)
}

// setTools installs tools as the mirrored set. It requires syncMu, or no
// concurrent use.
//
// Nothing changes until the new worker is built: the tools are checked
// first (a tool without a name, a second tool of the same name, or one the
// SDK would refuse is skipped with a warning), then the worker is built,
// and only then are the tools registered on the proxy's server and the
// tools gone removed. When building the worker fails, the proxy keeps its
// previous tools and worker whole.
func (p *Proxy) setTools(tools []*mcp.Tool) error {
	old := p.state.Load()
	var keep []*mcp.Tool
	wtools := make([]worker.Tool, 0, len(tools))
	schemas := map[string]*jsonschema.Resolved{}
	seen := map[string]bool{}
	check := mcp.NewServer(&mcp.Implementation{Name: "toolcap-check"}, nil)
	for _, t := range tools {
		switch {
		case t == nil:
			continue
		case t.Name == "":
			p.logger.Warn("the server lists a tool without a name; skipping it")
			continue
		case seen[t.Name]:
			p.logger.Warn("the server lists a tool twice; keeping the first", "tool", t.Name)
			continue
		}
		if err := addTool(check, t, p.callTool); err != nil {
			p.logger.Warn("tool not mirrored", "tool", t.Name, "error", err)
			continue
		}
		seen[t.Name] = true
		keep = append(keep, t)
		wtools = append(wtools, worker.Func(t.Name, p.runTool))
		if t.OutputSchema != nil {
			if rs, err := resolveSchema(t.OutputSchema); err != nil {
				p.logger.Warn("the tool's output schema cannot be resolved; capped structured results are not validated", "tool", t.Name, "error", err)
			} else {
				schemas[t.Name] = rs
			}
		}
	}
	w, err := worker.New(wtools,
		worker.WithManifest(p.opts.Manifest),
		worker.WithMiddleware(p.opts.Middleware...),
		worker.WithLogger(p.logger),
		worker.WithConcurrency(1),
	)
	if err != nil {
		return fmt.Errorf("mcpproxy: %w", err)
	}
	for _, t := range keep {
		// Checked above on a server of its own: this does not fail.
		_ = addTool(p.server, t, p.callTool)
	}
	p.state.Store(&toolState{worker: w, schemas: schemas})
	if old != nil {
		var gone []string
		for _, name := range old.worker.Tools() {
			if !seen[name] {
				gone = append(gone, name)
			}
		}
		if len(gone) > 0 {
			p.server.RemoveTools(gone...)
		}
	}
	return nil
}

// addTool registers t on s, turning the SDK's panic on an invalid tool (an
// input schema that is not an object) into an error.
func addTool(s *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%v", v)
		}
	}()
	s.AddTool(t, h)
	return nil
}

func resolveSchema(v any) (*jsonschema.Resolved, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

// callKey is the context key of a call's upstream exchange.
type callKey struct{}

// exchange carries one tools/call between the proxy's handler and the
// worker tool that forwards it, around the worker's chain: the chain sees
// only the text; the full result waits here.
type exchange struct {
	params *mcp.CallToolParamsRaw

	mu  sync.Mutex
	res *mcp.CallToolResult
	err error
}

func (x *exchange) set(res *mcp.CallToolResult, err error) {
	x.mu.Lock()
	x.res, x.err = res, err
	x.mu.Unlock()
}

func (x *exchange) get() (*mcp.CallToolResult, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.res, x.err
}

// toolError is a server's isError result as the worker sees it: an error
// whose text is the result's text.
type toolError struct{ text string }

func (e toolError) Error() string { return e.text }

// runTool is every mirrored tool's Run: it forwards the call to the server,
// with the arguments the chain passes (a middleware may have rewritten them)
// and the client's _meta (its progress token), and hands the chain the
// result's text.
func (p *Proxy) runTool(ctx context.Context, args json.RawMessage) (worker.ToolOutput, error) {
	x, _ := ctx.Value(callKey{}).(*exchange)
	if x == nil {
		return worker.ToolOutput{}, errors.New("mcpproxy: tool run outside a tools/call")
	}
	params := &mcp.CallToolParams{
		Meta:           x.params.Meta,
		Name:           x.params.Name,
		InputResponses: x.params.InputResponses,
		RequestState:   x.params.RequestState,
	}
	if len(args) > 0 {
		params.Arguments = args
	}
	res, err := p.cs.CallTool(ctx, params)
	x.set(res, err)
	if err != nil {
		return worker.ToolOutput{}, err
	}
	text, ok := shape.JoinText(res.Content)
	if res.IsError {
		return worker.ToolOutput{}, toolError{text}
	}
	if !ok {
		return worker.ToolOutput{}, nil
	}
	return worker.ToolOutput{Content: &text}, nil
}

// callTool handles the client's tools/call: through the worker, then back
// into the MCP result.
func (p *Proxy) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	st := p.state.Load()
	x := &exchange{params: req.Params}
	ctx = context.WithValue(ctx, callKey{}, x)
	call := chain.Call{
		ID:   "mcp-" + strconv.FormatInt(p.seq.Add(1), 10),
		Tool: req.Params.Name,
		Args: req.Params.Arguments,
	}
	r := st.worker.ExecuteTools(ctx, []chain.Call{call})[0]

	limit := st.worker.Limit(call.Tool)
	orig, err := x.get()
	if err != nil {
		// A protocol error (or a lost connection) stays a protocol error,
		// within the tool's limit.
		return nil, shape.CapError(wireError(err), limit)
	}
	if orig == nil {
		// The call never reached the server, or was abandoned (cancelled):
		// the chain's error result is all there is.
		orig = &mcp.CallToolResult{}
	}
	sh := shape.Shape(orig, r.Content, r.IsError(), limit, st.schemas[call.Tool])
	if sh.BlocksDropped > 0 || sh.BlocksCut > 0 || sh.StructuredCut || sh.StructuredDropped {
		p.logger.Info("tool result blocks capped",
			"tool", call.Tool, "call_id", call.ID, "limit", limit,
			"blocks_dropped", sh.BlocksDropped,
			"blocks_cut", sh.BlocksCut,
			"structured_cut", sh.StructuredCut,
			"structured_dropped", sh.StructuredDropped)
	}
	return sh.Result, nil
}

// wireError returns the JSON-RPC error inside err, so that the client gets
// the server's code and message, or err itself.
func wireError(err error) error {
	var w *jsonrpc.Error
	if errors.As(err, &w) {
		return w
	}
	return err
}

// forwardProgress passes the server's progress notifications to the client;
// the token is the client's own, forwarded in the call's _meta.
func (p *Proxy) forwardProgress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	if ss := p.ss.Load(); ss != nil {
		if err := ss.NotifyProgress(ctx, req.Params); err != nil {
			p.logger.Debug("could not forward a progress notification", "error", err)
		}
	}
}

// forwardLog passes the server's log messages to the client, which filters
// them by the level it set.
func (p *Proxy) forwardLog(ctx context.Context, req *mcp.LoggingMessageRequest) {
	if ss := p.ss.Load(); ss != nil {
		if err := ss.Log(ctx, req.Params); err != nil {
			p.logger.Debug("could not forward a log message", "error", err)
		}
	}
}

// forwardSetLevel passes the client's logging/setLevel to the server too,
// after the proxy's own session records it.
func (p *Proxy) forwardSetLevel(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil && method == "logging/setLevel" {
			if params, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok {
				if err := p.cs.SetLoggingLevel(ctx, params); err != nil {
					return nil, wireError(err)
				}
			}
		}
		return res, err
	}
}

// syncPrompts mirrors the server's prompts; each forwards prompts/get.
func (p *Proxy) syncPrompts(ctx context.Context) error {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	seen := map[string]bool{}
	for pr, err := range p.cs.Prompts(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing the server's prompts: %w", err)
		}
		seen[pr.Name] = true
		p.server.AddPrompt(pr, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			res, err := p.cs.GetPrompt(ctx, req.Params)
			return res, wireError(err)
		})
	}
	p.prompts = removeGone(p.prompts, seen, p.server.RemovePrompts)
	return nil
}

// syncResources mirrors the server's resources and resource templates;
// each forwards resources/read.
func (p *Proxy) syncResources(ctx context.Context) error {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	read := func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		res, err := p.cs.ReadResource(ctx, req.Params)
		return res, wireError(err)
	}
	seen := map[string]bool{}
	for r, err := range p.cs.Resources(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing the server's resources: %w", err)
		}
		if err := guard(func() { p.server.AddResource(r, read) }); err != nil {
			p.logger.Warn("resource not mirrored", "uri", r.URI, "error", err)
			continue
		}
		seen[r.URI] = true
	}
	p.res = removeGone(p.res, seen, p.server.RemoveResources)

	seenT := map[string]bool{}
	for t, err := range p.cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			// Servers with resources but no templates may not implement the
			// method: not fatal.
			p.logger.Debug("listing the server's resource templates failed", "error", err)
			break
		}
		if err := guard(func() { p.server.AddResourceTemplate(t, read) }); err != nil {
			p.logger.Warn("resource template not mirrored", "uri_template", t.URITemplate, "error", err)
			continue
		}
		seenT[t.URITemplate] = true
	}
	p.tmpls = removeGone(p.tmpls, seenT, p.server.RemoveResourceTemplates)
	return nil
}

func guard(f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%v", v)
		}
	}()
	f()
	return nil
}

// removeGone removes the names of old not in now, and returns now.
func removeGone(old, now map[string]bool, remove func(...string)) map[string]bool {
	var gone []string
	for k := range old {
		if !now[k] {
			gone = append(gone, k)
		}
	}
	if len(gone) > 0 {
		sort.Strings(gone)
		remove(gone...)
	}
	return now
}
