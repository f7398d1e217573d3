package worker_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/worker"
)

// keeper is a middleware that returns a pointer of its own for each result
// and keeps it, to write through it once ExecuteTools has returned (issue
// 22, item 8). ExecuteTools returning is the sync point: every write the
// chain made happened before it, every write the test makes after.
type keeper struct {
	mu   sync.Mutex
	kept []*string
	// fresh builds a new Result around the pointer instead of changing the
	// Content of the one the chain handed the middleware.
	fresh bool
}

func (k *keeper) middleware(next chain.Handler) chain.Handler {
	return func(ctx context.Context, call chain.Call) chain.Result {
		res := next(ctx, call)
		if res.Content == nil {
			return res
		}
		s := *res.Content // the same text, in a string of the middleware's own
		k.mu.Lock()
		k.kept = append(k.kept, &s)
		k.mu.Unlock()
		if k.fresh {
			return chain.Result{Summary: res.Summary, Content: &s}
		}
		res.Content = &s
		return res
	}
}

// The ceiling owns what it lets through: a middleware that keeps the
// pointer it returned cannot grow a result past its limit after
// ExecuteTools returned. The reproduction was 16 results of 4 KB each,
// grown to 64 MiB; 1 MiB shows the same.
func TestCeilingOwnsWhatItLetsThrough(t *testing.T) {
	const limit = 8192
	small := strings.Repeat("4 KB of output\n", 273) // 4,095 bytes
	tool := worker.Func("Read", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		s := small
		return worker.ToolOutput{Summary: "Read", Content: &s}, nil
	})
	calls := make([]chain.Call, 16)
	for i := range calls {
		calls[i] = chain.Call{ID: string(rune('a' + i)), Tool: "Read"}
	}
	tests := []struct {
		name        string
		fresh       bool
		concurrency int
	}{
		{"new pointer, concurrent", false, worker.DefaultConcurrency},
		{"new pointer, one at a time", false, 1},
		{"new result, concurrent", true, worker.DefaultConcurrency},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &keeper{fresh: tt.fresh}
			m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{DefaultMaxBytes: limit}}
			w := newWorker(t, []worker.Tool{tool}, worker.WithPolicies(policytest.Of(t, m)),
				worker.WithMiddleware(k.middleware), worker.WithConcurrency(tt.concurrency))
			res := w.ExecuteTools(context.Background(), calls)

			k.mu.Lock()
			kept := k.kept
			k.mu.Unlock()
			if len(kept) != len(calls) {
				t.Fatalf("the middleware kept %d pointers, want %d", len(kept), len(calls))
			}
			big := strings.Repeat("x", 1<<20)
			for _, p := range kept {
				*p = big // after ExecuteTools returned
			}

			want := make([]int, len(calls))
			got := make([]int, len(calls))
			for i, r := range res {
				want[i] = len(small)
				if r.Content != nil {
					got[i] = len(*r.Content)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("content bytes of each result after the middleware wrote through its pointers (-want +got):\n%s", diff)
			}
		})
	}
}

// On the fitting path the ceiling copies nothing: a middleware that passes
// on the result the chain handed it costs ExecuteTools no allocation, and
// the result the caller gets holds the same storage the cap passed up.
func TestCeilingFittingPathDoesNotCopy(t *testing.T) {
	content := "fits"
	tool := worker.Func("Read", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		return worker.ToolOutput{Content: &content}, nil
	})
	var passed *string
	pass := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			passed = res.Content
			return res
		}
	}
	calls := []chain.Call{{ID: "1", Tool: "Read"}}
	ctx := context.Background()
	bare := newWorker(t, []worker.Tool{tool})
	with := newWorker(t, []worker.Tool{tool}, worker.WithMiddleware(pass))

	res := with.ExecuteTools(ctx, calls)
	if res[0].Content != passed || !res[0].Owns() {
		t.Errorf("the ceiling changed the content the middleware passed on (%p, owns %v), want %p", res[0].Content, res[0].Owns(), passed)
	}
	base := testing.AllocsPerRun(100, func() { bare.ExecuteTools(ctx, calls) })
	got := testing.AllocsPerRun(100, func() { with.ExecuteTools(ctx, calls) })
	if got != base {
		t.Errorf("ExecuteTools with a middleware that passes results on: %v allocs, want %v as without it", got, base)
	}
}
