package cut_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

func TestRestMarker(t *testing.T) {
	r := cut.Rest{Tool: "toolcap_read", Args: `{"ref":"abc","offset":12}`}
	tests := []struct {
		n    int
		unit cut.Unit
		want string
	}{
		{5, cut.UnitBytes, "\n[truncated: 5 bytes dropped, refine your query or read the rest: toolcap_read {\"ref\":\"abc\",\"offset\":12}]"},
		{123, cut.UnitTokens, "\n[truncated: 123 tokens dropped, refine your query or read the rest: toolcap_read {\"ref\":\"abc\",\"offset\":12}]"},
	}
	for _, tt := range tests {
		got := cut.RestMarker(tt.n, tt.unit, r)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("RestMarker(%d, %q) (-want +got):\n%s", tt.n, tt.unit, diff)
		}
		if l := cut.RestMarkerLen(tt.n, tt.unit, r); l != len(got) {
			t.Errorf("RestMarkerLen = %d, want %d", l, len(got))
		}
	}
}

func TestFindMarkersRest(t *testing.T) {
	r := cut.Rest{Tool: "read.more-2", Args: `{"ref":"x","offset":3,"pattern":"a]b\"}"}`}
	text := "head" + cut.RestMarker(10, cut.UnitBytes, r) + "\ntail" + cut.Marker(4)
	got := cut.FindMarkers(text)
	start := len("head")
	end := start + len(cut.RestMarker(10, cut.UnitBytes, r))
	want := []cut.Found{
		{Start: start, End: end, N: 10, Rest: &r},
		{Start: len(text) - len(cut.Marker(4)), End: len(text), N: 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FindMarkers (-want +got):\n%s", diff)
	}
	// Adding and removing the read are inverse.
	plain := "head" + cut.Marker(10) + "\ntail"
	f := cut.FindMarkers(plain)[0]
	with := cut.WithRest(plain, f, r)
	if diff := cmp.Diff("head"+cut.RestMarker(10, cut.UnitBytes, r)+"\ntail", with); diff != "" {
		t.Errorf("WithRest (-want +got):\n%s", diff)
	}
	if back := cut.WithoutRest(with, cut.FindMarkers(with)[0]); back != plain {
		t.Errorf("WithoutRest = %q, want %q", back, plain)
	}
}

func TestFindMarkersNotRest(t *testing.T) {
	for _, s := range []string{
		"\n[truncated: 3 bytes dropped, refine your query or read the rest: ]",
		"\n[truncated: 3 bytes dropped, refine your query or read the rest: tool {\"ref\":1]",
		"\n[truncated: 3 bytes dropped, refine your query or read the rest: tool {\"ref\":1}",
		"\n[truncated: 3 bytes dropped, refine your query or read the rest: bad name {}]",
		"\n[truncated: 3 bytes dropped, refine your query or read the rest: tool []]",
		"\n[truncated: 3 bytes dropped, refine your query or read the rest: " + strings.Repeat("t", 65) + " {}]",
	} {
		if got := cut.FindMarkers(s); len(got) != 0 {
			t.Errorf("FindMarkers(%q) = %+v, want none", s, got)
		}
	}
}

func TestValidRestTool(t *testing.T) {
	for name, want := range map[string]bool{
		"toolcap_read": true, "a": true, "A.b-c_9": true, strings.Repeat("x", 64): true,
		"": false, "a b": false, "a/b": false, strings.Repeat("x", 65): false, "é": false,
	} {
		if got := cut.ValidRestTool(name); got != want {
			t.Errorf("ValidRestTool(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRecutKeepsTheRead(t *testing.T) {
	read := func(off int) cut.Rest {
		return cut.Rest{Tool: "toolcap_read", Args: fmt.Sprintf(`{"ref":"abcdefghijklmnopqrstuvwxyz","offset":%d}`, off)}
	}
	content := strings.Repeat("0123456789", 100)
	doc := `[` + strings.Repeat(`"element",`, 15) + `"element"]`
	tests := []struct {
		name   string
		text   string // an earlier cut's output, naming the read
		total  int    // the bytes of the original
		limit  int
		isJSON bool
	}{
		{"head", content[:400] + cut.RestMarker(600, cut.UnitBytes, read(400)), 1000, 300, false},
		{"head, to the marker alone", content[:400] + cut.RestMarker(600, cut.UnitBytes, read(400)), 1000, 130, false},
		{"json", doc + cut.RestMarker(861, cut.UnitBytes, read(0)), 861 + len(doc), 230, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := cut.Recut(tt.text, tt.limit, cut.Spec{})
			if len(got) > tt.limit {
				t.Fatalf("%d bytes, over %d", len(got), tt.limit)
			}
			ms := cut.FindMarkers(got)
			if len(ms) != 1 {
				t.Fatalf("markers %+v in %q, want one", ms, got)
			}
			m := ms[0]
			if m.Rest == nil {
				// Too small for the read: the plain marker, counting the whole.
				if tt.limit >= 200 || m.N != tt.total-m.Start {
					t.Errorf("plain marker %+v at limit %d, want one naming the read, counting %d", m, tt.limit, tt.total-m.Start)
				}
				return
			}
			shown := got[:m.Start]
			if m.N != tt.total-len(shown) || st.Dropped != m.N {
				t.Errorf("N = %d (stats %d), want %d", m.N, st.Dropped, tt.total-len(shown))
			}
			want := read(len(shown))
			if tt.isJSON {
				want = read(0)
				if !json.Valid([]byte(shown)) {
					t.Errorf("the document is no longer JSON: %q", shown)
				}
			} else if shown != content[:len(shown)] {
				t.Errorf("shown %q is not the content's head", shown)
			}
			if diff := cmp.Diff(want, *m.Rest); diff != "" {
				t.Errorf("read (-want +got):\n%s", diff)
			}
			// The head is the longest that fits: one byte more does not.
			if !tt.isJSON && len(shown) < len(content) {
				longer := content[:len(shown)+1] + cut.RestMarker(m.N-1, cut.UnitBytes, read(len(shown)+1))
				if len(longer) <= tt.limit {
					t.Errorf("a head of %d bytes would fit too", len(shown)+1)
				}
			}
		})
	}
}
