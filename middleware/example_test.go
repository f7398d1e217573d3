package middleware_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/middleware"
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
