package chain_test

import (
	"context"
	"fmt"

	"github.com/toolcap/toolcap/chain"
)

// The first middleware listed is the outermost: it sees the call first and
// the result last.
func ExampleChain() {
	named := func(name string) chain.Middleware {
		return func(next chain.Handler) chain.Handler {
			return func(ctx context.Context, call chain.Call) chain.Result {
				fmt.Println(name, "sees the call")
				res := next(ctx, call)
				fmt.Println(name, "sees the result")
				return res
			}
		}
	}
	tool := func(_ context.Context, call chain.Call) chain.Result {
		fmt.Println("tool runs", call.Tool)
		return chain.Result{Summary: "done"}
	}

	h := chain.Chain(named("first"), named("second"))(tool)
	h(context.Background(), chain.Call{ID: "1", Tool: "Glob"})
	// Output:
	// first sees the call
	// second sees the call
	// tool runs Glob
	// second sees the result
	// first sees the result
}
