package otel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/mcpproxy"
	"github.com/toolcap/toolcap/otel"
	"github.com/toolcap/toolcap/worker"
)

// BenchmarkTelemetry is the cost of the telemetry on the two hot paths,
// side by side in one run: the worker's one call (a tool whose result
// fits, through the worker's chain) and the relay's small tools/call (a
// request with a traceparent in its _meta forwarded to the server, a
// 64-byte result read and forwarded to the client, in process over
// pipes), each with the telemetry
//
//   - off: nothing set in the environment (no middleware, no hook),
//   - drop: traces on with a sampler that drops every span
//     (OTEL_TRACES_SAMPLER=always_off), metrics off,
//   - keep: every span kept and exported by the batch processor to an
//     OTLP/HTTP receiver on 127.0.0.1 that discards them, metrics off,
//   - keep+metrics: keep, and the metrics recorded too.
//
// Run: go test ./otel -run '^$' -bench BenchmarkTelemetry -count 6
func BenchmarkTelemetry(b *testing.B) {
	// A ballast, as bench/ has one (docs/benchmarks.md, "The ballast"):
	// a live heap of an agent's size, so that the collector's cadence
	// does not dominate what allocates.
	ballast := make([]byte, 64<<20)
	defer runtime.KeepAlive(ballast)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer sink.Close()
	modes := []struct {
		name string
		env  []string
	}{
		{"off", nil},
		{"drop", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.URL, "OTEL_TRACES_SAMPLER=always_off", "OTEL_METRICS_EXPORTER=none"}},
		{"keep", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.URL, "OTEL_TRACES_SAMPLER=always_on", "OTEL_METRICS_EXPORTER=none"}},
		{"keep+metrics", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.URL, "OTEL_TRACES_SAMPLER=always_on"}},
	}
	for _, path := range []struct {
		name string
		run  func(b *testing.B, tel *otel.Telemetry)
	}{{"worker", benchWorker}, {"relay", benchRelay}} {
		for _, mode := range modes {
			b.Run(path.name+"/"+mode.name, func(b *testing.B) {
				tel, err := otel.FromEnv(context.Background(), mode.env, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer tel.Shutdown(context.Background())
				path.run(b, tel)
			})
		}
	}
}

// benchWorker times one call of a worker whose tool's result fits, under
// a parent span.
func benchWorker(b *testing.B, tel *otel.Telemetry) {
	content := strings.Repeat("x", 100)
	tool := worker.Func("Read", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		return worker.ToolOutput{Content: &content}, nil
	})
	w, err := worker.New([]worker.Tool{tool}, worker.WithMiddleware(tel.Middleware("Read")))
	if err != nil {
		b.Fatal(err)
	}
	ctx := parentContext(b)
	calls := []chain.Call{{ID: "toolu_01", Tool: "Read"}}
	b.ReportAllocs()
	for b.Loop() {
		if res := w.ExecuteTools(ctx, calls); res[0].IsError() {
			b.Fatal(*res[0].Content)
		}
	}
}

// pipe is one side of a relayed session in process: what the proxy reads
// from it and what it writes to it.
type pipe struct {
	r *io.PipeReader
	w *io.PipeWriter
}

func (p pipe) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p pipe) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipe) Close() error {
	p.r.Close()
	return p.w.Close()
}

// benchRelay times the relay's small tools/call: the request (with a
// traceparent in its _meta) forwarded, the server's 64-byte result
// forwarded back.
func benchRelay(b *testing.B, tel *otel.Telemetry) { benchRelayHook(b, tel.Relay()) }

func benchRelayHook(b *testing.B, hook func(context.Context, *mcpproxy.Span) (context.Context, func())) {
	p, err := mcpproxy.New(mcpproxy.Options{Trace: hook})
	if err != nil {
		b.Fatal(err)
	}
	// The proxy's client side reads cIn and writes cOut; the test writes
	// requests to toProxy and reads answers from fromProxy. The same on
	// the server's side.
	cIn, toProxy := io.Pipe()
	fromProxy, cOut := io.Pipe()
	sIn, toServer := io.Pipe()
	fromServer, sOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- p.Serve(ctx, mcpproxy.StreamConn(pipe{cIn, cOut}), mcpproxy.StreamConn(pipe{fromServer, toServer}))
	}()
	defer func() {
		cancel()
		<-done
	}()
	cr := bufio.NewReader(fromProxy)
	sr := bufio.NewReader(sIn)
	text, _ := json.Marshal(strings.Repeat("x", 64))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		fmt.Fprintf(toProxy, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"traceparent":"%s"}}}`+"\n", i, clientParent)
		if _, err := sr.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(sOut, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%s}]}}`+"\n", i, text)
		if _, err := cr.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
}
