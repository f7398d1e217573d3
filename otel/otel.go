package otel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of toolcap's tracer and meter.
const scope = "github.com/toolcap/toolcap/otel"

// Telemetry reports what toolcap does to a tracer and a meter: spans of
// tool calls and relayed requests, and the counters and histograms of
// their results. A nil *Telemetry, or one with neither, reports nothing
// and costs nothing: its [Telemetry.Middleware] and [Telemetry.Relay] are
// nil.
type Telemetry struct {
	tracer  trace.Tracer // nil: no traces
	metrics *instruments // nil: no metrics
	// stop shuts down the providers FromEnv made; nil for New's.
	stop func(context.Context) error
	// names holds the span names of the relay's listed tools, by tool.
	names sync.Map
}

// New returns the Telemetry that reports spans to tp and metrics to mp,
// providers the program owns (and shuts down). Either may be nil, which
// turns that signal off.
func New(tp trace.TracerProvider, mp metric.MeterProvider) (*Telemetry, error) {
	t := &Telemetry{}
	if tp != nil {
		t.tracer = tp.Tracer(scope)
	}
	if mp != nil {
		m, err := newInstruments(mp.Meter(scope))
		if err != nil {
			return nil, fmt.Errorf("otel: %w", err)
		}
		t.metrics = m
	}
	return t, nil
}

// FromEnv returns the Telemetry the standard OpenTelemetry environment
// configures, env being "KEY=value" entries (os.Environ()): spans and
// metrics exported by OTLP over HTTP (http/protobuf) to
// OTEL_EXPORTER_OTLP_ENDPOINT (or the signal's own
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT),
// spans in batches, sampled by OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG (parent-based, all, by default), metrics every
// OTEL_METRIC_EXPORT_INTERVAL, from a resource named OTEL_SERVICE_NAME
// ("toolcap" by default) with OTEL_RESOURCE_ATTRIBUTES. The exporters
// follow OTEL_EXPORTER_OTLP_HEADERS, _COMPRESSION (gzip), _TIMEOUT,
// _CERTIFICATE, _CLIENT_CERTIFICATE and _CLIENT_KEY (each also per
// signal, as OTEL_EXPORTER_OTLP_TRACES_HEADERS), and OTEL_TRACES_EXPORTER,
// OTEL_METRICS_EXPORTER (otlp or none) and OTEL_SDK_DISABLED are
// followed too; the batch processor reads OTEL_BSP_* from the process's
// environment.
//
// When none of these turns a signal on, it is off: FromEnv makes no
// exporter for it, and with both off the Telemetry reports nothing and
// costs nothing. A value that cannot be read is an error naming the
// variable; a setting toolcap does not follow (OTLP over gRPC or JSON, an
// exporter other than otlp) turns its signal off with a warning to logger.
// Export failures are logged to logger as warnings, at most one a minute,
// never to the global OpenTelemetry error handler. Call
// [Telemetry.Shutdown] to send what is buffered and stop the exporters.
func FromEnv(ctx context.Context, env []string, logger hclog.Logger) (*Telemetry, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	c, err := readConfig(env)
	if err != nil {
		return nil, fmt.Errorf("otel: %w", err)
	}
	for _, w := range c.warnings {
		logger.Warn("otel: " + w)
	}
	t := &Telemetry{}
	if c.traces.on && c.sampler.Description() == sdktrace.NeverSample().Description() {
		// always_off samples no span, whatever its parent: starting the
		// spans it drops would cost each call a microsecond for nothing.
		c.traces.on = false
		logger.Info("OTEL_TRACES_SAMPLER=always_off samples no span: traces are off")
	}
	if !c.traces.on && !c.metrics.on {
		return t, nil
	}
	attrs := append([]attribute.KeyValue{attribute.String("service.name", c.service)}, c.resource...)
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...))
	if err != nil {
		return nil, fmt.Errorf("otel: the resource: %w", err)
	}
	var stops []func(context.Context) error
	if c.traces.on {
		client, err := newClient(c.traces)
		if err != nil {
			return nil, fmt.Errorf("otel: the span exporter: %w", err)
		}
		exp := &spanExporter{c: client, log: newThrottle(logger, "otel: exporting spans failed; they are dropped", "url", c.traces.endpoint)}
		tp := sdktrace.NewTracerProvider(
			sdktrace.WithBatcher(exp),
			sdktrace.WithResource(res),
			sdktrace.WithSampler(c.sampler),
		)
		t.tracer = tp.Tracer(scope)
		stops = append(stops, tp.Shutdown)
		logger.Info("exporting spans", "url", c.traces.endpoint)
	}
	if c.metrics.on {
		client, err := newClient(c.metrics)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("otel: the metric exporter: %w", err), shutdownAll(ctx, stops))
		}
		exp := &metricExporter{c: client, log: newThrottle(logger, "otel: exporting metrics failed; they are dropped", "url", c.metrics.endpoint)}
		var ropts []sdkmetric.PeriodicReaderOption
		if c.interval > 0 {
			ropts = append(ropts, sdkmetric.WithInterval(c.interval))
		}
		reader := sdkmetric.NewPeriodicReader(exp, ropts...)
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res))
		m, err := newInstruments(mp.Meter(scope))
		if err != nil {
			return nil, errors.Join(fmt.Errorf("otel: %w", err), shutdownAll(ctx, stops), mp.Shutdown(ctx))
		}
		t.metrics = m
		stops = append(stops, mp.Shutdown)
		logger.Info("exporting metrics", "url", c.metrics.endpoint)
	}
	t.stop = func(ctx context.Context) error { return shutdownAll(ctx, stops) }
	return t, nil
}

// shutdownAll calls each of stops, and returns their errors.
func shutdownAll(ctx context.Context, stops []func(context.Context) error) error {
	var errs []error
	for _, stop := range stops {
		errs = append(errs, stop(ctx))
	}
	return errors.Join(errs...)
}

// Enabled reports whether t reports anything.
func (t *Telemetry) Enabled() bool { return t != nil && (t.tracer != nil || t.metrics != nil) }

// Shutdown sends the spans and metrics FromEnv's exporters still hold and
// stops them, within ctx. It does nothing for a Telemetry of New, whose
// providers are the program's.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil || t.stop == nil {
		return nil
	}
	return t.stop(ctx)
}

// Logger returns l with the trace_id and span_id of the span ctx carries,
// so that a log line of a call joins its trace; l itself when ctx carries
// none.
func Logger(ctx context.Context, l hclog.Logger) hclog.Logger {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return l
	}
	return l.With("trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String())
}

// throttle logs an export's failures, at most one line a minute, with the
// number of failures since the last line.
type throttle struct {
	logger hclog.Logger
	msg    string
	args   []any
	last   atomic.Int64 // unix nanoseconds of the last line
	failed atomic.Int64 // failures not logged yet
}

func newThrottle(logger hclog.Logger, msg string, args ...any) *throttle {
	return &throttle{logger: logger, msg: msg, args: args}
}

// failed notes an export's error, and logs it unless a line was logged in
// the last minute.
func (t *throttle) fail(err error) {
	n := t.failed.Add(1)
	now := time.Now().UnixNano()
	last := t.last.Load()
	if now-last < int64(time.Minute) || !t.last.CompareAndSwap(last, now) {
		return
	}
	t.failed.Add(-n)
	t.logger.Warn(t.msg, append(slices.Clone(t.args), "failures", n, "error", err)...)
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
