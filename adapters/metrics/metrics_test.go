package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/toolcap/toolcap/adapters/metrics"
	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/worker"
)

const mib = 1 << 20

func tools() []worker.Tool {
	big := strings.Repeat("x", mib)
	small := "hello"
	return []worker.Tool{
		worker.Func("dump", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			return worker.ToolOutput{Content: &big}, nil
		}),
		worker.Func("small", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			return worker.ToolOutput{Content: &small}, nil
		}),
		worker.Func("broken", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			return worker.ToolOutput{}, errors.New("permission denied")
		}),
		worker.Func("empty", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			return worker.ToolOutput{Summary: "nothing"}, nil
		}),
	}
}

func newWorker(t testing.TB, mws ...chain.Middleware) *worker.Worker {
	t.Helper()
	w, err := worker.New(tools(),
		worker.WithPolicies(policytest.Of(t, &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"dump": {MaxBytes: 4096}}}})),
		worker.WithMiddleware(mws...))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestMiddleware(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorker(t, m.Middleware())
	calls := []chain.Call{{ID: "1", Tool: "dump"}, {ID: "2", Tool: "small"}, {ID: "3", Tool: "small"}, {ID: "4", Tool: "broken"}, {ID: "5", Tool: "empty"}}
	results := w.ExecuteTools(context.Background(), calls)
	errText := len(*results[3].Content)
	kept := -1
	if tr, ok := results[0].Truncation(); ok {
		kept = tr.KeptBytes
	}

	want := `
# HELP toolcap_tool_result_kept_bytes_total Content bytes that reached the history, truncation markers excluded.
# TYPE toolcap_tool_result_kept_bytes_total counter
toolcap_tool_result_kept_bytes_total{tool="broken"} ` + itoa(errText) + `
toolcap_tool_result_kept_bytes_total{tool="dump"} ` + itoa(kept) + `
toolcap_tool_result_kept_bytes_total{tool="empty"} 0
toolcap_tool_result_kept_bytes_total{tool="small"} 10
# HELP toolcap_tool_result_original_bytes_total Content bytes the tools returned, before the cap.
# TYPE toolcap_tool_result_original_bytes_total counter
toolcap_tool_result_original_bytes_total{tool="broken"} ` + itoa(errText) + `
toolcap_tool_result_original_bytes_total{tool="dump"} 1.048576e+06
toolcap_tool_result_original_bytes_total{tool="empty"} 0
toolcap_tool_result_original_bytes_total{tool="small"} 10
# HELP toolcap_tool_results_total Tool results that passed the cap, by tool and outcome (fits, cut, error).
# TYPE toolcap_tool_results_total counter
toolcap_tool_results_total{outcome="cut",tool="broken"} 0
toolcap_tool_results_total{outcome="cut",tool="dump"} 1
toolcap_tool_results_total{outcome="cut",tool="empty"} 0
toolcap_tool_results_total{outcome="cut",tool="small"} 0
toolcap_tool_results_total{outcome="error",tool="broken"} 1
toolcap_tool_results_total{outcome="error",tool="dump"} 0
toolcap_tool_results_total{outcome="error",tool="empty"} 0
toolcap_tool_results_total{outcome="error",tool="small"} 0
toolcap_tool_results_total{outcome="fits",tool="broken"} 0
toolcap_tool_results_total{outcome="fits",tool="dump"} 0
toolcap_tool_results_total{outcome="fits",tool="empty"} 1
toolcap_tool_results_total{outcome="fits",tool="small"} 2
`
	if kept < 4000 || kept > 4096 {
		t.Fatalf("dump kept %d bytes, want the 4096 limit less the marker", kept)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	// The handler serves the same figures.
	rec := httptest.NewRecorder()
	metrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	if !strings.Contains(string(body), `toolcap_tool_results_total{outcome="cut",tool="dump"} 1`) {
		t.Errorf("/metrics does not serve the cut:\n%s", body)
	}
}

func TestNewTwiceOnOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := metrics.New(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.New(reg); err == nil {
		t.Error("a second New on one registry: no error")
	}
}

func TestNewWithoutRegisterer(t *testing.T) {
	if m, err := metrics.New(nil); err == nil || m != nil {
		t.Errorf("New(nil) = %v, %v; want an error", m, err)
	}
}

func TestNilMetrics(t *testing.T) {
	var m *metrics.Metrics
	if m.Middleware() != nil {
		t.Error("a nil *Metrics returned a middleware")
	}
	m.Record("dump", chain.Result{}) // does nothing, and does not panic
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// allocsPerCall is what one uncut call through w allocates.
func allocsPerCall(w *worker.Worker) float64 {
	ctx := context.Background()
	calls := []chain.Call{{ID: "1", Tool: "small"}}
	return testing.AllocsPerRun(200, func() { w.ExecuteTools(ctx, calls) })
}

// An uncut call allocates nothing more with metrics off than without the
// package, and, once the tool's counters exist, nothing more with them on.
func TestAllocs(t *testing.T) {
	reg := prometheus.NewRegistry()
	on, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	var off *metrics.Metrics
	base := allocsPerCall(newWorker(t))
	got := map[string]float64{
		"without the package": base,
		"metrics off":         allocsPerCall(newWorker(t, off.Middleware())),
		"metrics on":          allocsPerCall(newWorker(t, on.Middleware())),
	}
	want := map[string]float64{"without the package": base, "metrics off": base, "metrics on": base}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("allocations per uncut call (-want +got):\n%s", diff)
	}
}

func BenchmarkUncutCall(b *testing.B) {
	on, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	var off *metrics.Metrics
	for _, bc := range []struct {
		name string
		mws  []chain.Middleware
	}{
		{"without-package", nil},
		{"metrics-off", []chain.Middleware{off.Middleware()}},
		{"metrics-on", []chain.Middleware{on.Middleware()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := newWorker(b, bc.mws...)
			ctx := context.Background()
			calls := []chain.Call{{ID: "1", Tool: "small"}}
			b.ReportAllocs()
			for b.Loop() {
				w.ExecuteTools(ctx, calls)
			}
		})
	}
}
