package cut_test

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

// maxJSONDepth is the deepest nesting encoding/json (and so the proxy's
// reader) accepts.
const maxJSONDepth = 10000

// deepArrays is an array nested depth deep whose every level holds the
// next level and a number after it, with a long string at the bottom: a
// cut keeps 1 of 2 elements of thousands of levels.
func deepArrays(depth int) string {
	return strings.Repeat("[", depth) + `"` + strings.Repeat("x", 50_000) + `"` + strings.Repeat(",1]", depth)
}

// deepObjects is an object nested depth deep under keys that a JSON
// Pointer escapes, written with an escape, and a second member at each
// level.
func deepObjects(depth int) string {
	return strings.Repeat(`{"a\u002f~":`, depth) + `"` + strings.Repeat("x", 50_000) + `"` + strings.Repeat(`,"b":1}`, depth)
}

// allocated returns the bytes f allocates, and its allocations.
func allocated(f func()) (bytes, count uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs
}

// TestJSONDeepNestingIsLinear: a structural cut records a level for each
// container on its path; their pointers were rebuilt level by level, which
// took seconds and gigabytes for a document 2,000 deep. Now a cut of one
// 10,000 deep allocates a small multiple of its length.
func TestJSONDeepNestingIsLinear(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		// inner is the pointer of the level at depth 3, and step what each
		// level adds to it.
		inner, step string
	}{
		{"arrays", deepArrays(maxJSONDepth), "/0/0", "/0"},
		{"objects with escaped keys", deepObjects(maxJSONDepth), "/a~1~0/a~1~0", "/a~1~0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.doc)) {
				t.Fatal("the test document is not valid JSON")
			}
			const limit = 16 << 10
			spec := cut.Spec{Keep: cut.KeepJSON}
			var out string
			var st cut.Stats
			bytes, count := allocated(func() { out, st = cut.Cut(tt.doc, limit, spec) })
			if st.Strategy != cut.KeepJSON || len(out) > limit {
				t.Fatalf("Cut: strategy %q, %d bytes; want a JSON cut within %d", st.Strategy, len(out), limit)
			}
			// The bound is generous (a few times the input); the quadratic
			// cost it guards against is thousands of times it.
			if most := uint64(16*len(tt.doc) + 4<<20); bytes > most {
				t.Errorf("Cut allocated %d bytes for a %d-byte document, want at most %d", bytes, len(tt.doc), most)
			}
			// A key with an escape is decoded once, on the cut's path.
			if most := uint64(len(st.Levels) + 1000); count > most {
				t.Errorf("Cut made %d allocations, want at most %d", count, most)
			}
			if len(st.Levels) < 1000 {
				t.Fatalf("Cut recorded %d levels, want the thousands on the cut's path", len(st.Levels))
			}
			// Every level's pointer extends its parent's by one step.
			got := []string{st.Levels[0].Pointer, st.Levels[2].Pointer}
			if diff := cmp.Diff([]string{"", tt.inner}, got); diff != "" {
				t.Errorf("pointers of levels 1 and 3 (-want +got):\n%s", diff)
			}
			for i := 1; i < len(st.Levels); i++ {
				if st.Levels[i].Pointer != st.Levels[i-1].Pointer+tt.step {
					t.Fatalf("level %d's pointer %.40q does not extend level %d's %.40q by %q", i, st.Levels[i].Pointer, i-1, st.Levels[i-1].Pointer, tt.step)
				}
			}

			raw := []byte(tt.doc)
			var vout []byte
			var ok bool
			bytes, count = allocated(func() { vout, _, ok = cut.JSONValue(raw, limit) })
			if !ok || !json.Valid(vout) || len(vout) > limit {
				t.Fatalf("JSONValue: ok %v, valid %v, %d bytes", ok, json.Valid(vout), len(vout))
			}
			if most := uint64(16*len(tt.doc) + 4<<20); bytes > most {
				t.Errorf("JSONValue allocated %d bytes for a %d-byte document, want at most %d", bytes, len(tt.doc), most)
			}
			// A key with an escape is decoded once, on the cut's path.
			if most := uint64(len(st.Levels) + 1000); count > most {
				t.Errorf("JSONValue made %d allocations, want at most %d", count, most)
			}
		})
	}
}

func TestPointerToken(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"entities", "entities"},
		{"a/b", "a~1b"},
		{"m~n", "m~0n"},
		{"~1", "~01"},
		{"/~/", "~1~0~1"},
		{"é/é", "é~1é"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, cut.PointerToken(tt.in)); diff != "" {
			t.Errorf("PointerToken(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestJSONLevelPointerKeys: a level's pointer holds its key decoded as
// encoding/json decodes it, then escaped (RFC 6901).
func TestJSONLevelPointerKeys(t *testing.T) {
	keys := []string{
		`"plain"`, `"a\/b"`, `"m~n"`, `"q\"\\"`, `"\b\f\n\r\t"`, `"\u00e9\u002F"`,
		`"\ud83d\ude00"`, `"\ud800x"`, `"\udc00\ud800"`, `"\ud83d\u0041"`, `"é"`,
	}
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			doc := `{` + key + `:["` + strings.Repeat("x", 200) + `",1]}`
			_, st, ok := cut.JSONValue([]byte(doc), 100)
			if !ok {
				t.Fatalf("JSONValue(%s): not ok", doc)
			}
			var decoded string
			if err := json.Unmarshal([]byte(key), &decoded); err != nil {
				t.Fatal(err)
			}
			want := []string{"", "/" + cut.PointerToken(decoded)}
			var got []string
			for _, l := range st.Levels {
				got = append(got, l.Pointer)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("pointers (-want +got):\n%s", diff)
			}
		})
	}
}
