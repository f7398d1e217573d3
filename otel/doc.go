// Package otel reports what toolcap does as OpenTelemetry traces and
// metrics: a span for every tool call of a worker and every request an MCP
// relay carries, the figures of every cut on it, and counters and
// histograms of the results. It is a module of its own
// (github.com/toolcap/toolcap/otel), so that the core module requires no
// OpenTelemetry package; cmd/toolcap links it, and `toolcap mcp` reports
// when the standard OTEL_ environment says where to.
//
// # Spans
//
// [Telemetry.Middleware] is a [chain.Middleware] for a worker: each call
// is a span "execute_tool TOOL", child of the span in the call's context.
// [Telemetry.Relay] is the hook of an MCP relay ([mcpproxy.Options.Trace]):
// each request a client sends is a span "METHOD TOOL", child of the trace
// context in its params._meta (traceparent, tracestate: MCP's SEP-414) or
// its HTTP headers, and the server gets the span's own context the same
// way. A cut adds its figures as attributes: toolcap.cut.unit, limit,
// original, kept, dropped and ref; a redaction the counts by rule. Never
// content.
//
// # Metrics
//
// The counters of toolcap's Prometheus endpoint, under the same names and
// units (toolcap_tool_results{tool,outcome}, toolcap_tool_result_original_bytes,
// toolcap_tool_result_kept_bytes; an exporter to Prometheus adds _total),
// then the bytes and tokens dropped, the read tool's pages, and the
// duration of each tool call (toolcap_tool_duration) and relayed request
// (mcp.server.operation.duration). Tool labels are bounded: a name the
// server did not list, or the program did not name, counts as
// "(unlisted)".
//
// # Configuration
//
// [FromEnv] reads the standard environment (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, ...) and exports OTLP over HTTP;
// with nothing set it reports nothing, at no cost. [New] takes a program's
// own providers. [SetupProxy] is what cmd/toolcap gives `toolcap mcp`.
// See docs/otel.md.
//
// # Logs
//
// [Logger] adds the trace_id and span_id of a context's span to an
// hclog.Logger; the relay's own log lines about a traced request carry
// them already.
//
// [chain.Middleware]: https://pkg.go.dev/github.com/toolcap/toolcap/chain#Middleware
// [mcpproxy.Options.Trace]: https://pkg.go.dev/github.com/toolcap/toolcap/mcpproxy#Options
package otel
