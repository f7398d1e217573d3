package worker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/suggest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/middleware"
)

// Worker executes tool calls through the capped chain. Build one with [New];
// it is immutable afterwards and safe for concurrent use.
type Worker struct {
	tools       map[string]Tool
	names       []string // sorted, for messages
	limits      *manifest.ToolOutputLimits
	handler     chain.Handler
	logger      hclog.Logger
	concurrency int
}

// New builds a Worker for tools.
//
// It returns an error for a nil tool, an empty or duplicate tool name, an
// invalid manifest (see [manifest.WorkerManifest.Validate]) or a concurrency
// below 1. A per_tool limit for a name no tool has is not an error: it is
// logged as a warning, with the closest registered name when one is close.
//
// The chain is composed here, once: the recovering tool call, the byte cap,
// the user middleware in listed order, a recover for them, and the ceiling.
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
	if err := o.manifest.Validate(); err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}

	w := &Worker{
		tools:       make(map[string]Tool, len(tools)),
		limits:      o.manifest.Limits(),
		logger:      logger,
		concurrency: o.concurrency,
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
		w.tools[name] = t
		w.names = append(w.names, name)
	}
	slices.Sort(w.names)
	w.warnUnknownLimits()

	limit := w.limits.For
	capOpts := []middleware.Option{middleware.WithLogger(logger)}
	h := middleware.Recover(logger)(w.dispatch)
	h = middleware.Cap(limit, capOpts...)(h)
	// The user middleware compose as chain.Chain would (first listed
	// outermost), one at a time so that one returning a nil handler is
	// reported here, by position, rather than blamed on a tool at every call.
	for i := len(o.interceptors) - 1; i >= 0; i-- {
		if o.interceptors[i] == nil {
			continue
		}
		if h = o.interceptors[i](h); h == nil {
			return nil, fmt.Errorf("worker: interceptor %d returned a nil handler", i)
		}
	}
	h = middleware.Recover(logger)(h)
	h = middleware.Ceiling(limit, capOpts...)(h)
	w.handler = h
	return w, nil
}

// warnUnknownLimits logs each per_tool name that no registered tool has.
func (w *Worker) warnUnknownLimits() {
	if w.limits == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(w.limits.PerTool)) {
		if _, ok := w.tools[name]; ok {
			continue
		}
		args := []any{"tool", name, "limit", w.limits.PerTool[name]}
		if s := suggest.Closest(name, w.names); s != "" {
			args = append(args, "did_you_mean", s)
		}
		w.logger.Warn("per_tool limit for a tool that is not registered; it applies to nothing", args...)
	}
}

// Limit returns the limit the worker applies to results of tool.
func (w *Worker) Limit(tool string) int { return w.limits.For(tool) }

// Tools returns the registered tool names, sorted.
func (w *Worker) Tools() []string { return append([]string(nil), w.names...) }

// dispatch is the innermost handler: it runs the named tool.
func (w *Worker) dispatch(ctx context.Context, call chain.Call) chain.Result {
	t, ok := w.tools[call.Tool]
	if !ok {
		return w.unknownTool(call)
	}
	out, err := t.Run(ctx, call.Args)
	return FromOutput(call, out, err).toChain()
}

func (w *Worker) unknownTool(call chain.Call) chain.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown tool %s", quoteName(call.Tool))
	if s := suggest.Closest(call.Tool, w.names); s != "" {
		fmt.Fprintf(&b, "; did you mean %q?", s)
	} else if len(w.names) > 0 {
		fmt.Fprintf(&b, "; registered tools: %s", strings.Join(w.names, ", "))
	}
	content := b.String()
	return chain.Result{
		Summary: fmt.Sprintf("unknown tool %s", quoteName(call.Tool)),
		Content: &content,
		IsError: true,
	}
}

// ExecuteTools runs calls and returns exactly one result per call, in call
// order. Calls of the batch run concurrently, at most the configured
// concurrency at once; a single call, or a worker limited to 1, runs on the
// caller's goroutine when ctx cannot be cancelled.
//
// When ctx ends before every call has returned, ExecuteTools returns at once:
// each call without a result gets an error result naming the context's
// cause, calls not yet started are never started, and tools still running
// are abandoned (their results are discarded when they arrive). Abandoned
// tools are no longer counted against the concurrency limit, so a tool that
// ignores its context can outlive the batch; tools should honour ctx.
func (w *Worker) ExecuteTools(ctx context.Context, calls []chain.Call) []ToolResult {
	results := make([]ToolResult, len(calls))
	if len(calls) == 0 {
		return results
	}
	done := ctx.Done()
	if done == nil && (len(calls) == 1 || w.concurrency == 1) {
		for i, call := range calls {
			results[i] = fromChain(call, w.handler(ctx, call))
		}
		return results
	}
	if err := ctx.Err(); err != nil {
		for i, call := range calls {
			results[i] = w.cancelled(ctx, call)
		}
		return results
	}

	type indexed struct {
		i   int
		res chain.Result
	}
	// Buffered for every call, so an abandoned tool's late send never blocks.
	ch := make(chan indexed, len(calls))
	var next atomic.Int64
	var work func()
	work = func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(calls) || ctx.Err() != nil {
				return
			}
			returned := false
			func() {
				// A tool that ends its goroutine (runtime.Goexit, as
				// t.FailNow does) skips the send below: answer its call
				// here, and start a worker to take this one's place.
				defer func() {
					if !returned {
						ch <- indexed{i, w.exited(calls[i])}
						go work()
					}
				}()
				res := w.handler(ctx, calls[i])
				returned = true
				ch <- indexed{i, res}
			}()
		}
	}
	for range min(len(calls), w.concurrency) {
		go work()
	}

	got := make([]bool, len(calls))
	store := func(x indexed) {
		results[x.i] = fromChain(calls[x.i], x.res)
		got[x.i] = true
	}
	for remaining := len(calls); remaining > 0; remaining-- {
		select {
		case x := <-ch:
			store(x)
		case <-done:
			// Keep what already arrived, then answer the rest.
			for drained := false; !drained; {
				select {
				case x := <-ch:
					store(x)
				default:
					drained = true
				}
			}
			for i, call := range calls {
				if !got[i] {
					results[i] = w.cancelled(ctx, call)
				}
			}
			return results
		}
	}
	return results
}

// exited is the result of a call whose tool ended its goroutine without
// returning.
func (w *Worker) exited(call chain.Call) chain.Result {
	w.logger.Error("tool call ended its goroutine without returning", "tool", call.Tool, "call_id", call.ID)
	text, _ := middleware.Truncate(fmt.Sprintf("tool %s exited without returning a result", quoteName(call.Tool)), w.limits.For(call.Tool))
	return chain.Result{
		Summary: fmt.Sprintf("%s failed", shortName(call.Tool)),
		Content: &text,
		IsError: true,
	}
}

// shortName is a tool name for a message, shortened when a model sent
// something absurdly long: summaries are never cut, so they are kept short
// where they are made.
func shortName(name string) string {
	const most = 64
	if len(name) <= most {
		return name
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + "…"
}

// quoteName is shortName, quoted.
func quoteName(name string) string { return strconv.Quote(shortName(name)) }

// cancelled is the result of a call the context ended before it returned.
func (w *Worker) cancelled(ctx context.Context, call chain.Call) ToolResult {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = errors.New("context ended")
	}
	w.logger.Warn("tool call abandoned: context ended", "tool", call.Tool, "call_id", call.ID, "error", cause)
	text, _ := middleware.Truncate(fmt.Sprintf("tool %s did not return before the context ended: %v", quoteName(call.Tool), cause), w.limits.For(call.Tool))
	return ToolResult{
		CallID:  call.ID,
		Tool:    call.Tool,
		Summary: fmt.Sprintf("%s cancelled", shortName(call.Tool)),
		Content: &text,
		IsError: true,
	}
}
