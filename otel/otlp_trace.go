package otel

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// spanExporter exports spans by OTLP over HTTP. Its failures are logged
// (throttled), not returned: the batch processor would pass them to the
// global error handler.
type spanExporter struct {
	c       *otlpClient
	log     *throttle
	stopped atomic.Bool
}

func (e *spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.stopped.Load() || len(spans) == 0 {
		return nil
	}
	if err := e.c.post(ctx, encodeSpans(spans)); err != nil {
		e.log.fail(err)
	}
	return nil
}

func (e *spanExporter) Shutdown(context.Context) error {
	e.stopped.Store(true)
	return nil
}

// encodeSpans encodes an ExportTraceServiceRequest (resource_spans 1) of
// spans: a ResourceSpans (resource 1, scope_spans 2, schema_url 3) per
// resource, a ScopeSpans (scope 1, spans 2, schema_url 3) per scope, in
// the order the spans came.
func encodeSpans(spans []sdktrace.ReadOnlySpan) []byte {
	type scoped struct {
		scope instrumentation.Scope
		spans []sdktrace.ReadOnlySpan
	}
	type resourced struct {
		res    *resource.Resource
		scopes []*scoped
	}
	var all []*resourced
	for _, s := range spans {
		var r *resourced
		for _, x := range all {
			if x.res == s.Resource() {
				r = x
				break
			}
		}
		if r == nil {
			r = &resourced{res: s.Resource()}
			all = append(all, r)
		}
		var sc *scoped
		for _, x := range r.scopes {
			if x.scope == s.InstrumentationScope() {
				sc = x
				break
			}
		}
		if sc == nil {
			sc = &scoped{scope: s.InstrumentationScope()}
			r.scopes = append(r.scopes, sc)
		}
		sc.spans = append(sc.spans, s)
	}
	b := make([]byte, 0, 512*len(spans))
	for _, r := range all {
		b = appendMessage(b, 1, func(b []byte) []byte {
			b = appendResource(b, 1, r.res)
			for _, sc := range r.scopes {
				b = appendMessage(b, 2, func(b []byte) []byte {
					b = appendScope(b, 1, sc.scope)
					for _, s := range sc.spans {
						b = appendMessage(b, 2, func(b []byte) []byte { return appendSpan(b, s) })
					}
					if sc.scope.SchemaURL != "" {
						b = appendStringField(b, 3, sc.scope.SchemaURL)
					}
					return b
				})
			}
			if r.res != nil && r.res.SchemaURL() != "" {
				b = appendStringField(b, 3, r.res.SchemaURL())
			}
			return b
		})
	}
	return b
}

// appendSpan appends the members of a Span: trace_id 1, span_id 2,
// trace_state 3, parent_span_id 4, name 5, kind 6, start 7, end 8,
// attributes 9, dropped_attributes_count 10, events 11,
// dropped_events_count 12, links 13, dropped_links_count 14, status 15,
// flags 16.
func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytesField(b, 1, tid[:])
	b = appendBytesField(b, 2, sid[:])
	if ts := sc.TraceState().String(); ts != "" {
		b = appendStringField(b, 3, ts)
	}
	parent := s.Parent()
	if parent.SpanID().IsValid() {
		psid := parent.SpanID()
		b = appendBytesField(b, 4, psid[:])
	}
	b = appendStringField(b, 5, s.Name())
	if k := s.SpanKind(); k != trace.SpanKindUnspecified {
		b = appendVarintField(b, 6, uint64(k)) // OTLP's SpanKind numbers are the API's
	}
	b = appendFixed64Field(b, 7, unixNano(s.StartTime()))
	b = appendFixed64Field(b, 8, unixNano(s.EndTime()))
	for _, kv := range s.Attributes() {
		b = appendKeyValue(b, 9, kv)
	}
	if n := s.DroppedAttributes(); n > 0 {
		b = appendVarintField(b, 10, uint64(n))
	}
	for _, ev := range s.Events() {
		b = appendMessage(b, 11, func(b []byte) []byte {
			b = appendFixed64Field(b, 1, unixNano(ev.Time))
			b = appendStringField(b, 2, ev.Name)
			for _, kv := range ev.Attributes {
				b = appendKeyValue(b, 3, kv)
			}
			if ev.DroppedAttributeCount > 0 {
				b = appendVarintField(b, 4, uint64(ev.DroppedAttributeCount))
			}
			return b
		})
	}
	if n := s.DroppedEvents(); n > 0 {
		b = appendVarintField(b, 12, uint64(n))
	}
	for _, l := range s.Links() {
		b = appendMessage(b, 13, func(b []byte) []byte {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = appendBytesField(b, 1, ltid[:])
			b = appendBytesField(b, 2, lsid[:])
			if ts := l.SpanContext.TraceState().String(); ts != "" {
				b = appendStringField(b, 3, ts)
			}
			for _, kv := range l.Attributes {
				b = appendKeyValue(b, 4, kv)
			}
			if l.DroppedAttributeCount > 0 {
				b = appendVarintField(b, 5, uint64(l.DroppedAttributeCount))
			}
			return appendFixed32Field(b, 6, spanFlags(l.SpanContext))
		})
	}
	if n := s.DroppedLinks(); n > 0 {
		b = appendVarintField(b, 14, uint64(n))
	}
	if st := s.Status(); st.Code != codes.Unset {
		b = appendMessage(b, 15, func(b []byte) []byte {
			if st.Description != "" {
				b = appendStringField(b, 2, st.Description)
			}
			code := uint64(1) // STATUS_CODE_OK
			if st.Code == codes.Error {
				code = 2 // STATUS_CODE_ERROR
			}
			return appendVarintField(b, 3, code)
		})
	}
	flags := uint32(sc.TraceFlags()) | 0x100 // SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE
	if parent.IsRemote() {
		flags |= 0x200 // SPAN_FLAGS_CONTEXT_IS_REMOTE: the parent's
	}
	return appendFixed32Field(b, 16, flags)
}

// spanFlags are the flags of a link to sc: its trace flags, and whether
// it is remote.
func spanFlags(sc trace.SpanContext) uint32 {
	f := uint32(sc.TraceFlags()) | 0x100
	if sc.IsRemote() {
		f |= 0x200
	}
	return f
}
