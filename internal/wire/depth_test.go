package wire_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/wire"
)

func nest(n int, inner string) string {
	return strings.Repeat("[", n) + inner + strings.Repeat("]", n)
}

// TestDepthBound: the scanner follows exactly the nesting encoding/json
// does (10,000 levels), so that it refuses nothing the proxy's own decoding
// accepts; one level more is a DepthError at the container that went past,
// whichever method meets it.
func TestDepthBound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		wantAt int64 // the DepthError's offset; -1 for none
	}{
		{"arrays at the bound", nest(wire.MaxDepth, "1"), -1},
		{"objects at the bound", strings.Repeat(`{"a":`, wire.MaxDepth) + "1" + strings.Repeat("}", wire.MaxDepth), -1},
		{"arrays one past", nest(wire.MaxDepth+1, ""), wire.MaxDepth},
		{"objects one past", strings.Repeat(`{"a":`, wire.MaxDepth+1) + "1" + strings.Repeat("}", wire.MaxDepth+1), 5 * wire.MaxDepth},
		{"mixed, 20,000", strings.Repeat(`[{"k":`, 10000) + "0" + strings.Repeat("}]", 10000), 6 * 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if valid := json.Valid([]byte(tc.in)); valid != (tc.wantAt < 0) {
				t.Fatalf("encoding/json says valid = %v: the bound differs from the scanner's", valid)
			}
			for _, method := range []struct {
				name string
				read func(sc *wire.Scanner) error
			}{
				{"Skip", (*wire.Scanner).Skip},
				{"Capture", func(sc *wire.Scanner) error { _, _, err := sc.Capture(1 << 20); return err }},
				{"Array and Object", readNested},
			} {
				err := method.read(scanner(tc.in+"\n", 4096))
				var de *wire.DepthError
				switch {
				case tc.wantAt < 0 && err != nil:
					t.Errorf("%s: %v, want no error", method.name, err)
				case tc.wantAt >= 0 && !errors.As(err, &de):
					t.Errorf("%s: %v, want a DepthError", method.name, err)
				case tc.wantAt >= 0 && de.Offset != tc.wantAt:
					t.Errorf("%s: a DepthError at byte %d, want %d", method.name, de.Offset, tc.wantAt)
				}
			}
		})
	}
}

// readNested reads a value with Object and Array down to its scalars, as a
// caller that reduces a value does.
func readNested(sc *wire.Scanner) error {
	c, err := sc.Kind()
	if err != nil {
		return err
	}
	switch c {
	case '{':
		return sc.Object(func(string) error { return readNested(sc) })
	case '[':
		return sc.Array(func(int) error { return readNested(sc) })
	}
	return sc.Skip()
}

// TestResume: past a member too deep to read, Resume finds the members
// that follow at the object's level (brackets inside strings do not count),
// and the message ends where it ends; a deep value the line cuts short is
// an error.
func TestResume(t *testing.T) {
	deep := nest(20000, `"]]\"}}"`)
	for _, tc := range []struct {
		name     string
		in       string
		wantKeys []string
		wantID   string
		wantErr  bool
	}{
		{"id after", `{"params":` + deep + `,"id":7,"method":"x"}`, []string{"params", "id", "method"}, "7", false},
		{"id before", `{"id":"a","params":{"v":` + deep + `}}`, []string{"id", "params"}, `"a"`, false},
		{"two deep members", `{"a":` + deep + `,"b":` + deep + `,"id":[1]}`, []string{"a", "b", "id"}, "[1]", false},
		{"deep id", `{"id":` + deep + `,"method":"x"}`, []string{"id", "method"}, "", false},
		{"cut short", `{"params":` + nest(20000, "")[:25000] + "\n" + `,"id":7}`, []string{"params"}, "", true},
		{"not an object after", `{"params":` + deep + ` "id":7}`, []string{"params"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := scanner(tc.in+"\n", 4096)
			var keys []string
			id := ""
			field := func(key string) error {
				keys = append(keys, key)
				if key == "id" {
					raw, _, err := sc.Capture(64)
					id = string(raw)
					return err
				}
				return sc.Skip()
			}
			err := sc.Object(field)
			var de *wire.DepthError
			if !errors.As(err, &de) {
				t.Fatalf("Object: %v, want a DepthError", err)
			}
			err = sc.Resume(1, field)
			if err == nil {
				err = sc.EndMessage()
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("Resume: %v, want an error: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantKeys, keys); diff != "" {
				t.Errorf("members read (-want +got):\n%s", diff)
			}
			if id != tc.wantID {
				t.Errorf("id %q, want %q", id, tc.wantID)
			}
			if !tc.wantErr {
				if d := sc.Depth(); d != 0 {
					t.Errorf("Depth() = %d after the message, want 0", d)
				}
				if off, want := sc.Offset(), int64(len(tc.in)+1); off != want {
					t.Errorf("Offset() = %d after the message, want %d", off, want)
				}
			}
		})
	}
}

// TestSkipAllocs: skipping a value 10,000 levels deep costs a stack of a
// byte per level, reused from one value to the next.
func TestSkipAllocs(t *testing.T) {
	in := nest(wire.MaxDepth, "1") + "\n"
	sc := scanner(strings.Repeat(in, 20), 1<<16)
	if err := sc.Skip(); err != nil { // grows the stack once
		t.Fatal(err)
	}
	_ = sc.EndMessage()
	allocs := testing.AllocsPerRun(10, func() {
		sc.Reset()
		if err := sc.Skip(); err != nil {
			t.Fatal(err)
		}
		if err := sc.EndMessage(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("Skip of a value %d levels deep: %v allocations, want 0", wire.MaxDepth, allocs)
	}
}
