package bench

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/middleware"
)

// limit is the default cap, manifest.DefaultMaxBytes.
const limit = 16384

// alphabets are the texts BenchmarkTruncate cuts: one, three and four bytes
// per character, so a cut lands inside a character for all but ascii.
var alphabets = []struct {
	name string
	unit string
}{
	{"ascii", "The quick brown fox jumps over the lazy dog.\n"},
	{"cjk", "敏捷的棕色狐狸跳过了懒狗。速い茶色の狐がのろまな犬を飛び越える。\n"},
	{"emoji", "🦊🐕🌍🚀🔥✨📦🧪🎯🧵\n"},
}

// truncateSizes are the input lengths: under the limit, about eight times
// it, and 1 MiB, to show the cost of a cut does not grow with the input.
var truncateSizes = []struct {
	name string
	n    int
}{
	{"under", 12 << 10},
	{"125KiB", 125 << 10},
	{"1MiB", 1 << 20},
}

// text returns unit repeated to n bytes, ending on a character boundary.
func text(unit string, n int) string {
	s := strings.Repeat(unit, n/len(unit)+1)[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// cloneBaseline is the floor of producing any capped string of the limit:
// one allocation of 16 KiB and one copy into it.
func cloneBaseline(s string) string {
	return strings.Clone(s[:limit])
}

var (
	sinkString string
	sinkInt    int
)

func BenchmarkTruncate(b *testing.B) {
	for _, a := range alphabets {
		for _, size := range truncateSizes {
			s := text(a.unit, size.n)
			name := a.name + "/" + size.name
			if len(s) > limit {
				b.Run(name+"/impl=clone", func(b *testing.B) {
					b.ReportAllocs()
					var out string
					for b.Loop() {
						out = cloneBaseline(s)
					}
					sinkString = out
				})
			}
			b.Run(name+"/impl=truncate", func(b *testing.B) {
				b.ReportAllocs()
				var out string
				var dropped int
				for b.Loop() {
					out, dropped = middleware.Truncate(s, limit)
				}
				sinkString, sinkInt = out, dropped
			})
		}
	}
}

// TestTruncateInputs checks what BenchmarkTruncate relies on: each input is
// valid UTF-8 of about the size its name says, the under inputs come back
// unchanged, and the others are cut to the limit, marker included, keeping a
// prefix of what the clone baseline copies.
func TestTruncateInputs(t *testing.T) {
	for _, a := range alphabets {
		for _, size := range truncateSizes {
			s := text(a.unit, size.n)
			if !utf8.ValidString(s) || len(s) > size.n || len(s) < size.n-utf8.UTFMax {
				t.Fatalf("%s/%s: input of %d bytes, valid=%v", a.name, size.name, len(s), utf8.ValidString(s))
			}
			got, dropped := middleware.Truncate(s, limit)
			if len(s) <= limit {
				if got != s || dropped != 0 {
					t.Errorf("%s/%s: under the limit but changed (dropped %d)", a.name, size.name, dropped)
				}
				continue
			}
			if len(got) > limit || len(got) < limit-utf8.UTFMax {
				t.Errorf("%s/%s: output of %d bytes, want at most %d and close to it", a.name, size.name, len(got), limit)
			}
			kept := len(s) - dropped
			if got[:kept] != cloneBaseline(s)[:kept] || got[kept:] != cut.Marker(dropped) {
				t.Errorf("%s/%s: output is not the input's first %d bytes and the marker", a.name, size.name, kept)
			}
			if !utf8.ValidString(got) {
				t.Errorf("%s/%s: output splits a character", a.name, size.name)
			}
		}
	}
}
