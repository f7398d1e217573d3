package middleware

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/shape"
)

// Limits returns the limit for a tool's results, by its registered name.
// (*manifest.ToolOutputLimits).For has this shape.
type Limits = pin.Limits

// Option configures [Cap], [Ceiling] and [Pinned].
type Option = pin.Option

// WithLogger sets the logger cuts are reported to. Without it the middleware
// is silent.
func WithLogger(l hclog.Logger) Option { return pin.WithLogger(l) }

// Cap returns the byte cap: a middleware that cuts the content of every
// result next returns to limits(call.Tool) by the head rule ([Truncate])
// (nil limits: [shape.DefaultMaxBytes] for every tool), records the figures
// (see [chain.Result.Truncation]), and logs the cut once at info level with
// the fields tool, call_id, original_bytes, kept_bytes, dropped_bytes and
// limit.
//
// A result with nil Content is passed through untouched, and the error flag
// and Summary are never changed: a cut is not an error. A result that fits
// costs one comparison and no allocation; a cut allocates the cut text and
// one record of its figures.
//
// Cap alone is the seed's cap, for a chain of one's own. A program that
// runs user middleware builds with [Pinned], which places them after the
// cap and before a ceiling.
func Cap(limits Limits, opts ...Option) chain.Middleware { return pin.Cap(limits, opts...) }

// Ceiling returns the cap again, for after user middleware: it cuts any
// content over limits(call.Tool) by the same rule, so the limit holds
// whatever the middleware did, and logs a warning when it had to, naming
// the tool: a middleware that grows a result past its limit is a bug to
// fix. A marker an earlier cut left keeps one marker, whose N adds both
// cuts' drops.
func Ceiling(limits Limits, opts ...Option) chain.Middleware { return pin.Ceiling(limits, opts...) }

// Pinned returns toolcap's fixed composition around the user's middleware,
// as one middleware: the redact stage innermost, next to the handler it
// wraps, then the cap, the user's middleware (the first listed outermost),
// a [Recover], and the ceiling last:
//
//	ceiling(recover(user[0](user[1](...cap(redact(next))))))
//
// The redact stage replaces each secret the tool's policy's Redact
// detector finds (package redact) before the cap measures, cuts or keeps
// anything, and records the counts ([chain.Result.Redactions]).
//
// The cap and the ceiling hold each tool to its whole policy, policy(tool):
// its byte limit, its token limit and its strategy (head, head_tail, json),
// as every front end of toolcap does; (*shape.Policies).For is such a
// func, and nil is [shape.DefaultMaxBytes] with the head rule for every
// tool. No user middleware can sit below the cap or above the ceiling: the
// innermost receives exactly the cap's output, and whatever they do, the
// ceiling holds each tool to its policy again. Nil entries of user are
// skipped.
//
// Compose once and keep the handler: composing costs an allocation per
// layer, calling the composed handler allocates nothing of its own.
func Pinned(policy shape.PolicyFunc, user []chain.Middleware, opts ...Option) chain.Middleware {
	return pin.Pinned(policy, user, opts...)
}

// Recover returns a middleware that turns a panic in next (a tool or an
// inner middleware) into an error result whose content names the tool and
// the panic value, so one bad call never crashes the agent or loses the
// other results of its batch. The panic and its stack are logged at error
// level to logger, which may be nil. [Pinned] includes one.
func Recover(logger hclog.Logger) chain.Middleware { return pin.Recover(logger) }

// Logging returns a middleware that logs each call once it returns, at
// debug level (warn for an error result), with tool, call_id, duration,
// is_error, content_bytes (-1 for no content) and, when the cap cut the
// result, dropped_bytes. A nil logger makes it a no-op pass-through.
func Logging(logger hclog.Logger) chain.Middleware { return pin.Logging(logger) }

// WithLogFields returns ctx carrying kv, key and value pairs that the log
// lines of the pinned stages (the cap's, the ceiling's, the redaction's)
// and of [Logging] about a call made under ctx carry too. A middleware
// that opens a span for each call puts the span's trace_id and span_id
// there, so that the cap's line about the call joins its trace (module
// github.com/toolcap/toolcap/otel's middleware does). Looked up only when
// a line is written.
func WithLogFields(ctx context.Context, kv ...any) context.Context {
	return pin.WithLogFields(ctx, kv...)
}
