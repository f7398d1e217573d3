package otel_test

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP/HTTP receiver on 127.0.0.1: it decodes what it is
// sent with the protocol's own generated code, as a collector would.
type receiver struct {
	t   *testing.T
	srv *httptest.Server

	mu      sync.Mutex
	traces  []*coltracepb.ExportTraceServiceRequest
	metrics []*colmetricpb.ExportMetricsServiceRequest
	headers []http.Header
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil || req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.headers = append(r.headers, req.Header.Clone())
	switch req.URL.Path {
	case "/v1/traces":
		var m coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &m); err != nil {
			r.t.Errorf("the spans sent do not decode: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.traces = append(r.traces, &m)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	case "/v1/metrics":
		var m colmetricpb.ExportMetricsServiceRequest
		if err := proto.Unmarshal(raw, &m); err != nil {
			r.t.Errorf("the metrics sent do not decode: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.metrics = append(r.metrics, &m)
		out, _ := proto.Marshal(&colmetricpb.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	default:
		http.NotFound(w, req)
	}
}

// span is a received span, its ids in hex and its attributes by key.
type span struct {
	Name     string
	Kind     tracepb.Span_SpanKind
	TraceID  string
	SpanID   string
	ParentID string
	Status   tracepb.Status_StatusCode
	Attrs    map[string]any
	Service  string
}

// spans returns the spans received so far.
func (r *receiver) spans() []span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []span
	for _, req := range r.traces {
		for _, rs := range req.ResourceSpans {
			service, _ := attrs(rs.Resource.GetAttributes())["service.name"].(string)
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					out = append(out, span{
						Name: s.Name, Kind: s.Kind,
						TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
						ParentID: hex.EncodeToString(s.ParentSpanId), Status: s.GetStatus().GetCode(),
						Attrs: attrs(s.Attributes), Service: service,
					})
				}
			}
		}
	}
	return out
}

// waitSpans waits until a span named each of names was received, and
// returns the spans by name (the last of each).
func (r *receiver) waitSpans(names ...string) map[string]span {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		by := map[string]span{}
		for _, s := range r.spans() {
			by[s.Name] = s
		}
		missing := ""
		for _, n := range names {
			if _, ok := by[n]; !ok {
				missing = n
			}
		}
		if missing == "" {
			return by
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no span %q received; got %v", missing, by)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// metricPoints returns the last value received of each metric's data
// points, by metric name and then by the points' attributes written as
// "k=v,k=v" (sorted by key, as OTLP senders write them): an int for a
// sum, the count for a histogram.
func (r *receiver) metricPoints() map[string]map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]map[string]int64{}
	for _, req := range r.metrics {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if out[m.Name] == nil {
						out[m.Name] = map[string]int64{}
					}
					switch d := m.Data.(type) {
					case *metricpb.Metric_Sum:
						for _, p := range d.Sum.DataPoints {
							out[m.Name][labels(p.Attributes)] = p.GetAsInt()
						}
					case *metricpb.Metric_Histogram:
						for _, p := range d.Histogram.DataPoints {
							out[m.Name][labels(p.Attributes)] = int64(p.Count)
						}
					}
				}
			}
		}
	}
	return out
}

// labels writes attributes as "k=v,k=v".
func labels(kvs []*commonpb.KeyValue) string {
	var b bytes.Buffer
	for i, kv := range kvs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv.Key + "=" + kv.Value.GetStringValue())
	}
	return b.String()
}

// attrs returns attributes by key, each value as Go holds it: string,
// bool, int64, float64, or a slice of them.
func attrs(kvs []*commonpb.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		out[kv.Key] = anyValue(kv.Value)
	}
	return out
}

func anyValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.Values {
			out = append(out, anyValue(e))
		}
		return out
	}
	return nil
}
