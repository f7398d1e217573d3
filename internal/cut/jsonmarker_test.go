package cut_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

func TestFloorCharBoundary(t *testing.T) {
	tests := []struct {
		s    string
		k    int
		want int
	}{
		{"abc", 2, 2},
		{"aé", 2, 1}, // inside é
		{"aé", 3, 3},
		{"abc", 10, 3},
		{"abc", -1, 0},
		{"a\xffb", 2, 2}, // an invalid byte is a character of its own
	}
	for _, tt := range tests {
		if got := cut.FloorCharBoundary(tt.s, tt.k); got != tt.want {
			t.Errorf("FloorCharBoundary(%q, %d) = %d, want %d", tt.s, tt.k, got, tt.want)
		}
	}
}

func TestAddDroppedInJSON(t *testing.T) {
	const m = `\n[truncated: %d bytes dropped, refine your query]`
	doc := func(a, b int) string {
		return `{"a":"xx` + fmt.Sprintf(m, a) + `","k":"\"q\"","b":["y\"` + fmt.Sprintf(m, b) + `"],"c":"` + fmt.Sprintf(m, 1)[2:] + `"}`
	}
	tests := []struct {
		name     string
		add      map[string]int // by kept content
		want     string
		wantSeen []string
	}{
		{"both raised", map[string]int{"xx": 1000, `y\"`: 5}, doc(1007, 14), []string{"xx", `y\"`}},
		{"one raised, a digit more", map[string]int{`y\"`: 991}, doc(7, 1000), []string{"xx", `y\"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen []string
			got := cut.AddDroppedInJSON([]byte(doc(7, 9)), func(kept []byte) int {
				seen = append(seen, string(kept))
				return tt.add[string(kept)]
			})
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("AddDroppedInJSON (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSeen, seen); diff != "" {
				t.Errorf("strings seen (-want +got):\n%s", diff)
			}
			if !json.Valid(got) {
				t.Errorf("not valid JSON: %s", got)
			}
		})
	}
	// Nothing to add: doc itself.
	in := []byte(doc(7, 9))
	if same := cut.AddDroppedInJSON(in, func([]byte) int { return 0 }); &same[0] != &in[0] {
		t.Error("nothing changed, yet doc was copied")
	}
}
