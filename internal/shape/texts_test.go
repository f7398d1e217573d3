package shape_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/tokens"
)

func TestTexts(t *testing.T) {
	long := strings.Repeat("o", 5000)
	tests := []struct {
		name     string
		in       []string
		p        shape.Policy
		wantLens []int // lengths of the outputs
	}{
		{"fit", []string{"out", "err"}, shape.Bytes(200), []int{3, 3}},
		{"a short stderr keeps whole next to a long stdout", []string{long, "error: boom"}, shape.Bytes(1000), []int{989, 11}},
		{"two long texts share equally, the remainder to the first", []string{long, long}, shape.Bytes(1001), []int{501, 500}},
		{"shares too small for a marker go in order", []string{long, long, long, long, long, long}, shape.Bytes(200), []int{200, 0, 0, 0, 0, 0}},
		{"tokens are shared too", []string{strings.Repeat("a ", 500), "b c"}, shape.Policy{MaxBytes: 4096, MaxTokens: 120, Counter: words{}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, tr, changed := shape.Texts(tt.in, tt.p)
			if tt.wantLens != nil {
				lens := make([]int, len(got))
				for i, s := range got {
					lens[i] = len(s)
				}
				if diff := cmp.Diff(tt.wantLens, lens); diff != "" {
					t.Errorf("lengths mismatch (-want +got):\n%s", diff)
				}
			}
			if err := capcheck.Texts(tt.in, got, tt.p); err != nil {
				t.Error(err)
			}
			total := 0
			for _, s := range tt.in {
				total += len(s)
			}
			if changed && (tr.OriginalBytes != total || tr.KeptBytes+tr.DroppedBytes != total || tr.Limit != tt.p.MaxBytes) {
				t.Errorf("figures %+v do not add up to the %d bytes in", tr, total)
			}
			if !changed && tr.DroppedBytes != 0 {
				t.Errorf("unchanged, yet figures %+v", tr)
			}
		})
	}
}

func TestShareLines(t *testing.T) {
	var names []string
	for i := range 300 {
		names = append(names, "src/pkg"+strings.Repeat("d", i%9)+"/file.go")
	}
	joined := strings.Join(names, "\n")
	matches := strings.Repeat("src/a.go:1: match\n", 200)
	p := shape.Bytes(2000)
	got, tr, changed := shape.Share([]shape.Part{{Text: matches}, {Text: joined, Lines: true}}, p)
	if !changed {
		t.Fatal("Share() did not cut")
	}
	if err := capcheck.Texts([]string{matches, joined}, got, p); err != nil {
		t.Error(err)
	}
	// The list is cut between lines: every kept line is a whole name, and
	// the marker is a line of its own.
	lines := strings.Split(got[1], "\n")
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "src/pkg") || !strings.HasSuffix(l, "/file.go") {
			t.Fatalf("line %q is not a whole name", l)
		}
	}
	if !cut.IsMarkerLine(lines[len(lines)-1]) {
		t.Errorf("last line %q is not a marker", lines[len(lines)-1])
	}
	if tr.DroppedBytes == 0 {
		t.Errorf("figures %+v", tr)
	}
}

func TestLines(t *testing.T) {
	names := []string{"a.go", "b.go", "c.go", "d.go"}
	got, _, changed := shape.Lines(names, shape.Bytes(1000))
	if changed || len(got) != 4 {
		t.Errorf("Lines() of names that fit = %v, %v", got, changed)
	}
	many := make([]string, 1000)
	for i := range many {
		many[i] = "dir/file.go"
	}
	p := shape.Policy{MaxBytes: 4000, MaxTokens: 40, Counter: charTokens{}}
	got, tr, changed := shape.Lines(many, p)
	if !changed {
		t.Fatal("Lines() did not cut")
	}
	out := strings.Join(got, "\n")
	if err := capcheck.Text(strings.Join(many, "\n"), out, p); err != nil {
		t.Error(err)
	}
	if tr.KeptBytes+tr.DroppedBytes != len(strings.Join(many, "\n")) {
		t.Errorf("figures %+v", tr)
	}
	// A limit below the marker: nothing at all rather than an overrun.
	got, _, _ = shape.Lines(many, shape.Bytes(20))
	if s := strings.Join(got, "\n"); len(s) > 20 {
		t.Errorf("Lines() at 20 bytes gave %d bytes", len(s))
	}
}

// charTokens counts a token per 4 bytes, rounded up.
type charTokens struct{}

func (charTokens) Count(s string) int { return (len(s) + 3) / 4 }

// A list within its byte limit and over its token limit keeps the names
// that fit the tokens, not the marker alone.
func TestLinesByTokens(t *testing.T) {
	var names []string
	for i := range 300 {
		names = append(names, fmt.Sprintf("src/pkg%d/file_%d.go", i%17, i))
	}
	p := shape.Policy{MaxBytes: 16384, MaxTokens: 200, Counter: charTokens{}}
	got, tr, changed := shape.Lines(names, p)
	if !changed || len(got) < 10 {
		t.Fatalf("Lines() kept %d names (changed %v): %v", len(got)-1, changed, got[:min(3, len(got))])
	}
	joined := strings.Join(names, "\n")
	if err := capcheck.Text(joined, strings.Join(got, "\n"), p); err != nil {
		t.Error(err)
	}
	if tr.DroppedBytes == 0 {
		t.Errorf("figures %+v", tr)
	}
	// Shared with other text, as Grep's names are.
	out, _, _ := shape.Share([]shape.Part{{Text: "a match\n"}, {Text: joined, Lines: true}}, p)
	if n := strings.Count(out[1], "\n"); n < 10 {
		t.Errorf("Share() kept %d names", n)
	}
}

// Token shares too small for a marker go in order too, so that a cut by
// tokens still carries one.
func TestTextsTokenSharesKeepAMarker(t *testing.T) {
	a, b := strings.Repeat("word ", 200), strings.Repeat("term ", 200)
	p := shape.Policy{MaxBytes: 16384, MaxTokens: 32, Counter: tokens.NewCalibrated()} // 2 bytes a token
	got, _, changed := shape.Texts([]string{a, b}, p)
	if !changed {
		t.Fatal("Texts() did not cut")
	}
	markers := len(cut.FindMarkers(got[0])) + len(cut.FindMarkers(got[1]))
	if markers == 0 {
		t.Errorf("no marker in %q", got)
	}
	if err := capcheck.Texts([]string{a, b}, got, p); err != nil {
		t.Error(err)
	}
	// An empty part before a cut one does not take a share.
	got, _, _ = shape.Texts([]string{"", strings.Repeat("x", 1000)}, shape.Bytes(40))
	if len(got[0]) != 0 || len(got[1]) > 40 {
		t.Errorf("Texts() = %q", got)
	}
}
