package resultstats_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/resultstats"
)

// A Glob result the cap cut and a Read result that fitted, written as a
// Prometheus scrape sees them.
func Example() {
	var c resultstats.Counters
	kept := strings.Repeat("src/pkg/file.go\n", 1000)
	c.Record("Glob", chain.Result{}.WithTruncation(kept, chain.Truncation{
		Limit: 16384, OriginalBytes: 128000, KeptBytes: 16000, DroppedBytes: 112000,
	}))
	file := "package main\n"
	c.Record("Read", chain.Result{Content: &file})

	if err := c.WriteText(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// # HELP toolcap_tool_results_total Tool results that passed the cap, by tool and outcome (fits, cut, error).
	// # TYPE toolcap_tool_results_total counter
	// toolcap_tool_results_total{outcome="cut",tool="Glob"} 1
	// toolcap_tool_results_total{outcome="error",tool="Glob"} 0
	// toolcap_tool_results_total{outcome="fits",tool="Glob"} 0
	// toolcap_tool_results_total{outcome="cut",tool="Read"} 0
	// toolcap_tool_results_total{outcome="error",tool="Read"} 0
	// toolcap_tool_results_total{outcome="fits",tool="Read"} 1
	// # HELP toolcap_tool_result_original_bytes_total Content bytes the tools returned, before the cap.
	// # TYPE toolcap_tool_result_original_bytes_total counter
	// toolcap_tool_result_original_bytes_total{tool="Glob"} 128000
	// toolcap_tool_result_original_bytes_total{tool="Read"} 13
	// # HELP toolcap_tool_result_kept_bytes_total Content bytes that reached the history, truncation markers excluded.
	// # TYPE toolcap_tool_result_kept_bytes_total counter
	// toolcap_tool_result_kept_bytes_total{tool="Glob"} 16000
	// toolcap_tool_result_kept_bytes_total{tool="Read"} 13
}
