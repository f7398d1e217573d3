package pin

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/redact"
)

// Limits returns the limit for a tool's results, by its registered name.
// (*manifest.ToolOutputLimits).For has this shape.
type Limits func(tool string) int

// Option configures [Cap] and [Ceiling].
type Option func(*options)

type options struct {
	logger hclog.Logger
	policy shape.PolicyFunc // nil: the byte limit and the head rule
	fit    int              // content this long fits every policy
	keeper *rest.Keeper     // nil: nothing of a cut is kept
	// uniform: every tool redacts with redactor (WithRedactor).
	redactor redact.Detector
	uniform  bool
}

// WithLogger sets the logger cuts are reported to. Without it the middleware
// is silent.
func WithLogger(l hclog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithPolicy holds each tool's results to its whole policy, policy(tool):
// its byte limit, its token limit and its strategy (head, head_tail, json),
// through [shape.Text]. The policy's MaxBytes is then the limit, and the
// limits given to [Cap] or [Ceiling] are not consulted (they may be nil).
// (*shape.Policies).For has the shape of a [shape.PolicyFunc].
//
// A result known to fit ([shape.Policy.Fits]) costs the policy's lookup, a
// comparison and no allocation. A result within its byte limit and over its
// token limit in bytes is counted to know whether it fits, so with an exact
// tokenizer such a result costs a count of its content.
func WithPolicy(policy shape.PolicyFunc) Option {
	return func(o *options) {
		if policy != nil {
			o.policy = policy
		}
	}
}

// WithFits says that content of at most n bytes fits every tool's policy
// ((*shape.Policies).Fit gives that bound): the cap and the ceiling
// pass such content on without looking a policy up, at the cost of one
// comparison. It matters only with [WithPolicy]. A wrong n breaks the
// limit: take it from the same policies.
func WithFits(n int) Option {
	return func(o *options) { o.fit = max(n, 0) }
}

// WithRest keeps the whole content of every result the cap or the ceiling
// cuts, for a tool whose policy sets KeepRest, with k: the marker then
// names the read of the rest (package rest), under the scope of the call's
// context ([rest.WithScope]). Nil keeps nothing, as without the option.
func WithRest(k *rest.Keeper) Option {
	return func(o *options) { o.keeper = k }
}

// WithRedactor tells [Pinned] that every tool's policy redacts with d:
// its redact stage then runs d without a look at each call's policy, and
// a nil d leaves the stage out (no tool redacts, or the front end redacts
// before the chain). Without it the stage looks each call's policy up
// ([Redact]). A front end knows this of its policies (shape.Redactor);
// the lookup it saves is most of an uncut call's cost.
func WithRedactor(d redact.Detector) Option {
	return func(o *options) { o.redactor, o.uniform = d, true }
}

func newOptions(opts []Option) options {
	o := options{logger: hclog.NewNullLogger()}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// Cap returns the byte cap: a middleware that cuts the content of every
// result next returns to limits(call.Tool) by the head rule ([cut.Head]),
// or to the tool's whole policy with [WithPolicy] (nil limits without one:
// [shape.DefaultMaxBytes] for every tool), records the figures (see
// [chain.Result.Truncation]), and logs the cut once at info level with the
// fields of [shape.LogFields]: tool, call_id, original_bytes, kept_bytes,
// dropped_bytes, limit, and those of a strategy or a token limit.
//
// A result with nil Content is passed through untouched, and the error flag
// and Summary are never changed: a cut is not an error. A result that fits
// costs one comparison and no allocation; a cut allocates the cut text and
// one record of its figures.
func Cap(limits Limits, opts ...Option) chain.Middleware {
	o := newOptions(opts)
	return func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			return o.capResult(ctx, limits, call, next(ctx, call))
		}
	}
}

// capResult is the cap's work on one result.
func (o *options) capResult(ctx context.Context, limits Limits, call chain.Call, res chain.Result) chain.Result {
	if res.Content == nil {
		return res
	}
	capped, t, ok := o.cut(ctx, *res.Content, limits, call.Tool, false)
	if !ok {
		return res
	}
	if o.logs(o.logger.IsInfo()) {
		ctxLogger(ctx, o.logger).Info(shape.Message(t), shape.LogFields(call.Tool, call.ID, t)...)
	}
	return res.WithTruncation(capped, t)
}

// Ceiling returns a middleware that holds the result next returns to the
// same limits as [Cap]. Placed after user middleware, it keeps the limit
// whatever they did: when it has to cut, one of them grew the content past
// the limit, so it cuts the content as it got it ([shape.Text]), records
// the figures (see [chain.Result.Ceiling]) and logs a warning naming the
// tool.
//
// The ceiling owns what it lets through: the Content of a result it
// returns is the result's own storage ([chain.Result.Owns]), never a
// pointer a middleware made and may have kept, so nothing can grow the
// result past its limit after the chain returned it. A result whose
// Content points elsewhere is given its own copy, one allocation; one that
// owns its content is passed on as it is. A cut's result owns its content,
// and so does the worker's tool output (it copies the tool's text into the
// result before the cap), so when the user's middleware pass on what the
// chain handed them, the ceiling copies nothing and allocates nothing. A
// write through the pointer the chain handed a middleware, or through the
// storage of a result a middleware made with [chain.ErrorResult] or a cut
// method and kept, is a write to the result itself, which no layer can
// tell from the result after it returned.
func Ceiling(limits Limits, opts ...Option) chain.Middleware {
	o := newOptions(opts)
	return func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			if res.Content == nil {
				return res
			}
			// Read once: what is measured is what goes to the history.
			content := *res.Content
			capped, t, ok := o.cut(ctx, content, limits, call.Tool, true)
			if !ok {
				if !res.Owns() {
					// A pointer a middleware made: the history keeps a
					// copy it cannot write to.
					res = res.WithContent(content)
				}
				return res
			}
			if o.logs(o.logger.IsWarn()) {
				ctxLogger(ctx, o.logger).Warn("a middleware grew a tool result past its limit; cut again",
					shape.LogFields(call.Tool, call.ID, t)...)
			}
			return res.WithCeiling(capped, t)
		}
	}
}

// logs reports whether a message the logger's level check calls enabled
// reaches anyone, so that the fields of a cut are built only when they are
// used (they cost several allocations). An hclog.InterceptLogger passes
// messages its own level filters out to its sinks, so it is always logged to.
func (o *options) logs(enabled bool) bool {
	if enabled {
		return true
	}
	_, sinks := o.logger.(hclog.InterceptLogger)
	return sinks
}

// cut holds content to the tool's policy and returns the cut text and its
// figures, or ok == false when it fits.
func (o *options) cut(ctx context.Context, content string, limits Limits, tool string, ceiling bool) (string, chain.Truncation, bool) {
	var p shape.Policy
	if o.policy != nil {
		if shape.Bytes(o.fit).FitsText(content) { // as decoded: issue 22
			return content, chain.Truncation{}, false
		}
		p = o.policy(tool)
	} else {
		limit := shape.DefaultMaxBytes
		if limits != nil {
			limit = limits(tool)
		}
		p = shape.Bytes(limit)
		if p.FitsText(content) { // as decoded: issue 22
			return content, chain.Truncation{}, false
		}
	}
	if o.keeper != nil && p.KeepRest {
		if ceiling {
			// The cap's marker may name a read: keep naming it.
			return o.keeper.Recut(ctx, content, p)
		}
		return o.keeper.Text(ctx, content, p)
	}
	return shape.Text(content, p)
}
