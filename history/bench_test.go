package history_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolcap/toolcap/history"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/tokens"
)

// BenchmarkAge is the time ageing adds to a turn of a 200-message history
// (100 tool results of 4 KB), counted with the calibrated estimate: when
// nothing is aged (within the budget, or already aged and kept so), and
// for a pass that ages a batch (issue 36: under 1 ms and 5 ms).
func BenchmarkAge(b *testing.B) {
	results := make([]history.Result, 100)
	for i := range results {
		results[i] = history.Result{ID: fmt.Sprintf("call_%03d", i), Tool: "Read", Text: output(i, 4000)}
	}
	ctx := rest.WithScope(context.Background(), "bench")
	newAger := func(b *testing.B, budget int) *history.Ager {
		k, _ := rest.NewKeeper(rest.NewMemory(rest.Config{MaxBytes: 1 << 30}))
		a, err := history.New(k.Store(), history.Config{MaxTokens: budget, KeepRecent: 4, ClearAtLeast: 20000, Counter: tokens.NewCalibrated()})
		if err != nil {
			b.Fatal(err)
		}
		return a
	}
	b.Run("within the budget", func(b *testing.B) {
		a := newAger(b, 1<<24)
		b.ReportAllocs()
		for b.Loop() {
			if p, _ := a.Age(ctx, results); len(p.Aged) != 0 {
				b.Fatal("aged")
			}
		}
	})
	b.Run("aged before, kept", func(b *testing.B) {
		a := newAger(b, 60000)
		p, _ := a.Age(ctx, results)
		kept := append([]history.Result(nil), results...)
		for _, g := range p.Aged {
			kept[g.Index].Text = g.Stub
		}
		if p, _ := a.Age(ctx, kept); len(p.Aged) != 0 {
			b.Fatalf("a kept history aged again: %d", len(p.Aged))
		}
		b.ReportAllocs()
		for b.Loop() {
			a.Age(ctx, kept)
		}
	})
	b.Run("a batch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			a := newAger(b, 190000) // 100 results of about 2,000 tokens: one batch of about 20,000
			b.StartTimer()
			if p, _ := a.Age(ctx, results); p.Freed.Results == 0 {
				b.Fatal("nothing aged")
			}
		}
	})
}
