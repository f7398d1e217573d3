package otel_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/cli"
	"github.com/toolcap/toolcap/otel"
)

// The client's trace: the span its requests are made under.
const (
	clientTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan   = "00f067aa0ba902b7"
	clientParent = "00-" + clientTrace + "-" + clientSpan + "-01"
	headerSpan   = "b7ad6b7169203331"
)

// TestRelayExportsSpans is issue 40's end-to-end test: `toolcap mcp
// --listen` (the CLI in process, with the telemetry cmd/toolcap gives
// it) in front of a stdio server, OTEL_EXPORTER_OTLP_ENDPOINT at an
// OTLP/HTTP receiver on 127.0.0.1 that decodes what it gets with
// go.opentelemetry.io/proto/otlp. The client's tools/call carries a
// traceparent in _meta and its result is cut (and a secret in it
// redacted); a toolcap_read reads on; a tools/list carries its trace
// context in the HTTP header only. The receiver gets a span of each
// request, a child of the client's span, with the MCP conventions'
// attributes and the cut's figures; the server gets the proxy's span as
// the parent in its _meta; the cut's log line carries the trace ids; the
// metrics count the results.
func TestRelayExportsSpans(t *testing.T) {
	recv := newReceiver(t)
	upstreamLog := filepath.Join(t.TempDir(), "upstream.log")
	addr := freeAddr(t)
	env := []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.srv.URL,
		"OTEL_SERVICE_NAME=toolcap-e2e",
		"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__big=4096",
		"TOOLCAP_WORKER__TOOL_OUTPUT__REST__STORE=memory",
		serverEnv + "=" + upstreamLog,
		"HOME=" + t.TempDir(),
		"PATH=" + os.Getenv("PATH"),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, []string{"mcp", "--listen", addr, "-v", "--", os.Args[0]}, strings.NewReader(""), &stderr, &stderr, env,
			cli.WithTelemetry(otel.SetupProxy))
	}()

	c := newMCPClient(t, addr)
	c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "e2e", "version": "1"}}, nil)
	c.notify("notifications/initialized")
	header := http.Header{"Traceparent": {"00-" + clientTrace + "-" + headerSpan + "-01"}}
	c.call("tools/list", map[string]any{}, header)
	res := c.call("tools/call", map[string]any{"name": "big", "arguments": map[string]any{}, "_meta": map[string]any{"traceparent": clientParent}}, nil)
	var result struct {
		Meta struct {
			Truncation struct {
				Limit, Original, Kept, Dropped int
				Ref                            string
				Resume                         int
			} `json:"toolcap/truncation"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(res.Result, &result); err != nil || result.Meta.Truncation.Ref == "" {
		t.Fatalf("the cut result has no ref in _meta: %s", res.Result)
	}
	fig := result.Meta.Truncation
	c.call("tools/call", map[string]any{"name": "toolcap_read", "arguments": map[string]any{"ref": fig.Ref, "offset": fig.Resume},
		"_meta": map[string]any{"traceparent": clientParent}}, nil)

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("toolcap mcp exited %d:\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("toolcap mcp did not end:\n%s", stderr.String())
	}

	spans := recv.waitSpans("initialize", "tools/list", "tools/call big", "tools/call toolcap_read")
	big := spans["tools/call big"]
	session, _ := big.Attrs["mcp.session.id"].(string)
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(session) {
		t.Errorf("mcp.session.id = %q, want a hash", session)
	}
	wantBig := span{
		Name: "tools/call big", Kind: 2, TraceID: clientTrace, SpanID: big.SpanID, ParentID: clientSpan, Service: "toolcap-e2e",
		Attrs: map[string]any{
			"mcp.method.name": "tools/call", "gen_ai.tool.name": "big", "gen_ai.operation.name": "execute_tool",
			"jsonrpc.request.id": "3", "jsonrpc.protocol.version": "2.0", "mcp.session.id": session, "mcp.protocol.version": "2025-06-18",
			"toolcap.cut.unit": "bytes", "toolcap.cut.limit": int64(4096), "toolcap.cut.original": int64(fig.Original),
			"toolcap.cut.kept": int64(fig.Kept), "toolcap.cut.dropped": int64(fig.Dropped),
			"toolcap.cut.ref": fig.Ref, "toolcap.cut.resume": int64(fig.Resume),
			"toolcap.redaction.rules": []any{"aws-access-token"}, "toolcap.redaction.counts": []any{int64(1)}, "toolcap.redaction.count": int64(1),
		},
	}
	if diff := cmp.Diff(wantBig, big); diff != "" {
		t.Errorf("the cut call's span (-want +got):\n%s", diff)
	}
	if fig.Limit != 4096 || fig.Dropped <= 0 || fig.Original != len(bigText)-len(secret)+len("[redacted: aws-access-token]") {
		t.Errorf("the cut's figures = %+v, want a cut of the redacted text to 4096", fig)
	}

	read := spans["tools/call toolcap_read"]
	if read.ParentID != clientSpan || read.TraceID != clientTrace || read.Attrs["toolcap.read"] != true ||
		read.Attrs["gen_ai.tool.name"] != "toolcap_read" || read.Attrs["error.type"] != nil {
		t.Errorf("the read's span = %+v, want a read, child of the client's span", read)
	}
	list := spans["tools/list"]
	if list.TraceID != clientTrace || list.ParentID != headerSpan {
		t.Errorf("tools/list's span is in trace %s under %s, want %s under %s (its HTTP traceparent)", list.TraceID, list.ParentID, clientTrace, headerSpan)
	}
	init := spans["initialize"]
	if init.ParentID != "" || init.TraceID == clientTrace {
		t.Errorf("initialize, which carried no trace context, has the parent %s in trace %s", init.ParentID, init.TraceID)
	}

	// The server got each request with the proxy's span as its parent
	// (initialize's a trace of its own); the read never reached it.
	logged, err := os.ReadFile(upstreamLog)
	if err != nil {
		t.Fatal(err)
	}
	wantLog := "initialize  00-" + init.TraceID + "-" + init.SpanID + "-01\n" +
		"tools/list  00-" + clientTrace + "-" + list.SpanID + "-01\n" +
		"tools/call big 00-" + clientTrace + "-" + big.SpanID + "-01\n"
	if diff := cmp.Diff(wantLog, string(logged)); diff != "" {
		t.Errorf("what the server got (-want +got):\n%s", diff)
	}

	// The cut's log line (-v) and the redaction's join the trace; the
	// server's variable is no manifest's.
	for _, msg := range []string{"tool result truncated: ", "redacted secrets: "} {
		found := false
		for line := range strings.Lines(stderr.String()) {
			found = found || (strings.Contains(line, msg) && strings.Contains(line, "trace_id="+clientTrace) && strings.Contains(line, "span_id="+big.SpanID))
		}
		if !found {
			t.Errorf("no line %q with the span's ids in the log:\n%s", msg, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "[WARN]") {
		t.Errorf("warnings in the log:\n%s", stderr.String())
	}

	points := recv.metricPoints()
	got := map[string]map[string]int64{}
	for _, name := range []string{"toolcap_tool_results", "toolcap_tool_result_dropped_bytes", "toolcap_read_pages"} {
		got[name] = points[name]
	}
	want := map[string]map[string]int64{
		"toolcap_tool_results":              {"outcome=cut,tool=big": 1, "outcome=fits,tool=toolcap_read": 1},
		"toolcap_tool_result_dropped_bytes": {"tool=big": int64(fig.Dropped)},
		"toolcap_read_pages":                {"tool=toolcap_read": 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if n := points["mcp.server.operation.duration"]["gen_ai.tool.name=big,mcp.method.name=tools/call"]; n != 1 {
		t.Errorf("mcp.server.operation.duration of tools/call big counted %d, want 1: %v", n, points["mcp.server.operation.duration"])
	}
}

// TestRelayTelemetryConfigError: an OTEL_ value toolcap mcp cannot read
// is a configuration error, exit status 2 and one line naming it.
func TestRelayTelemetryConfigError(t *testing.T) {
	env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318", serverEnv + "=" + filepath.Join(t.TempDir(), "upstream.log"),
		"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	var stdout, stderr lockedBuffer
	code := cli.Run(context.Background(), []string{"mcp", "--", os.Args[0]}, strings.NewReader(""), &stdout, &stderr, env, cli.WithTelemetry(otel.SetupProxy))
	want := "toolcap mcp: otel: OTEL_EXPORTER_OTLP_ENDPOINT=\"collector:4318\": want an http:// or https:// URL\n"
	if code != 2 || !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and the line %q", code, stderr.String(), want)
	}
}
