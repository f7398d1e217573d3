package middleware_test

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/middleware"
)

// outcome is what a test compares: the capped text's length, the bytes of
// content kept, the count Truncate reported, and whether a marker is there.
type outcome struct {
	Len     int
	Kept    int
	Dropped int
	Marker  bool
}

func describe(content, capped string, dropped int) outcome {
	o := outcome{Len: len(capped), Dropped: dropped}
	if dropped > 0 && strings.HasSuffix(capped, cut.Marker(dropped)) {
		o.Marker = true
		o.Kept = len(capped) - cut.MarkerLen(dropped)
	} else {
		o.Kept = len(capped)
	}
	return o
}

func TestTruncate(t *testing.T) {
	a := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name    string
		content string
		limit   int
		want    outcome
	}{
		{"empty", "", 100, outcome{0, 0, 0, false}},
		{"under", a(99), 100, outcome{99, 99, 0, false}},
		{"exactly the limit", a(100), 100, outcome{100, 100, 0, false}},
		{"one over", a(101), 100, outcome{100, 51, 50, true}},

		// Every change in the digit count of N: the marker grows by one byte,
		// so the largest cut that fits moves back by one, and some counts
		// (100, 1000, 10000) can never be reported at that limit. With a
		// marker N is at least 50 (the content was over the limit, and the
		// marker took 49 bytes of it), so 9 to 10 happens only in bare cuts.
		{"bare N=9", a(19), 10, outcome{10, 10, 9, false}},
		{"bare N=10", a(20), 10, outcome{10, 10, 10, false}},
		{"N=99", a(250), 200, outcome{200, 151, 99, true}},
		{"N=99 to 101", a(251), 200, outcome{200, 150, 101, true}},
		{"N=999", a(2949), 2000, outcome{2000, 1950, 999, true}},
		{"N=999 to 1001", a(2950), 2000, outcome{2000, 1949, 1001, true}},
		{"N=9999", a(29948), 20000, outcome{20000, 19949, 9999, true}},
		{"N=9999 to 10001", a(29949), 20000, outcome{20000, 19948, 10001, true}},
		{"125 KB at the default", a(128000), 16384, outcome{16384, 16331, 111669, true}},

		// Cuts never split a character: a cut point inside one moves back to
		// its first byte.
		{"2-byte", strings.Repeat("é", 100), 100, outcome{100, 50, 150, true}},
		{"3-byte", strings.Repeat("日", 100), 100, outcome{98, 48, 252, true}},
		{"4-byte", strings.Repeat("😀", 100), 100, outcome{98, 48, 352, true}},
		{"cut inside an emoji", a(49) + "😀" + a(100), 100, outcome{99, 49, 104, true}},

		// Invalid UTF-8 counts as the client decodes it (issue 22): each
		// invalid byte a U+FFFD, 3 bytes, kept or dropped whole.
		{"invalid bytes", strings.Repeat("\xff", 200), 100, outcome{98, 48, 552, true}},
		{"stray continuation bytes", strings.Repeat("\x80", 200), 100, outcome{98, 48, 552, true}},
		{"incomplete sequence at the cut", a(49) + "\xf0\x9f\x98" + a(100), 100, outcome{99, 49, 109, true}},

		// Limits with no room for a marker cut bare, and never overrun.
		{"limit 0", a(10), 0, outcome{0, 0, 10, false}},
		{"negative limit", a(10), -1, outcome{0, 0, 10, false}},
		{"min int limit", a(10), math.MinInt, outcome{0, 0, 10, false}},
		{"limit below the marker", "abcdefghijklmnop", 10, outcome{10, 10, 6, false}},
		{"limit one short of a marker", a(60), 48, outcome{48, 48, 12, false}},
		{"only the marker fits", a(60), 49, outcome{49, 0, 60, true}},
		{"bare cut inside a character", strings.Repeat("日", 20), 10, outcome{9, 9, 51, false}},
		{"max int limit", a(10), math.MaxInt, outcome{10, 10, 0, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			capped, dropped := middleware.Truncate(tt.content, tt.limit)
			got := describe(tt.content, capped, dropped)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Truncate(%d bytes, %d) mismatch (-want +got):\n%s", len(tt.content), tt.limit, diff)
			}
			checkTruncation(t, tt.content, tt.limit, capped, dropped)
		})
	}
}

func TestTruncateValidStaysValid(t *testing.T) {
	s := strings.Repeat("aé日😀", 200)
	for limit := -1; limit <= len(s)+1; limit++ {
		capped, _ := middleware.Truncate(s, limit)
		if !utf8.ValidString(capped) {
			t.Fatalf("Truncate(valid, %d) = invalid UTF-8 %q", limit, capped)
		}
	}
}

func TestTruncateUnderLimitDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("x", 1000)
	allocs := testing.AllocsPerRun(100, func() {
		if _, d := middleware.Truncate(s, 16384); d != 0 {
			t.Fatal("cut under the limit")
		}
	})
	if allocs != 0 {
		t.Errorf("Truncate under the limit: %v allocs, want 0", allocs)
	}
}

func TestTruncateOverLimitAllocatesOnce(t *testing.T) {
	s := strings.Repeat("日本語", 50000)
	allocs := testing.AllocsPerRun(100, func() {
		if _, d := middleware.Truncate(s, 16384); d == 0 {
			t.Fatal("no cut over the limit")
		}
	})
	if allocs != 1 {
		t.Errorf("Truncate over the limit: %v allocs, want 1", allocs)
	}
}

// checkTruncation checks every property of DESIGN.md's rule against an
// independent, brute-force reading of it.
func checkTruncation(t *testing.T, content string, limit int, capped string, dropped int) {
	t.Helper()
	if len(content) > limit/3 && !windowValid(content, limit) {
		// Issue 22: the rule applies to the text as the client decodes
		// it; only content that fits at 3 bytes a byte is passed unread,
		// and content whose first limit+3 bytes are valid is cut as it
		// is (the cut never reads past them).
		content, _ = cut.ReplaceInvalid(content)
	}
	if len(content) <= limit {
		if capped != content || dropped != 0 {
			t.Fatalf("Truncate(%d bytes, %d) changed content that fits: %d bytes, dropped %d", len(content), limit, len(capped), dropped)
		}
		return
	}
	if len(capped) > max(limit, 0) {
		t.Fatalf("Truncate(%d bytes, %d) = %d bytes: over the limit", len(content), limit, len(capped))
	}
	k, wantMarker := reference(content, limit)
	want := content[:k]
	if wantMarker {
		want += cut.Marker(len(content) - k)
	}
	if capped != want || dropped != len(content)-k {
		t.Fatalf("Truncate(%q, %d) = %q, %d; want %q, %d", clip(content), limit, clip(capped), dropped, clip(want), len(content)-k)
	}
	if again, d := middleware.Truncate(capped, limit); again != capped || d != 0 {
		t.Fatalf("Truncate is not idempotent at limit %d: %q became %q", limit, clip(capped), clip(again))
	}
}

// windowValid reports whether the part of content a head cut to limit
// reads is valid UTF-8: all of it within limit+4 bytes, otherwise its first
// limit+4 bytes less a character they cut short.
func windowValid(content string, limit int) bool {
	if limit <= 0 || len(content) <= limit+utf8.UTFMax {
		return utf8.ValidString(content)
	}
	w := content[:limit+utf8.UTFMax]
	for i := len(w) - 1; i >= len(w)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(w[i]) {
			if !utf8.FullRuneInString(w[i:]) {
				w = w[:i]
			}
			break
		}
	}
	return utf8.ValidString(w)
}

// reference finds the cut by brute force: the largest character boundary k
// (a boundary is any position not inside a valid multi-byte sequence) with
// k + MarkerLen(len-k) <= limit; or, when none fits, the largest boundary
// k <= limit with no marker. It walks content from the start, so it shares
// nothing with Truncate's O(1) look-back.
func reference(content string, limit int) (k int, marker bool) {
	if limit <= 0 {
		return 0, false
	}
	best, bare := -1, 0
	for i := 0; i < len(content); {
		if i+cut.MarkerLen(len(content)-i) <= limit {
			best = i
		}
		if i <= limit {
			bare = i
		}
		_, size := utf8.DecodeRuneInString(content[i:])
		i += size
		if i > limit {
			break
		}
	}
	if best >= 0 {
		return best, true
	}
	if len(content) <= limit {
		return len(content), false
	}
	return bare, false
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:40] + "…" + s[len(s)-40:]
	}
	return s
}
