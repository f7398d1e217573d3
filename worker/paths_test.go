package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/worker"
)

// counter is a user middleware that records every result it sees, by call.
type counter struct {
	mu   sync.Mutex
	seen map[string][]string // call ID -> "error"/"ok" per result seen
}

func (c *counter) middleware(next chain.Handler) chain.Handler {
	return func(ctx context.Context, call chain.Call) chain.Result {
		res := next(ctx, call)
		kind := "ok"
		if res.IsError() {
			kind = "error"
		}
		c.mu.Lock()
		c.seen[call.ID] = append(c.seen[call.ID], kind)
		c.mu.Unlock()
		return res
	}
}

// Every result passes the user's middleware, whatever its tool did: an
// error, a panic, an unknown name, a hang past the context and a Goexit are
// all answered below them, on every path ExecuteTools takes.
func TestEveryResultPassesTheChain(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tools := []worker.Tool{
		text("Ok", "fine"),
		worker.Func("Fail", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			return worker.ToolOutput{}, errors.New("denied")
		}),
		worker.Func("Panic", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			panic("boom")
		}),
		worker.Func("Exit", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			runtime.Goexit()
			return worker.ToolOutput{}, nil
		}),
		worker.Func("Hang", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			<-release // ignores its context
			return worker.ToolOutput{}, nil
		}),
	}
	calls := []chain.Call{
		{ID: "ok", Tool: "Ok"}, {ID: "fail", Tool: "Fail"}, {ID: "panic", Tool: "Panic"},
		{ID: "unknown", Tool: "Nope"}, {ID: "exit", Tool: "Exit"}, {ID: "hang", Tool: "Hang"},
	}
	want := map[string][]string{
		"ok": {"ok"}, "fail": {"error"}, "panic": {"error"}, "unknown": {"error"}, "exit": {"error"}, "hang": {"error"},
	}
	wantContent := []string{
		"fine", "denied", `tool "Panic" panicked: boom`, `unknown tool "Nope"; registered tools: Exit, Fail, Hang, Ok, Panic`,
		`tool "Exit" exited without returning a result`, `tool "Hang" did not return before the context ended: context deadline exceeded`,
	}
	for _, concurrency := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("concurrency=%d", concurrency), func(t *testing.T) {
			c := &counter{seen: map[string][]string{}}
			w := newWorker(t, tools, worker.WithMiddleware(c.middleware), worker.WithConcurrency(concurrency))
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			res := w.ExecuteTools(ctx, calls)
			if diff := cmp.Diff(want, c.seen); diff != "" {
				t.Errorf("results the middleware saw (-want +got):\n%s", diff)
			}
			var got []string
			for _, r := range res {
				got = append(got, *r.Content)
			}
			if diff := cmp.Diff(wantContent, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

// With a context that cannot be cancelled, a batch runs its tools on the
// goroutines it starts; a Goexit there is answered through the chain too.
func TestGoexitInBatchWithoutCancel(t *testing.T) {
	exit := worker.Func("Exit", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		runtime.Goexit()
		return worker.ToolOutput{}, nil
	})
	c := &counter{seen: map[string][]string{}}
	w := newWorker(t, []worker.Tool{exit, text("Glob", "ok")}, worker.WithMiddleware(c.middleware), worker.WithConcurrency(2))
	var calls []chain.Call
	for i := range 20 {
		tool := "Glob"
		if i%3 == 0 {
			tool = "Exit"
		}
		calls = append(calls, chain.Call{ID: fmt.Sprint(i), Tool: tool})
	}
	res := w.ExecuteTools(context.Background(), calls)
	for i, r := range res {
		wantErr := calls[i].Tool == "Exit"
		if r.IsError() != wantErr || len(c.seen[calls[i].ID]) != 1 {
			t.Errorf("call %d (%s): IsError = %v, middleware saw %v; want IsError %v, seen once",
				i, calls[i].Tool, r.IsError(), c.seen[calls[i].ID], wantErr)
		}
	}
}

// With a context that cannot be cancelled and calls one at a time, a tool
// runs on the caller's goroutine like a function call, so its Goexit ends
// that goroutine, as a direct call would (documented on ExecuteTools): the
// caller's deferred calls run and ExecuteTools does not return.
func TestGoexitInlineEndsCallersGoroutine(t *testing.T) {
	exit := worker.Func("Exit", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		runtime.Goexit()
		return worker.ToolOutput{}, nil
	})
	w := newWorker(t, []worker.Tool{exit})
	returned, ended := false, make(chan struct{})
	go func() {
		defer close(ended)
		w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: "Exit"}})
		returned = true
	}()
	<-ended
	if returned {
		t.Error("ExecuteTools returned after its tool called runtime.Goexit on the caller's goroutine")
	}
}

// The worker owns what it caps: a tool that keeps the pointer it returned
// and writes through it later changes nothing in the history.
func TestWorkerOwnsContent(t *testing.T) {
	for _, name := range []string{"background", "cancellable"} {
		t.Run(name, func(t *testing.T) {
			var kept []*string
			var mu sync.Mutex
			tool := worker.Func("Read", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
				s := "small"
				mu.Lock()
				kept = append(kept, &s)
				mu.Unlock()
				return worker.ToolOutput{Content: &s}, nil
			})
			m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{DefaultMaxBytes: 1024}}
			w := newWorker(t, []worker.Tool{tool}, worker.WithPolicies(policytest.Of(t, m)))
			ctx := context.Background()
			if name == "cancellable" {
				c, cancel := context.WithCancel(ctx)
				defer cancel()
				ctx = c
			}
			res := w.ExecuteTools(ctx, []chain.Call{{ID: "1", Tool: "Read"}, {ID: "2", Tool: "Read"}})
			big := strings.Repeat("x", 1<<20)
			for _, p := range kept {
				*p = big // after Run returned
			}
			for i, r := range res {
				if *r.Content != "small" {
					t.Errorf("result %d: %d bytes after the tool rewrote its string, want %q", i, len(*r.Content), "small")
				}
			}
		})
	}
}

// A cancelled call's result is an error the cap, middleware and ceiling see,
// and a late answer from the abandoned tool never reaches them.
//
// It runs in a synctest bubble: synctest.Wait returns once every goroutine
// the calls started has exited or is blocked for good, so "never" is
// checked after whatever would (wrongly) have happened has happened, not
// after a pause; and the 20ms timeout is the bubble's fake clock's.
func TestAbandonedToolLateResultIsDiscarded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		finished := make(chan struct{})
		tool := worker.Func("Hang", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			defer close(finished)
			<-release
			late := "late"
			return worker.ToolOutput{Content: &late}, nil
		})
		c := &counter{seen: map[string][]string{}}
		w := newWorker(t, []worker.Tool{tool}, worker.WithMiddleware(c.middleware))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res := w.ExecuteTools(ctx, []chain.Call{{ID: "1", Tool: "Hang"}})
		if !res[0].IsError() {
			t.Errorf("result = %q, want a cancellation error", *res[0].Content)
		}
		// The context ended before the call: the tool is never started. Had
		// it been, it would be waiting for release; once released, it has
		// finished by the time every goroutine is blocked or gone.
		close(release)
		synctest.Wait()
		select {
		case <-finished:
			t.Error("the tool ran after the context had ended")
		default:
		}

		release2 := make(chan struct{})
		done2 := make(chan struct{})
		tool2 := worker.Func("Hang", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			defer close(done2)
			<-release2
			late := "late"
			return worker.ToolOutput{Content: &late}, nil
		})
		c2 := &counter{seen: map[string][]string{}}
		w2 := newWorker(t, []worker.Tool{tool2}, worker.WithMiddleware(c2.middleware))
		ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel2()
		res = w2.ExecuteTools(ctx2, []chain.Call{{ID: "1", Tool: "Hang"}})
		close(release2)
		<-done2
		// The abandoned call's goroutine has done all it will with the late
		// result: a late result that (wrongly) reached the middleware has
		// reached it by now.
		synctest.Wait()
		c2.mu.Lock()
		defer c2.mu.Unlock()
		if diff := cmp.Diff(map[string][]string{"1": {"error"}}, c2.seen); diff != "" || !res[0].IsError() {
			t.Errorf("middleware saw (-want +got):\n%s", diff)
		}
	})
}
