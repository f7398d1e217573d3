package owned_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/owned"
)

type otherKey struct{}

// TestCall checks that a Call is found through contexts derived from it,
// by its own chain's key only, that it delegates other keys and the
// parent's cancellation, and that its storage serves one content per call.
func TestCall(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), otherKey{}, "parent's"))
	chainKey, otherChain := new(int), new(int)
	c := owned.New(parent, chainKey)
	derived, stop := context.WithCancel(context.WithValue(c, otherKey{}, "derived"))
	defer stop()

	got := map[string]any{
		"found through a derived context": owned.For(derived, chainKey) == c,
		"found by another chain's key":    owned.For(derived, otherChain) != nil,
		"parent's value":                  c.Value(otherKey{}),
		"nothing passed is passed":        c.Passed(nil),
	}
	first := owned.Content(derived, "first")
	second := owned.Content(derived, "second")
	c.Pass(first)
	got["first passed"] = c.Passed(first)
	got["second passed"] = c.Passed(second)
	got["contents"] = []string{*first, *second}
	cancel()
	<-derived.Done() // the parent's cancellation reaches contexts derived from c
	got["cause"] = context.Cause(derived).Error()

	want := map[string]any{
		"found through a derived context": true,
		"found by another chain's key":    false,
		"parent's value":                  "parent's",
		"nothing passed is passed":        false,
		"first passed":                    true,
		"second passed":                   false,
		"contents":                        []string{"first", "second"},
		"cause":                           "context canceled",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Content without a Call allocates its copy; with one, the first content of
// the call costs nothing more.
func TestContentAllocs(t *testing.T) {
	ctx := context.Background()
	got := map[string]float64{
		"no call": testing.AllocsPerRun(100, func() { owned.Content(ctx, "x") }),
		"call": testing.AllocsPerRun(100, func() {
			owned.Content(owned.New(ctx, &ctx), "x")
		}),
	}
	want := map[string]float64{"no call": 1, "call": 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("allocations (-want +got):\n%s", diff)
	}
}
