package otel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/resultstats"
	"github.com/toolcap/toolcap/middleware"
)

// Middleware returns the [chain.Middleware] that reports each tool call
// of a worker ([worker.WithMiddleware]): a span "execute_tool TOOL",
// child of the span the call's context carries, with the conventions'
// attributes (gen_ai.operation.name, gen_ai.tool.name,
// gen_ai.tool.call.id, error.type for an error result) and, as
// attributes, the figures of the cap's cut (toolcap.cut.*: unit, limit,
// original, kept, dropped, ref; never content) and the counts of what was
// redacted by rule (toolcap.redaction.*); and the metrics of the result
// and the call's duration.
//
// tools are the names the metrics label by name, the tools a worker
// registers: a call of any other name (a model may make one up) counts
// under the tool label "(unlisted)", so that the metrics stay bounded.
// Without tools every name is a label of its own.
//
// It is nil for a Telemetry that reports nothing, so that a worker given
// it runs as without it. Like any user middleware, it runs after the
// byte cap, which is why it sees the cut's figures; what the ceiling and
// the batch budget do after it, it does not see.
//
// [worker.WithMiddleware]: https://pkg.go.dev/github.com/toolcap/toolcap/worker#WithMiddleware
func (t *Telemetry) Middleware(tools ...string) chain.Middleware {
	if !t.Enabled() {
		return nil
	}
	var listed map[string]string // tool: its span's name
	if len(tools) > 0 {
		listed = make(map[string]string, len(tools))
		for _, name := range tools {
			listed[name] = operationExecuteTool + " " + name
		}
	}
	return func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			var start time.Time
			if t.metrics != nil {
				start = time.Now()
			}
			name, known := listed[call.Tool]
			var span trace.Span
			if t.tracer != nil {
				if name == "" {
					name = operationExecuteTool + " " + call.Tool
				}
				ctx, span = t.tracer.Start(ctx, name, internalKind)
				if sc := span.SpanContext(); sc.IsValid() {
					// The cap's log line about the call joins its trace.
					ctx = middleware.WithLogFields(ctx, "trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String())
				}
			}
			res := next(ctx, call)
			if span != nil {
				if span.IsRecording() {
					setCall(span, call, res)
				}
				span.End()
			}
			if t.metrics != nil {
				label := call.Tool
				if listed != nil && !known {
					label = unlistedTool
				}
				label = resultstats.ToolLabel(label)
				tally := resultstats.Classify(res)
				tokens := 0
				if tr, ok := res.Truncation(); ok && tr.Unit == "tokens" {
					tokens = tr.DroppedTokens
				}
				t.metrics.record(ctx, label, tally, tokens)
				t.metrics.toolDuration.Record(ctx, seconds(start), t.metrics.set(setKey{kind: setToolOutcome, tool: label, outcome: string(tally.Outcome)}))
			}
			return res
		}
	}
}

// internalKind is the option of a tool call's span, made once.
var internalKind = trace.WithSpanKind(trace.SpanKindInternal)

// setCall sets the attributes of a tool call's span from its result.
func setCall(span trace.Span, call chain.Call, res chain.Result) {
	span.SetAttributes(
		attribute.String(attrOperation, operationExecuteTool),
		attribute.String(attrToolName, call.Tool),
	)
	if call.ID != "" {
		span.SetAttributes(attribute.String(attrToolCallID, call.ID))
	}
	if tr, ok := res.Truncation(); ok && cut(tr) {
		setCut(span, tr)
	} else if res.Content != nil {
		span.SetAttributes(attribute.Int(attrSize, len(*res.Content)))
	}
	setRedactions(span, res.Redactions())
	if res.IsError() {
		span.SetAttributes(attribute.String(attrErrorType, "tool_error"))
		span.SetStatus(codes.Error, "the tool call failed")
	}
}
