package shape_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/shape"
)

// TestJSONReduced: a value whose containers a reader cut short, past what
// a cut can keep, is cut as the whole value is: same value, note and
// figures.
func TestJSONReduced(t *testing.T) {
	ints := func(from, to int) []string {
		var out []string
		for i := from; i < to; i++ {
			out = append(out, fmt.Sprint(i))
		}
		return out
	}
	for _, tc := range []struct {
		name          string
		prefix, whole string // the reduced value and the whole one
	}{
		{
			name:   "root array",
			prefix: "[" + strings.Join(ints(0, 400), ",") + "]",
			whole:  "[" + strings.Join(ints(0, 5000), ",") + "]",
		},
		{
			name:   "member of the root object",
			prefix: `{"n":1,"rows":[` + strings.Join(ints(0, 400), ",") + `]}`,
			whole:  `{"n":1,"rows":[` + strings.Join(ints(0, 5000), ",") + `]}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const limit = 500
			ptr := ""
			if strings.HasPrefix(tc.whole, "{") {
				ptr = "/rows"
			}
			// What the reader left out: the elements after the prefix's,
			// each with its comma.
			left := shape.Elided{Pointer: ptr, Count: 4600, Bytes: len(tc.whole) - len(tc.prefix)}
			want, wok := shape.JSON([]byte(tc.whole), shape.Bytes(limit), nil)
			got, gok := shape.JSONReduced([]byte(tc.prefix), shape.Bytes(limit), nil, nil, []shape.Elided{left})
			if diff := cmp.Diff(fmt.Sprint(wok, string(want.Raw), want.Note, want.Figures), fmt.Sprint(gok, string(got.Raw), got.Note, got.Figures)); diff != "" {
				t.Errorf("JSONReduced mismatch with JSON of the whole value (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFitDroppedCount: blocks dropped before, given as a count, are noted
// and counted as the same blocks given one by one.
func TestFitDroppedCount(t *testing.T) {
	blocks := []shape.Block{{Kind: shape.BlockText, Text: "shots"}}
	for _, n := range []int{1, 2, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			one := make([]shape.Dropped, n)
			for i := range one {
				one[i] = shape.Dropped{Kind: shape.BlockImage, Size: 13}
			}
			counted := []shape.Dropped{{Kind: shape.BlockImage, Size: 13 * n, Count: n}}
			for _, limit := range []int{16384, 100} {
				wantOut, wantFig := shape.Fit(blocks, shape.Joined{Text: &blocks[0].Text}, shape.Bytes(limit), shape.Note{}, one)
				gotOut, gotFig := shape.Fit(blocks, shape.Joined{Text: &blocks[0].Text}, shape.Bytes(limit), shape.Note{}, counted)
				if diff := cmp.Diff(wantOut, gotOut); diff != "" {
					t.Errorf("limit %d: blocks (-one by one +counted):\n%s", limit, diff)
				}
				if diff := cmp.Diff(wantFig, gotFig); diff != "" {
					t.Errorf("limit %d: figures (-one by one +counted):\n%s", limit, diff)
				}
			}
		})
	}
}
