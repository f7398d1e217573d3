package capcheck_test

import (
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// The checker must fail on each broken invariant, or every test that
// relies on it could not fail.
func TestText(t *testing.T) {
	in := strings.Repeat("abcdefghij\n", 100)
	good, _, _ := shape.Text(in, shape.Bytes(300))
	headTail, _, _ := shape.Text(in, shape.Policy{MaxBytes: 300, Spec: cut.Spec{Keep: cut.KeepHeadTail}})
	tests := []struct {
		name string
		in   string
		out  string
		p    shape.Policy
		ok   bool
	}{
		{"a head cut", in, good, shape.Bytes(300), true},
		{"a head_tail cut", in, headTail, shape.Bytes(300), true},
		{"unchanged within the limit", "short", "short", shape.Bytes(300), true},
		{"over the limit", in, in[:400], shape.Bytes(300), false},
		{"a wrong count", in, in[:200] + cut.Marker(len(in)-201), shape.Bytes(300), false},
		{"two markers", in, in[:50] + cut.Marker(3) + in[:50] + cut.Marker(len(in)-50), shape.Bytes(300), false},
		{"over the token limit", in, good, shape.Policy{MaxBytes: 300, MaxTokens: 10, Counter: lines{}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := capcheck.Text(tt.in, tt.out, tt.p)
			if (err == nil) != tt.ok {
				t.Errorf("Text() = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func TestTexts(t *testing.T) {
	a, b := strings.Repeat("a", 500), strings.Repeat("b", 500)
	out, _, _ := shape.Texts([]string{a, b}, shape.Bytes(400))
	if err := capcheck.Texts([]string{a, b}, out, shape.Bytes(400)); err != nil {
		t.Errorf("Texts() of a fair share: %v", err)
	}
	if err := capcheck.Texts([]string{a, b}, []string{a[:300], b[:300]}, shape.Bytes(400)); err == nil {
		t.Error("Texts() of 600 bytes under a limit of 400: no error")
	}
}

// lines counts a token per line.
type lines struct{}

func (lines) Count(s string) int { return strings.Count(s, "\n") + 1 }
