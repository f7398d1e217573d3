package cut_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/cut"
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
