package otel

import (
	"context"
	"math"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// metricExporter exports metrics by OTLP over HTTP, with the SDK's
// default temporality (cumulative) and aggregations. Its failures are
// logged (throttled), not returned.
type metricExporter struct {
	c       *otlpClient
	log     *throttle
	stopped atomic.Bool
}

func (e *metricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

func (e *metricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (e *metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if e.stopped.Load() {
		return nil
	}
	body, n := encodeMetrics(rm)
	if n == 0 {
		return nil
	}
	if err := e.c.post(ctx, body); err != nil {
		e.log.fail(err)
	}
	return nil
}

func (e *metricExporter) ForceFlush(context.Context) error { return nil }

func (e *metricExporter) Shutdown(context.Context) error {
	e.stopped.Store(true)
	return nil
}

// encodeMetrics encodes an ExportMetricsServiceRequest (resource_metrics
// 1) of rm: one ResourceMetrics (resource 1, scope_metrics 2, schema_url
// 3), a ScopeMetrics (scope 1, metrics 2, schema_url 3) per scope. It
// returns the metrics encoded: 0 when none had data points.
func encodeMetrics(rm *metricdata.ResourceMetrics) ([]byte, int) {
	n := 0
	b := appendMessage(nil, 1, func(b []byte) []byte {
		b = appendResource(b, 1, rm.Resource)
		for _, sm := range rm.ScopeMetrics {
			b = appendMessage(b, 2, func(b []byte) []byte {
				b = appendScope(b, 1, sm.Scope)
				for _, m := range sm.Metrics {
					if mb, ok := appendMetric(nil, m); ok {
						b = appendBytesField(b, 2, mb)
						n++
					}
				}
				if sm.Scope.SchemaURL != "" {
					b = appendStringField(b, 3, sm.Scope.SchemaURL)
				}
				return b
			})
		}
		if rm.Resource != nil && rm.Resource.SchemaURL() != "" {
			b = appendStringField(b, 3, rm.Resource.SchemaURL())
		}
		return b
	})
	return b, n
}

// appendMetric appends the members of a Metric (name 1, description 2,
// unit 3, gauge 5, sum 7, histogram 9); false for data of a kind toolcap
// does not make (exponential histograms, summaries) or with no points.
func appendMetric(b []byte, m metricdata.Metrics) ([]byte, bool) {
	b = appendStringField(b, 1, m.Name)
	if m.Description != "" {
		b = appendStringField(b, 2, m.Description)
	}
	if m.Unit != "" {
		b = appendStringField(b, 3, m.Unit)
	}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		return appendSum(b, d.DataPoints, d.Temporality, d.IsMonotonic), len(d.DataPoints) > 0
	case metricdata.Sum[float64]:
		return appendSum(b, d.DataPoints, d.Temporality, d.IsMonotonic), len(d.DataPoints) > 0
	case metricdata.Gauge[int64]:
		return appendGauge(b, d.DataPoints), len(d.DataPoints) > 0
	case metricdata.Gauge[float64]:
		return appendGauge(b, d.DataPoints), len(d.DataPoints) > 0
	case metricdata.Histogram[int64]:
		return appendHistogram(b, d.DataPoints, d.Temporality), len(d.DataPoints) > 0
	case metricdata.Histogram[float64]:
		return appendHistogram(b, d.DataPoints, d.Temporality), len(d.DataPoints) > 0
	}
	return b, false
}

// temporality is OTLP's AggregationTemporality of t: delta 1, cumulative
// 2.
func temporality(t metricdata.Temporality) uint64 {
	switch t {
	case metricdata.DeltaTemporality:
		return 1
	case metricdata.CumulativeTemporality:
		return 2
	}
	return 0
}

// appendSum appends a Sum (data_points 1, aggregation_temporality 2,
// is_monotonic 3) as field 7.
func appendSum[N int64 | float64](b []byte, points []metricdata.DataPoint[N], t metricdata.Temporality, monotonic bool) []byte {
	return appendMessage(b, 7, func(b []byte) []byte {
		for _, p := range points {
			b = appendMessage(b, 1, func(b []byte) []byte { return appendNumberPoint(b, p) })
		}
		b = appendVarintField(b, 2, temporality(t))
		if monotonic {
			b = appendVarintField(b, 3, 1)
		}
		return b
	})
}

// appendGauge appends a Gauge (data_points 1) as field 5.
func appendGauge[N int64 | float64](b []byte, points []metricdata.DataPoint[N]) []byte {
	return appendMessage(b, 5, func(b []byte) []byte {
		for _, p := range points {
			b = appendMessage(b, 1, func(b []byte) []byte { return appendNumberPoint(b, p) })
		}
		return b
	})
}

// appendNumberPoint appends the members of a NumberDataPoint:
// start_time_unix_nano 2, time_unix_nano 3, as_double 4, as_int 6,
// attributes 7.
func appendNumberPoint[N int64 | float64](b []byte, p metricdata.DataPoint[N]) []byte {
	b = appendAttributes(b, 7, p.Attributes)
	b = appendFixed64Field(b, 2, unixNano(p.StartTime))
	b = appendFixed64Field(b, 3, unixNano(p.Time))
	switch v := any(p.Value).(type) {
	case int64:
		b = appendFixed64Field(b, 6, uint64(v))
	case float64:
		b = appendDoubleField(b, 4, v)
	}
	return b
}

// appendHistogram appends a Histogram (data_points 1,
// aggregation_temporality 2) as field 9; each HistogramDataPoint has
// start_time_unix_nano 2, time_unix_nano 3, count 4, sum 5, bucket_counts
// 6 and explicit_bounds 7 (packed), attributes 9, min 11, max 12.
func appendHistogram[N int64 | float64](b []byte, points []metricdata.HistogramDataPoint[N], t metricdata.Temporality) []byte {
	return appendMessage(b, 9, func(b []byte) []byte {
		for _, p := range points {
			b = appendMessage(b, 1, func(b []byte) []byte {
				b = appendAttributes(b, 9, p.Attributes)
				b = appendFixed64Field(b, 2, unixNano(p.StartTime))
				b = appendFixed64Field(b, 3, unixNano(p.Time))
				b = appendFixed64Field(b, 4, p.Count)
				b = appendDoubleField(b, 5, float64(p.Sum))
				b = appendMessage(b, 6, func(b []byte) []byte {
					for _, c := range p.BucketCounts {
						b = appendUint64(b, c)
					}
					return b
				})
				b = appendMessage(b, 7, func(b []byte) []byte {
					for _, x := range p.Bounds {
						b = appendUint64(b, math.Float64bits(x))
					}
					return b
				})
				if v, ok := p.Min.Value(); ok {
					b = appendDoubleField(b, 11, float64(v))
				}
				if v, ok := p.Max.Value(); ok {
					b = appendDoubleField(b, 12, float64(v))
				}
				return b
			})
		}
		return appendVarintField(b, 2, temporality(t))
	})
}

// appendUint64 appends v as a packed fixed64 element.
func appendUint64(b []byte, v uint64) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

// appendAttributes appends each attribute of set as a KeyValue field.
func appendAttributes(b []byte, field int, set attribute.Set) []byte {
	for it := set.Iter(); it.Next(); {
		b = appendKeyValue(b, field, it.Attribute())
	}
	return b
}
