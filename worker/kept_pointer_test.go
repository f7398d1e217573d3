package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/worker"
)

// keeper is a user middleware that replaces each result's content with a
// *string of its own, keeps it, and can write through it later.
type keeper struct {
	mu   sync.Mutex
	kept []*string
}

func (k *keeper) middleware(next chain.Handler) chain.Handler {
	return func(ctx context.Context, call chain.Call) chain.Result {
		res := next(ctx, call)
		s := *res.Content
		res.Content = &s
		k.mu.Lock()
		k.kept = append(k.kept, &s)
		k.mu.Unlock()
		return res
	}
}

// grow writes content through every pointer the middleware kept.
func (k *keeper) grow(content string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.kept {
		*p = content
	}
	return len(k.kept)
}

// The case of issue 22 (item 8): 16 results of 4 KB pass a middleware that
// keeps the *string it returned and, once ExecuteTools has returned, writes
// 64 MiB through each. The results must not change: the ceiling owns what
// it lets through.
func TestKeptPointerCannotGrowAResult(t *testing.T) {
	const calls = 16
	content := strings.Repeat("r", 4096)
	huge := strings.Repeat("x", 64<<20)
	for _, tt := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		m    *manifest.WorkerManifest
	}{
		{"inline", background, nil},
		{"own goroutines", cancellable, nil},
		{"batch budget", background, &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{BatchMaxBytes: 1 << 20}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := &keeper{}
			w := newWorker(t, []worker.Tool{text("Read", content)},
				worker.WithMiddleware(k.middleware), worker.WithManifest(tt.m), worker.WithConcurrency(4))
			ctx, cancel := tt.ctx()
			defer cancel()
			batch := make([]chain.Call, calls)
			for i := range batch {
				batch[i] = chain.Call{ID: fmt.Sprint(i), Tool: "Read"}
			}
			results := w.ExecuteTools(ctx, batch)
			if n := k.grow(huge); n != calls {
				t.Fatalf("the middleware kept %d pointers, want %d", n, calls)
			}
			got := make([]int, len(results))
			for i, res := range results {
				got[i] = len(*res.Content)
			}
			want := make([]int, calls)
			for i := range want {
				want[i] = len(content)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("content lengths after the middleware wrote through its pointers (-want +got):\n%s", diff)
			}
		})
	}
}

func background() (context.Context, context.CancelFunc) { return context.Background(), func() {} }

func cancellable() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

// A user middleware that passes the cap's content on costs no allocation:
// the ceiling copies only content a middleware put in its place, and the
// context through which it learns what the cap passed up stores the tool's
// copy, which would take an allocation of its own without it.
func TestPassingMiddlewareCostsNoAllocation(t *testing.T) {
	pass := func(next chain.Handler) chain.Handler { return next }
	through := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result { return next(ctx, call) }
	}
	ctx := context.Background()
	calls := []chain.Call{{ID: "1", Tool: "Read"}}
	tools := []worker.Tool{text("Read", strings.Repeat("r", 100))}
	allocs := func(mws ...chain.Middleware) float64 {
		w := newWorker(t, tools, worker.WithMiddleware(mws...))
		return testing.AllocsPerRun(100, func() { w.ExecuteTools(ctx, calls) })
	}
	base := allocs()
	got := map[string]float64{"composed away": allocs(pass), "calling next": allocs(through), "two": allocs(through, through)}
	want := map[string]float64{"composed away": base, "calling next": base, "two": base}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("allocations per call, against %v without middleware (-want +got):\n%s", base, diff)
	}
}

// A middleware that calls next more than once and returns an earlier
// attempt's result gets that attempt's content: the storage the chain keeps
// for a tool's content per call serves the first attempt only.
func TestRetryKeepsEachAttemptsContent(t *testing.T) {
	for _, tt := range []struct {
		name     string
		attempts int
		keep     int // the attempt the middleware returns, from 0
	}{
		{"first of two", 2, 0},
		{"second of two", 2, 1},
		{"first of three", 3, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			tool := worker.Func("Read", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
				n++
				return worker.ToolOutput{Content: ptr(fmt.Sprint("attempt ", n))}, nil
			})
			retry := func(next chain.Handler) chain.Handler {
				return func(ctx context.Context, call chain.Call) chain.Result {
					var results []chain.Result
					for range tt.attempts {
						results = append(results, next(ctx, call))
					}
					return results[tt.keep]
				}
			}
			w := newWorker(t, []worker.Tool{tool}, worker.WithMiddleware(retry))
			got := w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: "Read"}})
			if diff := cmp.Diff(fmt.Sprint("attempt ", tt.keep+1), *got[0].Content); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
		})
	}
}
