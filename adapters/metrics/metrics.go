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
//	w, err := worker.New(tools, worker.WithPolicies(policies), worker.WithMiddleware(m.Middleware()))
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
// count too. A result without content counts as a result with no bytes. A
// result the ceiling cut again (a middleware grew it past the limit) is
// "cut", and counts what the ceiling kept. The dropped bytes are original
// minus kept. Labels are registered tool names, with bytes that are not
// UTF-8 replaced by U+FFFD; a program with unbounded tool names should not
// export them.
//
// `toolcap mcp --metrics ADDR` serves the same metrics without
// client_golang: the names, help texts and the rule above come from one
// table and one function in the core module, so both front ends count a
// result alike and a scraper cannot tell them apart.
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
	"fmt"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/resultstats"
)

// Outcomes, the values of the outcome label.
const (
	Fits  = string(resultstats.Fits)
	Cut   = string(resultstats.Cut)
	Error = string(resultstats.Error)
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
	// The names, help texts and labels are those `toolcap mcp --metrics`
	// writes, from one table.
	vec := func(m resultstats.Metric) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: m.Name, Help: m.Help}, m.Labels())
	}
	m := &Metrics{
		results:  vec(resultstats.Results),
		original: vec(resultstats.OriginalBytes),
		kept:     vec(resultstats.KeptBytes),
	}
	for _, c := range []prometheus.Collector{m.results, m.original, m.kept} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: registering the counters: %w", err)
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
	t := resultstats.Classify(res)
	switch t.Outcome {
	case resultstats.Error:
		c.err.Inc()
	case resultstats.Cut:
		c.cut.Inc()
	default:
		c.fits.Inc()
	}
	c.original.Add(float64(t.OriginalBytes))
	c.kept.Add(float64(t.KeptBytes))
}

func (m *Metrics) counters(tool string) *toolCounters {
	if c, ok := m.perTool.Load(tool); ok {
		return c.(*toolCounters)
	}
	// WithLabelValues panics on a value that is not UTF-8; ToolLabel
	// makes any name one.
	label := resultstats.ToolLabel(tool)
	c := &toolCounters{
		fits:     m.results.WithLabelValues(label, Fits),
		cut:      m.results.WithLabelValues(label, Cut),
		err:      m.results.WithLabelValues(label, Error),
		original: m.original.WithLabelValues(label),
		kept:     m.kept.WithLabelValues(label),
	}
	actual, _ := m.perTool.LoadOrStore(tool, c)
	return actual.(*toolCounters)
}
