package tiktoken_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tiktoken-go/tokenizer"

	"github.com/toolcap/toolcap/tiktoken"
)

// TestCountLongWhitespace: text with long runs of whitespace across lines,
// which Count counts in segments, counts what the library counts whole.
func TestCountLongWhitespace(t *testing.T) {
	runs := []string{" \t\n", "    \n", "\t\t\n", "\n\n  \n", "  \r\n", " \n\n\t", "\n ", "\u00a0 \n",
		"\n\v", "\n\f", "\n\r ", "\n\u00a0", "\u3000\n", "\r\n\t", "\r \r\n", "\n\u2028", "\u0085\n "}
	around := [][2]string{{"", ""}, {"func main() {", "}"}, {"error: x", "FAIL"}, {"word", "  word"}, {"1234", "\n5678"}, {"{", "  \"k\": 1"}, {"。", "日本語"}}
	for _, name := range []string{tiktoken.O200kBase, tiktoken.Cl100kBase} {
		tz, err := tiktoken.New(name)
		if err != nil {
			t.Fatal(err)
		}
		codec, err := tokenizer.Get(tokenizer.Encoding(name))
		if err != nil {
			t.Fatal(err)
		}
		for _, unit := range runs {
			for _, ar := range around {
				for _, n := range []int{600, 3000} {
					text := ar[0] + strings.Repeat(unit, n/len(unit)) + ar[1] + strings.Repeat(unit, 700/len(unit)) + "end"
					t.Run(fmt.Sprintf("%s/%q/%q/%d", name, unit, ar[0], n), func(t *testing.T) {
						want, err := codec.Count(text)
						if err != nil {
							t.Fatal(err)
						}
						if diff := cmp.Diff(want, tz.Count(text)); diff != "" {
							t.Errorf("Count (-whole +segmented):\n%s", diff)
						}
					})
				}
			}
		}
	}
}
