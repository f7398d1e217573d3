package shape_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/shape"
)

func TestWaterFill(t *testing.T) {
	tests := []struct {
		name   string
		demand []int
		budget int
		want   []int
	}{
		{"all fit", []int{10, 20, 30}, 100, []int{10, 20, 30}},
		{"equal shares", []int{51394, 35556, 23236, 40115}, 65536, []int{16384, 16384, 16384, 16384}},
		{"small ones whole", []int{3547, 3584, 3504, 51200}, 65536, []int{3547, 3584, 3504, 51200}},
		{"the remainder to the earliest", []int{100, 100, 100}, 10, []int{4, 3, 3}},
		{"zero and negative demands get nothing", []int{0, 50, -3, 50}, 60, []int{0, 30, 0, 30}},
		{"a budget below the count", []int{5, 5, 5}, 2, []int{1, 1, 0}},
		{"none", nil, 10, []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, shape.WaterFill(tt.demand, tt.budget)); diff != "" {
				t.Errorf("WaterFill(%v, %d) (-want +got):\n%s", tt.demand, tt.budget, diff)
			}
		})
	}
}

// A part a front end does not hold whole (Len and Cut: a stream's head and
// its Writer) is shared and cut as the same text held whole.
func TestShareStandIn(t *testing.T) {
	long := strings.Repeat("a line of a long log\n", 3000)
	short := "FAIL: TestParse"
	for _, p := range []shape.Policy{shape.Bytes(4096), shape.Bytes(300), shape.Bytes(64)} {
		held := []shape.Part{{Text: long}, {Text: short}}
		want, wantT, wantChanged := shape.Share(held, p)
		standIn := []shape.Part{{Text: long[:2*p.MaxBytes], Len: len(long), Cut: func(q shape.Policy) (string, chain.Truncation, bool) {
			return shape.Text(long, q)
		}}, {Text: short}}
		got, gotT, gotChanged := shape.Share(standIn, p)
		if diff := cmp.Diff(want, got); diff != "" || gotChanged != wantChanged {
			t.Errorf("limit %d: Share of a stand-in mismatch (-held +stand-in), changed %v want %v:\n%s", p.MaxBytes, gotChanged, wantChanged, diff)
		}
		if diff := cmp.Diff(wantT, gotT); diff != "" {
			t.Errorf("limit %d: figures mismatch (-held +stand-in):\n%s", p.MaxBytes, diff)
		}
	}
}
