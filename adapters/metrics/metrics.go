// Package metrics counts what toolcap's cap does, per tool, for Prometheus:
// how many results fit, were cut or were errors, and how many bytes the
// tools returned and how many reached the history. Those figures say which
// tools need a fix of their own (a pager, a narrower query) without reading
// logs.
//
// [New] registers the metrics with a [prometheus.Registerer];
// [Metrics.Middleware] is a [chain.Middleware] that records every result it
// sees; [Handler] serves a registry over HTTP:
//
//	reg := prometheus.NewRegistry()
//	m, err := metrics.New(reg)
//	if err != nil {
//		return err
//	}
//	w, err := worker.New(tools, worker.WithManifest(man), worker.WithMiddleware(m.Middleware()))
//	// ...
//	http.Handle("/metrics", metrics.Handler(reg))
//
// The middleware sits among the user's middleware, after the cap, so it sees
// capped content and the cap's figures ([chain.Result.Truncation]).
//
// # The metrics
//
//	toolcap_tool_results_total{tool, outcome}        results, outcome "fits", "cut" or "error"
//	toolcap_tool_result_original_bytes_total{tool}   content bytes the tools returned
//	toolcap_tool_result_kept_bytes_total{tool}       content bytes kept, markers excluded
//
// An error result counts as "error" whether or not it was cut; its bytes
// count too. A result without content counts as a result with no bytes.
// The dropped bytes are original minus kept. Labels are registered tool
// names; a program with unbounded tool names should not export them.
//
// # Cost
//
// Off is free: a nil *Metrics returns a nil middleware, which the worker and
// [chain.Chain] skip, so an uncut call costs exactly what it costs without
// this package. On, a call costs one map lookup (the tool's counters are
// created once per tool) and three atomic adds, and allocates nothing.
//
// # Why Prometheus
//
// client_golang (v1.25.0) gives the HTTP handler a `toolcap mcp --metrics
// ADDR` needs in one module. OpenTelemetry metrics (v1.47.0) would need its
// SDK and, to be scraped, its Prometheus exporter, which itself depends on
// client_golang: more modules for the same endpoint. Programs on
// OpenTelemetry can still scrape this handler, or bridge the registry.
//
// [prometheus.Registerer]: https://pkg.go.dev/github.com/prometheus/client_golang/prometheus#Registerer
package metrics

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolcap/toolcap/chain"
)

// Outcomes, the values of the outcome label.
const (
	Fits  = "fits"
	Cut   = "cut"
	Error = "error"
)

// Metrics holds toolcap's counters. Its methods are safe for concurrent use.
// A nil *Metrics records nothing.
type Metrics struct {
	results  *prometheus.CounterVec
	original *prometheus.CounterVec
	kept     *prometheus.CounterVec
	perTool  sync.Map // tool name → *toolCounters
}

type toolCounters struct {
	fits, cut, err prometheus.Counter
	original, kept prometheus.Counter
}

// New creates the counters and registers them with reg, or returns the
// registration's error (a second New on one registry fails: the names are
// taken).
func New(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("metrics: New needs a registerer (prometheus.NewRegistry(), say)")
	}
	m := &Metrics{
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolcap_tool_results_total",
			Help: "Tool results that passed the cap, by tool and outcome (fits, cut, error).",
		}, []string{"tool", "outcome"}),
		original: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolcap_tool_result_original_bytes_total",
			Help: "Content bytes the tools returned, before the cap.",
		}, []string{"tool"}),
		kept: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolcap_tool_result_kept_bytes_total",
			Help: "Content bytes that reached the history, truncation markers excluded.",
		}, []string{"tool"}),
	}
	for _, c := range []prometheus.Collector{m.results, m.original, m.kept} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Handler serves the metrics of g (a [*prometheus.Registry], say) in the
// Prometheus text format.
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{})
}

// Middleware returns a [chain.Middleware] that records every result next
// returns, or nil when m is nil, which the worker and [chain.Chain] skip.
func (m *Metrics) Middleware() chain.Middleware {
	if m == nil {
		return nil
	}
	return func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			m.Record(call.Tool, res)
			return res
		}
	}
}

// Record counts one result of tool, as the middleware does. It is for
// callers that cap outside a chain (an adapter, a proxy).
func (m *Metrics) Record(tool string, res chain.Result) {
	if m == nil {
		return
	}
	c := m.counters(tool)
	size := 0
	if res.Content != nil {
		size = len(*res.Content)
	}
	original, kept := size, size
	t, cut := res.Truncation()
	if cut {
		original, kept = t.OriginalBytes, t.KeptBytes
	}
	if ct, again := res.Ceiling(); again {
		// A middleware grew the content and the ceiling cut it again: the
		// history got ct.KeptBytes of it.
		kept, cut = ct.KeptBytes, true
	}
	switch {
	case res.IsError():
		c.err.Inc()
	case cut:
		c.cut.Inc()
	default:
		c.fits.Inc()
	}
	c.original.Add(float64(original))
	c.kept.Add(float64(kept))
}

func (m *Metrics) counters(tool string) *toolCounters {
	if c, ok := m.perTool.Load(tool); ok {
		return c.(*toolCounters)
	}
	c := &toolCounters{
		fits:     m.results.WithLabelValues(tool, Fits),
		cut:      m.results.WithLabelValues(tool, Cut),
		err:      m.results.WithLabelValues(tool, Error),
		original: m.original.WithLabelValues(tool),
		kept:     m.kept.WithLabelValues(tool),
	}
	actual, _ := m.perTool.LoadOrStore(tool, c)
	return actual.(*toolCounters)
}
