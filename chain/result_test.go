package chain_test

import (
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/resulttest"
)

func ptr(s string) *string { return &s }

// A Result must stay within four machine words: past that, the compiler
// passes it through the stack at every layer of a chain (docs/benchmarks.md).
func TestResultFitsInRegisters(t *testing.T) {
	if got, want := unsafe.Sizeof(chain.Result{}), 4*unsafe.Sizeof(uintptr(0)); got > want {
		t.Errorf("unsafe.Sizeof(chain.Result{}) = %d, want <= %d", got, want)
	}
}

func TestResultMethods(t *testing.T) {
	cut := chain.Truncation{Limit: 10, OriginalBytes: 30, KeptBytes: 5, DroppedBytes: 25}
	ceil := chain.Truncation{Limit: 10, OriginalBytes: 40, KeptBytes: 5, DroppedBytes: 35}
	tests := []struct {
		name string
		got  chain.Result
		want resulttest.View
	}{
		{"zero", chain.Result{}, resulttest.View{}},
		{
			"success",
			chain.Result{Summary: "s", Content: ptr("c")},
			resulttest.View{Summary: "s", Content: ptr("c")},
		},
		{
			"ErrorResult",
			chain.ErrorResult("Read failed", "no such file"),
			resulttest.View{Summary: "Read failed", Content: ptr("no such file"), IsError: true},
		},
		{
			"AsError keeps everything else",
			chain.Result{Summary: "s"}.WithTruncation("cut", cut).AsError(),
			resulttest.View{Summary: "s", Content: ptr("cut"), IsError: true, Truncation: &cut},
		},
		{
			"AsError twice",
			chain.Result{Content: ptr("c")}.AsError().AsError(),
			resulttest.View{Content: ptr("c"), IsError: true},
		},
		{
			"WithTruncation keeps the error flag",
			chain.ErrorResult("s", "long text").WithTruncation("cut", cut),
			resulttest.View{Summary: "s", Content: ptr("cut"), IsError: true, Truncation: &cut},
		},
		{
			"WithCeiling keeps the cap's figures",
			chain.Result{}.WithTruncation("first", cut).WithCeiling("second", ceil),
			resulttest.View{Content: ptr("second"), Truncation: &cut, Ceiling: &ceil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, resulttest.Of(tt.got)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Results are values: changing a copy never changes the original.
func TestResultCopiesAreIndependent(t *testing.T) {
	cut := chain.Truncation{Limit: 10, OriginalBytes: 30, KeptBytes: 5, DroppedBytes: 25}
	orig := chain.Result{Summary: "s"}.WithTruncation("cut", cut)
	before := resulttest.Of(orig)

	_ = orig.AsError()
	_ = orig.WithCeiling("other", cut)
	_ = orig.WithTruncation("other", chain.Truncation{DroppedBytes: 1})
	if diff := cmp.Diff(before, resulttest.Of(orig)); diff != "" {
		t.Errorf("a copy's change reached the original (-want +got):\n%s", diff)
	}

	// An error result made from a success leaves other errors alone.
	a := chain.Result{}.AsError()
	b := a.WithTruncation("x", cut)
	if _, ok := a.Truncation(); ok {
		t.Error("WithTruncation on a copy gave the original figures")
	}
	if !b.IsError() {
		t.Error("WithTruncation lost the error flag")
	}
}

func TestResultMethodsDoNotAllocate(t *testing.T) {
	content := "c"
	r := chain.Result{Content: &content}
	allocs := testing.AllocsPerRun(100, func() {
		e := r.AsError()
		_, _ = e.Truncation()
		_, _ = e.Ceiling()
		_ = e.IsError()
	})
	if allocs != 0 {
		t.Errorf("AsError and the readers: %v allocs, want 0", allocs)
	}
}
