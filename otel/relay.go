package otel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolcap/toolcap/internal/resultstats"
	"github.com/toolcap/toolcap/mcpproxy"
)

// Relay returns the hook of an MCP relay, [mcpproxy.Options.Trace], that
// reports each request a client sends through it: a span of kind server
// named "METHOD TOOL" ("tools/call read_file"; the method alone for
// other methods, and for a tool the server did not list), child of the
// trace context the request carries in its params._meta (traceparent,
// tracestate) or, over streamable HTTP, in its headers, with the MCP
// conventions' attributes (mcp.method.name, gen_ai.tool.name,
// gen_ai.operation.name, jsonrpc.request.id, mcp.session.id as a SHA-256
// prefix of the session's id, which is its key, mcp.protocol.version,
// error.type, rpc.response.status_code), the figures of a result's cut
// (toolcap.cut.*, toolcap.structured.*; never content) and the counts of
// what was redacted by rule. The server gets the span's own trace context
// in the request's _meta (and, over HTTP, its traceparent header), so its
// spans are the proxy's children; a request the sampler drops goes as it
// came. The metrics count each tools/call result as [Telemetry.Middleware]
// does, labelled by tool only for the tools the server listed, each page
// of the read tool, and the time each request took
// (mcp.server.operation.duration, by method and error type).
//
// It is nil for a Telemetry that reports nothing: the proxy then traces
// nothing and costs nothing.
func (t *Telemetry) Relay() func(ctx context.Context, s *mcpproxy.Span) (context.Context, func()) {
	if !t.Enabled() {
		return nil
	}
	return t.relay
}

// traceContext reads and writes W3C trace context.
var traceContext propagation.TraceContext

// carrier is the W3C trace context of a relayed request: what the
// propagator reads and writes.
type carrier struct{ s *mcpproxy.Span }

func (c carrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.s.TraceParent
	case "tracestate":
		return c.s.TraceState
	case "baggage":
		return c.s.Baggage
	}
	return ""
}

func (c carrier) Set(key, value string) {
	switch key {
	case "traceparent":
		c.s.TraceParent = value
	case "tracestate":
		c.s.TraceState = value
	}
}

func (c carrier) Keys() []string { return []string{"traceparent", "tracestate", "baggage"} }

func (t *Telemetry) relay(ctx context.Context, s *mcpproxy.Span) (context.Context, func()) {
	var start time.Time
	if t.metrics != nil {
		start = time.Now()
	}
	var span trace.Span
	if t.tracer != nil {
		c := carrier{s}
		if s.TraceParent != "" {
			ctx = traceContext.Extract(ctx, c)
		}
		ctx, span = t.tracer.Start(ctx, t.spanName(s), serverKind)
		if span.IsRecording() {
			setRequest(span, s)
			traceContext.Inject(ctx, c)
		}
	}
	return ctx, func() {
		if span != nil {
			if span.IsRecording() {
				setOutcome(span, s)
			}
			span.End()
		}
		if t.metrics != nil {
			t.recordRelay(ctx, s, start)
		}
	}
}

// serverKind is the option of a relayed request's span, made once.
var serverKind = trace.WithSpanKind(trace.SpanKindServer)

// spanName is the name of a relayed request's span: "METHOD TOOL" for a
// tool the server listed, its method alone otherwise (a name a client
// made up would make a name of its own for each). The names of listed
// tools are made once.
func (t *Telemetry) spanName(s *mcpproxy.Span) string {
	if s.Tool == "" || !s.Listed {
		return s.Method
	}
	if n, ok := t.names.Load(s.Tool); ok {
		return n.(string)
	}
	n := s.Method + " " + s.Tool
	t.names.Store(s.Tool, n)
	return n
}

// setRequest sets the attributes of a relayed request known when it
// starts.
func setRequest(span trace.Span, s *mcpproxy.Span) {
	kvs := make([]attribute.KeyValue, 0, 7)
	kvs = append(kvs, attribute.String(attrMethod, s.Method), attribute.String(attrRequestID, s.RequestID),
		attribute.String(attrJSONRPCVersion, "2.0"))
	if s.Method == "tools/call" {
		kvs = append(kvs, attribute.String(attrOperation, operationExecuteTool), attribute.String(attrToolName, s.Tool))
	}
	if s.SessionID != "" {
		kvs = append(kvs, attribute.String(attrSessionID, sessionHash(s.SessionID)))
	}
	if s.ProtocolVersion != "" {
		kvs = append(kvs, attribute.String(attrProtocolVersion, s.ProtocolVersion))
	}
	span.SetAttributes(kvs...)
}

// sessionHash is what a span says of a session's id: the first 16 bytes
// of its SHA-256, in hex. The id itself is the key to the session.
func sessionHash(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:16])
}

// setOutcome sets the attributes of how a relayed request ended.
func setOutcome(span trace.Span, s *mcpproxy.Span) {
	if s.ErrorType != "" {
		span.SetAttributes(attribute.String(attrErrorType, s.ErrorType))
		if _, err := strconv.Atoi(s.ErrorType); err == nil {
			span.SetAttributes(attribute.String(attrStatusCode, s.ErrorType))
		}
		span.SetStatus(codes.Error, s.ErrorType)
	}
	if s.Read {
		span.SetAttributes(attribute.Bool(attrRead, true))
	}
	if c := s.Content; c != nil {
		if cut(*c) {
			setCut(span, *c)
		} else {
			span.SetAttributes(attribute.Int(attrSize, c.OriginalBytes), attribute.Int(attrLimit, c.Limit))
		}
	}
	if c := s.Structured; c != nil {
		span.SetAttributes(attribute.Int(attrStructuredLimit, c.Limit), attribute.Int(attrStructuredOriginal, c.OriginalBytes),
			attribute.Int(attrStructuredKept, c.KeptBytes), attribute.Int(attrStructuredDropped, c.DroppedBytes))
	}
	setRedactions(span, s.Redactions)
}

// recordRelay records the metrics of a relayed request.
func (t *Telemetry) recordRelay(ctx context.Context, s *mcpproxy.Span, start time.Time) {
	in := t.metrics
	tool := ""
	if s.Method == "tools/call" {
		tool = unlistedTool
		if s.Listed {
			tool = resultstats.ToolLabel(s.Tool)
		}
	}
	in.relayDuration.Record(ctx, seconds(start), in.set(setKey{kind: setRelay, method: methodLabel(s.Method), tool: tool, errorType: errorLabel(s.ErrorType)}))
	c := s.Content
	if c == nil {
		return // no result: a JSON-RPC error, or no answer
	}
	tally := resultstats.Tally{Outcome: resultstats.Fits, OriginalBytes: int64(c.OriginalBytes), KeptBytes: int64(c.KeptBytes)}
	switch {
	case s.ErrorType != "":
		tally.Outcome = resultstats.Error
	case cut(*c):
		tally.Outcome = resultstats.Cut
	}
	tokens := 0
	if c.Unit == "tokens" {
		tokens = c.DroppedTokens
	}
	in.record(ctx, tool, tally, tokens)
	if s.Read {
		in.pages.Add(ctx, 1, in.set(setKey{kind: setTool, tool: tool}))
	}
}

// mcpMethods are the methods of MCP's revisions: the values of the method
// label. A client may send any other name; those count as "_OTHER", so
// that the metrics stay bounded.
var mcpMethods = map[string]bool{
	"initialize": true, "ping": true,
	"tools/list": true, "tools/call": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"prompts/list": true, "prompts/get": true,
	"completion/complete": true, "logging/setLevel": true,
	"tasks/get": true, "tasks/list": true, "tasks/result": true, "tasks/cancel": true,
	"subscriptions/listen": true, "server/discover": true,
}

func methodLabel(m string) string {
	if mcpMethods[m] {
		return m
	}
	return "_OTHER"
}

// errorLabel bounds the error.type label: toolcap's own kinds and the
// JSON-RPC codes of the reserved range are kept, any other code is
// "_OTHER".
func errorLabel(e string) string {
	n, err := strconv.Atoi(e)
	if err != nil || (n >= -32768 && n <= -32000) {
		return e
	}
	return "_OTHER"
}
