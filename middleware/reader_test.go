package middleware_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/toolcap/toolcap/middleware"
)

func TestTruncateReaderMatchesTruncate(t *testing.T) {
	inputs := map[string]string{
		"empty":      "",
		"short":      "hello",
		"ascii 5MB":  strings.Repeat("0123456789", 500_000),
		"cjk":        strings.Repeat("日本語", 20_000),
		"emoji edge": strings.Repeat("a", 49) + "😀" + strings.Repeat("a", 100),
		"invalid":    strings.Repeat("\xff\x80\xf0\x9f", 10_000),
	}
	limits := []int{math.MinInt, -1, 0, 10, 48, 49, 100, 128, 16384, 1 << 30, math.MaxInt - 3, math.MaxInt}
	for name, in := range inputs {
		for _, limit := range limits {
			want, wantDropped := middleware.Truncate(in, limit)
			got, dropped, err := middleware.TruncateReader(iotest.HalfReader(strings.NewReader(in)), limit)
			if err != nil {
				t.Fatalf("%s at %d: %v", name, limit, err)
			}
			if got != want || dropped != int64(wantDropped) {
				t.Errorf("%s at %d: TruncateReader = %d bytes, %d dropped; Truncate = %d bytes, %d dropped",
					name, limit, len(got), dropped, len(want), wantDropped)
			}
		}
	}
}

func TestTruncateReaderError(t *testing.T) {
	boom := errors.New("boom")
	_, _, err := middleware.TruncateReader(iotest.ErrReader(boom), 100)
	if !errors.Is(err, boom) {
		t.Errorf("TruncateReader(failing reader) error = %v, want %v", err, boom)
	}
}
