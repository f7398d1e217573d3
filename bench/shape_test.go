package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolcap/toolcap/chain"
)

// BenchmarkResultShape times the same chain of no-op layers over the result
// shapes a chain could pass, to show what one layer costs for each:
//
//   - impl=words32: four machine words and nothing else, the floor for a
//     32-byte value returned through a layer (the baseline);
//   - impl=result: chain.Result as it is, 32 bytes with the error flag and
//     the figures behind one pointer (the subject);
//   - impl=wide48: the 48-byte result toolcap had before, with the flag and
//     two figure pointers beside the text;
//   - impl=inplace: func(ctx, *Call, *Result), each layer writing through a
//     pointer the caller owns.
//
// All take chain.Call by value, as chain.Handler does, so the result's shape
// is the only difference. The per-layer cost is the slope from n=0 to n=16.
func BenchmarkResultShape(b *testing.B) {
	ctx := context.Background()
	call := chain.Call{ID: "call_1", Tool: "Read", Args: []byte(`{"path":"go.mod"}`)}
	for _, n := range []int{0, 16} {
		for _, impl := range shapeImpls {
			run := impl.build(n)
			b.Run(fmt.Sprintf("n=%d/impl=%s", n, impl.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					run(ctx, call)
				}
			})
		}
	}
}

type shapeImpl struct {
	name  string
	build func(n int) func(context.Context, chain.Call)
}

var shapeImpls = []shapeImpl{
	{"words32", buildWords},
	{"result", buildResult},
	{"wide48", buildWide},
	{"inplace", buildInplace},
}

type words32 struct{ a, b, c, d uintptr }

type wide48 struct {
	Summary    string
	Content    *string
	IsError    bool
	Truncation *chain.Truncation
	Ceiling    *chain.Truncation
}

var (
	sinkWords words32
	sinkWide  wide48
)

func buildWords(n int) func(context.Context, chain.Call) {
	type handler func(context.Context, chain.Call) words32
	var h handler = func(context.Context, chain.Call) words32 { return words32{1, 2, 3, 4} }
	for range n {
		next := h
		h = func(ctx context.Context, call chain.Call) words32 { return next(ctx, call) }
	}
	return func(ctx context.Context, call chain.Call) { sinkWords = h(ctx, call) }
}

func buildResult(n int) func(context.Context, chain.Call) {
	h := chain.Handler(final)
	for range n {
		h = noop(h)
	}
	return func(ctx context.Context, call chain.Call) { sinkResult = h(ctx, call) }
}

func buildWide(n int) func(context.Context, chain.Call) {
	type handler func(context.Context, chain.Call) wide48
	var h handler = func(context.Context, chain.Call) wide48 {
		return wide48{Summary: "read 48 lines", Content: &smallContent}
	}
	for range n {
		next := h
		h = func(ctx context.Context, call chain.Call) wide48 { return next(ctx, call) }
	}
	return func(ctx context.Context, call chain.Call) { sinkWide = h(ctx, call) }
}

func buildInplace(n int) func(context.Context, chain.Call) {
	type handler func(context.Context, *chain.Call, *chain.Result)
	var h handler = func(_ context.Context, _ *chain.Call, res *chain.Result) {
		*res = chain.Result{Summary: "read 48 lines", Content: &smallContent}
	}
	for range n {
		next := h
		h = func(ctx context.Context, call *chain.Call, res *chain.Result) { next(ctx, call, res) }
	}
	return func(ctx context.Context, call chain.Call) {
		inplaceCall = call // a package variable, so that its address does not escape each call
		h(ctx, &inplaceCall, &sinkResult)
	}
}

var inplaceCall chain.Call
