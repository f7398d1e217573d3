package pin

import (
	"context"

	"github.com/hashicorp/go-hclog"
)

// logFieldsKey is the context key of WithLogFields' fields.
type logFieldsKey struct{}

// WithLogFields returns ctx carrying kv, key and value pairs that every
// log line the pinned stages write about a call made under ctx carries
// too (after those already carried): how a middleware that opens a span
// puts its trace_id and span_id on the cap's line about the same call.
func WithLogFields(ctx context.Context, kv ...any) context.Context {
	if len(kv) == 0 {
		return ctx
	}
	prev, _ := ctx.Value(logFieldsKey{}).([]any)
	return context.WithValue(ctx, logFieldsKey{}, append(prev[:len(prev):len(prev)], kv...))
}

// ctxLogger returns l with the fields ctx carries (WithLogFields), or l
// itself when it carries none. It is called only on the way to a log
// line, so that a call that logs nothing looks nothing up.
func ctxLogger(ctx context.Context, l hclog.Logger) hclog.Logger {
	if kv, _ := ctx.Value(logFieldsKey{}).([]any); len(kv) > 0 {
		return l.With(kv...)
	}
	return l
}
