package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/internal/suggest"
	"github.com/toolcap/toolcap/internal/tokenizer"
	"github.com/toolcap/toolcap/tokens"
)

// DefaultMaxMessageBytes bounds the messages the proxy forwards as they
// came, unless [Options.MaxMessageBytes] says otherwise. tools/call results
// are not bounded by it: they are capped while they are read.
const DefaultMaxMessageBytes = 16 << 20

// Options configures a [Proxy].
type Options struct {
	// Policies are each tool's policy, keyed by the server's tool names,
	// with the client limits, the tokenizer and the read tool, as a
	// manifest resolves them ((*manifest.WorkerManifest).Policies). Nil
	// gives every tool [shape.DefaultMaxBytes], the head rule and the
	// built-in redaction. [Proxy.SetPolicies] replaces them while the
	// proxy runs.
	Policies *shape.Policies
	// Middleware are user middleware, in onion order (the first listed is
	// the outermost). As in any [worker.Worker], they run after the byte cap
	// and before the ceiling, and see each tools/call result's text.
	Middleware []chain.Middleware
	// Logger receives the proxy's logs: cuts, skipped lines, warnings. A
	// command line program passes a logger writing to stderr, never to the
	// protocol's stdout. Nil means silent.
	Logger hclog.Logger
	// MaxMessageBytes bounds every message other than a tools/call result:
	// one larger is not forwarded, and a request or response over it is
	// answered with a JSON-RPC error for its id instead, so the session goes
	// on. Zero means [DefaultMaxMessageBytes].
	MaxMessageBytes int
	// Tokenizer counts the policies' token limits (see
	// [worker.WithTokenizer]); its Name must be the manifest's tokenizer.
	// Nil: policies with a token limit count with a tokens.Calibrated of
	// their own, and policies naming an exact tokenizer are an error.
	Tokenizer tokens.Tokenizer
	// Rest is the store that keeps the whole text of each tools/call
	// result the proxy cuts, for the tools whose policy keeps the rest
	// (keep_rest, on unless the manifest turns it off): the marker then
	// names a read of the rest, which the proxy answers itself as the tool
	// [worker.tool_output.rest] tool names (toolcap_read by default),
	// appended to the server's tools/list. Refs are bound to the client's
	// session. Nil keeps nothing: the marker is the plain one and the
	// server's tools are listed as they are.
	Rest rest.Store
	// CallTimeout, when positive, bounds the time the server has to answer
	// each request of the client's: past it, the client gets a JSON-RPC
	// error for the request and the server a notifications/cancelled for
	// it, and an answer that comes later is dropped. Zero waits as long as
	// the server takes.
	CallTimeout time.Duration
	// Trace, when set, is called for each request of the client's as the
	// proxy reads it, before it is forwarded (or answered by the proxy
	// itself, as a read of the rest is): s holds what the proxy knows of
	// the request, and Trace may replace its trace context for the server
	// (see [Span]). The context it returns is the one the chain's
	// middleware get for the request; end is called once, after the
	// request is answered, with how it ended in s. Nil traces nothing and
	// costs nothing. Module github.com/toolcap/toolcap/otel makes one that
	// reports OpenTelemetry spans and metrics.
	Trace func(ctx context.Context, s *Span) (_ context.Context, end func())
}

// ErrServerExited is returned (wrapped) by [Proxy.Serve] when the server
// ended its side of the connection before the client did.
var ErrServerExited = errors.New("the MCP server exited")

// A Conn is one side of a proxied session. The proxy reads it as a stream
// and writes it one whole message at a time.
//
// Read gives the side's messages as a stream of newline-delimited JSON-RPC,
// MCP's stdio framing. Reads stay a stream, rather than one whole message
// per call, so that a message is never held whole: a tools/call result of a
// gigabyte is cut while it is read, in bounded memory.
//
// WriteMessage is called once per message the proxy sends to the side:
// msg is one JSON-RPC message or batch, without a newline or any other
// framing, so that a transport that carries messages one by one (an HTTP
// POST each, an event each) sends it as it is, with no bytes to split.
// msg is valid only during the call: an implementation that keeps it
// copies it. The proxy does not call WriteMessage concurrently on one Conn;
// an error ends the session.
//
// Close ends the connection, and with it a Read or WriteMessage still
// blocked; for a server it stops the server and reports how it ended (see
// [Command]).
//
// [StreamConn] makes a Conn of a byte stream; [Command] and [DialHTTP]
// return one for a server.
type Conn interface {
	io.Reader
	WriteMessage(msg []byte) error
	Close() error
}

// A Proxy relays MCP sessions between a client and a server, and caps the
// results of tools/call on the way (see the package documentation). Build
// one with [New] and run a session with [Proxy.Serve]; one Proxy may serve
// several sessions at once, all under the same limits.
type Proxy struct {
	opts   Options
	logger hclog.Logger
	max    int

	gen atomic.Pointer[generation]
	seq atomic.Int64 // call ids, for logs

	mu       sync.Mutex
	tools    []string                   // the server's tools, from the last complete tools/list
	schemas  map[string]json.RawMessage // their output schemas
	resolved map[string]*jsonschema.Resolved
	warned   map[string]bool           // per_tool names already warned about
	params   map[string][]paramBinding // the x-mcp-header arguments of each tool, by name
}

// generation is one set of limits and the chain built for them. A
// tools/call takes the generation current when the client sent it, for its
// whole life: no call sees a mix of old and new limits.
type generation struct {
	handler  pin.Answerer    // the pinned chain, around the server's answer
	policies *shape.Policies // each tool's policy, counting with the tokenizer
	// retain is how much of a result's text the reader keeps: the most
	// any tool's policy must hold (shape.Policy.Hold), so that every cut
	// made from what was kept is the one the worker makes.
	retain int
	// keeper keeps the rest of the cuts in Options.Rest and answers the
	// read tool; nil when there is no store or the manifest keeps the rest
	// of no tool.
	keeper *rest.Keeper
	// pinnedOnly: the chain is toolcap's pinned stages alone, no user
	// middleware, so that a text within its policy passes it unchanged.
	pinnedOnly bool
	// clients holds the policies and chain of each client with a limit of
	// its own (shape.Clients), built with the
	// generation: one per clients entry, whatever names clients give.
	clients map[string]clientChain
}

// clientChain is what a generation caps one client's calls with.
type clientChain struct {
	policies *shape.Policies
	handler  pin.Answerer
}

// forClient returns the policies and the chain of the calls of client,
// the name an MCP client gives in its clientInfo ("" when it gave none):
// each tool's limit at most the client's own, so that the client keeps
// every result whole.
func (g *generation) forClient(client string) (*shape.Policies, pin.Answerer) {
	if c, ok := g.clients[client]; ok {
		return c.policies, c.handler
	}
	return g.policies, g.handler
}

// New returns a Proxy for opts. It returns an error for a tokenizer that
// is not the one the policies count with, or a middleware that returns a
// nil handler.
func New(opts Options) (*Proxy, error) {
	p := &Proxy{
		opts:     opts,
		logger:   opts.Logger,
		max:      opts.MaxMessageBytes,
		resolved: map[string]*jsonschema.Resolved{},
		warned:   map[string]bool{},
	}
	if p.logger == nil {
		p.logger = hclog.NewNullLogger()
	}
	if p.max <= 0 {
		p.max = DefaultMaxMessageBytes
	}
	if err := p.SetPolicies(opts.Policies); err != nil {
		return nil, err
	}
	return p, nil
}

// SetPolicies replaces the policies (a manifest reloaded). Calls the
// client sends from then on are capped by pols; calls already sent keep
// the policies they were sent under. An error (see [New]) changes
// nothing.
func (p *Proxy) SetPolicies(pols *shape.Policies) error {
	front := shape.FrontOf(pols)
	tz, err := tokenizer.For(front, p.opts.Tokenizer)
	if err != nil {
		return fmt.Errorf("mcpproxy: %w", err)
	}
	policies := pols
	if tz != nil {
		policies = policies.WithCounter(tz)
	}
	var keeper *rest.Keeper
	if p.opts.Rest != nil && front.KeepsRest {
		// A keeper per generation: the read tool's name may change with
		// the manifest; the refs live in the store, under the session's
		// scope, so a read made after a reload finds them all the same.
		keeper, err = rest.NewKeeper(p.opts.Rest, rest.WithTool(front.ReadTool), rest.WithLogger(p.logger))
		if err != nil {
			return fmt.Errorf("mcpproxy: %w", err)
		}
	}
	// toolcap's pinned order, as the worker composes it, once: the cap
	// below the user's middleware, the ceiling above them, around the
	// answer the server already gave.
	user, nilAt := pin.Checked(p.opts.Middleware)
	chainFor := func(pols *shape.Policies) pin.Answerer {
		// The reader redacts every text as it reads it (redact.go), before
		// the chain sees it: the chain's own redact stage would only scan
		// the same text again.
		policy := func(tool string) shape.Policy {
			pol := pols.For(tool)
			pol.Redact = nil
			return pol
		}
		return pin.NewAnswerer(pin.Pinned(policy, user, pin.WithLogger(warnOnly{p.logger}), pin.WithFits(pols.Fit()), pin.WithRest(keeper), pin.WithRedactor(nil)))
	}
	handler := chainFor(policies)
	// A chain of its own for each client with a limit: the user's
	// middleware is composed once for each (as on every reload), here,
	// before any call.
	clients := map[string]clientChain{}
	for name := range shape.Clients(policies) {
		if pols := policies.ForClient(name); pols != policies {
			clients[name] = clientChain{pols, chainFor(pols)}
		}
	}
	if at := nilAt(); at >= 0 {
		return fmt.Errorf("mcpproxy: middleware %d returned a nil handler", at)
	}
	// Enough to cut any tool's text from what was kept exactly as the
	// worker cuts it held whole (shape.Policy.Hold).
	retain := policies.For("").Hold()
	for _, name := range shape.Tools(policies) {
		retain = max(retain, policies.For(name).Hold())
	}
	p.gen.Store(&generation{handler: handler, policies: policies, retain: retain, keeper: keeper, pinnedOnly: len(user) == 0, clients: clients})
	p.mu.Lock()
	tools := p.tools
	p.mu.Unlock()
	if tools != nil {
		p.warnUnknown(tools)
	}
	return nil
}

// Limit returns the limit applied to results of tool under the current
// limits.
func (p *Proxy) Limit(tool string) int { return p.gen.Load().policies.For(tool).MaxBytes }

// Tools returns the names of the server's tools, in the server's order, as
// the last complete tools/list that passed through the proxy gave them; nil
// before the first.
func (p *Proxy) Tools() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.tools)
}

// setTools records a complete tool list from the server and checks the
// per_tool names against it.
func (p *Proxy) setTools(names []string, schemas map[string]json.RawMessage) {
	p.mu.Lock()
	p.tools = names
	p.schemas = schemas
	p.resolved = map[string]*jsonschema.Resolved{}
	p.mu.Unlock()
	p.warnUnknown(names)
}

// warnUnknown logs, once per name, each per_tool limit that names no tool
// of the server.
func (p *Proxy) warnUnknown(names []string) {
	gen := p.gen.Load()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, name := range shape.Tools(gen.policies) {
		if slices.Contains(names, name) || p.warned[name] || (gen.keeper != nil && name == gen.keeper.Tool()) {
			continue
		}
		p.warned[name] = true
		args := []any{"tool", name, "limit", gen.policies.For(name).MaxBytes}
		if s := suggest.Closest(name, names); s != "" {
			args = append(args, "did_you_mean", s)
		}
		p.logger.Warn("per_tool limit for a tool the server does not list; it applies to nothing", args...)
	}
}

// hasOutputSchema reports whether the server's tool list gives tool an
// output schema.
func (p *Proxy) hasOutputSchema(tool string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.schemas[tool]) > 0
}

// schema returns the resolved output schema of tool, or nil.
func (p *Proxy) schema(tool string) *jsonschema.Resolved {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rs, ok := p.resolved[tool]; ok {
		return rs
	}
	raw := p.schemas[tool]
	var rs *jsonschema.Resolved
	if len(raw) > 0 {
		var s jsonschema.Schema
		err := json.Unmarshal(raw, &s)
		if err == nil {
			rs, err = s.Resolve(nil)
		}
		if err != nil {
			p.logger.Warn("the tool's output schema cannot be resolved; capped structured results are not validated", "tool", tool, "error", err)
			rs = nil
		}
	}
	p.resolved[tool] = rs
	return rs
}

// Serve relays one session between client and server until one side ends,
// then closes the other, and returns.
//
// It returns nil when the client ended the session (its stream reached
// EOF); the server is then closed, which for a [Command] stops it. It
// returns an error wrapping [ErrServerExited] when the server's stream ended
// first, after answering every call still pending with a JSON-RPC error, so
// that each request of the client gets exactly one answer. When ctx ends,
// both sides are closed and ctx's error is returned. Serve does not wait
// for a read from the client that is still blocked when the server ends
// first: closing client ends it.
func (p *Proxy) Serve(ctx context.Context, client, server Conn) error {
	return p.serve(ctx, client, server, "stdio")
}

// serve is [Proxy.Serve] for a session its transport labels (stdio, or an
// HTTP session's id): the label and a fresh random salt make the scope the
// session's refs are bound to, so that no other session, whatever id it
// chose or saw, can name it.
func (p *Proxy) serve(ctx context.Context, client, server Conn, label string) error {
	s := newSession(p, client, server, label+":"+rest.NewRef())
	if hc, ok := server.(*httpClientConn); ok && hc.link == nil {
		// A stateless request of a client over stdio needs its tool's
		// x-mcp-header arguments mirrored in headers: the proxy knows them
		// from the tools/list that passed through.
		hc.bindings = p.paramBindingsOf
	}
	// However the session ends, the call timeouts of requests still
	// pending go with it.
	defer s.stopTimers()
	clientDone := make(chan error, 1)
	serverDone := make(chan error, 1)
	go func() { clientDone <- s.clientLoop() }()
	go func() { serverDone <- s.serverLoop() }()

	select {
	case err := <-clientDone:
		if we := (*writeError)(nil); errors.As(err, &we) && !we.client {
			// Writing to the server failed: it is gone, though its output
			// may not have ended yet.
			why := server.Close()
			<-serverDone
			if why == nil {
				why = we
			}
			s.failPending(why)
			_ = client.Close()
			if errors.Is(why, ErrServerExited) {
				return why
			}
			return fmt.Errorf("%w: %v", ErrServerExited, why)
		}
		closeErr := server.Close()
		<-serverDone
		if errors.Is(closeErr, ErrServerExited) {
			// It had failed on its own already.
			s.failPending(closeErr)
			return closeErr
		}
		if closeErr != nil {
			p.logger.Warn("the MCP server did not stop cleanly", "error", closeErr)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("the client's side: %w", err)
		}
		return nil
	case err := <-serverDone:
		var we *writeError
		if errors.As(err, &we) && we.client {
			// The client went away while a message was written to it.
			closeErr := server.Close()
			if closeErr != nil {
				p.logger.Warn("the MCP server did not stop cleanly", "error", closeErr)
			}
			return nil
		}
		why := server.Close() // how the server ended
		if why == nil && err != nil && !errors.Is(err, io.EOF) {
			why = err
		}
		s.failPending(why)
		_ = client.Close()
		switch {
		case why == nil:
			return ErrServerExited
		case errors.Is(why, ErrServerExited):
			return why
		}
		return fmt.Errorf("%w: %v", ErrServerExited, why)
	case <-ctx.Done():
		_ = server.Close()
		_ = client.Close()
		return ctx.Err()
	}
}

// warnOnly is the logger the proxy gives its chain: its warnings (a
// middleware that grew a result) pass, its info lines (the cap's cut) do
// not, since the proxy logs each cut once, with every part of the result
// that was cut ([session.logCut]).
type warnOnly struct{ hclog.Logger }

func (warnOnly) IsTrace() bool                   { return false }
func (warnOnly) IsDebug() bool                   { return false }
func (warnOnly) IsInfo() bool                    { return false }
func (warnOnly) Trace(string, ...any)            {}
func (warnOnly) Debug(string, ...any)            {}
func (warnOnly) Info(string, ...any)             {}
func (l warnOnly) Named(n string) hclog.Logger   { return warnOnly{l.Logger.Named(n)} }
func (l warnOnly) With(args ...any) hclog.Logger { return warnOnly{l.Logger.With(args...)} }
