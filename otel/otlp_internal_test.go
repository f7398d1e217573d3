package otel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// TestEncodeSpans: what toolcap's exporter sends decodes, with the
// protocol's generated code, to the spans the SDK recorded: every kind of
// attribute value, events, links, status, parents local and remote, and
// messages long enough to take a length of several bytes.
func TestEncodeSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	res := resource.NewSchemaless(attribute.String("service.name", "test"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithResource(res))
	tr := tp.Tracer("scope", trace.WithInstrumentationVersion("v1"))

	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	psid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: psid, TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
	start := time.Unix(1_700_000_000, 123)
	long := strings.Repeat("x", 300) // a length of two bytes
	ctx, parent := tr.Start(ctx, "parent", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start),
		trace.WithLinks(trace.Link{SpanContext: remote, Attributes: []attribute.KeyValue{attribute.String("l", "v")}}))
	parent.SetAttributes(attribute.String("s", long), attribute.Bool("b", true), attribute.Int("i", -7), attribute.Float64("f", 1.5),
		attribute.StringSlice("ss", []string{"a", "b"}), attribute.IntSlice("is", []int{1, 2}),
		attribute.BoolSlice("bs", []bool{false}), attribute.Float64Slice("fs", []float64{0.25}))
	parent.AddEvent("ev", trace.WithTimestamp(start.Add(time.Millisecond)), trace.WithAttributes(attribute.Int("n", 3)))
	parent.SetStatus(codes.Error, "it failed")
	_, child := tr.Start(ctx, "child", trace.WithTimestamp(start))
	child.SetStatus(codes.Ok, "")
	child.End(trace.WithTimestamp(start.Add(2 * time.Millisecond)))
	parent.End(trace.WithTimestamp(start.Add(3 * time.Millisecond)))

	spans := rec.Ended()
	var got coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(encodeSpans(spans), &got); err != nil {
		t.Fatal(err)
	}
	csc := spans[0].SpanContext()
	cid, pid := csc.SpanID(), parent.SpanContext().SpanID()
	av := func(v any) *commonpb.AnyValue {
		switch x := v.(type) {
		case string:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: x}}
		case bool:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: x}}
		case int64:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: x}}
		case float64:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: x}}
		}
		return nil
	}
	arr := func(vs ...any) *commonpb.AnyValue {
		a := &commonpb.ArrayValue{}
		for _, v := range vs {
			a.Values = append(a.Values, av(v))
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: a}}
	}
	kv := func(k string, v *commonpb.AnyValue) *commonpb.KeyValue { return &commonpb.KeyValue{Key: k, Value: v} }
	want := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", "test")}},
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: &commonpb.InstrumentationScope{Name: "scope", Version: "v1"},
			Spans: []*tracepb.Span{{
				TraceId: tid[:], SpanId: cid[:], ParentSpanId: pid[:], Name: "child", Kind: tracepb.Span_SPAN_KIND_INTERNAL,
				StartTimeUnixNano: uint64(start.UnixNano()), EndTimeUnixNano: uint64(start.Add(2 * time.Millisecond).UnixNano()),
				Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}, Flags: 0x101,
			}, {
				TraceId: tid[:], SpanId: pid[:], ParentSpanId: psid[:], Name: "parent", Kind: tracepb.Span_SPAN_KIND_SERVER,
				StartTimeUnixNano: uint64(start.UnixNano()), EndTimeUnixNano: uint64(start.Add(3 * time.Millisecond).UnixNano()),
				Attributes: []*commonpb.KeyValue{kv("s", av(long)), kv("b", av(true)), kv("i", av(int64(-7))), kv("f", av(1.5)),
					kv("ss", arr("a", "b")), kv("is", arr(int64(1), int64(2))), kv("bs", arr(false)), kv("fs", arr(0.25))},
				Events: []*tracepb.Span_Event{{TimeUnixNano: uint64(start.Add(time.Millisecond).UnixNano()), Name: "ev",
					Attributes: []*commonpb.KeyValue{kv("n", av(int64(3)))}}},
				Links:  []*tracepb.Span_Link{{TraceId: tid[:], SpanId: psid[:], Attributes: []*commonpb.KeyValue{str("l", "v")}, Flags: 0x301}},
				Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "it failed"},
				Flags:  0x301,
			}},
		}},
	}}}
	if diff := cmp.Diff(want, &got, protocmp.Transform()); diff != "" {
		t.Errorf("decoded spans (-want +got):\n%s", diff)
	}
}

// TestEncodeMetrics: a counter and a histogram, as the SDK collects them,
// decode to what they recorded.
func TestEncodeMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(resource.NewSchemaless(attribute.String("service.name", "test"))))
	m := mp.Meter("scope")
	in, err := newInstruments(m)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in.results.Add(ctx, 2, in.set(setKey{kind: setToolOutcome, tool: "Glob", outcome: "cut"}))
	in.relayDuration.Record(ctx, 0.015, in.set(setKey{kind: setRelay, method: "tools/call", tool: "Glob"}))
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	body, n := encodeMetrics(&rm)
	var got colmetricpb.ExportMetricsServiceRequest
	if err := errors.Join(proto.Unmarshal(body, &got)); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("%d metrics encoded, want 2", n)
	}
	var results *metricpb.Sum
	var hist *metricpb.Histogram
	for _, mm := range got.ResourceMetrics[0].ScopeMetrics[0].Metrics {
		switch mm.Name {
		case "toolcap_tool_results":
			results = mm.GetSum()
			if mm.Unit != "{result}" {
				t.Errorf("unit %q", mm.Unit)
			}
		case "mcp.server.operation.duration":
			hist = mm.GetHistogram()
		}
	}
	if results == nil || hist == nil {
		t.Fatalf("missing metrics: %v", &got)
	}
	p := results.DataPoints[0]
	if p.GetAsInt() != 2 || !results.IsMonotonic || results.AggregationTemporality != metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE ||
		cmp.Diff([]*commonpb.KeyValue{str("outcome", "cut"), str("tool", "Glob")}, p.Attributes, protocmp.Transform()) != "" {
		t.Errorf("toolcap_tool_results point = %v", p)
	}
	h := hist.DataPoints[0]
	if h.Count != 1 || h.GetSum() != 0.015 || h.GetMin() != 0.015 || h.GetMax() != 0.015 || len(h.ExplicitBounds) != 14 ||
		len(h.BucketCounts) != 15 || h.BucketCounts[1] != 1 || h.ExplicitBounds[0] != 0.01 {
		t.Errorf("histogram point = %v", h)
	}
}
