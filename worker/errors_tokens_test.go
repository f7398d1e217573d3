package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/tokens"
	"github.com/toolcap/toolcap/worker"
)

// TestExecuteToolsErrorTokenLimit: a token limit holds for a failed call's
// content as for any result's (issue 22, item 7): with default_max_tokens
// = 100, a 5,000-byte error, returned, built as an error result or
// panicked with, reaches the history within 100 tokens, marked as cut and
// still an error.
func TestExecuteToolsErrorTokenLimit(t *testing.T) {
	msg := strings.Repeat("error ", 834)[:5000] // 5,000 bytes, about 1,667 fields and spaces
	m := loadManifest(t, "[worker.tool_output]\ndefault_max_tokens = 100\n")
	tz := tokens.NewCalibrated()
	tools := []worker.Tool{
		worker.Func("Returned", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			return worker.ToolOutput{}, errors.New(msg)
		}),
		worker.Func("Built", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			return chain.ErrorResult("Built failed", msg), nil
		}),
		worker.Func("Panicked", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			panic(msg)
		}),
	}
	w := newWorker(t, tools, worker.WithPolicies(policytest.Of(t, m)), worker.WithTokenizer(tz))
	calls := []chain.Call{{ID: "1", Tool: "Returned"}, {ID: "2", Tool: "Built"}, {ID: "3", Tool: "Panicked"}}
	res := w.ExecuteTools(context.Background(), calls)
	for i, r := range res {
		t.Run(calls[i].Tool, func(t *testing.T) {
			if !r.IsError() {
				t.Errorf("not an error result")
			}
			if r.Content == nil {
				t.Fatal("no content")
			}
			got := *r.Content
			if n := tz.Count(got); n > 100 {
				t.Errorf("%d tokens (%d bytes) reach the history, want at most 100", n, len(got))
			}
			if _, _, ok := cut.SplitMarker(got); !ok {
				t.Errorf("content does not end in a marker: %q", got[max(0, len(got)-60):])
			}
			tr, ok := r.Truncation()
			if !ok || tr.LimitTokens != 100 || tr.OriginalBytes < len(msg) {
				t.Errorf("figures %+v (%v): want a cut under a 100-token limit of at least %d bytes", tr, ok, len(msg))
			}
		})
	}
}
