package otel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/otel"
	"github.com/toolcap/toolcap/worker"
)

// A worker's tool call is a span execute_tool TOOL, and the cap's cut is
// in its attributes: the figures, never the content.
func ExampleTelemetry_Middleware() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	tel, err := otel.New(tp, nil) // no metrics
	if err != nil {
		fmt.Println(err)
		return
	}
	glob := worker.Func("Glob", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		paths := strings.Repeat("internal/service/handler_test.go\n", 3800) // 125,400 bytes
		return worker.ToolOutput{Summary: "3800 files", Content: &paths}, nil
	})
	w, err := worker.New([]worker.Tool{glob}, worker.WithMiddleware(tel.Middleware("Glob")))
	if err != nil {
		fmt.Println(err)
		return
	}
	w.ExecuteTools(context.Background(), []chain.Call{{ID: "toolu_01", Tool: "Glob"}})

	for _, s := range rec.Ended() {
		fmt.Println(s.Name())
		for _, kv := range s.Attributes() {
			fmt.Printf("  %s=%s\n", kv.Key, kv.Value.String())
		}
	}
	// Output:
	// execute_tool Glob
	//   gen_ai.operation.name=execute_tool
	//   gen_ai.tool.name=Glob
	//   gen_ai.tool.call.id=toolu_01
	//   toolcap.cut.unit=bytes
	//   toolcap.cut.limit=16384
	//   toolcap.cut.original=125400
	//   toolcap.cut.kept=16331
	//   toolcap.cut.dropped=109069
}
