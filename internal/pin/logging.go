package pin

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
)

// Logging returns a middleware that logs each call once it returns, at debug
// level (warn for an error result), with tool, call_id, duration, is_error,
// content_bytes (-1 for no content) and, when the cap cut the result,
// dropped_bytes. A nil logger makes it a no-op pass-through.
func Logging(logger hclog.Logger) chain.Middleware {
	if logger == nil {
		return func(next chain.Handler) chain.Handler { return next }
	}
	return func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			start := time.Now()
			res := next(ctx, call)
			size := -1
			if res.Content != nil {
				size = len(*res.Content)
			}
			fields := []any{
				"tool", call.Tool,
				"call_id", call.ID,
				"duration", time.Since(start),
				"is_error", res.IsError(),
				"content_bytes", size,
			}
			if t, ok := res.Truncation(); ok {
				fields = append(fields, "dropped_bytes", t.DroppedBytes)
			}
			switch {
			case res.IsError():
				ctxLogger(ctx, logger).Warn("tool call failed", fields...)
			case logger.IsDebug():
				ctxLogger(ctx, logger).Debug("tool call", fields...)
			}
			return res
		}
	}
}
