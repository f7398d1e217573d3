package tiktoken_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
	"github.com/toolcap/toolcap/tiktoken"
	"github.com/toolcap/toolcap/tokens"
)

// The tests here hold Count, which splits and merges valid UTF-8 itself,
// to the codec's own count: the reference it replaces.

var encodingNames = []struct {
	name string
	enc  tokenizer.Encoding
}{{tiktoken.O200kBase, tokenizer.O200kBase}, {tiktoken.Cl100kBase, tokenizer.Cl100kBase}}

// codecCount is the codec's count of text.
func codecCount(tb testing.TB, c tokenizer.Codec, text string) int {
	tb.Helper()
	n, err := c.Count(text)
	if err != nil {
		tb.Fatalf("codec.Count(%q): %v", text, err)
	}
	return n
}

func mustCodec(tb testing.TB, enc tokenizer.Encoding) tokenizer.Codec {
	tb.Helper()
	c, err := tokenizer.Get(enc)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// alphabet has a rune of every class the split patterns tell apart, the
// letters of the contractions, and the runes the generated matcher treats
// oddly (DEL, ſ).
var alphabet = []rune{
	'a', 'z', 'A', 'Z', 'ǅ' /* Lt */, 'ʰ' /* Lm */, 'ー' /* Lm */, '中' /* Lo */, 'ا', /* Lo */
	'\u0301' /* Mn */, '\u0903' /* Mc */, '\u20dd' /* Me */, 'é', 'É', 'ß', 'Σ', 'σ',
	'0', '7', '٣' /* Nd */, 'Ⅻ' /* Nl */, '½' /* No */, '²',
	' ', '\t', '\n', '\r', '\v', '\f', '\u0085', '\u00a0', '\u2028', '\u3000', '\u200b',
	'\'', 's', 'S', 't', 'T', 'ſ', 'r', 'R', 'e', 'E', 'v', 'm', 'M', 'l', 'L', 'd', 'D', 'K', 'k',
	'/', '.', ',', '!', '-', '_', '(', '{', '"', '#', '+', '$', '€', '😀', '\u200d',
	0x7f, 0x00, 0x1c, 0x1f, 0x80, 0x9f, 0xad, '\ufeff', '\ufffd', 0x10ffff, 0xe000,
}

// TestCountMatchesCodecShort compares every text of up to three runes of
// the alphabet, in both encodings.
func TestCountMatchesCodecShort(t *testing.T) {
	for _, e := range encodingNames {
		c := mustCodec(t, e.enc)
		tok := mustNew(t, e.name)
		bad := 0
		check := func(s string) {
			if got, want := tok.Count(s), min(codecCount(t, c, s), len(s)); got != want && bad < 20 {
				bad++
				t.Errorf("%s: Count(%+q) = %d, codec %d", e.name, s, got, want)
			}
		}
		for _, a := range alphabet {
			check(string(a))
			for _, b := range alphabet {
				check(string(a) + string(b))
				if testing.Short() {
					continue
				}
				for _, d := range alphabet {
					check(string(a) + string(b) + string(d))
				}
			}
		}
	}
}

// TestCountMatchesCodecRandom compares random texts over the alphabet,
// with runs of each class long enough to reach every backtracking path.
func TestCountMatchesCodecRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 5))
	for _, e := range encodingNames {
		c := mustCodec(t, e.enc)
		tok := mustNew(t, e.name)
		for i := range 5000 {
			var b strings.Builder
			for range 1 + rng.IntN(40) {
				r := alphabet[rng.IntN(len(alphabet))]
				for range 1 + rng.IntN(3)*rng.IntN(4) {
					b.WriteRune(r)
				}
			}
			s := b.String()
			if got, want := tok.Count(s), min(codecCount(t, c, s), len(s)); got != want {
				t.Fatalf("%s: text %d: Count(%+q) = %d, codec %d", e.name, i, s, got, want)
			}
		}
	}
}

// TestCountMatchesCodecEveryRune compares every rune of the planes in use
// (surrogates excepted) in contexts that reach each alternative: after a
// letter, between spaces, before a contraction, after a digit. Runes are
// compared in blocks of 512, one count per block, and a block that
// differs is searched rune by rune.
func TestCountMatchesCodecEveryRune(t *testing.T) {
	if testing.Short() {
		t.Skip("counts about 2 million runes with the codec")
	}
	contexts := []func(r rune) string{
		func(r rune) string { return "a" + string(r) + "Z" },
		func(r rune) string { return " " + string(r) + "'s\n" },
		func(r rune) string { return "1" + string(r) + string(r) + " " },
	}
	for _, e := range encodingNames {
		c := mustCodec(t, e.enc)
		tok := mustNew(t, e.name)
		for ci, ctx := range contexts {
			for lo := rune(0); lo < 0x32000; lo += 512 {
				var b strings.Builder
				for r := lo; r < lo+512; r++ {
					if utf8.ValidRune(r) {
						b.WriteString(ctx(r))
					}
				}
				if got, want := tok.Count(b.String()), codecCount(t, c, b.String()); got == want {
					continue
				}
				for r := lo; r < lo+512; r++ {
					if s := ctx(r); utf8.ValidRune(r) && tok.Count(s) != min(codecCount(t, c, s), len(s)) {
						t.Errorf("%s: context %d: Count(%+q) = %d, codec %d", e.name, ci, s, tok.Count(s), codecCount(t, c, s))
					}
				}
			}
		}
	}
}

// TestCountMatchesCodecSamples compares the samples and pieces of them.
func TestCountMatchesCodecSamples(t *testing.T) {
	for _, e := range encodingNames {
		c := mustCodec(t, e.enc)
		tok := mustNew(t, e.name)
		for _, s := range samples {
			text := readSample(t, s.file)
			for i, piece := range append(chunks(text), text) {
				if got, want := tok.Count(piece), codecCount(t, c, piece); got != want {
					t.Errorf("%s: %s piece %d: Count = %d, codec %d", e.name, s.name, i, got, want)
				}
			}
		}
	}
}

// FuzzCountMatchesCodec compares Count with the codec on arbitrary text.
func FuzzCountMatchesCodec(f *testing.F) {
	for _, s := range []string{
		"hello world", "tiktoken is great!", "こんにちは世界", "  \n\n  \t x", "I'LL don'T 'ſ",
		"a\u0301B\u0301cD", "\x7f\x7fa\x7f", "x = 1234567 // ok\r\n", "\xff\xfe", "   \n \n\n  ",
	} {
		f.Add(s)
	}
	toks := make([]tokens.Tokenizer, len(encodingNames))
	codecs := make([]tokenizer.Codec, len(encodingNames))
	for i, e := range encodingNames {
		toks[i] = mustNew(f, e.name)
		codecs[i] = mustCodec(f, e.enc)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, e := range encodingNames {
			if got, want := toks[i].Count(s), min(codecCount(t, codecs[i], s), len(s)); got != want {
				t.Errorf("%s: Count(%+q) = %d, codec %d", e.name, s, got, want)
			}
		}
	})
}
