package claudecode

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/tokens"
)

// The content of blocks with one text block, which decoder.content fits
// without joining it (and, cut, with its stand-in for Fit), is
// shape.Content's, blocks and figures, for short and long texts, alone or
// with other blocks, under every strategy and a token limit.
func TestContentLoneText(t *testing.T) {
	lines := func(n int) string { return strings.Repeat("0123456789abcde\n", n/16) }
	long := lines(1 << 20)
	policies := map[string]shape.Policy{
		"head":              {MaxBytes: shape.DefaultMaxBytes},
		"small":             {MaxBytes: 300},
		"head_tail":         {MaxBytes: 4000, Spec: cut.Spec{Keep: cut.KeepHeadTail}},
		"keep_lines":        {MaxBytes: 4000, Spec: cut.Spec{Keep: cut.KeepHeadTail, KeepLines: []*regexp.Regexp{regexp.MustCompile("^9")}}},
		"tokens":            {MaxBytes: 12000, MaxTokens: 1000, Counter: tokens.NewCalibrated()},
		"tokens, head_tail": {MaxBytes: 12000, MaxTokens: 2500, Spec: cut.Spec{Keep: cut.KeepHeadTail}, Counter: tokens.NewCalibrated()},
	}
	image := shape.Block{Kind: shape.BlockImage, Fixed: 3000, Name: "image/png"}
	blockSets := map[string][]shape.Block{
		"short":             {{Text: "ok\n"}},
		"at the limit":      {{Text: lines(shape.DefaultMaxBytes)}},
		"past the hold":     {{Text: lines(80 << 10)}},
		"long":              {{Text: long}},
		"long, no newline":  {{Text: strings.Repeat("x", 1<<20)}},
		"image, then long":  {image, {Text: long}},
		"long, then image":  {{Text: long}, image},
		"long, multibyte":   {{Text: strings.Repeat("é—", 200_000)}},
		"image, long, huge": {{Text: long}, {Kind: shape.BlockImage, Fixed: 1 << 20, Name: "image/png"}},
	}
	tails := map[string]shape.Note{"no tail": {}, "tail": {Long: "structured content cut: 10 of 20 items", Short: "cut"}}
	for pn, p := range policies {
		for bn, blocks := range blockSets {
			for tn, tail := range tails {
				wantBlocks, wantFig := shape.Content(blocks, p, tail)
				gotBlocks, gotFig := newDecoder().content(blocks, p, tail)
				if diff := cmp.Diff(wantBlocks, gotBlocks); diff != "" {
					t.Errorf("%s, %s, %s: content() blocks mismatch (-want +got):\n%.2000s", pn, bn, tn, diff)
				}
				if diff := cmp.Diff(wantFig, gotFig); diff != "" {
					t.Errorf("%s, %s, %s: content() figures mismatch (-want +got):\n%s", pn, bn, tn, diff)
				}
			}
		}
	}
}
