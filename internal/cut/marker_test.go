package cut_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

func TestMarker(t *testing.T) {
	if got, want := cut.Marker(123), "\n[truncated: 123 bytes dropped, refine your query]"; got != want {
		t.Errorf("Marker(123) = %q, want %q", got, want)
	}
	for _, n := range []int{0, 9, 10, 99, 100, 123456789} {
		if got, want := cut.MarkerLen(n), len(cut.Marker(n)); got != want {
			t.Errorf("MarkerLen(%d) = %d, want %d", n, got, want)
		}
		line := cut.MarkerLine(n)
		if "\n"+line != cut.Marker(n) || !cut.IsMarkerLine(line) {
			t.Errorf("MarkerLine(%d) = %q, IsMarkerLine %v", n, line, cut.IsMarkerLine(line))
		}
	}
	for _, s := range []string{"", "[truncated: x bytes dropped, refine your query]", "[truncated: 5 bytes dropped, refine your query] ", "\n" + cut.MarkerLine(5), "[truncated: 5 tokens dropped, refine your query]", cut.MarkerLine(5) + cut.Marker(7)} {
		if cut.IsMarkerLine(s) {
			t.Errorf("IsMarkerLine(%q) = true", s)
		}
	}
}

func TestFindMarkers(t *testing.T) {
	text := "head" + cut.Marker(12) + "\nmiddle" + cut.TokenMarker(7) + "\n[truncated: 9 apples dropped]" + cut.Marker(3)
	b1 := 4
	e1 := b1 + cut.MarkerLen(12)
	t1 := e1 + len("\nmiddle")
	t2 := t1 + cut.TokenMarkerLen(7)
	b3 := t2 + len("\n[truncated: 9 apples dropped]")
	want := []cut.Found{
		{Start: b1, End: e1, N: 12, Unit: cut.UnitBytes},
		{Start: t1, End: t2, N: 7, Unit: cut.UnitTokens},
		{Start: b3, End: b3 + cut.MarkerLen(3), N: 3, Unit: cut.UnitBytes},
	}
	if diff := cmp.Diff(want, cut.FindMarkers(text)); diff != "" {
		t.Errorf("FindMarkers() mismatch (-want +got):\n%s", diff)
	}
	if got := cut.FindMarkers("no marker here"); got != nil {
		t.Errorf("FindMarkers() of plain text = %v", got)
	}
}
