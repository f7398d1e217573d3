package cut_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/cut"
)

var anyMarker = regexp.MustCompile(`\n\[truncated: (\d+) bytes dropped, refine your query\]`)

// TestRecut: a text an earlier cut made, cut again to a smaller limit,
// carries one marker, whose count is the original's bytes not kept.
func TestRecut(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		b.WriteString("ok " + strconv.Itoa(i) + "\n")
	}
	b.WriteString("FAIL: TestX")
	log := b.String()
	doc, _ := json.Marshal(map[string]any{"items": strings.Split(log, "\n")})
	tests := []struct {
		name     string
		original string
		spec     cut.Spec
	}{
		{"head", log, cut.Spec{}},
		{"head_tail", log, cut.Spec{Keep: cut.KeepHeadTail}},
		{"json", string(doc), cut.Spec{Keep: cut.KeepJSON}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, _ := cut.Cut(tt.original, 4000, tt.spec)
			for _, limit := range []int{3000, 1000, 200} {
				out, st := cut.Recut(first, limit, tt.spec)
				ms := anyMarker.FindAllStringSubmatchIndex(out, -1)
				if len(out) > limit || len(ms) != 1 {
					t.Fatalf("limit %d: %d bytes, %d markers", limit, len(out), len(ms))
				}
				n, _ := strconv.Atoi(out[ms[0][2]:ms[0][3]])
				kept := len(out) - (ms[0][1] - ms[0][0])
				if tt.spec.Keep == cut.KeepHeadTail {
					kept-- // the newline after the marker stands for one the cut dropped
				}
				if n != len(tt.original)-kept || st.Dropped != n || st.Original != len(tt.original) {
					t.Errorf("limit %d: marker %d, stats %+v; want %d (kept %d of %d)", limit, n, st, len(tt.original)-kept, kept, len(tt.original))
				}
				if tt.spec.Keep == cut.KeepJSON && !json.Valid([]byte(out[:ms[0][0]])) {
					t.Errorf("limit %d: the document is not valid JSON", limit)
				}
			}
		})
	}
	// Without a marker, Recut is Cut.
	want, _ := cut.Cut(log, 500, cut.Spec{Keep: cut.KeepHeadTail})
	if got, _ := cut.Recut(log, 500, cut.Spec{Keep: cut.KeepHeadTail}); got != want {
		t.Errorf("Recut of an uncut text differs from Cut")
	}
}
