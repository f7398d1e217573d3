package chain_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
)

// tracer returns a middleware that appends "name>" before next and "<name"
// after it to log.
func tracer(name string, log *[]string) chain.Middleware {
	return func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			*log = append(*log, name+">")
			res := next(ctx, call)
			*log = append(*log, "<"+name)
			return res
		}
	}
}

func TestChainOrder(t *testing.T) {
	tests := []struct {
		name string
		mws  func(log *[]string) []chain.Middleware
		want []string
	}{
		{
			name: "none",
			mws:  func(*[]string) []chain.Middleware { return nil },
			want: []string{"handler"},
		},
		{
			name: "one",
			mws:  func(l *[]string) []chain.Middleware { return []chain.Middleware{tracer("a", l)} },
			want: []string{"a>", "handler", "<a"},
		},
		{
			name: "first listed is outermost",
			mws: func(l *[]string) []chain.Middleware {
				return []chain.Middleware{tracer("a", l), tracer("b", l), tracer("c", l)}
			},
			want: []string{"a>", "b>", "c>", "handler", "<c", "<b", "<a"},
		},
		{
			name: "nil entries are skipped",
			mws: func(l *[]string) []chain.Middleware {
				return []chain.Middleware{nil, tracer("a", l), nil, tracer("b", l), nil}
			},
			want: []string{"a>", "b>", "handler", "<b", "<a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log []string
			h := chain.Chain(tt.mws(&log)...)(func(context.Context, chain.Call) chain.Result {
				log = append(log, "handler")
				return chain.Result{}
			})
			h(context.Background(), chain.Call{Tool: "Glob"})
			if diff := cmp.Diff(tt.want, log); diff != "" {
				t.Errorf("call order mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChainCopiesItsSlice(t *testing.T) {
	var log []string
	mws := []chain.Middleware{tracer("a", &log)}
	c := chain.Chain(mws...)
	mws[0] = tracer("changed", &log)
	c(func(context.Context, chain.Call) chain.Result { return chain.Result{} })(context.Background(), chain.Call{})
	if diff := cmp.Diff([]string{"a>", "<a"}, log); diff != "" {
		t.Errorf("chain changed with its argument slice (-want +got):\n%s", diff)
	}
}

// A middleware may call next more than once (a retry); each call goes
// through every inner layer again, and the composed handler keeps no state
// between calls.
func TestChainNextTwice(t *testing.T) {
	var log []string
	retry := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			if res.IsError() {
				res = next(ctx, call)
			}
			return res
		}
	}
	attempts := 0
	h := chain.Chain(retry, tracer("inner", &log))(func(context.Context, chain.Call) chain.Result {
		attempts++
		if attempts == 1 {
			return chain.Result{}.AsError()
		}
		return chain.Result{}
	})
	res := h(context.Background(), chain.Call{})
	if res.IsError() {
		t.Error("retry did not reach the handler a second time")
	}
	want := []string{"inner>", "<inner", "inner>", "<inner"}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("retry order mismatch (-want +got):\n%s", diff)
	}
}

func TestChainConcurrentUse(t *testing.T) {
	add := func(s string) chain.Middleware {
		return func(next chain.Handler) chain.Handler {
			return func(ctx context.Context, call chain.Call) chain.Result {
				res := next(ctx, call)
				c := *res.Content + s
				res.Content = &c
				return res
			}
		}
	}
	h := chain.Chain(add("a"), add("b"))(func(_ context.Context, call chain.Call) chain.Result {
		c := call.ID
		return chain.Result{Content: &c}
	})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			id := fmt.Sprint(i)
			if got, want := *h(context.Background(), chain.Call{ID: id}).Content, id+"ba"; got != want {
				t.Errorf("concurrent call %d = %q, want %q", i, got, want)
			}
		})
	}
	wg.Wait()
}

func TestChainAllocatesNothingPerCall(t *testing.T) {
	pass := func(next chain.Handler) chain.Handler { return next }
	wrap := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result { return next(ctx, call) }
	}
	content := "ok"
	h := chain.Chain(wrap, pass, wrap, wrap)(func(context.Context, chain.Call) chain.Result {
		return chain.Result{Content: &content}
	})
	ctx, call := context.Background(), chain.Call{ID: "1", Tool: "Glob"}
	if allocs := testing.AllocsPerRun(100, func() { h(ctx, call) }); allocs != 0 {
		t.Errorf("call through a composed chain: %v allocs, want 0", allocs)
	}
}
