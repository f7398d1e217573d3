package pin

import (
	"context"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/shape"
)

// Pinned returns toolcap's fixed composition around the user's middleware,
// as one middleware: the redact stage innermost, next to the handler it
// wraps, then the cap, the user's middleware (the first listed outermost),
// a [Recover], and the ceiling last:
//
//	ceiling(recover(user[0](user[1](...cap(redact(next))))))
//
// Every front end that runs user middleware builds from it (the worker
// around its tools, toolcap mcp around a server's results), so none can
// place a user middleware below the cap or above the ceiling: the innermost
// user middleware receives exactly the cap's output, and whatever they do,
// the ceiling holds each tool to policy(tool) again. Nil entries of user are
// skipped. Options are those of [Cap] and [Ceiling] ([WithLogger]); the
// policy is given here, so [WithPolicy] among them is overridden; a nil
// policy is [shape.Default] for every tool.
//
// Compose once and keep the handler: composing costs an allocation per
// layer, calling the composed handler allocates nothing of its own.
func Pinned(policy shape.PolicyFunc, user []chain.Middleware, opts ...Option) chain.Middleware {
	return PinnedObserved(policy, user, nil, opts...)
}

// CapObserver is told, for each call, the content the cap received and the
// content it passed up (the same pointer when nothing was cut, nil when the
// result had no content). The worker's batch stage uses one to cut a
// result again from its tool's own content.
type CapObserver func(ctx context.Context, call chain.Call, received, passed *string)

// PinnedObserved is [Pinned] whose cap reports to observe, which may be nil.
func PinnedObserved(policy shape.PolicyFunc, user []chain.Middleware, observe CapObserver, opts ...Option) chain.Middleware {
	if policy == nil {
		policy = shape.Default
	}
	opts = append(opts[:len(opts):len(opts)], WithPolicy(policy))
	o := newOptions(opts)
	capped := Cap(nil, opts...)
	if observe != nil {
		capped = func(next chain.Handler) chain.Handler {
			return func(ctx context.Context, call chain.Call) chain.Result {
				res := next(ctx, call)
				out := o.capResult(ctx, nil, call, res)
				observe(ctx, call, res.Content, out.Content)
				return out
			}
		}
	}
	redacted := Redact(policy, o.logger)
	if o.uniform {
		redacted = nil // no tool redacts: no stage
		if d := o.redactor; d != nil {
			redacted = Redact(func(string) shape.Policy { return shape.Policy{Redact: d} }, o.logger)
		}
	}
	return chain.Chain(
		Ceiling(nil, opts...), // pinned after the user's: the limit holds whatever they do
		Recover(o.logger),     // a panicking user middleware still gives its call a result
		chain.Chain(user...),  // the user's, first listed outermost
		capped,                // pinned first: nothing above it sees uncapped content
		redacted,              // below the cap: nothing measures, keeps or logs a secret
	)
}

// Checked returns mws without their nil entries, each wrapped so that
// composing them records the position (in mws) of the one that returns a
// nil handler (the first to, as they compose innermost first); nilAt reports it after composition, -1 when none
// did. A front end composes once and reports nilAt as a configuration
// error, naming the middleware, rather than fail each call.
func Checked(mws []chain.Middleware) (kept []chain.Middleware, nilAt func() int) {
	at := -1
	for i, mw := range mws {
		if mw == nil {
			continue
		}
		kept = append(kept, func(next chain.Handler) chain.Handler {
			h := mw(next)
			if h == nil && at < 0 {
				// They compose innermost first: the first nil is the
				// culprit, the ones listed before it only wrap it.
				at = i
			}
			return h
		})
	}
	return kept, func() int { return at }
}

// An Answerer runs results that already exist through a chain composed
// once: the results of a front end whose tools run before the chain, such
// as the server of toolcap mcp, go through the same pinned stages and user
// middleware as the worker's tools' results, with no tool standing in for
// their own. The zero Answerer answers every call with an error result.
//
// The chain is composed once, as user middleware constructors expect (a
// chain composed per result would run them per result); the result reaches
// its innermost handler with the call's context, which is the one value a
// chain composed once passes down per call. That handoff is private to
// Answer: nothing else can put a result there or take it out.
type Answerer struct{ h chain.Handler }

// NewAnswerer composes mw around the handler that answers each call with
// the result given to [Answerer.Answer]; mw is typically [Pinned].
func NewAnswerer(mw chain.Middleware) Answerer { return Answerer{h: mw(answered)} }

// Answer runs res, the result call already has, through the chain and
// returns what the chain makes of it.
func (a Answerer) Answer(ctx context.Context, call chain.Call, res chain.Result) chain.Result {
	if a.h == nil {
		return answered(ctx, call)
	}
	return a.h(context.WithValue(ctx, answerKey{}, res), call)
}

// answerKey is the context key of the result an [Answerer] answers with.
type answerKey struct{}

// answered is the innermost handler of an [Answerer]: it answers each
// call with the result Answer put in its context, or an error result when
// there is none (a middleware that called next with a context of its own
// making, not derived from the one it was given).
func answered(ctx context.Context, call chain.Call) chain.Result {
	if res, ok := ctx.Value(answerKey{}).(chain.Result); ok {
		return res
	}
	return chain.ErrorResult(call.Tool+" failed: no answer", "toolcap: the call "+call.ID+" of "+call.Tool+" reached the chain without its answer")
}
