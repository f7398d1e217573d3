package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/middleware"
	"github.com/toolcap/toolcap/worker"
)

// toolNames are the tools the worker benchmarks register; calls cycle
// through them. Two are MCP-style names, as real registries hold.
var toolNames = []string{"Read", "Grep", "mcp.fs.read", "github/search"}

// bigContent is a tool result about eight times the limit.
var bigContent = text(alphabets[0].unit, 125<<10)

// contents are the two kinds of result BenchmarkExecuteTools feeds through:
// one the cap passes untouched, one it cuts.
var contents = []struct {
	name    string
	content *string
}{
	{"under", &smallContent},
	{"over", &bigContent},
}

// constTool returns the same output on every call, allocating nothing, so a
// benchmark measures the path around the tool.
func constTool(name string, content *string) worker.Tool {
	return worker.Func(name, func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		return worker.ToolOutput{Summary: "ok", Content: content}, nil
	})
}

func benchTools(content *string) []worker.Tool {
	tools := make([]worker.Tool, len(toolNames))
	for i, name := range toolNames {
		tools[i] = constTool(name, content)
	}
	return tools
}

func benchCalls(n int) []chain.Call {
	calls := make([]chain.Call, n)
	for i := range calls {
		calls[i] = chain.Call{
			ID:   fmt.Sprintf("call_%d", i),
			Tool: toolNames[i%len(toolNames)],
			Args: json.RawMessage(`{"path":"go.mod"}`),
		}
	}
	return calls
}

// newBenchWorker builds the subject: a worker with the default limits and
// four pass-through user middleware between the cap and the ceiling.
func newBenchWorker(tb testing.TB, content *string) *worker.Worker {
	w, err := worker.New(benchTools(content), worker.WithMiddleware(noop, noop, noop, noop))
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// newBatchWorker is newBenchWorker with a batch budget of batch bytes.
func newBatchWorker(tb testing.TB, content *string, batch int) *worker.Worker {
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{BatchMaxBytes: batch}}
	w, err := worker.New(benchTools(content), worker.WithPolicies(policytest.Of(tb, m)), worker.WithMiddleware(noop, noop, noop, noop))
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// newLimitsWorker is newBenchWorker with the given limits.
func newLimitsWorker(tb testing.TB, content *string, l manifest.ToolOutputLimits) *worker.Worker {
	m := &manifest.WorkerManifest{ToolOutput: &l}
	w, err := worker.New(benchTools(content), worker.WithPolicies(policytest.Of(tb, m)), worker.WithMiddleware(noop, noop, noop, noop))
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// directPath is the baseline: what a program without toolcap does to get
// the same capped results. It looks each tool up by name, runs it, and cuts
// its content with middleware.Truncate, one call after another, into the
// same []worker.ToolResult the worker returns; it records no truncation
// figures, logs nothing and recovers from nothing.
type directPath struct {
	tools map[string]worker.Tool
}

func newDirectPath(content *string) directPath {
	d := directPath{tools: map[string]worker.Tool{}}
	for _, t := range benchTools(content) {
		d.tools[t.Name()] = t
	}
	return d
}

func (d directPath) ExecuteTools(ctx context.Context, calls []chain.Call) []worker.ToolResult {
	results := make([]worker.ToolResult, len(calls))
	for i, call := range calls {
		results[i] = d.one(ctx, call)
	}
	return results
}

// one is the direct path of one call.
func (d directPath) one(ctx context.Context, call chain.Call) worker.ToolResult {
	out, err := d.tools[call.Tool].Run(ctx, call.Args)
	r := worker.FromOutput(call, out, err)
	if r.Content != nil {
		if capped, dropped := middleware.Truncate(*r.Content, limit); dropped > 0 {
			c := capped // only a cut result needs a string of its own
			r.Content = &c
		}
	}
	return r
}

type executor interface {
	ExecuteTools(ctx context.Context, calls []chain.Call) []worker.ToolResult
}

var sinkResults []worker.ToolResult

func BenchmarkExecuteTools(b *testing.B) {
	// context.Background cannot be cancelled: a single call then runs on the
	// caller's goroutine, as it does in an agent loop without a deadline.
	ctx := context.Background()
	for _, n := range []int{1, 8, 64} {
		calls := benchCalls(n)
		for _, c := range contents {
			impls := []struct {
				name string
				exec executor
			}{
				{"direct", newDirectPath(c.content)},
				{"worker", newBenchWorker(b, c.content)},
			}
			for _, impl := range impls {
				b.Run(fmt.Sprintf("%dcalls/%s/impl=%s", n, c.name, impl.name), func(b *testing.B) {
					benchBatch(b, impl.exec, ctx, calls)
				})
			}
		}
	}
}

// BenchmarkExecuteToolsBatch is the batch stage's cost: the worker without
// a budget (impl=worker, the subject of BenchmarkExecuteTools), with one so
// large that it cuts nothing (impl=batch-roomy: the recorders, the custody
// and the water-filling), and with batch_max_bytes = 65536 (impl=batch-65536:
// for "over" results, each one cut again to its share from its tool's
// content).
func BenchmarkExecuteToolsBatch(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1, 8, 64} {
		calls := benchCalls(n)
		for _, c := range contents {
			impls := []struct {
				name string
				exec executor
			}{
				{"worker", newBenchWorker(b, c.content)},
				{"batch-roomy", newBatchWorker(b, c.content, manifest.MaxMaxBytes)},
				{"batch-65536", newBatchWorker(b, c.content, 65536)},
			}
			for _, impl := range impls {
				b.Run(fmt.Sprintf("%dcalls/%s/impl=%s", n, c.name, impl.name), func(b *testing.B) {
					benchBatch(b, impl.exec, ctx, calls)
				})
			}
		}
	}
}

// BenchmarkExecuteToolsTokens is what a token limit costs the worker, which
// counts with the core's calibrated estimate: the worker with bytes only
// (impl=worker), with default_max_tokens = 4096 (impl=tokens-4096: for
// "under" results nothing is counted, the content being shorter than the
// limit; for "over" results the token limit cuts), and with
// batch_max_tokens = 16384 as well (impl=batch-tokens: each result counted
// once more for its share).
func BenchmarkExecuteToolsTokens(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1, 8} {
		calls := benchCalls(n)
		for _, c := range contents {
			impls := []struct {
				name string
				exec executor
			}{
				{"worker", newBenchWorker(b, c.content)},
				{"tokens-4096", newLimitsWorker(b, c.content, manifest.ToolOutputLimits{DefaultMaxTokens: 4096})},
				{"batch-tokens", newLimitsWorker(b, c.content, manifest.ToolOutputLimits{DefaultMaxTokens: 4096, BatchMaxTokens: 16384})},
			}
			for _, impl := range impls {
				b.Run(fmt.Sprintf("%dcalls/%s/impl=%s", n, c.name, impl.name), func(b *testing.B) {
					benchBatch(b, impl.exec, ctx, calls)
				})
			}
		}
	}
}

// Without a batch budget the batch stage costs nothing: ExecuteTools of one
// call allocates exactly what it did before batch_max_bytes existed
// (measured at cb9218f, the commit before it): the results slice and the
// worker's own copy of the content's pointer for a result the cap passes
// untouched; two more, the cut text with its figures and the cut's buffer,
// for one it cuts.
func TestExecuteToolsNoBudgetAllocs(t *testing.T) {
	ctx := context.Background()
	calls := benchCalls(1)
	for _, tt := range []struct {
		name    string
		content *string
		want    float64
	}{
		{"under", &smallContent, 2},
		{"over", &bigContent, 4},
	} {
		w := newBenchWorker(t, tt.content)
		got := testing.AllocsPerRun(100, func() { sinkResults = w.ExecuteTools(ctx, calls) })
		if got != tt.want {
			t.Errorf("%s: ExecuteTools allocates %v times per run, want %v", tt.name, got, tt.want)
		}
	}
}

// benchBatch times exec on calls, and reports per call as well as per op.
func benchBatch(b *testing.B, exec executor, ctx context.Context, calls []chain.Call) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var res []worker.ToolResult
	for b.Loop() {
		res = exec.ExecuteTools(ctx, calls)
	}
	runtime.ReadMemStats(&after)
	sinkResults = res
	perCall := float64(b.N) * float64(len(calls))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/perCall, "ns/call")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/perCall, "allocs/call")
}

// TestDirectPathAgrees checks that the baseline produces what the worker
// does: the same results, in the same order, with the same content.
func TestDirectPathAgrees(t *testing.T) {
	ctx := context.Background()
	for _, c := range contents {
		for _, n := range []int{1, 8, 64} {
			calls := benchCalls(n)
			want := newBenchWorker(t, c.content).ExecuteTools(ctx, calls)
			got := newDirectPath(c.content).ExecuteTools(ctx, calls)
			if len(got) != len(want) {
				t.Fatalf("%s/%d: %d results, worker gave %d", c.name, n, len(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.Summary != w.Summary || g.IsError() != w.IsError() || *g.Content != *w.Content {
					t.Errorf("%s/%d: result %d differs from the worker's", c.name, n, i)
				}
				if len(*g.Content) > limit {
					t.Errorf("%s/%d: result %d has %d bytes, over the limit", c.name, n, i, len(*g.Content))
				}
			}
		}
	}
}

// BenchmarkExecuteToolsRest is the cost of keeping the rest: the worker
// without a store (impl=worker) and with one in memory (impl=rest-memory)
// and on disk (impl=rest-dir). A result under its limit must cost the
// same with or without; one over it pays for writing its bytes.
func BenchmarkExecuteToolsRest(b *testing.B) {
	ctx := rest.WithScope(context.Background(), "bench")
	calls := benchCalls(1)
	for _, c := range contents {
		dir, err := rest.OpenDir(filepath.Join(b.TempDir(), "rest"), rest.Config{})
		if err != nil {
			b.Fatal(err)
		}
		impls := []struct {
			name string
			exec executor
		}{
			{"worker", newBenchWorker(b, c.content)},
			{"rest-memory", newRestWorker(b, c.content, rest.NewMemory(rest.Config{}))},
			{"rest-dir", newRestWorker(b, c.content, dir)},
		}
		for _, impl := range impls {
			b.Run(fmt.Sprintf("1calls/%s/impl=%s", c.name, impl.name), func(b *testing.B) {
				benchBatch(b, impl.exec, ctx, calls)
			})
		}
	}
}

// newRestWorker is newBenchWorker keeping the rest in store.
func newRestWorker(tb testing.TB, content *string, store rest.Store) *worker.Worker {
	w, err := worker.New(benchTools(content), worker.WithMiddleware(noop, noop, noop, noop), worker.WithRest(store))
	if err != nil {
		tb.Fatal(err)
	}
	return w
}
