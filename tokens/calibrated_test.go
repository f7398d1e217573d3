package tokens_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/tokens"
)

func TestCalibratedCount(t *testing.T) {
	tests := []struct {
		name         string
		observations [][2]int // bytes, tokens
		text         string
		want         int
		wantRatio    float64
	}{
		{"empty", nil, "", 0, 2},
		{"default: 2 bytes a token, rounded up", nil, "abcde", 3, 2},
		{"one byte", nil, "a", 1, 2},
		{"learned: 4 bytes a token less 10%", [][2]int{{4000, 1000}}, strings.Repeat("x", 3600), 1000, 3.6},
		{"the densest observation wins", [][2]int{{4000, 1000}, {3000, 1000}, {8000, 1000}}, strings.Repeat("x", 2700), 1000, 2.7},
		{"never over a token a byte", [][2]int{{100, 1000}}, "abcdef", 6, 1},
		{"at most 16 bytes a token", [][2]int{{1 << 20, 1}}, strings.Repeat("x", 32), 2, 16},
		{"bad observations ignored", [][2]int{{0, 10}, {10, 0}, {-1, -1}}, "abcd", 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tokens.NewCalibrated()
			for _, o := range tt.observations {
				c.Observe(o[0], o[1])
			}
			got := []any{c.Count(tt.text), c.BytesPerToken()}
			want := []any{tt.want, tt.wantRatio}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
				t.Errorf("[Count BytesPerToken] (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCalibratedWindow: a dense observation tightens the estimate at once
// and leaves it after CalibratedWindow lighter ones.
func TestCalibratedWindow(t *testing.T) {
	c := tokens.NewCalibrated()
	c.Observe(2000, 1000) // 2 bytes a token
	for range tokens.CalibratedWindow - 1 {
		c.Observe(5000, 1000)
	}
	if got, want := c.BytesPerToken(), 2*tokens.CalibratedMargin; got != want {
		t.Errorf("within the window: BytesPerToken = %v, want %v", got, want)
	}
	c.Observe(5000, 1000)
	if got, want := c.BytesPerToken(), 5*tokens.CalibratedMargin; got != want {
		t.Errorf("past the window: BytesPerToken = %v, want %v", got, want)
	}
	if got := c.Observations(); got != tokens.CalibratedWindow+1 {
		t.Errorf("Observations = %d, want %d", got, tokens.CalibratedWindow+1)
	}
}

// TestCalibratedZero: the zero value is ready to use.
func TestCalibratedZero(t *testing.T) {
	var c tokens.Calibrated
	if got := c.Count("abcd"); got != 2 {
		t.Errorf("Count = %d, want 2", got)
	}
	if c.Name() != "calibrated" {
		t.Errorf("Name = %q", c.Name())
	}
}

// TestCalibratedConcurrent runs under -race.
func TestCalibratedConcurrent(t *testing.T) {
	c := tokens.NewCalibrated()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				c.Observe(1000+i*100+j, 300)
				if n := c.Count("some text of a tool"); n < 1 || n > 19 {
					t.Errorf("Count = %d", n)
				}
			}
		})
	}
	wg.Wait()
	if got := c.Observations(); got != 1600 {
		t.Errorf("Observations = %d, want 1600", got)
	}
}

func TestBuiltin(t *testing.T) {
	tests := []struct{ name, want string }{
		{"calibrated", "calibrated"},
		{"o200k_base", `tokenizer "o200k_base" is not built into the core module: tiktoken.New("o200k_base") from module github.com/toolcap/toolcap/tiktoken counts with it`},
		{"p50k", `unknown tokenizer "p50k" (want "calibrated", "o200k_base" or "cl100k_base")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tz, err := tokens.Builtin(tt.name)
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = tz.Name()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
