package worker

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/toolcap/toolcap/chain"
)

// ExecuteTools runs calls and returns exactly one result per call, in call
// order: the result at index i answers calls[i]. Every result, whatever its
// tool did, has passed the whole chain: the cap, the user's middleware and
// the ceiling.
//
// Calls run concurrently, at most the configured concurrency at once, each
// on a goroutine ExecuteTools starts; with one call, or a concurrency of 1,
// they run one after another on the caller's goroutine.
//
// A tool runs on the goroutine that runs its chain when ctx cannot be
// cancelled (its Done is nil): there is nothing to wait for, and a call costs
// what a function call costs. Otherwise each tool runs on a goroutine of its
// own, and when ctx ends, every call still running gets an error result
// naming the context's cause at once, calls not yet started are answered
// without being started, and ExecuteTools returns; the tools still running
// are abandoned, their late results discarded. Tools should honour ctx.
//
// A tool that ends its goroutine with runtime.Goexit (as t.FailNow does) gets
// an error result, except when it runs on the caller's goroutine (a
// context that cannot be cancelled and calls one at a time): Go offers no
// way to stop a Goexit, so there it ends the caller's goroutine, as it would
// had the caller run the tool itself.
//
// With a batch budget (batch_max_bytes, batch_max_tokens or both), the
// results share it once all of them are in, after the ceiling: each result
// is first held to its own limit, then the budget is water-filled in call
// order. A result whose tool's content (at most its limit) is under the fair
// share keeps all of it, the others share what is left equally, and none
// gets more than its own limit. A result over its share is cut again from
// its tool's content, with its tool's strategy, so that it carries one
// marker whose N is all of that content the model does not see; its figures
// have Batch set. The shares depend only on the results, never on the order
// in which the calls completed. Without a budget there is no such stage and
// nothing is kept.
func (w *Worker) ExecuteTools(ctx context.Context, calls []chain.Call) []ToolResult {
	results := make([]ToolResult, len(calls))
	var kept []custody
	if w.batching() {
		kept = make([]custody, len(calls))
	}
	n := min(len(calls), w.concurrency)
	if n <= 1 {
		for i, call := range calls {
			results[i] = w.handler(withCustody(ctx, custodyAt(kept, i)), call)
		}
	} else {
		b := &batch{w: w, ctx: ctx, calls: calls, results: results, kept: kept, most: int32(n)}
		b.spawn()
		b.wg.Wait()
	}
	if kept != nil {
		w.shareBatch(ctx, calls, results, kept)
	}
	return results
}

// custodyAt returns &kept[i], or nil when kept is nil.
func custodyAt(kept []custody, i int) *custody {
	if kept == nil {
		return nil
	}
	return &kept[i]
}

// batch is one ExecuteTools call run by goroutines that each take the next
// call until none is left.
//
// Goroutines are started as they are needed rather than all at once: one to
// begin with, and another each time a goroutine takes a call while calls
// remain, no started goroutine is still waiting to run, and fewer than the
// concurrency are running. Slow tools reach the full concurrency within a few
// microseconds; instant ones are done by fewer goroutines than calls, each
// of which costs more than an instant call.
type batch struct {
	w       *Worker
	ctx     context.Context
	calls   []chain.Call
	results []ToolResult // each index written by the one goroutine that took it
	kept    []custody    // nil without a batch budget
	most    int32        // goroutines at most
	next    atomic.Int64 // the next call to take
	started atomic.Int32 // goroutines started
	waiting atomic.Int32 // goroutines started that have not taken a call yet
	wg      sync.WaitGroup
}

// spawn starts one more goroutine unless the batch has as many as it may.
func (b *batch) spawn() {
	for {
		n := b.started.Load()
		if n >= b.most {
			return
		}
		if b.started.CompareAndSwap(n, n+1) {
			break
		}
	}
	b.waiting.Add(1)
	b.wg.Add(1)
	go b.work()
}

func (b *batch) work() {
	defer b.wg.Done()
	b.waiting.Add(-1)
	for {
		i := int(b.next.Add(1) - 1)
		if i >= len(b.calls) {
			return
		}
		if i+1 < len(b.calls) && b.waiting.Load() == 0 {
			b.spawn()
		}
		b.one(i)
	}
}

// one runs call i through the chain. When its tool ends this goroutine (it
// can only do so when ctx cannot be cancelled: otherwise it runs on its own),
// the call is run through the chain again, on the way out, with a context
// that makes the innermost layer answer it as exited; then a new goroutine
// takes this one's place.
func (b *batch) one(i int) {
	returned := false
	ctx := withCustody(b.ctx, custodyAt(b.kept, i))
	defer func() {
		if returned {
			return
		}
		ctx, cancel := context.WithCancel(context.WithValue(ctx, exitedKey{}, true))
		b.results[i] = b.w.handler(ctx, b.calls[i])
		cancel()
		b.started.Add(-1) // this goroutine is ending: let another take its place
		b.spawn()
	}()
	b.results[i] = b.w.handler(ctx, b.calls[i])
	returned = true
}
