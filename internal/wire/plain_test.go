package wire

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// slowPlainEnd is plainEnd of text a byte at a time.
func slowPlainEnd(b []byte, i int) int {
	for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
		i++
	}
	return i
}

// slowASCIIEnd is plainEnd of ASCII a byte at a time.
func slowASCIIEnd(b []byte, i int) int {
	for i < len(b) && b[i] < 0x80 && slowPlainEnd(b[i:i+1], 0) == 1 {
		i++
	}
	return i
}

func textEnd(b []byte, i int) int  { return plainEnd(b, i, 0, &plain) }
func asciiEnd(b []byte, i int) int { return plainEnd(b, i, highs, &plainASCII) }

// plainEnds are the kinds of run held to their byte loops.
var plainEnds = []struct {
	name       string
	fast, slow func([]byte, int) int
}{{"text", textEnd, slowPlainEnd}, {"ASCII", asciiEnd, slowASCIIEnd}}

// TestPlainEnd: every byte value at every offset of a word, after plain
// runs of every length mod 8, is found where the byte loop finds it, and
// so are the first of random bytes biased to the ones that matter.
func TestPlainEnd(t *testing.T) {
	for c := range 256 {
		for pre := range 20 {
			for _, fill := range []byte{'a', 0x80, 0xff, 0x21, 0x5d, 0x7f} {
				b := []byte(strings.Repeat(string(fill), pre) + string(rune(0)) + "tail text")
				b[pre] = byte(c)
				for from := range min(pre+1, 9) {
					for _, f := range plainEnds {
						if got, want := f.fast(b, from), f.slow(b, from); got != want {
							t.Fatalf("byte %#x after %d of %#x, from %d: plainEnd of %s %d, want %d", c, pre, fill, from, f.name, got, want)
						}
					}
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	special := []byte{'"', '\\', 0, 0x1f, 0x20, 0x21, 0x22, 0x5b, 0x5c, 0x5d, 0x7f, 0x80, 0x9f, 0xa0, 0xa2, 0xdc, 0xff}
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = special[rng.IntN(len(special))]
			} else {
				b[i] = byte(rng.IntN(256))
			}
		}
		from := rng.IntN(len(b) + 1)
		for _, f := range plainEnds {
			if got, want := f.fast(b, from), f.slow(b, from); got != want {
				t.Fatalf("%q from %d: plainEnd of %s %d, want %d", b, from, f.name, got, want)
			}
		}
	}
}

// BenchmarkPlainEnd: the scan of a plain run of 64 KiB, against the byte
// at a time loop it replaced, in ASCII and in multi-byte text.
func BenchmarkPlainEnd(b *testing.B) {
	for _, tc := range []struct{ name, unit string }{{"ascii", "abcdefgh"}, {"cjk", "漢字かな"}} {
		buf := []byte(strings.Repeat(tc.unit, 64<<10/len(tc.unit)) + `"`)
		for _, f := range []struct {
			name string
			fn   func([]byte, int) int
		}{{"bytes", slowPlainEnd}, {"words", textEnd}} {
			b.Run(tc.name+"/"+f.name, func(b *testing.B) {
				b.SetBytes(int64(len(buf)))
				b.ReportAllocs()
				for b.Loop() {
					if f.fn(buf, 0) != len(buf)-1 {
						b.Fatal("wrong end")
					}
				}
			})
		}
	}
}
