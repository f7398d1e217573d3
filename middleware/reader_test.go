package middleware_test

import (
	"errors"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

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
	// 65532 and 65533 put limit+4 on either side of the 64 KiB first read;
	// 1<<30 and above take the path that grows the buffer.
	limits := []int{math.MinInt, -1, 0, 10, 48, 49, 100, 128, 16384, 65532, 65533, 100_000, 1 << 20,
		1 << 30, math.MaxInt - 3, math.MaxInt}
	for name, in := range inputs {
		if name == "invalid" {
			// TruncateReader counts the bytes past its head as they are,
			// where Truncate counts them decoded (issue 22): not yet the
			// same rule for invalid UTF-8.
			continue
		}
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
	tests := []struct {
		name  string
		after int // bytes read before the error
		limit int
	}{
		{"at once", 0, 100},
		{"in the first read", 10, 100},
		{"while skipping the rest", 200_000, 100},
		{"while filling a large head", 70_000, 100_000},
		{"while skipping past a large head", 300_000, 100_000},
		{"while growing a huge head", 70_000, math.MaxInt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := io.MultiReader(strings.NewReader(strings.Repeat("x", tt.after)), iotest.ErrReader(boom))
			got, dropped, err := middleware.TruncateReader(r, tt.limit)
			if !errors.Is(err, boom) || got != "" || dropped != 0 {
				t.Errorf("TruncateReader = %d bytes, %d dropped, error %v; want nothing and %v", len(got), dropped, err, boom)
			}
		})
	}
}

// sizeRecorder is a reader of n bytes that records the offset and the
// buffer size of each Read.
type sizeRecorder struct {
	n, off int
	reads  [][2]int // {offset, len(p)}
}

func (r *sizeRecorder) Read(p []byte) (int, error) {
	r.reads = append(r.reads, [2]int{r.off, len(p)})
	if r.off >= r.n {
		return 0, io.EOF
	}
	m := min(len(p), r.n-r.off)
	clear(p[:m])
	r.off += m
	return m, nil
}

// Once it holds what it keeps, TruncateReader skips the rest in 64 KiB
// reads: a pipe's capacity, an eighth of the system calls of io.Discard's
// 8 KiB reads.
func TestTruncateReaderSkipsIn64KiBReads(t *testing.T) {
	tests := []struct {
		name     string
		limit    int
		input    int
		wantHead int // bytes kept before the rest is skipped
	}{
		{"small limit", 1000, 1 << 20, 1004},
		{"limit+4 is the first read", 65532, 1 << 20, 65536},
		{"limit beyond the first read", 100_000, 1 << 20, 100_004},
		{"limit near the input", 1<<20 - 10, 1 << 20, 1<<20 - 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &sizeRecorder{n: tt.input}
			got, dropped, err := middleware.TruncateReader(r, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) > tt.limit || int(dropped) <= 0 {
				t.Fatalf("TruncateReader = %d bytes, %d dropped; want a cut within %d", len(got), dropped, tt.limit)
			}
			var skips []int
			for _, rd := range r.reads {
				if rd[0] >= tt.wantHead {
					skips = append(skips, rd[1])
				}
			}
			want := slices.Repeat([]int{64 << 10}, len(skips))
			if len(skips) == 0 {
				t.Fatalf("no read past the first %d bytes: %v", tt.wantHead, r.reads)
			}
			if diff := cmp.Diff(want, skips); diff != "" {
				t.Errorf("sizes of the reads that skip the rest (-want +got):\n%s", diff)
			}
		})
	}
}

// pattern is an endless reader of printable bytes that allocates nothing.
type pattern struct{ n int }

func (r *pattern) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a' + byte(r.n%26)
		r.n++
	}
	return len(p), nil
}

// TruncateReader allocates about limit bytes, whatever the input size: one
// buffer for what it keeps, which becomes the result, and two 64 KiB ones.
func TestTruncateReaderAllocatesAboutLimit(t *testing.T) {
	for _, limit := range []int{100_000, 1 << 20, 8 << 20} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			input := io.LimitReader(&pattern{}, int64(3*limit))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got, dropped, err := middleware.TruncateReader(input, limit)
			runtime.ReadMemStats(&after)
			if err != nil || len(got) != limit || dropped == 0 {
				t.Fatalf("TruncateReader = %d bytes, %d dropped, %v; want %d bytes cut", len(got), dropped, err, limit)
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			if bound := uint64(limit + limit/10 + 1<<20); allocated > bound {
				t.Errorf("TruncateReader allocated %d bytes at limit %d; want at most %d (1.1 x limit + 1 MiB)",
					allocated, limit, bound)
			}
		})
	}
}
