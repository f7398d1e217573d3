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
			"WithContent keeps the flag and the figures",
			chain.ErrorResult("s", "long text").WithTruncation("cut", cut).WithContent("other"),
			resulttest.View{Summary: "s", Content: ptr("other"), IsError: true, Truncation: &cut},
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

// Owns tells a result that holds its content from one that points to a
// string someone else made (issue 22, item 8): the ceiling copies the
// latter.
func TestResultOwns(t *testing.T) {
	cut := chain.Truncation{Limit: 10, OriginalBytes: 30, KeptBytes: 5, DroppedBytes: 25}
	s := "text"
	owned := chain.Result{}.WithContent("text")
	tests := []struct {
		name string
		r    chain.Result
		want bool
	}{
		{"no content", chain.Result{}, true},
		{"a pointer of its own", chain.Result{Content: &s}, false},
		{"an error with a pointer of its own", chain.Result{Content: &s}.AsError(), false},
		{"WithContent", owned, true},
		{"WithContent, then AsError", owned.AsError(), true},
		{"ErrorResult", chain.ErrorResult("s", "text"), true},
		{"a cut", chain.Result{Content: &s}.WithTruncation("cut", cut), true},
		{"the ceiling's cut", chain.Result{}.WithCeiling("cut", cut), true},
		{"Content replaced", func() chain.Result { r := owned; r.Content = &s; return r }(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Owns(); got != tt.want {
				t.Errorf("Owns() = %v, want %v", got, tt.want)
			}
		})
	}
}

// WithContent copies: writing through the pointer the result had changes
// nothing in the result it returns, and neither does writing through the
// original's Content.
func TestResultWithContentCopies(t *testing.T) {
	s := "small"
	r := chain.Result{Content: &s}
	got := r.WithContent(*r.Content)
	s = "grown"
	if diff := cmp.Diff("small", *got.Content); diff != "" {
		t.Errorf("content after a write through the old pointer (-want +got):\n%s", diff)
	}
	again := got.WithContent(*got.Content)
	*got.Content = "grown"
	if diff := cmp.Diff("small", *again.Content); diff != "" {
		t.Errorf("content after a write through the copy it was made from (-want +got):\n%s", diff)
	}
}
