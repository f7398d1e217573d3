package pin

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
)

// Recover returns a middleware that turns a panic in next (a tool or an inner
// middleware) into an error result whose content names the tool and the
// panic value, so one bad call never crashes the agent or loses the other
// results of its batch. The panic and its stack are logged at error level to
// logger, which may be nil.
func Recover(logger hclog.Logger) chain.Middleware {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) (res chain.Result) {
			defer func() {
				if v := recover(); v != nil {
					ctxLogger(ctx, logger).Error("tool call panicked",
						"tool", call.Tool, "call_id", call.ID,
						"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
					res = chain.ErrorResult(
						fmt.Sprintf("%s failed: panic", call.Tool),
						fmt.Sprintf("tool %q panicked: %v", call.Tool, v))
				}
			}()
			return next(ctx, call)
		}
	}
}
