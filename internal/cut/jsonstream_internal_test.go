package cut

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzJSONStreamValid checks that a jsonStream accepts exactly what
// json.Valid accepts, fed in pieces of any length, and that what it keeps
// of the document is its compacted form.
func FuzzJSONStreamValid(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, -2.5e+3, true, false, null, "x\u00e9\"\\"], "b": {}}`,
		` [ 0 ] `, `-`, `01`, `1.`, `1e`, `1e+`, `-0.0E-0`, `"\ud800"`, "\"\x01\"", `tru`, `nul l`,
		`{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{,}`, `"abc`, `"\x"`, `"\u12G4"`, "", " ", `{} {}`, `[]]`,
	} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, in string, piece uint8) {
		s := newJSONStream(len(in))
		for p := in; len(p) > 0; p = p[min(len(p), int(piece)+1):] {
			s.write([]byte(p[:min(len(p), int(piece)+1)]))
		}
		valid := json.Valid([]byte(in))
		if got := s.end(); got != valid {
			t.Fatalf("jsonStream says valid %v, json.Valid %v", got, valid)
		}
		if valid {
			if want := string(compact(in, len(in))); string(s.prefix) != want || s.n != len(want) {
				t.Fatalf("compacted %q (%d bytes), want %q", s.prefix, s.n, want)
			}
		}
	})
}

// TestJSONStreamDepth: a jsonStream accepts the nesting json.Valid
// accepts, 10,000 deep, and not one level more.
func TestJSONStreamDepth(t *testing.T) {
	for _, depth := range []int{maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		for _, open := range []string{"[", `{"k":`} {
			closer := "]"
			if open != "[" {
				closer = "}"
			}
			doc := strings.Repeat(open, depth) + "1" + strings.Repeat(closer, depth)
			s := newJSONStream(100)
			s.write([]byte(doc))
			if got, want := s.end(), json.Valid([]byte(doc)); got != want || want != (depth <= maxJSONDepth) {
				t.Errorf("%d deep of %s: jsonStream says valid %v, json.Valid %v", depth, open, got, want)
			}
		}
	}
}
