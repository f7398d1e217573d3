package chain_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/resulttest"
)

// WithContent gives a result its own copy of a content: the figures and
// the error flag are kept, and writing through the old pointer changes
// nothing of the new result.
func TestWithContent(t *testing.T) {
	cut := chain.Truncation{Limit: 10, OriginalBytes: 30, KeptBytes: 5, DroppedBytes: 25}
	for _, tt := range []struct {
		name string
		in   chain.Result
	}{
		{"plain", chain.Result{Summary: "s", Content: ptr("old")}},
		{"error", chain.Result{Summary: "s", Content: ptr("old")}.AsError()},
		{"cut", chain.Result{Summary: "s"}.WithTruncation("old", cut)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.in.Content
			got := tt.in.WithContent("new")
			*before = "written later"
			want := resulttest.Of(tt.in)
			want.Content = ptr("new")
			if diff := cmp.Diff(want, resulttest.Of(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
