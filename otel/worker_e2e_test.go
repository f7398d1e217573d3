package otel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/otel"
	"github.com/toolcap/toolcap/worker"
)

// parentContext returns a context under the client's span, as an agent's
// own tracing would hand it to the worker.
func parentContext(t testing.TB) context.Context {
	tid, err1 := trace.TraceIDFromHex(clientTrace)
	sid, err2 := trace.SpanIDFromHex(clientSpan)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
	return trace.ContextWithRemoteSpanContext(context.Background(), sc)
}

// TestWorkerExportsSpans: a worker's tool calls under a parent span, the
// telemetry configured by the environment and exported to an OTLP/HTTP
// receiver: each call is an execute_tool span, child of the parent, with
// the conventions' attributes, the cut's figures and the redaction's
// counts; the metrics count the results, a name the program did not list
// under "(unlisted)".
func TestWorkerExportsSpans(t *testing.T) {
	recv := newReceiver(t)
	tel, err := otel.FromEnv(context.Background(), []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.srv.URL, "OTEL_SERVICE_NAME=worker-e2e"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	paths := "export AWS_ACCESS_KEY_ID=" + secret + "\n" + strings.Repeat("internal/service/handler_test.go\n", 3800)
	glob := worker.Func("Glob", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		return worker.ToolOutput{Summary: "3800 files", Content: &paths}, nil
	})
	small := "package main\n"
	read := worker.Func("Read", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		return worker.ToolOutput{Content: &small}, nil
	})
	var logs bytes.Buffer
	logger := hclog.New(&hclog.LoggerOptions{Output: &logs, JSONFormat: true, Level: hclog.Info})
	w, err := worker.New([]worker.Tool{glob, read}, worker.WithMiddleware(tel.Middleware("Glob", "Read")), worker.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	ctx := parentContext(t)
	res := w.ExecuteTools(ctx, []chain.Call{{ID: "toolu_01", Tool: "Glob"}, {ID: "toolu_02", Tool: "Read"}, {ID: "toolu_03", Tool: "Nope"}})
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	cutFig, ok := res[0].Truncation()
	if !ok {
		t.Fatalf("Glob's result was not cut")
	}

	spans := recv.waitSpans("execute_tool Glob", "execute_tool Read", "execute_tool Nope")
	globSpan := spans["execute_tool Glob"]
	want := span{
		Name: "execute_tool Glob", Kind: 1, TraceID: clientTrace, SpanID: globSpan.SpanID, ParentID: clientSpan, Service: "worker-e2e",
		Attrs: map[string]any{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Glob", "gen_ai.tool.call.id": "toolu_01",
			"toolcap.cut.unit": "bytes", "toolcap.cut.limit": int64(16384), "toolcap.cut.original": int64(cutFig.OriginalBytes),
			"toolcap.cut.kept": int64(cutFig.KeptBytes), "toolcap.cut.dropped": int64(cutFig.DroppedBytes),
			"toolcap.redaction.rules": []any{"aws-access-token"}, "toolcap.redaction.counts": []any{int64(1)}, "toolcap.redaction.count": int64(1),
		},
	}
	if diff := cmp.Diff(want, globSpan); diff != "" {
		t.Errorf("Glob's span (-want +got):\n%s", diff)
	}
	if got := spans["execute_tool Read"].Attrs["toolcap.result.bytes"]; got != int64(len(small)) {
		t.Errorf("Read's span has toolcap.result.bytes %v, want %d", got, len(small))
	}
	// The cap's line about the cut joins the call's span.
	var cutLine map[string]any
	for line := range strings.Lines(logs.String()) {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) == nil && l["tool"] == "Glob" && l["dropped_bytes"] != nil {
			cutLine = l
		}
	}
	if cutLine == nil || cutLine["trace_id"] != clientTrace || cutLine["span_id"] != globSpan.SpanID {
		t.Errorf("the cap's line about Glob's cut = %v, want trace_id %s and span_id %s; the log:\n%s", cutLine, clientTrace, globSpan.SpanID, logs.String())
	}
	nope := spans["execute_tool Nope"]
	if nope.Attrs["error.type"] != "tool_error" || nope.Status != 2 || nope.ParentID != clientSpan {
		t.Errorf("the unknown tool's span = %+v, want an error, child of the client's span", nope)
	}

	points := recv.metricPoints()
	wantResults := map[string]int64{"outcome=cut,tool=Glob": 1, "outcome=fits,tool=Read": 1, "outcome=error,tool=(unlisted)": 1}
	if diff := cmp.Diff(wantResults, points["toolcap_tool_results"]); diff != "" {
		t.Errorf("toolcap_tool_results (-want +got):\n%s", diff)
	}
	if got := points["toolcap_tool_result_dropped_bytes"]["tool=Glob"]; got != int64(cutFig.DroppedBytes) {
		t.Errorf("toolcap_tool_result_dropped_bytes of Glob = %d, want %d", got, cutFig.DroppedBytes)
	}
	if got := points["toolcap_tool_duration"]["outcome=cut,tool=Glob"]; got != 1 {
		t.Errorf("toolcap_tool_duration of Glob counted %d calls, want 1", got)
	}
}

// TestOff: with nothing set in the environment, nothing is made: no
// middleware, no relay hook, nothing to shut down.
func TestOff(t *testing.T) {
	for _, env := range [][]string{nil, {"OTEL_SERVICE_NAME=x"}, {"OTEL_SDK_DISABLED=true", "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1"},
		{"OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none", "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1"}} {
		tel, err := otel.FromEnv(context.Background(), env, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tel.Enabled() || tel.Middleware() != nil || tel.Relay() != nil || tel.Shutdown(context.Background()) != nil {
			t.Errorf("FromEnv(%q) reports something", env)
		}
	}
	var none *otel.Telemetry
	if none.Enabled() || none.Middleware() != nil || none.Relay() != nil || none.Shutdown(context.Background()) != nil {
		t.Errorf("a nil Telemetry reports something")
	}
}
