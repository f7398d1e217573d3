package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/internal/suggest"
	"github.com/toolcap/toolcap/internal/tokenizer"
	"github.com/toolcap/toolcap/tokens"
)

// Worker executes tool calls through the capped chain. Build one with [New];
// it is immutable afterwards and safe for concurrent use.
type Worker struct {
	tools       map[string]Tool
	names       []string        // sorted, for messages
	policies    *shape.Policies // WithPolicies', counting with tokenizer
	run         chain.Handler   // runs the named tool, its panics recovered
	handler     chain.Handler   // the whole chain, over w.call
	logger      hclog.Logger
	concurrency int
	batchMax    int              // batch_max_bytes; 0: no batch budget in bytes
	batchTokens int              // batch_max_tokens; 0: no batch budget in tokens
	tokenizer   tokens.Tokenizer // nil: no token limits
	policy      shape.PolicyFunc // each tool's policy, counting with tokenizer
	keeper      *rest.Keeper     // nil: nothing of a cut is kept (WithRest)
}

// New builds a Worker for tools.
//
// It returns an error for a nil tool, an empty or duplicate tool name, a
// tool named as the read tool of [WithRest], a tokenizer that is not the
// one the policies count with ([WithTokenizer]), a middleware that returns
// a nil handler, or a concurrency below 1. A policy of its own for a name
// no tool has is not an error: it is logged as a warning, with the closest
// registered name when one is close.
//
// The chain is composed here, once, in a fixed order around the user's
// middleware: the byte cap below them and a recover and the ceiling above
// them (see the package documentation).
func New(tools []Tool, opts ...Option) (*Worker, error) {
	o := options{concurrency: DefaultConcurrency}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	logger := o.logger
	switch {
	case logger == nil:
		logger = hclog.NewNullLogger()
	case logger.Name() == "":
		// A program's named logger keeps its name; an anonymous one says
		// where its lines come from.
		logger = logger.Named("toolcap")
	}
	if o.concurrency < 1 {
		return nil, fmt.Errorf("worker: concurrency %d: must be at least 1", o.concurrency)
	}
	front := shape.FrontOf(o.policies)
	tz, err := tokenizer.For(front, o.tokenizer)
	if err != nil {
		return nil, err
	}
	w := &Worker{
		tools:       make(map[string]Tool, len(tools)),
		policies:    o.policies,
		logger:      logger,
		concurrency: o.concurrency,
		batchMax:    front.Batch,
		batchTokens: front.BatchTokens,
		tokenizer:   tz,
	}
	if o.rest != nil {
		w.keeper, err = rest.NewKeeper(o.rest, rest.WithTool(front.ReadTool), rest.WithLogger(logger))
		if err != nil {
			return nil, fmt.Errorf("worker: %w", err)
		}
	}
	for i, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("worker: tools[%d] is nil", i)
		}
		name := t.Name()
		if name == "" {
			return nil, fmt.Errorf("worker: tools[%d] has an empty name", i)
		}
		if _, dup := w.tools[name]; dup {
			return nil, fmt.Errorf("worker: tools[%d]: duplicate tool name %q", i, name)
		}
		if w.keeper != nil && name == w.keeper.Tool() {
			return nil, fmt.Errorf("worker: tools[%d]: %q is the name of the read tool of WithRest; name one of them otherwise ([worker.tool_output.rest] tool)", i, name)
		}
		w.tools[name] = t
		w.names = append(w.names, name)
	}
	slices.Sort(w.names)
	w.warnUnknownLimits()

	if w.tokenizer != nil {
		w.policies = w.policies.WithCounter(w.tokenizer)
	}
	// Each tool's policy (limits and strategy), compiled once: the cap, the
	// ceiling and the batch stage all hold a tool to the same one.
	w.policy = w.policies.For
	user, nilAt := pin.Checked(o.middleware)
	w.run = pin.Recover(logger)(w.runTool)
	var observe pin.CapObserver
	if w.batching() {
		// The batch stage cuts again from the tool's content: the cap tells
		// the call's custody what it received and passed up (see batch.go).
		observe = recordCap
	}
	// toolcap's pinned order, the one composition every front end builds
	// from: the cap below the user's middleware, the ceiling above them.
	pinOpts := []pin.Option{pin.WithLogger(logger), pin.WithFits(w.policies.Fit()), pin.WithRest(w.keeper)}
	if d, uniform := shape.Redactor(w.policies); uniform {
		// One detector for every tool: the redact stage skips the lookup
		// of the call's policy, or is left out.
		pinOpts = append(pinOpts, pin.WithRedactor(d))
	}
	w.handler = pin.PinnedObserved(w.policy, user, observe, pinOpts...)(w.call)
	// w.call runs the tool inline or on a goroutine of its own; abandonment
	// and Goexit become results there.
	if at := nilAt(); at >= 0 {
		return nil, fmt.Errorf("worker: middleware %d returned a nil handler", at)
	}
	return w, nil
}

// warnUnknownLimits logs each tool with a policy of its own that no
// registered tool has.
func (w *Worker) warnUnknownLimits() {
	for _, name := range shape.Tools(w.policies) {
		if _, ok := w.tools[name]; ok {
			continue
		}
		if w.keeper != nil && name == w.keeper.Tool() {
			continue // the read tool's own limit
		}
		args := []any{"tool", name, "limit", w.policies.For(name).MaxBytes}
		if s := suggest.Closest(name, w.names); s != "" {
			args = append(args, "did_you_mean", s)
		}
		w.logger.Warn("per_tool limit for a tool that is not registered; it applies to nothing", args...)
	}
}

// Limit returns the byte limit the worker applies to results of tool.
func (w *Worker) Limit(tool string) int { return w.policy(tool).MaxBytes }

// TokenLimit returns the token limit the worker applies to results of
// tool, 0 when it has none.
func (w *Worker) TokenLimit(tool string) int {
	if w.tokenizer == nil {
		return 0
	}
	return w.policy(tool).MaxTokens
}

// Tokenizer returns the tokenizer the worker counts tokens with, nil when
// its manifest sets no token limit.
func (w *Worker) Tokenizer() tokens.Tokenizer { return w.tokenizer }

// Observe tells the worker's tokenizer what the model's provider billed: a
// request whose text was bytes bytes long cost billed input tokens (the
// usage a provider returns with each response, such as Anthropic's
// usage.input_tokens or OpenAI's usage.prompt_tokens). A calibrated
// tokenizer learns its bytes per token from these (see [tokens.Calibrated]);
// an exact one, or a worker without token limits, ignores them. Safe for
// concurrent use.
func (w *Worker) Observe(bytes, billed int) {
	if o, ok := w.tokenizer.(tokens.Observer); ok {
		o.Observe(bytes, billed)
	}
}

// Tools returns the registered tool names, sorted.
func (w *Worker) Tools() []string { return append([]string(nil), w.names...) }

// ReadTool returns the definition of the read tool the worker answers, to
// advertise to the model beside the program's tools, and false when the
// worker keeps nothing ([WithRest]).
func (w *Worker) ReadTool() (rest.Definition, bool) {
	if w.keeper == nil {
		return rest.Definition{}, false
	}
	return w.keeper.Definition(), true
}

// runTool runs the named tool and takes ownership of its content.
func (w *Worker) runTool(ctx context.Context, call chain.Call) chain.Result {
	t, ok := w.tools[call.Tool]
	if !ok {
		if w.keeper != nil && call.Tool == w.keeper.Tool() {
			return w.read(ctx, call)
		}
		return w.unknownTool(call)
	}
	out, err := t.Run(ctx, call.Args)
	if err != nil {
		return FromOutput(call, out, err)
	}
	if out.Content != nil {
		// The tool may keep the pointer it returned, or the result, and
		// write through it later; what the chain cuts and the history
		// keeps is the result's own copy, which the ceiling then passes on
		// without copying again (see pin.Ceiling).
		out = out.WithContent(*out.Content)
	}
	return out
}

// read answers a call of the read tool: a page of a kept output, held
// to the read tool's own policy (so the chain's cap passes it whole), or
// an error result saying what was wrong.
func (w *Worker) read(ctx context.Context, call chain.Call) chain.Result {
	page, err := w.keeper.Read(ctx, call.Args, w.policy(call.Tool))
	if err != nil {
		return chain.ErrorResult(fmt.Sprintf("%s failed", shortName(call.Tool)), err.Error())
	}
	// The page in the result's own storage: the ceiling passes it on as is.
	return chain.Result{Summary: fmt.Sprintf("%s: %d bytes", shortName(call.Tool), len(page))}.WithContent(page)
}

// exitedKey marks the context a call is run through again after its tool
// ended the goroutine that ran the chain (see batch.one).
type exitedKey struct{}

// call is the innermost handler. When ctx cannot end there is nothing to
// wait for, and the tool runs here, as a function call would. Otherwise it
// runs on a goroutine of its own, so that call can return when ctx ends; a
// tool that ends its goroutine (runtime.Goexit) or is still running then is
// answered here, so the cap, the user's middleware and the ceiling see those
// results like any other.
func (w *Worker) call(ctx context.Context, call chain.Call) chain.Result {
	done := ctx.Done()
	if done == nil {
		return w.run(ctx, call)
	}
	if ctx.Err() != nil {
		return w.cancelled(ctx, call)
	}
	if ctx.Value(exitedKey{}) != nil {
		return w.exited(call)
	}
	// Buffered, so that a tool that returns after call gave up never blocks.
	ch := make(chan chain.Result, 1)
	go func() {
		returned := false
		defer func() {
			if !returned {
				ch <- w.exited(call)
			}
		}()
		res := w.run(ctx, call)
		returned = true
		ch <- res
	}()
	select {
	case res := <-ch:
		return res
	case <-done:
		select {
		case res := <-ch: // it returned as ctx ended: keep what it said
			return res
		default:
			return w.cancelled(ctx, call)
		}
	}
}

func (w *Worker) unknownTool(call chain.Call) chain.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown tool %s", quoteName(call.Tool))
	if s := suggest.Closest(call.Tool, w.names); s != "" {
		fmt.Fprintf(&b, "; did you mean %q?", s)
	} else if len(w.names) > 0 {
		fmt.Fprintf(&b, "; registered tools: %s", strings.Join(w.names, ", "))
	}
	return chain.ErrorResult(fmt.Sprintf("unknown tool %s", quoteName(call.Tool)), b.String())
}

// exited is the result of a call whose tool ended its goroutine without
// returning.
func (w *Worker) exited(call chain.Call) chain.Result {
	w.logger.Error("tool call ended its goroutine without returning", "tool", call.Tool, "call_id", call.ID)
	return chain.ErrorResult(
		fmt.Sprintf("%s failed", shortName(call.Tool)),
		fmt.Sprintf("tool %s exited without returning a result", quoteName(call.Tool)))
}

// cancelled is the result of a call the context ended before it returned.
func (w *Worker) cancelled(ctx context.Context, call chain.Call) chain.Result {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = errors.New("context ended")
	}
	w.logger.Warn("tool call abandoned: context ended", "tool", call.Tool, "call_id", call.ID, "error", cause)
	return chain.ErrorResult(
		fmt.Sprintf("%s cancelled", shortName(call.Tool)),
		fmt.Sprintf("tool %s did not return before the context ended: %v", quoteName(call.Tool), cause))
}

// shortName is a tool name for a message, shortened when a model sent
// something absurdly long: summaries are never cut, so they are kept short
// where they are made.
func shortName(name string) string {
	const most = 64
	if len(name) <= most {
		return name
	}
	return name[:cut.FloorCharBoundary(name, most)] + "…"
}

// quoteName is shortName, quoted.
func quoteName(name string) string { return strconv.Quote(shortName(name)) }
