package bench

import (
	"context"
	"fmt"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/worker"
)

// fanoutSizes are the batch sizes BenchmarkFanout runs.
var fanoutSizes = []int{1, 8, 64, 512}

// errgroupPath is the baseline for a concurrent batch: the direct path of
// one call (run the tool, cut its content), fanned out with an errgroup
// limited to the worker's default concurrency, as a program without toolcap
// would write it.
type errgroupPath struct{ direct directPath }

func (e errgroupPath) ExecuteTools(ctx context.Context, calls []chain.Call) []worker.ToolResult {
	results := make([]worker.ToolResult, len(calls))
	var g errgroup.Group
	g.SetLimit(worker.DefaultConcurrency)
	for i := range calls {
		g.Go(func() error {
			results[i] = e.direct.one(ctx, calls[i])
			return nil
		})
	}
	_ = g.Wait()
	return results
}

// BenchmarkFanout times one batch of instant calls (content under the limit)
// through:
//
//   - impl=loop: the direct path, one call after another (the floor);
//   - impl=errgroup: the direct path fanned out by an errgroup with
//     SetLimit(8);
//   - impl=worker: the worker with a context that cannot be cancelled;
//   - impl=worker-cancel: the worker with a cancellable context, so that each
//     tool runs on a goroutine of its own and can be abandoned.
func BenchmarkFanout(b *testing.B) {
	direct := newDirectPath(&smallContent)
	w := newBenchWorker(b, &smallContent)
	impls := []struct {
		name   string
		exec   executor
		cancel bool
	}{
		{"loop", direct, false},
		{"errgroup", errgroupPath{direct}, false},
		{"worker", w, false},
		{"worker-cancel", w, true},
	}
	for _, n := range fanoutSizes {
		calls := benchCalls(n)
		for _, impl := range impls {
			b.Run(fmt.Sprintf("%dcalls/impl=%s", n, impl.name), func(b *testing.B) {
				ctx := context.Background()
				if impl.cancel {
					c, cancel := context.WithCancel(ctx)
					defer cancel()
					ctx = c
				}
				benchBatch(b, impl.exec, ctx, calls)
			})
		}
	}
}
