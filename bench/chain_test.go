package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/chain"
)

// chainSizes are the numbers of no-op middleware BenchmarkChain composes.
var chainSizes = []int{0, 1, 4, 8, 16}

// smallContent is a tool result well under the 16 KiB default limit. It is a
// package variable so that pointing at it allocates nothing.
var smallContent = strings.Repeat("a line of tool output\n", 48) // 1056 bytes

// final is the innermost handler of every chain: a tool that answers at once
// with content under the limit.
func final(_ context.Context, _ chain.Call) chain.Result {
	return chain.Result{Summary: "read 48 lines", Content: &smallContent}
}

// noop is the middleware every chain is built of: it calls next and returns
// its result untouched, so what a benchmark measures is the chain itself.
func noop(next chain.Handler) chain.Handler {
	return func(ctx context.Context, call chain.Call) chain.Result {
		return next(ctx, call)
	}
}

// chainImpl builds a handler made of final and n no-op layers.
type chainImpl struct {
	name  string
	build func(n int) chain.Handler
}

// chainImpls lists the subject and its baselines. The first is the base
// column of `benchstat -col /impl`.
var chainImpls = []chainImpl{
	{"hand", handComposed},
	{"chain", chainComposed},
	{"grpc", grpcComposed},
	{"loop", loopComposed},
}

// chainComposed is the subject: chain.Chain over n no-op middleware.
func chainComposed(n int) chain.Handler {
	mws := make([]chain.Middleware, n)
	for i := range mws {
		mws[i] = noop
	}
	return chain.Chain(mws...)(final)
}

// handComposed nests the same closures by hand, written out, with no slice
// and no loop: the floor for any way of composing them once.
func handComposed(n int) chain.Handler {
	switch n {
	case 0:
		return final
	case 1:
		return noop(final)
	case 4:
		return noop(noop(noop(noop(final))))
	case 8:
		return noop(noop(noop(noop(noop(noop(noop(noop(final))))))))
	case 16:
		return noop(noop(noop(noop(noop(noop(noop(noop(
			noop(noop(noop(noop(noop(noop(noop(noop(final))))))))))))))))
	}
	panic(fmt.Sprintf("handComposed: no hand-written chain of %d", n))
}

// interceptor is the grpc-go shape of a middleware: it receives the next
// handler as an argument on every call instead of once at composition.
type interceptor func(ctx context.Context, call chain.Call, next chain.Handler) chain.Result

func noopInterceptor(ctx context.Context, call chain.Call, next chain.Handler) chain.Result {
	return next(ctx, call)
}

// grpcComposed models grpc-go's chainUnaryInterceptors: the chain stores the
// interceptor slice, and each call builds the handler that leads to the next
// interceptor as a fresh closure, recursively, one per layer below the first.
// Those closures escape into the interceptors, so each is a heap allocation.
func grpcComposed(n int) chain.Handler {
	ics := make([]interceptor, n)
	for i := range ics {
		ics[i] = noopInterceptor
	}
	if n == 0 {
		return final
	}
	return func(ctx context.Context, call chain.Call) chain.Result {
		return ics[0](ctx, call, grpcNext(ics, 0, final))
	}
}

// grpcNext returns the handler that runs ics[curr+1] with the handler after
// it, or last when ics[curr] is the innermost interceptor.
func grpcNext(ics []interceptor, curr int, last chain.Handler) chain.Handler {
	if curr == len(ics)-1 {
		return last
	}
	return func(ctx context.Context, call chain.Call) chain.Result {
		return ics[curr+1](ctx, call, grpcNext(ics, curr+1, last))
	}
}

// post is a post-processing step: it sees the result after the tool ran.
type post func(ctx context.Context, call chain.Call, res chain.Result) chain.Result

func noopPost(_ context.Context, _ chain.Call, res chain.Result) chain.Result { return res }

// loopComposed is the simplest alternative to an onion: run the tool, then a
// plain loop over post-processing funcs. It cannot act before the call or
// call next twice, so it is a floor for what "after" hooks cost, not an
// equivalent design.
func loopComposed(n int) chain.Handler {
	posts := make([]post, n)
	for i := range posts {
		posts[i] = noopPost
	}
	return func(ctx context.Context, call chain.Call) chain.Result {
		res := final(ctx, call)
		for _, p := range posts {
			res = p(ctx, call, res)
		}
		return res
	}
}

var sinkResult chain.Result

func BenchmarkChain(b *testing.B) {
	ctx := context.Background()
	call := chain.Call{ID: "call_1", Tool: "Read", Args: []byte(`{"path":"go.mod"}`)}
	for _, n := range chainSizes {
		for _, impl := range chainImpls {
			h := impl.build(n)
			b.Run(fmt.Sprintf("n=%d/impl=%s", n, impl.name), func(b *testing.B) {
				b.ReportAllocs()
				var res chain.Result
				for b.Loop() {
					res = h(ctx, call)
				}
				sinkResult = res
			})
		}
	}
}

// TestChainImplsAgree checks that every implementation BenchmarkChain times
// returns what the tool returned, so none of them skips work.
func TestChainImplsAgree(t *testing.T) {
	ctx := context.Background()
	call := chain.Call{ID: "call_1", Tool: "Read"}
	want := final(ctx, call)
	for _, n := range chainSizes {
		for _, impl := range chainImpls {
			got := impl.build(n)(ctx, call)
			if got.Summary != want.Summary || got.Content != want.Content || got.IsError() != want.IsError() {
				t.Errorf("%s n=%d: got %+v, want %+v", impl.name, n, got, want)
			}
		}
	}
}

// TestGRPCBaselineOrder checks that the grpc-go-style baseline is a faithful
// model: with tagging layers it runs them in the order chain.Chain does,
// first listed outermost.
func TestGRPCBaselineOrder(t *testing.T) {
	ctx := context.Background()
	var trace []string
	tagMW := func(name string) chain.Middleware {
		return func(next chain.Handler) chain.Handler {
			return func(ctx context.Context, call chain.Call) chain.Result {
				trace = append(trace, name+">")
				res := next(ctx, call)
				trace = append(trace, "<"+name)
				return res
			}
		}
	}
	tagIC := func(name string) interceptor {
		return func(ctx context.Context, call chain.Call, next chain.Handler) chain.Result {
			trace = append(trace, name+">")
			res := next(ctx, call)
			trace = append(trace, "<"+name)
			return res
		}
	}

	chain.Chain(tagMW("a"), tagMW("b"), tagMW("c"))(final)(ctx, chain.Call{})
	want := strings.Join(trace, " ")

	trace = nil
	ics := []interceptor{tagIC("a"), tagIC("b"), tagIC("c")}
	h := func(ctx context.Context, call chain.Call) chain.Result {
		return ics[0](ctx, call, grpcNext(ics, 0, final))
	}
	h(ctx, chain.Call{})
	if got := strings.Join(trace, " "); got != want {
		t.Errorf("grpc-style order = %q, chain.Chain order = %q", got, want)
	}
	if want != "a> b> c> <c <b <a" {
		t.Errorf("chain.Chain order = %q, want first listed outermost", want)
	}
}
