package pin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/internal/resulttest"
	"github.com/toolcap/toolcap/internal/shape"
)

// TestPinned checks the pinned order: the innermost user middleware gets
// exactly the cap's output, the user's compose as an onion, and the
// ceiling cuts what they grew, whatever they do.
func TestPinned(t *testing.T) {
	var seen []string
	record := func(name string, grow string) chain.Middleware {
		return func(next chain.Handler) chain.Handler {
			return func(ctx context.Context, call chain.Call) chain.Result {
				seen = append(seen, name+" in")
				res := next(ctx, call)
				seen = append(seen, fmt.Sprintf("%s out %d", name, len(*res.Content)))
				if grow != "" {
					s := *res.Content + grow
					res.Content = &s
				}
				return res
			}
		}
	}
	policy := func(string) shape.Policy { return shape.Bytes(200) }
	a := pin.NewAnswerer(pin.Pinned(policy, []chain.Middleware{record("outer", strings.Repeat("!", 300)), nil, record("inner", "")}))
	long := strings.Repeat("x", 1000)
	res := a.Answer(context.Background(), chain.Call{ID: "1", Tool: "Glob"}, chain.Result{Content: &long})

	want := []string{"outer in", "inner in", "inner out 200", "outer out 200"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	v := resulttest.Of(res)
	if v.Truncation == nil || v.Truncation.DroppedBytes == 0 {
		t.Errorf("the cap's figures are missing: %+v", v)
	}
	if v.Ceiling == nil || len(*res.Content) > 200 {
		t.Errorf("the ceiling did not hold 200 bytes: %d bytes, ceiling %+v", len(*res.Content), v.Ceiling)
	}
}

func TestPinnedRecovers(t *testing.T) {
	panics := func(chain.Handler) chain.Handler {
		return func(context.Context, chain.Call) chain.Result { panic("boom") }
	}
	a := pin.NewAnswerer(pin.Pinned(nil, []chain.Middleware{panics}))
	res := a.Answer(context.Background(), chain.Call{Tool: "Read"}, chain.Result{})
	if !res.IsError() || !strings.Contains(*res.Content, "boom") {
		t.Errorf("a panicking middleware gave %+v", resulttest.Of(res))
	}
}

func TestChecked(t *testing.T) {
	ok := func(next chain.Handler) chain.Handler { return next }
	bad := func(chain.Handler) chain.Handler { return nil }
	tests := []struct {
		name string
		mws  []chain.Middleware
		kept int
		want int
	}{
		{"none", nil, 0, -1},
		{"all fine, nils skipped", []chain.Middleware{ok, nil, ok}, 2, -1},
		{"the innermost nil handler, by position", []chain.Middleware{ok, nil, bad, ok}, 3, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, nilAt := pin.Checked(tt.mws)
			chain.Chain(kept...)(returning(chain.Result{}))
			if len(kept) != tt.kept || nilAt() != tt.want {
				t.Errorf("Checked: %d kept, nilAt %d; want %d, %d", len(kept), nilAt(), tt.kept, tt.want)
			}
		})
	}
}

// TestAnswererWithoutAnswer: a middleware that calls next with a context
// not derived from its own loses the answer, and the call gets an error
// result naming it rather than a made-up one; so does the zero Answerer.
func TestAnswererWithoutAnswer(t *testing.T) {
	fresh := func(next chain.Handler) chain.Handler {
		return func(_ context.Context, call chain.Call) chain.Result { return next(context.Background(), call) }
	}
	text := "the server's answer"
	for name, a := range map[string]pin.Answerer{"a context of its own": pin.NewAnswerer(fresh), "the zero Answerer": {}} {
		res := a.Answer(context.Background(), chain.Call{ID: "7", Tool: "Grep"}, chain.Result{Content: &text})
		if !res.IsError() || !strings.Contains(*res.Content, "Grep") {
			t.Errorf("%s: %+v, want an error result naming Grep", name, resulttest.Of(res))
		}
	}
	res := pin.NewAnswerer(chain.Chain()).Answer(context.Background(), chain.Call{ID: "8", Tool: "Grep"}, chain.Result{Content: &text})
	if res.IsError() || *res.Content != text {
		t.Errorf("no middleware: %+v, want the answer itself", resulttest.Of(res))
	}
}

// ExampleAnswerer runs a result a server already gave (as toolcap mcp does)
// through toolcap's pinned order: the cap, the user's middleware, the
// ceiling.
func ExampleAnswerer() {
	note := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			if t, ok := res.Truncation(); ok {
				fmt.Printf("the middleware sees %d bytes; %d were cut\n", len(*res.Content), t.DroppedBytes)
			}
			return res
		}
	}
	a := pin.NewAnswerer(pin.Pinned(func(string) shape.Policy { return shape.Bytes(128) }, []chain.Middleware{note}))

	text := strings.Repeat("a line of output\n", 100)
	res := a.Answer(context.Background(), chain.Call{ID: "1", Tool: "Bash"}, chain.Result{Content: &text})
	fmt.Println(len(*res.Content), strings.HasSuffix(*res.Content, "refine your query]"))
	// Output:
	// the middleware sees 128 bytes; 1623 were cut
	// 128 true
}

// The ceiling owns what it lets through (issue 22, item 8): a result
// whose Content a user middleware replaced with a pointer of its own
// reaches the caller in storage of its own, so a write through that
// pointer after the chain returned changes nothing; a result a middleware
// passes on as the chain handed it is passed on as it is, with no
// allocation.
func TestPinnedCeilingOwnsContent(t *testing.T) {
	policy := func(string) shape.Policy { return shape.Bytes(100) }
	answer := chain.Result{Summary: "Read"}.WithContent("fits")
	tests := []struct {
		name string
		// swap returns the result the middleware returns and the pointer
		// it keeps, nil when it keeps none.
		swap     func(res chain.Result) (chain.Result, *string)
		wantSame bool // the caller gets the very storage the cap passed up
	}{
		{"passed on", func(res chain.Result) (chain.Result, *string) { return res, nil }, true},
		{"new pointer", func(res chain.Result) (chain.Result, *string) {
			s := *res.Content
			res.Content = &s
			return res, &s
		}, false},
		{"new result", func(res chain.Result) (chain.Result, *string) {
			s := *res.Content
			return chain.Result{Summary: res.Summary, Content: &s}, &s
		}, false},
		{"new error result", func(res chain.Result) (chain.Result, *string) {
			s := *res.Content
			return chain.Result{Summary: res.Summary, Content: &s}.AsError(), &s
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var handed, kept *string
			mw := func(next chain.Handler) chain.Handler {
				return func(ctx context.Context, call chain.Call) chain.Result {
					res := next(ctx, call)
					handed = res.Content
					res, kept = tt.swap(res)
					return res
				}
			}
			h := pin.Pinned(policy, []chain.Middleware{mw})(returning(answer))
			ctx := context.Background()
			res := h(ctx, chain.Call{ID: "1", Tool: "Read"})
			if kept != nil {
				*kept = strings.Repeat("x", 1000) // after the chain returned
			}
			if diff := cmp.Diff("fits", *res.Content); diff != "" {
				t.Errorf("content after the middleware wrote through its pointer (-want +got):\n%s", diff)
			}
			if same := res.Content == handed; same != tt.wantSame || !res.Owns() {
				t.Errorf("caller's content is the cap's: %v, want %v; owns its content: %v, want true", same, tt.wantSame, res.Owns())
			}
			if tt.wantSame {
				if n := testing.AllocsPerRun(100, func() { h(ctx, chain.Call{ID: "1", Tool: "Read"}) }); n != 0 {
					t.Errorf("the fitting path: %v allocs, want 0", n)
				}
			}
		})
	}
}
