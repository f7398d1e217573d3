package cut

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAppendJSONSizes pins the buffers a KeepJSON Writer takes to hold a
// document of 8 MB written 64 KiB at a time: each one it outgrows stays in
// a short process's memory, so their sum is its peak.
func TestAppendJSONSizes(t *testing.T) {
	const piece = 64 << 10
	doubling := []int{64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20}
	tests := []struct {
		name  string
		limit int
		n     int
		want  []int
	}{
		// The bound is 8 MiB: from 2 MiB it goes there in one step.
		{"8MB at 1 MiB", 1 << 20, 8_000_000, append(doubling, 2<<20, 8<<20)},
		// It may fit: one buffer of the limit's window past 1 MiB.
		{"8MB at 8 MiB", 8 << 20, 8_000_000, append(doubling, 8<<20+4)},
		// It outgrew the window: on to the bound (4 times the limit).
		{"10MB at 8 MiB", 8 << 20, 10_000_000, append(doubling, 8<<20+4, 32<<20)},
		{"1.5MB at 16 KiB", 16 << 10, 1_500_000, append(doubling, 2<<20)},
		{"small", 16 << 10, 5000, []int{4096, 8192}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := bytes.Repeat([]byte{' '}, min(piece, 4000))
			if tt.n > 5000 {
				p = bytes.Repeat([]byte{' '}, piece)
			}
			var b []byte
			var got []int
			for len(b) < tt.n {
				q := p[:min(len(p), tt.n-len(b))]
				b = appendJSON(b, q, windowLen(tt.limit), JSONMaxInput(tt.limit))
				if len(got) == 0 || got[len(got)-1] != cap(b) {
					got = append(got, cap(b))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("appendJSON capacities (-want +got):\n%s", diff)
			}
		})
	}
}
