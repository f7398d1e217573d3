package middleware_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/middleware"
	"github.com/toolcap/toolcap/shape"
)

func ExampleTruncate() {
	content := strings.Repeat("src/main.go\n", 20) // 240 bytes
	capped, dropped := middleware.Truncate(content, 128)
	fmt.Println(len(capped), dropped)
	fmt.Println(capped)
	// Output:
	// 128 162
	// src/main.go
	// src/main.go
	// src/main.go
	// src/main.go
	// src/main.go
	// src/main.go
	// src/ma
	// [truncated: 162 bytes dropped, refine your query]
}

func ExampleCap() {
	glob := func(context.Context, chain.Call) chain.Result {
		out := strings.Repeat("x", 1000)
		return chain.Result{Summary: "1000 bytes of paths", Content: &out}
	}
	limits := func(tool string) int { return 200 }
	h := middleware.Cap(limits)(glob)

	res := h(context.Background(), chain.Call{ID: "1", Tool: "Glob"})
	t, cut := res.Truncation()
	fmt.Println(len(*res.Content), res.IsError(), res.Summary)
	fmt.Printf("%v %+v\n", cut, t)
	// Output:
	// 200 false 1000 bytes of paths
	// true {Limit:200 OriginalBytes:1000 KeptBytes:150 DroppedBytes:850 Strategy: Compacted:false Batch:false Unit: LimitTokens:0 OriginalTokens:0 KeptTokens:0 DroppedTokens:0 Ref: Resume:0}
}

// A user middleware runs between the cap and the ceiling: it sees capped
// content, and whatever it adds, the ceiling holds the limit.
func ExamplePinned() {
	tool := func(context.Context, chain.Call) chain.Result {
		out := strings.Repeat("y", 1000)
		return chain.Result{Content: &out}
	}
	seen := 0
	banner := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			seen = len(*res.Content)
			return res.WithContent(*res.Content + strings.Repeat("!", 100))
		}
	}
	policy := func(string) shape.Policy { return shape.Bytes(300) }
	h := middleware.Pinned(policy, []chain.Middleware{banner})(tool)

	res := h(context.Background(), chain.Call{ID: "1", Tool: "Read"})
	fmt.Println(seen, len(*res.Content))
	// Output:
	// 300 300
}

// A middleware that opens a span for each call puts the span's ids in the
// call's context; the cap's line about a cut below it carries them.
func ExampleWithLogFields() {
	logger := hclog.New(&hclog.LoggerOptions{Output: os.Stdout, DisableTime: true})
	traced := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			ctx = middleware.WithLogFields(ctx, "trace_id", "4bf92f3577b34da6a3ce929d0e0e4736", "span_id", "00f067aa0ba902b7")
			return next(ctx, call)
		}
	}
	h := middleware.Pinned(func(string) shape.Policy { return shape.Bytes(128) }, []chain.Middleware{traced}, middleware.WithLogger(logger))(
		func(context.Context, chain.Call) chain.Result {
			out := strings.Repeat("x", 200)
			return chain.Result{Content: &out}
		})
	h(context.Background(), chain.Call{ID: "1", Tool: "Glob"})
	// Output:
	// [INFO]  tool result truncated: span_id=00f067aa0ba902b7 trace_id=4bf92f3577b34da6a3ce929d0e0e4736 tool=Glob call_id=1 original_bytes=200 kept_bytes=78 dropped_bytes=122 limit=128
}
