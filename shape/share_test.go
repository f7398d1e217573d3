package shape_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/shape"
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
