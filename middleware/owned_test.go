package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/middleware"
	"github.com/toolcap/toolcap/shape"
)

// TestPinnedCeilingOwnsWhatItLetsThrough checks that content a user
// middleware put in place of the cap's leaves the chain as the ceiling's
// own copy, so that writing through the middleware's pointer afterwards
// changes nothing, and that the cap's own content passes as it is.
func TestPinnedCeilingOwnsWhatItLetsThrough(t *testing.T) {
	const limit = 100
	huge := strings.Repeat("x", 10*limit)
	for _, tt := range []struct {
		name     string
		answer   string
		replace  bool // the middleware returns a *string of its own
		attempts int  // times the middleware calls next; it returns the first result,
		// whose content is not the last the cap passed up
		want     string
		wantSame bool // the result's content is the pointer the cap passed up
	}{
		{name: "cap's content, fits", answer: "ok", attempts: 1, want: "ok", wantSame: true},
		{name: "cap's content, cut", answer: huge, attempts: 1, want: mustCut(t, huge, limit), wantSame: true},
		{name: "replaced, fits", answer: "ok", replace: true, attempts: 1, want: "ok"},
		{name: "replaced, cut by the cap", answer: huge, replace: true, attempts: 1, want: mustCut(t, huge, limit)},
		{name: "first of two attempts", answer: "ok", attempts: 2, want: "ok"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var passed, kept *string
			mw := func(next chain.Handler) chain.Handler {
				return func(ctx context.Context, call chain.Call) chain.Result {
					res := next(ctx, call)
					for range tt.attempts - 1 {
						next(ctx, call)
					}
					passed = res.Content
					if tt.replace {
						s := *res.Content
						res.Content = &s
					}
					kept = res.Content
					return res
				}
			}
			policy := func(string) shape.Policy { return shape.Bytes(limit) }
			// Each attempt is answered with content of its own, as a tool's is.
			fresh := func(context.Context, chain.Call) chain.Result {
				s := tt.answer
				return chain.Result{Content: &s}
			}
			h := middleware.Pinned(policy, []chain.Middleware{mw})(fresh)
			res := h(context.Background(), chain.Call{ID: "1", Tool: "Read"})
			if same := res.Content == passed; same != tt.wantSame {
				t.Errorf("content is the pointer the cap passed up: %v, want %v", same, tt.wantSame)
			}
			if !tt.wantSame {
				*kept = huge // the middleware writes through the pointer it kept
			}
			if diff := cmp.Diff(tt.want, *res.Content); diff != "" {
				t.Errorf("content after the middleware wrote through its pointer (-want +got):\n%s", diff)
			}
		})
	}
}

// mustCut is content cut to limit bytes by the head rule.
func mustCut(t *testing.T, content string, limit int) string {
	t.Helper()
	out, _, ok := shape.Text(content, shape.Bytes(limit))
	if !ok {
		t.Fatalf("%d bytes fit %d", len(content), limit)
	}
	return out
}
