package shape_test

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/shape"
)

// TestJSONDeepNestingIsLinear: a structured value nested as deep as
// encoding/json allows (10,000), whose every level loses an element, is
// cut in memory a small multiple of its length. Its levels' pointers were
// each rebuilt from the root, and each prefixed again with the member's
// key, and the note listed them all: seconds and gigabytes at 2,000 deep.
func TestJSONDeepNestingIsLinear(t *testing.T) {
	const depth = 10000
	bottom := `"` + strings.Repeat("x", 50_000) + `"`
	tests := []struct {
		name string
		doc  string
	}{
		{"arrays", strings.Repeat("[", depth) + bottom + strings.Repeat(",1]", depth)},
		{"under an object's member", `{"deep":` + strings.Repeat("[", depth-1) + bottom + strings.Repeat(",1]", depth-1) + `,"b":"` + strings.Repeat("y", 1000) + `"}`},
		{"objects", strings.Repeat(`{"a/":`, depth) + bottom + strings.Repeat(`,"b":1}`, depth)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := []byte(tt.doc)
			if !json.Valid(raw) {
				t.Fatal("the test document is not valid JSON")
			}
			p := shape.Policy{MaxBytes: 16 << 10}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			s, ok := shape.JSON(raw, p, nil)
			runtime.ReadMemStats(&after)
			if !ok || !s.Cut || len(s.Raw) > p.MaxBytes || !json.Valid(s.Raw) {
				t.Fatalf("JSON: ok %v, cut %v, %d bytes, valid %v", ok, s.Cut, len(s.Raw), json.Valid(s.Raw))
			}
			// Generous: the quadratic cost it guards against is thousands
			// of times the input.
			if got, most := after.TotalAlloc-before.TotalAlloc, uint64(32*len(raw)+8<<20); got > most {
				t.Errorf("JSON allocated %d bytes for a %d-byte value, want at most %d", got, len(raw), most)
			}
			if got, most := after.Mallocs-before.Mallocs, uint64(depth); got > most {
				t.Errorf("JSON made %d allocations, want at most %d", got, most)
			}
			if s.Note.Long == "" || len(s.Note.Long) > 2*p.MaxBytes {
				t.Errorf("the note is %d bytes, want one, bounded by the limit", len(s.Note.Long))
			}
		})
	}
}
