package cut

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// viewOf is the view headTailString builds of content for limit.
func viewOf(content string, limit int) view {
	w := min(len(content), windowLen(limit))
	return view{n: len(content), head: content[:w], tail: content[len(content)-w:]}
}

// checkNearestEnds compares nearestEnds, the word-at-a-time search of
// split, with nearestEndsBytes, the line-at-a-time one it stands in for,
// for every head window split may search for content at limit and share.
func checkNearestEnds(t *testing.T, content string, limit int, share float64) {
	t.Helper()
	if limit <= 0 || len(content) <= limit {
		return
	}
	v := viewOf(content, limit)
	n := v.n
	for d := digits(max(0, n-limit)); d <= digits(n); d++ {
		room := limit - markerFixed - d - 1
		if room < 2 {
			continue
		}
		tb := min(max(int(float64(room)*share), 1), room-1)
		hb := room - tb
		lo0, hi0 := max(hb-hb/10, 0), min(hb, len(v.head)-1)
		wh, wt, wl := v.nearestEndsBytes(lo0, hi0, room, n, 0)
		gh, gt, gl := v.nearestEnds(lo0, hi0, n-room, room)
		if gh != wh || gt != wt || (wh < 0 && gl != wl) {
			t.Fatalf("limit %d, share %v, room %d, n %d: nearestEnds (%d, %d, last %d), nearestEndsBytes (%d, %d, last %d)",
				limit, share, room, n, gh, gt, gl, wh, wt, wl)
		}
	}
}

// TestNearestEnds checks the word-at-a-time search against the line-at-a-time
// one on lines of random lengths drawn from ranges that make the best pair
// a fill, a near fill, or absent, at limits that put the candidates in one
// word or many.
func TestNearestEnds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var b strings.Builder
		lo, hi := 1+r.IntN(8), 1+r.IntN(200)
		if lo > hi {
			lo, hi = hi, lo
		}
		total := 200 + r.IntN(40000)
		for b.Len() < total {
			k := lo + r.IntN(hi-lo+1)
			b.WriteString(strings.Repeat("x", k-1))
			b.WriteByte('\n')
		}
		s := b.String()
		if r.IntN(4) == 0 {
			// A long line at the end: no line start near the tail's budget.
			s += strings.Repeat("y", r.IntN(3000))
		}
		limit := 60 + r.IntN(min(len(s), 20000))
		checkNearestEnds(t, s, limit, []float64{DefaultTailShare, 0.01, 0.2, 0.8, 0.99}[r.IntN(5)])
	}
}

// TestNewlineBits checks the 8-bytes-at-a-time newline search against a
// byte loop, at every offset and length of a word.
func TestNewlineBits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 200)
	for range 200 {
		for i := range buf {
			buf[i] = []byte{'\n', 'a', 0x0a ^ 0x80, 0x8a, 0x0b, 0x09, 0, 0xff}[r.IntN(8)]
		}
		s := string(buf)
		for from := range 70 {
			for k := range 65 {
				var want uint64
				for i := range k {
					if s[from+i] == '\n' {
						want |= 1 << i
					}
				}
				if got := newlineBits(s, from, k); got != want {
					t.Fatalf("newlineBits(%q, %d, %d) = %b, want %b", s[from:from+k], from, k, got, want)
				}
			}
		}
	}
}

// FuzzNearestEnds is TestNearestEnds on any content.
func FuzzNearestEnds(f *testing.F) {
	f.Add("ok 1\nok 22\nok 333\n"+strings.Repeat("ok 4444\n", 40), 100, uint8(50))
	f.Add(strings.Repeat("a\n", 300)+strings.Repeat("b", 300), 200, uint8(1))
	f.Fuzz(func(t *testing.T, content string, limit int, share uint8) {
		checkNearestEnds(t, content, limit%8192, float64(share%99+1)/100)
	})
}
