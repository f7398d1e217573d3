package middleware

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
)

// Limits returns the limit for a tool's results, by its registered name.
// (*manifest.ToolOutputLimits).For has this shape.
type Limits func(tool string) int

// A Cutter measures content and cuts it to limit: it returns content
// unchanged with dropped == 0 when it fits, and otherwise a version that fits,
// marker included, with the number of units dropped. [Truncate] is the byte
// Cutter and the default.
type Cutter func(content string, limit int) (capped string, dropped int)

// Option configures [Cap] and [Ceiling].
type Option func(*options)

type options struct {
	logger hclog.Logger
	cut    Cutter
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

// WithCutter replaces [Truncate] as the way content is measured and cut.
func WithCutter(c Cutter) Option {
	return func(o *options) {
		if c != nil {
			o.cut = c
		}
	}
}

func newOptions(opts []Option) options {
	o := options{logger: hclog.NewNullLogger(), cut: Truncate}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// Cap returns the byte cap: a middleware that cuts the content of every
// result next returns to limits(call.Tool), records the figures in
// [chain.Result.Truncation], and logs the cut once at info level with tool,
// call_id, original_bytes, kept_bytes, dropped_bytes and limit.
//
// A result with nil Content is passed through untouched, and IsError and
// Summary are never changed: a cut is not an error.
func Cap(limits Limits, opts ...Option) chain.Middleware {
	o := newOptions(opts)
	return func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			if t := o.apply(&res, limits(call.Tool)); t != nil {
				res.Truncation = t
				if o.logs(o.logger.IsInfo()) {
					o.logger.Info("tool result truncated", logFields(call, t)...)
				}
			}
			return res
		}
	}
}

// Ceiling returns a middleware that applies the same cut as [Cap] to the
// result next returns. Placed after user middleware, it keeps the limit
// whatever they did: when it has to cut, one of them grew the content past
// the limit, so it records [chain.Result.Ceiling] and logs a warning naming
// the tool.
func Ceiling(limits Limits, opts ...Option) chain.Middleware {
	o := newOptions(opts)
	return func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			if t := o.apply(&res, limits(call.Tool)); t != nil {
				res.Ceiling = t
				if o.logs(o.logger.IsWarn()) {
					o.logger.Warn("a middleware grew a tool result past its limit; cut again",
						logFields(call, t)...)
				}
			}
			return res
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

// cutResult holds a cut's content and its figures in one allocation: a cut
// result needs both on the heap, and nothing else when nothing was cut.
type cutResult struct {
	content string
	figures chain.Truncation
}

// apply cuts res.Content in place and returns the figures, or nil when
// nothing was cut. It allocates only when it cuts.
func (o *options) apply(res *chain.Result, limit int) *chain.Truncation {
	if res.Content == nil {
		return nil
	}
	capped, dropped := o.cut(*res.Content, limit)
	if dropped == 0 {
		return nil
	}
	original := len(*res.Content)
	c := &cutResult{
		content: capped,
		figures: chain.Truncation{
			Limit:         limit,
			OriginalBytes: original,
			KeptBytes:     original - dropped,
			DroppedBytes:  dropped,
		},
	}
	res.Content = &c.content
	return &c.figures
}

func logFields(call chain.Call, t *chain.Truncation) []any {
	return []any{
		"tool", call.Tool,
		"call_id", call.ID,
		"original_bytes", t.OriginalBytes,
		"kept_bytes", t.KeptBytes,
		"dropped_bytes", t.DroppedBytes,
		"limit", t.Limit,
	}
}
