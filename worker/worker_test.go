package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/logtest"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/resulttest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/middleware"
	"github.com/toolcap/toolcap/worker"
)

func ptr(s string) *string { return &s }

// text returns a tool named name that answers every call with content.
func text(name, content string) worker.Tool {
	return worker.Func(name, func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		return worker.ToolOutput{Summary: name + " done", Content: ptr(content)}, nil
	})
}

func newWorker(t *testing.T, tools []worker.Tool, opts ...worker.Option) *worker.Worker {
	t.Helper()
	w, err := worker.New(tools, opts...)
	if err != nil {
		t.Fatalf("New() error: %v", err)
	}
	return w
}

// The incident: a 125 KB Glob result reaches the history as at most the
// default limit, with the marker, not as an error, summary untouched.
func TestExecuteToolsCapsTheIncident(t *testing.T) {
	glob := strings.Repeat("src/components/widget/index.ts\n", 4100) // ~127 KB
	var buf bytes.Buffer
	w := newWorker(t, []worker.Tool{text("Glob", glob)}, worker.WithLogger(logtest.New(&buf, hclog.Debug)))
	res := w.ExecuteTools(context.Background(), []chain.Call{{ID: "toolu_1", Tool: "Glob", Args: json.RawMessage(`{"pattern":"*"}`)}})

	want, dropped := middleware.Truncate(glob, manifest.DefaultMaxBytes)
	wantRes := []resulttest.View{{
		Summary: "Glob done",
		Content: &want,
		Truncation: &chain.Truncation{
			Limit: 16384, OriginalBytes: len(glob), KeptBytes: len(glob) - dropped, DroppedBytes: dropped,
		},
	}}
	if diff := cmp.Diff(wantRes, resulttest.All(res)); diff != "" {
		t.Errorf("ExecuteTools() mismatch (-want +got):\n%s", diff)
	}
	if n := len(*res[0].Content); n != 16384 {
		t.Errorf("content = %d bytes, want 16384", n)
	}
	if !strings.HasSuffix(*res[0].Content, fmt.Sprintf("[truncated: %d bytes dropped, refine your query]", dropped)) {
		t.Errorf("content does not end in the marker: %q", (*res[0].Content)[16300:])
	}

	var cuts []map[string]any
	for _, l := range logtest.Lines(t, &buf) {
		if l["@message"] == "tool result truncated" {
			cuts = append(cuts, l)
		}
	}
	wantLog := []map[string]any{{
		"@level": "info", "@message": "tool result truncated", "@module": "toolcap",
		"tool": "Glob", "call_id": "toolu_1", "original_bytes": float64(len(glob)),
		"kept_bytes": float64(len(glob) - dropped), "dropped_bytes": float64(dropped), "limit": float64(16384),
	}}
	if diff := cmp.Diff(wantLog, cuts); diff != "" {
		t.Errorf("cut log mismatch (-want +got):\n%s", diff)
	}
}

// User middleware see only capped content, in any listing order, and the
// innermost one receives exactly the cap's output.
func TestMiddlewareSeeOnlyCappedContent(t *testing.T) {
	const limit = 1000
	big := strings.Repeat("x", 50_000)
	capped, _ := middleware.Truncate(big, limit)

	type seen struct {
		mu    sync.Mutex
		sizes map[string][]int
	}
	spy := func(s *seen, name string) chain.Middleware {
		return func(next chain.Handler) chain.Handler {
			return func(ctx context.Context, call chain.Call) chain.Result {
				res := next(ctx, call)
				s.mu.Lock()
				s.sizes[name] = append(s.sizes[name], len(*res.Content))
				s.mu.Unlock()
				return res
			}
		}
	}
	orders := [][]string{{"a", "b", "c"}, {"c", "b", "a"}, {"b"}}
	for _, order := range orders {
		t.Run(strings.Join(order, ","), func(t *testing.T) {
			s := &seen{sizes: map[string][]int{}}
			var mws []chain.Middleware
			for _, name := range order {
				mws = append(mws, spy(s, name))
			}
			m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{DefaultMaxBytes: limit}}
			w := newWorker(t, []worker.Tool{text("Glob", big)}, worker.WithPolicies(policytest.Of(t, m)), worker.WithMiddleware(mws...))
			res := w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: "Glob"}})
			want := map[string][]int{}
			for _, name := range order {
				want[name] = []int{len(capped)}
			}
			if diff := cmp.Diff(want, s.sizes); diff != "" {
				t.Errorf("sizes seen by middleware (-want +got):\n%s", diff)
			}
			if *res[0].Content != capped {
				t.Errorf("history got %d bytes, want the cap's %d", len(*res[0].Content), len(capped))
			}
		})
	}
}

// Middleware also see the figures of the cut.
func TestMiddlewareSeeTruncation(t *testing.T) {
	var got *chain.Truncation
	peek := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			got = resulttest.Of(res).Truncation
			return res
		}
	}
	w := newWorker(t, []worker.Tool{text("Read", strings.Repeat("y", 20_000))}, worker.WithMiddleware(peek))
	w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: "Read"}})
	want := &chain.Truncation{Limit: 16384, OriginalBytes: 20_000, KeptBytes: 16333, DroppedBytes: 3667}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Truncation seen by middleware (-want +got):\n%s", diff)
	}
}

func TestCeiling(t *testing.T) {
	grow := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			c := *res.Content + strings.Repeat("\nappendix", 1000)
			res.Content = &c
			return res
		}
	}
	var buf bytes.Buffer
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"Grep": {MaxBytes: 512}}}}
	w := newWorker(t, []worker.Tool{text("Grep", "short match")},
		worker.WithPolicies(policytest.Of(t, m)), worker.WithMiddleware(grow), worker.WithLogger(logtest.New(&buf, hclog.Debug)))
	res := w.ExecuteTools(context.Background(), []chain.Call{{ID: "g1", Tool: "Grep"}})
	if n := len(*res[0].Content); n > 512 {
		t.Errorf("content after the ceiling = %d bytes, want <= 512", n)
	}
	v := resulttest.Of(res[0])
	if v.Truncation != nil {
		t.Errorf("the cap cut a short result: %+v", v.Truncation)
	}
	if v.Ceiling == nil || v.Ceiling.Limit != 512 || v.IsError {
		t.Errorf("Ceiling = %+v, IsError = %v; want a cut at 512, not an error", v.Ceiling, v.IsError)
	}
	var warned bool
	for _, l := range logtest.Lines(t, &buf) {
		if l["@level"] == "warn" && l["tool"] == "Grep" && strings.Contains(l["@message"].(string), "grew") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning naming the tool; log:\n%s", buf.String())
	}
}

// Every failure becomes exactly one error result in its place.
func TestExecuteToolsFailures(t *testing.T) {
	huge := strings.Repeat("e", 100_000)
	tools := []worker.Tool{
		text("Glob", "a.go\nb.go"),
		worker.Func("Fail", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			return worker.ToolOutput{}, errors.New("permission denied: /etc/shadow")
		}),
		worker.Func("FailHuge", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			return worker.ToolOutput{Summary: "stack trace"}, errors.New(huge)
		}),
		worker.Func("Panic", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			panic("nil map write")
		}),
		worker.Func("PanicHuge", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			panic(huge)
		}),
		worker.Func("Empty", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			return worker.ToolOutput{Summary: "no content"}, nil
		}),
	}
	w := newWorker(t, tools)
	calls := []chain.Call{
		{ID: "1", Tool: "Glob"}, {ID: "2", Tool: "Fail"}, {ID: "3", Tool: "FailHuge"}, {ID: "4", Tool: "Panic"},
		{ID: "5", Tool: "PanicHuge"}, {ID: "6", Tool: "Empty"}, {ID: "7", Tool: "Glb"}, {ID: "8", Tool: "WebFetch"},
	}
	res := w.ExecuteTools(context.Background(), calls)

	type brief struct {
		CallID, Tool, Summary, Content string
		HasContent, IsError, Cut       bool
	}
	var got []brief
	for i, r := range res {
		_, cut := r.Truncation()
		b := brief{CallID: calls[i].ID, Tool: calls[i].Tool, Summary: r.Summary, IsError: r.IsError(), Cut: cut}
		if r.Content != nil {
			b.HasContent = true
			b.Content = *r.Content
			if len(b.Content) > 16384 {
				t.Errorf("call %s: %d bytes, over the limit", b.CallID, len(b.Content))
			}
		}
		got = append(got, b)
	}
	failHuge, _ := middleware.Truncate(huge, 16384)
	panicHuge, _ := middleware.Truncate(`tool "PanicHuge" panicked: `+huge, 16384)
	want := []brief{
		{"1", "Glob", "Glob done", "a.go\nb.go", true, false, false},
		{"2", "Fail", "Fail failed", "permission denied: /etc/shadow", true, true, false},
		{"3", "FailHuge", "stack trace", failHuge, true, true, true},
		{"4", "Panic", "Panic failed: panic", `tool "Panic" panicked: nil map write`, true, true, false},
		{"5", "PanicHuge", "PanicHuge failed: panic", panicHuge, true, true, true},
		{"6", "Empty", "no content", "", false, false, false},
		{"7", "Glb", `unknown tool "Glb"`, `unknown tool "Glb"; did you mean "Glob"?`, true, true, false},
		{"8", "WebFetch", `unknown tool "WebFetch"`, `unknown tool "WebFetch"; registered tools: Empty, Fail, FailHuge, Glob, Panic, PanicHuge`, true, true, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ExecuteTools() mismatch (-want +got):\n%s", diff)
	}
}

// A panic in a user middleware is an error result too, and still capped.
func TestMiddlewarePanic(t *testing.T) {
	boom := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			panic(strings.Repeat("p", 40_000))
		}
	}
	w := newWorker(t, []worker.Tool{text("Glob", "x")}, worker.WithMiddleware(boom))
	res := w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: "Glob"}, {ID: "2", Tool: "Glob"}})
	if len(res) != 2 {
		t.Fatalf("got %d results, want 2", len(res))
	}
	for i, r := range res {
		if v := resulttest.Of(r); !v.IsError || v.Content == nil || len(*v.Content) > 16384 || v.Ceiling == nil {
			t.Errorf("result %d: %+v; want a capped error", i, v)
		}
	}
}

// blocking returns a tool that signals started, then waits for release or,
// if honour is set, for its context.
func blocking(name string, started chan<- string, release <-chan struct{}, honour bool) worker.Tool {
	return worker.Func(name, func(ctx context.Context, _ json.RawMessage) (worker.ToolOutput, error) {
		started <- name
		if honour {
			select {
			case <-release:
			case <-ctx.Done():
				return worker.ToolOutput{}, ctx.Err()
			}
		} else {
			<-release // ignores ctx: a hung tool
		}
		return worker.ToolOutput{Content: ptr("late")}, nil
	})
}

func TestExecuteToolsContextEnds(t *testing.T) {
	for _, honour := range []bool{false, true} {
		t.Run(fmt.Sprintf("tool honours ctx=%v", honour), func(t *testing.T) {
			started := make(chan string, 10)
			release := make(chan struct{})
			defer close(release) // let hung tools finish after the test; their results are discarded
			w := newWorker(t, []worker.Tool{text("Fast", "ok"), blocking("Hang", started, release, honour)}, worker.WithConcurrency(2))

			ctx, cancel := context.WithCancelCause(context.Background())
			go func() {
				<-started
				cancel(errors.New("user pressed Esc"))
			}()
			calls := []chain.Call{{ID: "1", Tool: "Fast"}, {ID: "2", Tool: "Hang"}, {ID: "3", Tool: "Fast"}, {ID: "4", Tool: "Hang"}}
			res := w.ExecuteTools(ctx, calls)
			if len(res) != 4 {
				t.Fatalf("got %d results, want 4", len(res))
			}
			for i, r := range res {
				if calls[i].Tool == "Hang" {
					if !r.IsError() || !strings.Contains(*r.Content, "user pressed Esc") && !strings.Contains(*r.Content, "context canceled") {
						t.Errorf("hung call %d = %+v, want an error naming the cause", i, resulttest.Of(r))
					}
				}
			}
		})
	}
}

func TestExecuteToolsContextAlreadyDone(t *testing.T) {
	var ran atomic.Int32
	tool := worker.Func("Glob", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		ran.Add(1)
		return worker.ToolOutput{}, nil
	})
	w := newWorker(t, []worker.Tool{tool})
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-ctx.Done()
	res := w.ExecuteTools(ctx, []chain.Call{{ID: "1", Tool: "Glob"}, {ID: "2", Tool: "Glob"}})
	if ran.Load() != 0 {
		t.Errorf("%d tools ran after the context ended", ran.Load())
	}
	for i, r := range res {
		if !r.IsError() || !strings.Contains(*r.Content, "deadline exceeded") {
			t.Errorf("result %d = %q, want an error naming the deadline", i, *r.Content)
		}
	}
}

func TestExecuteToolsConcurrencyAndOrder(t *testing.T) {
	for _, limit := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			var running, peak atomic.Int32
			tool := worker.Func("Echo", func(_ context.Context, args json.RawMessage) (worker.ToolOutput, error) {
				n := running.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				defer running.Add(-1)
				s := string(args)
				return worker.ToolOutput{Content: &s}, nil
			})
			w := newWorker(t, []worker.Tool{tool}, worker.WithConcurrency(limit))
			ctx, cancel := context.WithCancel(context.Background()) // cancellable: the concurrent path
			defer cancel()
			var calls []chain.Call
			for i := range 100 {
				calls = append(calls, chain.Call{ID: fmt.Sprint(i), Tool: "Echo", Args: json.RawMessage(fmt.Sprint(i))})
			}
			for _, c := range []context.Context{ctx, context.Background()} {
				peak.Store(0)
				res := w.ExecuteTools(c, calls)
				for i, r := range res {
					if *r.Content != fmt.Sprint(i) {
						t.Fatalf("result %d = %q: out of order", i, *r.Content)
					}
				}
				if p := peak.Load(); int(p) > limit {
					t.Errorf("peak concurrency %d, limit %d", p, limit)
				}
			}
		})
	}
}

func TestExecuteToolsEmpty(t *testing.T) {
	w := newWorker(t, nil)
	if res := w.ExecuteTools(context.Background(), nil); len(res) != 0 {
		t.Errorf("ExecuteTools(nil) = %v, want none", res)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name  string
		tools []worker.Tool
		opts  []worker.Option
		want  string
	}{
		{"nil tool", []worker.Tool{text("Glob", ""), nil}, nil, "worker: tools[1] is nil"},
		{"empty name", []worker.Tool{text("", "")}, nil, "worker: tools[0] has an empty name"},
		{"duplicate", []worker.Tool{text("Glob", ""), text("Glob", "")}, nil, `worker: tools[1]: duplicate tool name "Glob"`},
		{"concurrency", nil, []worker.Option{worker.WithConcurrency(0)}, "worker: concurrency 0: must be at least 1"},
		{"read tool's name", []worker.Tool{text("toolcap_read", "")}, []worker.Option{worker.WithRest(rest.NewMemory(rest.Config{}))},
			`worker: tools[0]: "toolcap_read" is the name of the read tool of WithRest; name one of them otherwise ([worker.tool_output.rest] tool)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := worker.New(tt.tools, tt.opts...)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || w != nil {
				t.Errorf("New() error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewWarnsUnknownPerTool(t *testing.T) {
	var buf bytes.Buffer
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{
		"Read": {MaxBytes: 4096}, "Raed": {MaxBytes: 4096}, "WebFetch": {MaxBytes: 2048},
	}}}
	newWorker(t, []worker.Tool{text("Read", ""), text("Glob", "")}, worker.WithPolicies(policytest.Of(t, m)), worker.WithLogger(logtest.New(&buf, hclog.Debug)))
	got := logtest.Lines(t, &buf)
	msg := "per_tool limit for a tool that is not registered; it applies to nothing"
	want := []map[string]any{
		{"@level": "warn", "@module": "toolcap", "@message": msg, "tool": "Raed", "limit": float64(4096), "did_you_mean": "Read"},
		{"@level": "warn", "@module": "toolcap", "@message": msg, "tool": "WebFetch", "limit": float64(2048)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings mismatch (-want +got):\n%s", diff)
	}
}

func TestSilentWithoutLogger(t *testing.T) {
	// Nothing to assert on but the absence of output: a worker with no
	// logger must not write to stderr. hclog's default logger would; the
	// worker uses a null logger, so this only needs to run cleanly.
	w := newWorker(t, []worker.Tool{text("Glob", strings.Repeat("x", 20_000))})
	if res := w.ExecuteTools(context.Background(), []chain.Call{{Tool: "Glob"}}); !resulttest.Of(res[0]).IsError && resulttest.Of(res[0]).Truncation == nil {
		t.Error("no cut")
	}
}

func TestFromOutput(t *testing.T) {
	call := chain.Call{ID: "c1", Tool: "Read"}
	tests := []struct {
		name string
		out  worker.ToolOutput
		err  error
		want resulttest.View
	}{
		{"content", worker.ToolOutput{Summary: "s", Content: ptr("body")}, nil,
			resulttest.View{Summary: "s", Content: ptr("body")}},
		{"no content", worker.ToolOutput{Summary: "s"}, nil,
			resulttest.View{Summary: "s"}},
		{"error", worker.ToolOutput{}, errors.New("no such file"), resulttest.View{
			Summary: "Read failed", Content: ptr("no such file"), IsError: true}},
		{"error keeps the summary", worker.ToolOutput{Summary: "read 0 lines", Content: ptr("partial")}, errors.New("EOF"),
			resulttest.View{Summary: "read 0 lines", Content: ptr("EOF"), IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := worker.FromOutput(call, tt.out, tt.err)
			if diff := cmp.Diff(tt.want, resulttest.Of(got)); diff != "" {
				t.Errorf("FromOutput() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLimitAndTools(t *testing.T) {
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{DefaultMaxBytes: 8192, PerTool: map[string]manifest.ToolEntry{"Read": {MaxBytes: 32768}}}}
	w := newWorker(t, []worker.Tool{text("Read", ""), text("Glob", "")}, worker.WithPolicies(policytest.Of(t, m)))
	got := []any{w.Limit("Read"), w.Limit("Glob"), w.Tools()}
	want := []any{32768, 8192, []string{"Glob", "Read"}}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Limit/Tools mismatch (-want +got):\n%s", diff)
	}
}

func TestNewRejectsNilHandler(t *testing.T) {
	ok := func(next chain.Handler) chain.Handler { return next }
	broken := func(chain.Handler) chain.Handler { return nil }
	_, err := worker.New([]worker.Tool{text("Glob", "")}, worker.WithMiddleware(ok, nil, broken, ok))
	want := "worker: middleware 2 returned a nil handler"
	if err == nil || err.Error() != want {
		t.Errorf("New() error = %v, want %q", err, want)
	}
}

// A tool that ends its goroutine (runtime.Goexit, as t.FailNow does) still
// gets one result, and the calls after it still run.
func TestExecuteToolsGoexit(t *testing.T) {
	exit := worker.Func("Exit", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		runtime.Goexit()
		return worker.ToolOutput{}, nil
	})
	w := newWorker(t, []worker.Tool{exit, text("Glob", "ok")}, worker.WithConcurrency(1))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := []chain.Call{{ID: "1", Tool: "Exit"}, {ID: "2", Tool: "Glob"}, {ID: "3", Tool: "Exit"}, {ID: "4", Tool: "Glob"}}
	res := w.ExecuteTools(ctx, calls)
	var got []string
	for i, r := range res {
		got = append(got, fmt.Sprintf("%s %v %s", calls[i].ID, r.IsError(), *r.Content))
	}
	want := []string{
		`1 true tool "Exit" exited without returning a result`,
		"2 false ok",
		`3 true tool "Exit" exited without returning a result`,
		"4 false ok",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ExecuteTools() mismatch (-want +got):\n%s", diff)
	}
}

// A model can send any name; what the worker writes about it stays short.
func TestUnknownToolLongName(t *testing.T) {
	name := strings.Repeat("日", 10_000)
	w := newWorker(t, []worker.Tool{text("Glob", "")})
	res := w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: name}})
	if n := len(res[0].Summary); n > 100 {
		t.Errorf("summary = %d bytes, want a short line", n)
	}
	if !utf8.ValidString(res[0].Summary) {
		t.Errorf("summary is not valid UTF-8: %q", res[0].Summary)
	}
	if n := len(*res[0].Content); n > 16384 || !res[0].IsError() {
		t.Errorf("content = %d bytes, IsError = %v; want a short error", n, res[0].IsError())
	}
}
