package metrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolcap/toolcap/adapters/metrics"
	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/worker"
)

// A worker whose Glob walked a whole project: the metrics show, per tool,
// how often the cap cut and how much it kept.
func Example() {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	paths := strings.Repeat("src/pkg/file.go\n", 8000) // 128000 bytes
	glob := worker.Func("Glob", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		return worker.ToolOutput{Content: &paths}, nil
	})
	w, err := worker.New([]worker.Tool{glob}, worker.WithMiddleware(m.Middleware()))
	if err != nil {
		fmt.Println(err)
		return
	}
	w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: "Glob", Args: json.RawMessage(`{"pattern":"*"}`)}})

	srv := httptest.NewServer(metrics.Handler(reg))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "toolcap_") && !strings.HasSuffix(line, " 0") {
			fmt.Println(line)
		}
	}
	// Output:
	// toolcap_tool_result_kept_bytes_total{tool="Glob"} 16331
	// toolcap_tool_result_original_bytes_total{tool="Glob"} 128000
	// toolcap_tool_results_total{outcome="cut",tool="Glob"} 1
}
