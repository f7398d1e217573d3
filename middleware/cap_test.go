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

func ptr(s string) *string { return &s }

// returning is a handler that returns res for every call.
func returning(res chain.Result) chain.Handler {
	return func(context.Context, chain.Call) chain.Result { return res }
}

func TestCap(t *testing.T) {
	limits := func(tool string) int {
		if tool == "Read" {
			return 200
		}
		return 100
	}
	long := strings.Repeat("x", 300)
	cut100, _ := middleware.Truncate(long, 100)
	cut200, _ := middleware.Truncate(long, 200)
	tests := []struct {
		name string
		tool string
		in   chain.Result
		want resulttest.View
	}{
		{
			name: "nil content is not measured",
			tool: "Glob",
			in:   chain.Result{Summary: "nothing"},
			want: resulttest.View{Summary: "nothing"},
		},
		{
			name: "under the limit passes unchanged",
			tool: "Glob",
			in:   chain.Result{Summary: "s", Content: ptr("short")},
			want: resulttest.View{Summary: "s", Content: ptr("short")},
		},
		{
			name: "over the limit is cut, summary kept, not an error",
			tool: "Glob",
			in:   chain.Result{Summary: strings.Repeat("long summary ", 20), Content: ptr(long)},
			want: resulttest.View{
				Summary:    strings.Repeat("long summary ", 20),
				Content:    ptr(cut100),
				Truncation: &chain.Truncation{Limit: 100, OriginalBytes: 300, KeptBytes: 50, DroppedBytes: 250},
			},
		},
		{
			name: "error text is capped and stays an error",
			tool: "Glob",
			in:   chain.Result{Content: ptr(long)}.AsError(),
			want: resulttest.View{
				Content:    ptr(cut100),
				IsError:    true,
				Truncation: &chain.Truncation{Limit: 100, OriginalBytes: 300, KeptBytes: 50, DroppedBytes: 250},
			},
		},
		{
			name: "per-tool limit",
			tool: "Read",
			in:   chain.Result{Content: ptr(long)},
			want: resulttest.View{
				Content:    ptr(cut200),
				Truncation: &chain.Truncation{Limit: 200, OriginalBytes: 300, KeptBytes: 150, DroppedBytes: 150},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			h := middleware.Cap(limits, middleware.WithLogger(logtest.New(&buf, hclog.Info)))(returning(tt.in))
			got := h(context.Background(), chain.Call{ID: "c1", Tool: tt.tool})
			if diff := cmp.Diff(tt.want, resulttest.Of(got)); diff != "" {
				t.Errorf("Cap() result mismatch (-want +got):\n%s", diff)
			}
			lines := logtest.Lines(t, &buf)
			if tt.want.Truncation == nil {
				if len(lines) != 0 {
					t.Errorf("Cap() logged %v for a result it did not cut", lines)
				}
				return
			}
			tr := tt.want.Truncation
			want := []map[string]any{{
				"@level": "info", "@message": "tool result truncated",
				"tool": tt.tool, "call_id": "c1",
				"original_bytes": float64(tr.OriginalBytes), "kept_bytes": float64(tr.KeptBytes),
				"dropped_bytes": float64(tr.DroppedBytes), "limit": float64(tr.Limit),
			}}
			if diff := cmp.Diff(want, lines); diff != "" {
				t.Errorf("Cap() log mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCeiling(t *testing.T) {
	limit := func(string) int { return 100 }
	// grow appends to the content, as a careless middleware might.
	grow := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			c := *res.Content + strings.Repeat("!", 500)
			res.Content = &c
			return res
		}
	}
	var buf bytes.Buffer
	logger := logtest.New(&buf, hclog.Info)
	h := chain.Chain(
		middleware.Ceiling(limit, middleware.WithLogger(logger)),
		grow,
		middleware.Cap(limit, middleware.WithLogger(logger)),
	)(returning(chain.Result{Content: ptr(strings.Repeat("x", 300))}))

	got := h(context.Background(), chain.Call{ID: "c2", Tool: "Glob"})
	if n := len(*got.Content); n > 100 {
		t.Errorf("content after the ceiling = %d bytes, want <= 100", n)
	}
	wantCap := &chain.Truncation{Limit: 100, OriginalBytes: 300, KeptBytes: 50, DroppedBytes: 250}
	wantCeiling := &chain.Truncation{Limit: 100, OriginalBytes: 600, KeptBytes: 50, DroppedBytes: 550}
	v := resulttest.Of(got)
	if diff := cmp.Diff(wantCap, v.Truncation); diff != "" {
		t.Errorf("Truncation mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantCeiling, v.Ceiling); diff != "" {
		t.Errorf("Ceiling mismatch (-want +got):\n%s", diff)
	}
	lines := logtest.Lines(t, &buf)
	if len(lines) != 2 || lines[1]["@level"] != "warn" || lines[1]["tool"] != "Glob" {
		t.Errorf("want an info line for the cap, then a warning naming the tool; got %v", lines)
	}
}

func TestCapUnderLimitDoesNotAllocate(t *testing.T) {
	content := strings.Repeat("x", 1000)
	h := middleware.Cap(func(string) int { return 16384 })(returning(chain.Result{Content: &content}))
	ctx, call := context.Background(), chain.Call{Tool: "Read"}
	if allocs := testing.AllocsPerRun(100, func() { h(ctx, call) }); allocs != 0 {
		t.Errorf("Cap under the limit: %v allocs, want 0", allocs)
	}
}
