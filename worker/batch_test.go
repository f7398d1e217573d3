package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/resulttest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/worker"
)

// output returns n bytes of numbered lines, different for each seed.
func output(seed string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s line %06d: some tool output\n", seed, i)
	}
	return b.String()[:n]
}

// batchWorker returns a worker with tools "t0".."tN" answering with
// contents, the manifest's default limit def and batch budget batch (0:
// none), and the extra per_tool entries in toml.
func batchWorker(t *testing.T, contents []string, def, batch int, extra string, opts ...worker.Option) (*worker.Worker, []chain.Call) {
	t.Helper()
	text := fmt.Sprintf("[worker.tool_output]\ndefault_max_bytes = %d\n", def)
	if batch > 0 {
		text += fmt.Sprintf("batch_max_bytes = %d\n", batch)
	}
	text += extra
	m, err := manifest.Load(context.Background(), manifest.Bytes("test.toml", []byte(text)))
	if err != nil {
		t.Fatalf("Load() error: %v", err)
	}
	var tools []worker.Tool
	var calls []chain.Call
	for i, c := range contents {
		name := fmt.Sprintf("t%d", i)
		tools = append(tools, textTool(name, c))
		calls = append(calls, chain.Call{ID: fmt.Sprintf("call_%d", i), Tool: name})
	}
	return newWorker(t, tools, append([]worker.Option{worker.WithPolicies(policytest.Of(t, m))}, opts...)...), calls
}

// textTool answers with content after a random delay of up to 2ms when ctx
// can end, so that calls complete in a different order on every run.
func textTool(name, content string) worker.Tool {
	return worker.Func(name, func(ctx context.Context, _ json.RawMessage) (worker.ToolOutput, error) {
		if ctx.Done() != nil {
			// The sleep is the fault: a random completion order, which no
			// result may depend on. Nothing waits for it to pass.
			time.Sleep(time.Duration(rand.N(2000)) * time.Microsecond)
		}
		return worker.ToolOutput{Summary: name + " done", Content: ptr(content)}, nil
	})
}

// headCut is what one head cut of content to limit shows: its first
// len-dropped bytes and one marker with N exact, and its figures.
func headCut(content string, limit int, batch bool) resulttest.View {
	out, dropped := cut.Head(content, limit)
	v := resulttest.View{Summary: "", Content: &out}
	if dropped > 0 {
		v.Truncation = &chain.Truncation{Limit: limit, OriginalBytes: len(content), KeptBytes: len(content) - dropped, DroppedBytes: dropped, Batch: batch}
	}
	return v
}

func TestExecuteToolsBatchBudget(t *testing.T) {
	four := []string{output("a", 51394), output("b", 35556), output("c", 23236), output("d", 40115)}
	small := []string{output("a", 3547), output("b", 3584), output("c", 3504), output("d", 200000)}
	tests := []struct {
		name     string
		contents []string
		batch    int
		want     func(contents []string) []resulttest.View
		wantLen  []int
	}{
		{
			name: "four results over the fair share get 16384 bytes each", contents: four, batch: 65536,
			want: func(c []string) []resulttest.View {
				return []resulttest.View{headCut(c[0], 16384, true), headCut(c[1], 16384, true), headCut(c[2], 16384, true), headCut(c[3], 16384, true)}
			},
			wantLen: []int{16384, 16384, 16384, 16384},
		},
		{
			name: "three small results unchanged, the large one at its own limit", contents: small, batch: 65536,
			want: func(c []string) []resulttest.View {
				return []resulttest.View{headCut(c[0], 51200, false), headCut(c[1], 51200, false), headCut(c[2], 51200, false), headCut(c[3], 51200, false)}
			},
			wantLen: []int{3547, 3584, 3504, 51200},
		},
		{
			name: "a budget that does not divide evenly gives the spare bytes to the first in call order", contents: four, batch: 65538,
			want: func(c []string) []resulttest.View {
				return []resulttest.View{headCut(c[0], 16385, true), headCut(c[1], 16385, true), headCut(c[2], 16384, true), headCut(c[3], 16384, true)}
			},
			wantLen: []int{16385, 16385, 16384, 16384},
		},
		{
			name: "a budget above the sum of the limits changes nothing", contents: four, batch: 4 * 51200,
			want: func(c []string) []resulttest.View {
				return []resulttest.View{headCut(c[0], 51200, false), headCut(c[1], 51200, false), headCut(c[2], 51200, false), headCut(c[3], 51200, false)}
			},
			wantLen: []int{51200, 35556, 23236, 40115},
		},
	}
	for _, tt := range tests {
		for _, conc := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/concurrency %d", tt.name, conc), func(t *testing.T) {
				w, calls := batchWorker(t, tt.contents, 51200, tt.batch, "", worker.WithConcurrency(conc))
				got := resulttest.All(w.ExecuteTools(context.Background(), calls))
				want := tt.want(tt.contents)
				for i := range want {
					want[i].Summary = calls[i].Tool + " done"
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("ExecuteTools() mismatch (-want +got):\n%s", diff)
				}
				var lens []int
				total := 0
				for _, v := range got {
					lens = append(lens, len(*v.Content))
					total += len(*v.Content)
					if n := strings.Count(*v.Content, "[truncated: "); n > 1 {
						t.Errorf("%d markers in one result, want at most 1", n)
					}
				}
				if diff := cmp.Diff(tt.wantLen, lens); diff != "" {
					t.Errorf("content lengths mismatch (-want +got):\n%s", diff)
				}
				if total > tt.batch {
					t.Errorf("results total %d bytes, over the batch budget %d", total, tt.batch)
				}
			})
		}
	}
}

// The batch cut uses each tool's strategy, cut from its tool's content:
// head_tail keeps both ends with one marker whose N is all the model does
// not see of the original.
func TestExecuteToolsBatchBudgetStrategy(t *testing.T) {
	contents := []string{output("a", 60000), output("b", 60000)}
	w, calls := batchWorker(t, contents, 51200, 32768, "[worker.tool_output.per_tool]\nt1 = { keep = \"head_tail\" }\n")
	got := w.ExecuteTools(context.Background(), calls)

	wantTail, st := cut.Cut(contents[1], 16384, cut.Spec{Keep: cut.KeepHeadTail})
	want := []resulttest.View{headCut(contents[0], 16384, true), {
		Content: &wantTail,
		Truncation: &chain.Truncation{Limit: 16384, OriginalBytes: 60000, KeptBytes: st.Kept, DroppedBytes: st.Dropped,
			Strategy: "head_tail", Batch: true},
	}}
	want[0].Summary, want[1].Summary = "t0 done", "t1 done"
	if diff := cmp.Diff(want, resulttest.All(got)); diff != "" {
		t.Errorf("ExecuteTools() mismatch (-want +got):\n%s", diff)
	}
	if !strings.Contains(*got[1].Content, cut.Marker(60000-st.Kept)) {
		t.Errorf("head_tail result lacks the marker of %d bytes", 60000-st.Kept)
	}
}

// The outcome depends only on the results: tools that finish in a random
// order on every run give the same results every time.
func TestExecuteToolsBatchBudgetDeterministic(t *testing.T) {
	contents := []string{output("a", 51394), output("b", 35556), output("c", 900), output("d", 40115), output("e", 7000), output("f", 120000)}
	w, calls := batchWorker(t, contents, 51200, 65536, "", worker.WithConcurrency(6))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := resulttest.All(w.ExecuteTools(ctx, calls))
	for run := range 40 {
		got := resulttest.All(w.ExecuteTools(ctx, calls))
		if diff := cmp.Diff(first, got); diff != "" {
			t.Fatalf("run %d differs from the first (-first +got):\n%s", run, diff)
		}
	}
	total := 0
	for _, v := range first {
		total += len(*v.Content)
	}
	if total > 65536 {
		t.Errorf("results total %d bytes, over the batch budget", total)
	}
}

// Without batch_max_bytes, ExecuteTools gives what it gave before the key
// existed: each result cut to its own limit by the cap, and nothing else.
func TestExecuteToolsNoBatchBudgetIsToday(t *testing.T) {
	contents := []string{output("a", 51394), output("b", 35556), output("c", 23236), output("d", 40115), output("e", 200000)}
	for _, conc := range []int{1, 4} {
		t.Run(fmt.Sprintf("concurrency %d", conc), func(t *testing.T) {
			w, calls := batchWorker(t, contents, 32768, 0, "", worker.WithConcurrency(conc))
			got := resulttest.All(w.ExecuteTools(context.Background(), calls))
			var want []resulttest.View
			for i, c := range contents {
				v := headCut(c, 32768, false)
				v.Summary = calls[i].Tool + " done"
				want = append(want, v)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ExecuteTools() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A user middleware that rewrites a result keeps its rewrite: the batch
// stage cuts the content as it reached it, as the ceiling does, and records
// the figures as the ceiling's, with Batch set.
func TestExecuteToolsBatchBudgetAfterMiddleware(t *testing.T) {
	contents := []string{output("a", 20000), output("b", 20000)}
	redact := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			s := strings.ReplaceAll(*res.Content, "some tool output", "[redacted]")
			res.Content = &s
			return res
		}
	}
	w, calls := batchWorker(t, contents, 51200, 16384, "", worker.WithMiddleware(redact))
	got := w.ExecuteTools(context.Background(), calls)
	for i, r := range got {
		if strings.Contains(*r.Content, "some tool output") {
			t.Errorf("result %d: the batch cut undid the middleware's rewrite", i)
		}
		redacted := strings.ReplaceAll(contents[i], "some tool output", "[redacted]")
		want := headCut(redacted, 8192, true)
		want.Summary = calls[i].Tool + " done"
		want.Ceiling, want.Truncation = want.Truncation, nil
		if diff := cmp.Diff(want, resulttest.Of(r)); diff != "" {
			t.Errorf("result %d mismatch (-want +got):\n%s", i, diff)
		}
	}
}

// Results without content take no share, and error results are held to the
// budget like any other.
func TestExecuteToolsBatchBudgetErrorsAndEmpty(t *testing.T) {
	long := output("e", 30000)
	tools := []worker.Tool{
		worker.Func("none", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			return worker.ToolOutput{Summary: "none done"}, nil
		}),
		worker.Func("fail", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			return chain.ErrorResult("fail failed", long), nil
		}),
		textTool("ok", output("o", 30000)),
	}
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{BatchMaxBytes: 20000}}
	w := newWorker(t, tools, worker.WithPolicies(policytest.Of(t, m)))
	got := w.ExecuteTools(context.Background(), []chain.Call{{Tool: "none"}, {Tool: "fail"}, {Tool: "ok"}})
	errCut := headCut(long, 10000, true)
	errCut.Summary, errCut.IsError = "fail failed", true
	okCut := headCut(output("o", 30000), 10000, true)
	okCut.Summary = "ok done"
	want := []resulttest.View{{Summary: "none done"}, errCut, okCut}
	if diff := cmp.Diff(want, resulttest.All(got)); diff != "" {
		t.Errorf("ExecuteTools() mismatch (-want +got):\n%s", diff)
	}
}

// Over random batches (sizes, per-tool limits, budgets, concurrency), the
// results hold the budget and each tool's limit, a result whose tool's
// content is under its fair share is returned as the cap left it, and every
// cut result is its tool's content's head with one marker whose N is
// exactly the bytes the model does not see.
func TestExecuteToolsBatchBudgetProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	for run := range 200 {
		n := 1 + rng.IntN(9)
		var contents []string
		per := "[worker.tool_output.per_tool]\n"
		limits := make([]int, n)
		for i := range n {
			contents = append(contents, output(fmt.Sprintf("r%d", i), rng.IntN(40000)))
			limits[i] = 128 + rng.IntN(30000)
			per += fmt.Sprintf("t%d = %d\n", i, limits[i])
		}
		budget := 128 + rng.IntN(60000)
		w, calls := batchWorker(t, contents, 16384, budget, per, worker.WithConcurrency(1+rng.IntN(4)))
		got := w.ExecuteTools(context.Background(), calls)

		total := 0
		for i, r := range got {
			c := *r.Content
			total += len(c)
			if len(c) > limits[i] {
				t.Fatalf("run %d: result %d is %d bytes, over its limit %d", run, i, len(c), limits[i])
			}
			if min(len(contents[i]), limits[i]) <= budget/n {
				// Under the first fair share: what the cap alone gives.
				capOnly := headCut(contents[i], limits[i], false)
				if diff := cmp.Diff(*capOnly.Content, c); diff != "" {
					t.Fatalf("run %d: result %d under the fair share was cut by the batch (-want +got):\n%s", run, i, diff)
				}
			}
			tr, cutDone := r.Truncation()
			if !cutDone {
				if c != contents[i] {
					t.Fatalf("run %d: result %d changed without figures", run, i)
				}
				continue
			}
			want := contents[i][:tr.KeptBytes] + cut.Marker(len(contents[i])-tr.KeptBytes)
			if tr.KeptBytes+cut.MarkerLen(len(contents[i])-tr.KeptBytes) > tr.Limit {
				want = contents[i][:tr.KeptBytes] // no room for a marker: a bare cut
			}
			if diff := cmp.Diff(want, c); diff != "" {
				t.Fatalf("run %d: result %d is not its content's head and one exact marker (-want +got):\n%s", run, i, diff)
			}
			if tr.DroppedBytes != len(contents[i])-tr.KeptBytes || tr.OriginalBytes != len(contents[i]) {
				t.Fatalf("run %d: result %d figures %+v do not count its tool's content of %d bytes", run, i, tr, len(contents[i]))
			}
		}
		if total > budget {
			t.Fatalf("run %d: results total %d bytes, over the budget %d", run, total, budget)
		}
		// The budget is used, not wasted: the results fill it, or every
		// demand is met (a cut may fall up to one byte short of its share).
		demand := 0
		for i, c := range contents {
			demand += min(len(c), limits[i])
		}
		if lo := min(budget, demand) - n; total < lo {
			t.Fatalf("run %d: results total %d bytes, want at least %d (budget %d, demands %d)", run, total, lo, budget, demand)
		}
	}
}

// A user middleware that gives up on next and answers itself leaves the
// recorders to write after the stage has read the custody; those writes are
// dropped (this test fails under -race if they are not guarded).
func TestExecuteToolsBatchBudgetLateRecord(t *testing.T) {
	release := make(chan struct{})
	var late sync.WaitGroup
	impatient := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			late.Add(1)
			go func() {
				defer late.Done()
				<-release
				next(ctx, call)
			}()
			return worker.ToolOutput{Summary: "gave up", Content: ptr(output("x", 30000))}
		}
	}
	w, calls := batchWorker(t, []string{output("a", 30000), output("b", 30000)}, 51200, 20000, "",
		worker.WithMiddleware(impatient))
	got := resulttest.All(w.ExecuteTools(context.Background(), calls))
	close(release)
	late.Wait()
	want := headCut(output("x", 30000), 10000, true)
	want.Summary = "gave up"
	want.Ceiling, want.Truncation = want.Truncation, nil
	if diff := cmp.Diff([]resulttest.View{want, want}, got); diff != "" {
		t.Errorf("ExecuteTools() mismatch (-want +got):\n%s", diff)
	}
}
