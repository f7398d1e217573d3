package middleware

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/cut"
)

// Limits returns the limit for a tool's results, by its registered name.
// (*manifest.ToolOutputLimits).For has this shape.
type Limits func(tool string) int

// A Cutter measures content and cuts it to limit: it returns content
// unchanged with dropped == 0 when it fits, and otherwise a version that fits,
// marker included, with the number of units dropped. [Truncate] is the byte
// Cutter and the default.
type Cutter func(content string, limit int) (capped string, dropped int)

// Specs returns how a tool's results are cut, by its registered name.
// (*manifest.Policies).Spec has this shape.
type Specs func(tool string) cut.Spec

// Option configures [Cap] and [Ceiling].
type Option func(*options)

type options struct {
	logger  hclog.Logger
	cutter  Cutter
	custom  bool   // cutter came from WithCutter
	specs   Specs  // nil: every tool is cut with the head rule
	tokens  Limits // nil: no token limits
	counter cut.Counter
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
// A Cutter is its own strategy: it takes precedence over [WithSpecs].
func WithCutter(c Cutter) Option {
	return func(o *options) {
		if c != nil {
			o.cutter, o.custom = c, true
		}
	}
}

// WithSpecs cuts each tool's results with its spec ([cut.Cut]): head,
// head_tail or json, as the manifest sets it. Without it every tool is cut
// with the head rule, [Truncate]. The spec is looked up only for content
// over its limit, so a result that fits still costs one comparison.
func WithSpecs(s Specs) Option {
	return func(o *options) {
		if s != nil {
			o.specs = s
		}
	}
}

// WithTokens holds each tool's results to a token limit as well,
// tokens(tool) counted by c ([cut.CutTokens]): both limits hold, and the
// marker names the unit that cut. A tool whose token limit is 0 or less
// has none. A [WithCutter] Cutter takes precedence: it is its own measure.
//
// A result within its byte limit and over its token limit in bytes is
// counted to know whether it fits, so with an exact tokenizer a result
// that fits costs a count of its content.
func WithTokens(tokens Limits, c cut.Counter) Option {
	return func(o *options) {
		if tokens != nil && c != nil {
			o.tokens, o.counter = tokens, c
		}
	}
}

func newOptions(opts []Option) options {
	o := options{logger: hclog.NewNullLogger(), cutter: Truncate}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// Cap returns the byte cap: a middleware that cuts the content of every
// result next returns to limits(call.Tool), records the figures (see
// [chain.Result.Truncation]), and logs the cut once at info level with tool,
// call_id, original_bytes, kept_bytes, dropped_bytes and limit.
//
// A result with nil Content is passed through untouched, and the error flag
// and Summary are never changed: a cut is not an error. A result that fits
// costs one comparison and no allocation; a cut allocates the cut text and
// one record of its figures.
func Cap(limits Limits, opts ...Option) chain.Middleware {
	o := newOptions(opts)
	return func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			if res.Content == nil {
				return res
			}
			limit := limits(call.Tool)
			capped, t, ok := o.cut(*res.Content, limit, call.Tool)
			if !ok {
				return res
			}
			if o.logs(o.logger.IsInfo()) {
				o.logger.Info(cutMessage(t), logFields(call, t)...)
			}
			return res.WithTruncation(capped, t)
		}
	}
}

// Ceiling returns a middleware that applies the same cut as [Cap] to the
// result next returns. Placed after user middleware, it keeps the limit
// whatever they did: when it has to cut, one of them grew the content past
// the limit, so it records the figures (see [chain.Result.Ceiling]) and logs
// a warning naming the tool.
func Ceiling(limits Limits, opts ...Option) chain.Middleware {
	o := newOptions(opts)
	return func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			if res.Content == nil {
				return res
			}
			capped, t, ok := o.cut(*res.Content, limits(call.Tool), call.Tool)
			if !ok {
				return res
			}
			if o.logs(o.logger.IsWarn()) {
				o.logger.Warn("a middleware grew a tool result past its limit; cut again",
					logFields(call, t)...)
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

// cut cuts content to limit and returns the cut text and its figures, or
// ok == false when it fits.
func (o *options) cut(content string, limit int, tool string) (capped string, t chain.Truncation, ok bool) {
	if o.custom {
		capped, dropped := o.cutter(content, limit)
		if dropped == 0 {
			return content, chain.Truncation{}, false
		}
		return capped, chain.Truncation{
			Limit:         limit,
			OriginalBytes: len(content),
			KeptBytes:     len(content) - dropped,
			DroppedBytes:  dropped,
		}, true
	}
	tokens := 0
	if o.tokens != nil {
		tokens = max(0, o.tokens(tool))
	}
	if len(content) <= limit && (tokens == 0 || len(content) <= tokens) {
		return content, chain.Truncation{}, false
	}
	var spec cut.Spec
	if o.specs != nil {
		spec = o.specs(tool)
	}
	var st cut.Stats
	if tokens > 0 {
		capped, st = cut.CutTokens(content, limit, tokens, o.counter, spec)
	} else {
		capped, st = cut.Cut(content, limit, spec)
	}
	if !st.Changed() {
		return content, chain.Truncation{}, false
	}
	return capped, Figures(st, limit, tokens), true
}

// Figures returns a cut's figures as a result records them: st from
// [cut.Cut] or [cut.CutTokens] at a byte limit of limit and a token limit
// of tokens (0: none).
func Figures(st cut.Stats, limit, tokens int) chain.Truncation {
	t := chain.Truncation{
		Limit:         limit,
		OriginalBytes: st.Original,
		KeptBytes:     st.Kept,
		DroppedBytes:  st.Dropped,
		Strategy:      strategyName(st.Strategy),
		Compacted:     st.Compacted,
		LimitTokens:   tokens,
	}
	if st.Unit == cut.UnitTokens {
		t.Unit = string(cut.UnitTokens)
		t.OriginalTokens, t.KeptTokens, t.DroppedTokens = st.OriginalTokens, st.KeptTokens, st.DroppedTokens
	}
	return t
}

// strategyName is a strategy as chain.Truncation records it: empty for
// the head rule.
func strategyName(k cut.Keep) string {
	if k == cut.KeepHead {
		return ""
	}
	return string(k)
}

// cutMessage is the log message of a cut.
func cutMessage(t chain.Truncation) string {
	if t.Compacted {
		return "tool result compacted"
	}
	return "tool result truncated"
}

func logFields(call chain.Call, t chain.Truncation) []any {
	f := []any{
		"tool", call.Tool,
		"call_id", call.ID,
		"original_bytes", t.OriginalBytes,
		"kept_bytes", t.KeptBytes,
		"dropped_bytes", t.DroppedBytes,
		"limit", t.Limit,
	}
	if t.Strategy != "" {
		// Head is the default and the only strategy of earlier versions:
		// their log lines stay as they were.
		f = append(f, "strategy", t.Strategy)
	}
	if t.LimitTokens > 0 {
		f = append(f, "limit_tokens", t.LimitTokens)
	}
	if t.Unit != "" {
		f = append(f, "unit", t.Unit,
			"original_tokens", t.OriginalTokens, "kept_tokens", t.KeptTokens, "dropped_tokens", t.DroppedTokens)
	}
	return f
}
