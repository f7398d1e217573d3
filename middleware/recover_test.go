package middleware_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/logtest"
	"github.com/toolcap/toolcap/internal/resulttest"
	"github.com/toolcap/toolcap/middleware"
)

func TestRecover(t *testing.T) {
	var buf bytes.Buffer
	h := middleware.Recover(logtest.New(&buf, hclog.Info))(func(context.Context, chain.Call) chain.Result {
		panic("index out of range")
	})
	got := h(context.Background(), chain.Call{ID: "c1", Tool: "Glob"})
	want := resulttest.View{
		Summary: "Glob failed: panic",
		Content: ptr(`tool "Glob" panicked: index out of range`),
		IsError: true,
	}
	if diff := cmp.Diff(want, resulttest.Of(got)); diff != "" {
		t.Errorf("Recover() result mismatch (-want +got):\n%s", diff)
	}
	lines := logtest.Lines(t, &buf)
	if len(lines) != 1 || lines[0]["@level"] != "error" || lines[0]["tool"] != "Glob" ||
		!strings.Contains(lines[0]["stack"].(string), "recover_test.go") {
		t.Errorf("want one error line with tool and stack, got %v", lines)
	}
}

func TestRecoverPassesResults(t *testing.T) {
	want := chain.Result{Summary: "ok", Content: ptr("fine")}
	got := middleware.Recover(nil)(returning(want))(context.Background(), chain.Call{})
	if diff := cmp.Diff(resulttest.Of(want), resulttest.Of(got)); diff != "" {
		t.Errorf("Recover() changed a result (-want +got):\n%s", diff)
	}
}

func TestLogging(t *testing.T) {
	var buf bytes.Buffer
	h := middleware.Logging(logtest.New(&buf, hclog.Debug))(returning(chain.Result{}.WithTruncation("abc",
		chain.Truncation{Limit: 3, OriginalBytes: 10, DroppedBytes: 7})))
	h(context.Background(), chain.Call{ID: "c1", Tool: "Grep"})
	h = middleware.Logging(logtest.New(&buf, hclog.Debug))(returning(chain.Result{}.AsError()))
	h(context.Background(), chain.Call{ID: "c2", Tool: "Read"})

	lines := logtest.Lines(t, &buf)
	for _, l := range lines {
		delete(l, "duration") // varies
	}
	want := []map[string]any{
		{"@level": "debug", "@message": "tool call", "tool": "Grep", "call_id": "c1",
			"is_error": false, "content_bytes": float64(3), "dropped_bytes": float64(7)},
		{"@level": "warn", "@message": "tool call failed", "tool": "Read", "call_id": "c2",
			"is_error": true, "content_bytes": float64(-1)},
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("Logging() lines mismatch (-want +got):\n%s", diff)
	}
}

func TestLoggingNilLogger(t *testing.T) {
	want := chain.Result{Content: ptr("x")}
	got := middleware.Logging(nil)(returning(want))(context.Background(), chain.Call{})
	if diff := cmp.Diff(resulttest.Of(want), resulttest.Of(got)); diff != "" {
		t.Errorf("Logging(nil) changed a result (-want +got):\n%s", diff)
	}
}
