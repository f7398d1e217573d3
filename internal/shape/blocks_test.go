package shape_test

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

func text(s string) shape.Block { return shape.Block{Kind: shape.BlockText, Text: s} }

// img is an image of n bytes of data: its MIME type and base64 count.
func img(n int) shape.Block {
	return shape.Block{Kind: shape.BlockImage, Name: "image/png", Fixed: len("image/png") + base64.StdEncoding.EncodedLen(n)}
}

func res(s string) shape.Block {
	return shape.Block{Kind: shape.BlockResource, Name: "file:///x", Fixed: len("file:///x"), Text: s}
}

func head(s string, n int) string { c, _ := cut.Head(s, n); return c }

// kept is how many bytes of s a head cut at n keeps.
func kept(s string, n int) int { _, d := cut.Head(s, n); return len(s) - d }

func dropNote(what string, size, limit int) string {
	return fmt.Sprintf("[toolcap: dropped %s of %d bytes, over this tool's limit of %d bytes; refine your query]", what, size, limit)
}

// describe gives each block's kind, where it comes from and what a test
// checks of it.
func describe(bs []shape.Block) []string {
	out := []string{}
	for _, b := range bs {
		switch b.Kind {
		case shape.BlockText:
			out = append(out, fmt.Sprintf("%d text:%s", b.From, b.Text))
		case shape.BlockImage:
			out = append(out, fmt.Sprintf("%d image:%d", b.From, b.Fixed))
		case shape.BlockResource:
			out = append(out, fmt.Sprintf("%d resource:%s:%s", b.From, b.Name, b.Text))
		case shape.BlockLink:
			out = append(out, fmt.Sprintf("%d link:%s:%s", b.From, b.Name, b.Text))
		default:
			out = append(out, fmt.Sprintf("%d other:%d", b.From, b.Fixed))
		}
	}
	return out
}

func TestFitSplitsTheChainsText(t *testing.T) {
	blocks := []shape.Block{text("alpha"), img(1), text("beta"), text("gamma")}
	joined, ok := shape.JoinText(blocks)
	if diff := cmp.Diff("alpha\nbeta\ngamma", joined); !ok || diff != "" {
		t.Fatalf("JoinText (-want +got), ok %v:\n%s", ok, diff)
	}
	str := func(s string) *string { return &s }
	tests := []struct {
		name        string
		text        *string
		want        []string
		wantChanged bool
	}{
		{"unchanged", str(joined), []string{"0 text:alpha", "1 image:13", "2 text:beta", "3 text:gamma"}, false},
		{"cut in the second block", str("alpha\nbe[m]"), []string{"0 text:alpha", "1 image:13", "2 text:be[m]"}, true},
		{"cut in the first block", str("al[m]"), []string{"0 text:al[m]", "1 image:13"}, true},
		{"cut right after a block", str("alpha\n[m]"), []string{"0 text:alpha", "1 image:13", "2 text:[m]"}, true},
		{"grown at the end", str(joined + "!"), []string{"0 text:alpha", "1 image:13", "2 text:beta", "3 text:gamma!"}, true},
		{"nil drops the text", nil, []string{"1 image:13"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fig := shape.Fit(blocks, shape.Joined{Text: tt.text}, shape.Bytes(1000), shape.Note{}, nil)
			if diff := cmp.Diff(tt.want, describe(got)); diff != "" {
				t.Errorf("Fit (-want +got):\n%s", diff)
			}
			if fig.TextChanged != tt.wantChanged || fig.Changed() != tt.wantChanged {
				t.Errorf("TextChanged %v, Changed() %v, want %v", fig.TextChanged, fig.Changed(), tt.wantChanged)
			}
		})
	}
	if blocks[2].Text != "beta" {
		t.Error("Fit modified its input")
	}
}

// A middleware may give text to a result that had none: it comes first,
// as a block shape added.
func TestFitTextForAResultWithout(t *testing.T) {
	s := "added"
	got, _ := shape.Fit([]shape.Block{img(1)}, shape.Joined{Text: &s}, shape.Bytes(100), shape.Note{}, nil)
	if diff := cmp.Diff([]string{"-1 text:added", "0 image:13"}, describe(got)); diff != "" {
		t.Errorf("Fit (-want +got):\n%s", diff)
	}
}

func TestContent(t *testing.T) {
	a100, r1000, x1000 := strings.Repeat("a", 100), strings.Repeat("r", 1000), strings.Repeat("x", 1000)
	imgNote := func(size, limit int) string { return dropNote("an image block (image/png)", size, limit) }
	// An image of 90 bytes takes 9 (MIME type) + 120 (base64) = 129.
	var tenImages []shape.Block
	var sixImages []string
	for i := range 10 {
		tenImages = append(tenImages, img(90))
		if i < 6 {
			sixImages = append(sixImages, fmt.Sprintf("%d image:129", i))
		}
	}
	tests := []struct {
		name    string
		blocks  []shape.Block
		limit   int
		want    []string
		wantFig shape.ContentFigures
	}{
		{"within the limit: unchanged",
			[]shape.Block{text("hi"), img(90), res("r")}, 1000,
			[]string{"0 text:hi", "1 image:129", "2 resource:file:///x:r"}, shape.ContentFigures{
				Figures: chain.Truncation{Limit: 1000, OriginalBytes: 2 + 129 + 10, KeptBytes: 2 + 129 + 10}}},
		{"an image over what the text leaves is dropped, the note fits",
			[]shape.Block{text(a100), img(300)}, 400,
			[]string{"0 text:" + a100, "-1 text:" + imgNote(409, 400)}, shape.ContentFigures{
				Figures:       chain.Truncation{Limit: 400, OriginalBytes: 509, KeptBytes: 100, DroppedBytes: 409},
				BlocksDropped: 1, DroppedBytes: 409}},
		{"images share one budget; one note for all dropped",
			tenImages, 1000,
			append(sixImages, "-1 text:"+dropNote("4 blocks", 4*129, 1000)), shape.ContentFigures{
				Figures:       chain.Truncation{Limit: 1000, OriginalBytes: 1290, KeptBytes: 6 * 129, DroppedBytes: 4 * 129},
				BlocksDropped: 4, DroppedBytes: 4 * 129}},
		{"an embedded text resource is cut by the head rule",
			[]shape.Block{text(a100), res(r1000)}, 400,
			[]string{"0 text:" + a100, "1 resource:file:///x:" + head(r1000, 400-100-9)}, shape.ContentFigures{
				Figures:   chain.Truncation{Limit: 400, OriginalBytes: 1109, KeptBytes: 100 + 9 + kept(r1000, 291), DroppedBytes: 1000 - kept(r1000, 291)},
				BlocksCut: 1}},
		{"a resource link's description is cut",
			[]shape.Block{{Kind: shape.BlockLink, Name: "file:///y", Fixed: 10, Text: x1000}}, 300,
			[]string{"0 link:file:///y:" + head(x1000, 300-10)}, shape.ContentFigures{
				Figures:   chain.Truncation{Limit: 300, OriginalBytes: 1010, KeptBytes: 10 + kept(x1000, 290), DroppedBytes: 1000 - kept(x1000, 290)},
				BlocksCut: 1}},
		{"a resource link too large to cut is dropped",
			[]shape.Block{{Kind: shape.BlockLink, Name: "file:///y", Fixed: 509}}, 300,
			[]string{"-1 text:" + dropNote("a resource link (file:///y)", 509, 300)}, shape.ContentFigures{
				Figures:       chain.Truncation{Limit: 300, OriginalBytes: 509, DroppedBytes: 509},
				BlocksDropped: 1, DroppedBytes: 509}},
		{"blocks take the budget in order: an image before the text",
			[]shape.Block{img(90), text(x1000)}, 400,
			[]string{"0 image:129", "1 text:" + head(x1000, 400-129)}, shape.ContentFigures{
				Figures:     chain.Truncation{Limit: 400, OriginalBytes: 1129, KeptBytes: 129 + kept(x1000, 271), DroppedBytes: 1000 - kept(x1000, 271)},
				TextChanged: true}},
		{"the text is cut further to make room for the note",
			[]shape.Block{text(strings.Repeat("t", 400)), img(100)}, 400,
			[]string{"0 text:" + head(strings.Repeat("t", 400), 400-len(imgNote(145, 400))), "-1 text:" + imgNote(145, 400)},
			shape.ContentFigures{
				Figures: chain.Truncation{Limit: 400, OriginalBytes: 545,
					KeptBytes: kept(strings.Repeat("t", 400), 400-len(imgNote(145, 400))), DroppedBytes: 545 - kept(strings.Repeat("t", 400), 400-len(imgNote(145, 400)))},
				TextChanged: true, BlocksDropped: 1, DroppedBytes: 145}},
		{"a small limit takes the short note",
			[]shape.Block{text(strings.Repeat("s", 50)), img(200)}, 128,
			[]string{"0 text:" + strings.Repeat("s", 50), "-1 text:[toolcap: 1 block over the limit dropped]"}, shape.ContentFigures{
				Figures:       chain.Truncation{Limit: 128, OriginalBytes: 50 + 277, KeptBytes: 50, DroppedBytes: 277},
				BlocksDropped: 1, DroppedBytes: 277}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fig := shape.Content(tt.blocks, shape.Bytes(tt.limit), shape.Note{})
			if diff := cmp.Diff(tt.want, describe(got)); diff != "" {
				t.Errorf("Content blocks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFig, fig); diff != "" {
				t.Errorf("Content figures (-want +got):\n%s", diff)
			}
			if n := shape.Size(got); n > tt.limit {
				t.Errorf("content holds %d bytes, over the limit of %d", n, tt.limit)
			}
		})
	}
}

// A text the chain cut at one limit, cut again at a smaller one to make
// room for an image, is what a cut of the original at that smaller limit
// makes: same kept bytes, same exact count.
func TestFitRecutMatchesACutOfTheOriginal(t *testing.T) {
	orig := strings.Repeat("é", 3000) + strings.Repeat("z", 7000)
	first, st := cut.Cut(orig, 9000, cut.Spec{})
	blocks := []shape.Block{img(90), text(orig[:9000])} // what a front end could hold
	for limit := 200; limit <= 9000; limit += 37 {
		want := head(orig, limit-129)
		got, fig := shape.Fit(blocks, shape.Joined{Text: &first, Cut: shape.Figures(st, shape.Bytes(9000))},
			shape.Bytes(limit), shape.Note{}, nil)
		if diff := cmp.Diff([]string{"0 image:129", "1 text:" + want}, describe(got)); diff != "" {
			t.Fatalf("limit %d (-want +got):\n%s", limit, diff)
		}
		_, dropped := cut.Head(orig, limit-129)
		if fig.Figures.OriginalBytes != len(orig)+129 || fig.Figures.DroppedBytes != dropped {
			t.Fatalf("limit %d: figures %+v, want %d original and %d dropped", limit, fig.Figures, len(orig)+129, dropped)
		}
	}
}

// Whatever the mix and the limit, the blocks and the notes together stay
// within the limit.
func TestContentWithinLimit(t *testing.T) {
	var blocks []shape.Block
	for i := range 12 {
		blocks = append(blocks,
			text(strings.Repeat("t", 100*i)),
			img(50*i),
			res(strings.Repeat("r", 150*i)),
			shape.Block{Kind: shape.BlockResource, Name: "file:///b", Fixed: 9 + 40*i},
			shape.Block{Kind: shape.BlockLink, Name: "file:///l", Fixed: 10, Text: strings.Repeat("d", 80*i)},
			shape.Block{Kind: shape.BlockAudio, Name: "audio/wav", Fixed: 9 + 70*i},
		)
	}
	pre := []shape.Dropped{{Kind: shape.BlockImage, Size: 1 << 20}}
	tail := shape.Note{Long: strings.Repeat("n", 300), Short: "[n]"}
	for _, p := range []shape.Policy{{}, {Spec: cut.Spec{Keep: cut.KeepHeadTail}}} {
		for limit := 128; limit < shape.Size(blocks)+100; limit += 97 {
			p.MaxBytes = limit
			got, fig := shape.Content(blocks, p, shape.Note{})
			if n := shape.Size(got); n > limit {
				t.Fatalf("%s, limit %d: content holds %d bytes", p.Spec.Keep, limit, n)
			}
			if fig.Figures.KeptBytes > limit || fig.Figures.OriginalBytes != shape.Size(blocks) {
				t.Fatalf("%s, limit %d: figures %+v", p.Spec.Keep, limit, fig.Figures)
			}
			joined, _ := shape.JoinText(blocks)
			got, _ = shape.Fit(blocks, shape.Joined{Text: &joined}, p, tail, pre)
			if n := shape.Size(got); n > limit {
				t.Fatalf("%s, limit %d: content with notes holds %d bytes", p.Spec.Keep, limit, n)
			}
		}
	}
}

// A head_tail text that has to give up room to another block keeps its
// shape: one marker between head and tail, its count exact.
func TestContentKeepsHeadTail(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "ok %d\n", i)
	}
	b.WriteString("FAIL: TestX")
	log := b.String()
	got, _ := shape.Content([]shape.Block{text(log), img(500)}, shape.Policy{MaxBytes: 3000, Spec: cut.Spec{Keep: cut.KeepHeadTail}}, shape.Note{})
	out := got[0].Text
	re := regexp.MustCompile(`\n\[truncated: (\d+) bytes dropped, refine your query\]\n`)
	ms := re.FindAllStringSubmatchIndex(out, -1)
	if len(ms) != 1 || !strings.HasPrefix(out, "ok 0\n") || !strings.HasSuffix(out, "FAIL: TestX") {
		t.Fatalf("got %d markers in %q…%q", len(ms), out[:40], out[len(out)-40:])
	}
	n, _ := strconv.Atoi(out[ms[0][2]:ms[0][3]])
	if kept := len(out) - (ms[0][1] - ms[0][0]); n != len(log)-kept {
		t.Errorf("the marker says %d, want %d (%d kept of %d)", n, len(log)-kept, kept, len(log))
	}
	if size := shape.Size(got); size > 3000 {
		t.Errorf("content holds %d bytes, over 3000", size)
	}
}

// The notes Fit adds (a tail, the dropped-block note) count against the
// limit with the blocks, in their short forms at small limits.
func TestFitNotesWithinLimit(t *testing.T) {
	long := strings.Repeat("y", 20000)
	tail := shape.StructuredDropped(16384)
	tests := []struct {
		name     string
		blocks   []shape.Block
		limit    int
		pre      []shape.Dropped
		wantLast string
		wantNote string // the drop note, "" for none
	}{
		{"tail, default limit", []shape.Block{text(long)}, 16384, nil, tail.Long, ""},
		{"tail, smallest limit", []shape.Block{text(long)}, 128, nil, tail.Short, ""},
		{"both notes, smallest limit", []shape.Block{text(long), img(1000)}, 128, nil, tail.Short,
			"[toolcap: 2 blocks over the limit dropped]"}, // the image, and the text: no room for its marker
		{"both notes, middling limit", []shape.Block{img(1000), text(long)}, 600, nil, tail.Long,
			dropNote("an image block (image/png)", 1345, 600)},
		{"a block dropped before", []shape.Block{text("short")}, 16384, []shape.Dropped{{Kind: shape.BlockAudio, Size: 1 << 30}}, tail.Long,
			dropNote("an audio block", 1<<30, 16384)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			joined, _ := shape.JoinText(tt.blocks)
			capped, st := cut.Cut(joined, tt.limit, cut.Spec{}) // what the chain makes of it
			got, fig := shape.Fit(tt.blocks, shape.Joined{Text: &capped, Cut: shape.Figures(st, shape.Bytes(tt.limit))},
				shape.Bytes(tt.limit), tail, tt.pre)
			if diff := cmp.Diff(tt.wantLast, got[len(got)-1].Text); diff != "" {
				t.Errorf("last block (-want +got):\n%s", diff)
			}
			var notes []string
			for _, b := range got[:len(got)-1] {
				if b.From < 0 {
					notes = append(notes, b.Text)
				}
			}
			var want []string
			if tt.wantNote != "" {
				want = []string{tt.wantNote}
			}
			if diff := cmp.Diff(want, notes); diff != "" {
				t.Errorf("drop note (-want +got):\n%s", diff)
			}
			if n := shape.Size(got); n > tt.limit {
				t.Errorf("blocks and notes hold %d bytes, over the limit of %d", n, tt.limit)
			}
			if tt.pre != nil && (fig.BlocksDropped != 1 || fig.Figures.OriginalBytes != 5+1<<30) {
				t.Errorf("figures %+v, want the block dropped before counted", fig)
			}
		})
	}
}

// A long name is clipped in a note, on a character boundary.
func TestContentClipsNames(t *testing.T) {
	name := "file:///" + strings.Repeat("é", 40)
	got, _ := shape.Content([]shape.Block{{Kind: shape.BlockResource, Name: name, Fixed: 1000}}, shape.Bytes(400), shape.Note{})
	want := dropNote("an embedded resource ("+name[:36]+"...)", 1000, 400) // 37 would split an é
	if diff := cmp.Diff([]string{"-1 text:" + want}, describe(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Under a token limit, the text of the blocks holds it too.
func TestContentTokens(t *testing.T) {
	p := shape.Policy{MaxBytes: 4000, MaxTokens: 100, Counter: perByte{}}
	got, fig := shape.Content([]shape.Block{text(strings.Repeat("w", 1000)), img(10)}, p, shape.Note{})
	if n := len(got[0].Text); n > 100 {
		t.Errorf("the text holds %d tokens, over 100", n)
	}
	if diff := cmp.Diff([]string{"1 image:25"}, describe(got[1:])); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	f := fig.Figures
	if f.LimitTokens != 100 || f.Unit != "tokens" || f.KeptBytes != len(got[0].Text)-len(cut.TokenMarker(f.DroppedTokens))+25 {
		t.Errorf("figures %+v", fig.Figures)
	}
}

// perByte counts a token per byte.
type perByte struct{}

func (perByte) Count(s string) int { return len(s) }

// A front end that could hold only some of the text blocks says how many
// there were: the separators between them are not counted as content.
func TestFitTextsNotHeld(t *testing.T) {
	orig := strings.Repeat("abcd\n", 1000) // 1000 blocks of "abcd", joined
	orig = orig[:len(orig)-1]
	capped, st := cut.Cut(orig, 300, cut.Spec{})
	held := []shape.Block{text("abcd"), text("abcd")}
	_, fig := shape.Fit(held, shape.Joined{Text: &capped, Cut: shape.Figures(st, shape.Bytes(300)), Texts: 1000},
		shape.Bytes(300), shape.Note{}, nil)
	if f := fig.Figures; f.OriginalBytes != 4000 || f.KeptBytes+f.DroppedBytes != 4000 {
		t.Errorf("figures %+v, want 4000 bytes of content", f)
	}
}

// A text the token limit cut, then cut again to leave room for a block
// before it, keeps one token marker whose N counts all the model does not
// see of the original.
func TestContentRecutKeepsTokenMarker(t *testing.T) {
	p := shape.Policy{MaxBytes: 4000, MaxTokens: 300, Counter: capcheck.Words{}}
	text := strings.Repeat("alpha beta gamma. ", 300)
	blocks := []shape.Block{{Kind: shape.BlockImage, Fixed: 3500, Name: "image/png"}, {Kind: shape.BlockText, Text: text}}
	out, _ := shape.Content(blocks, p, shape.Note{})
	if len(out) != 2 || out[1].Kind != shape.BlockText {
		t.Fatalf("blocks %+v", out)
	}
	got := out[1].Text
	q := p
	q.MaxBytes = 500 // what the image left the text
	if err := capcheck.Text(text, got, q); err != nil {
		t.Error(err)
	}
	if ms := cut.FindMarkers(got); len(ms) != 1 || ms[0].Unit != cut.UnitTokens {
		t.Errorf("markers %+v, want one counting tokens", ms)
	}
}

// A tail note on blocks that fit still changes the content, and Changed
// says so.
func TestContentTailNoted(t *testing.T) {
	blocks := []shape.Block{{Kind: shape.BlockText, Text: "ok"}}
	out, fig := shape.Content(blocks, shape.Bytes(1000), shape.Note{Long: "[toolcap: a note]", Short: "[toolcap: note]"})
	if len(out) != 2 || !fig.Changed() || !fig.Noted || out[1].From != -1 {
		t.Errorf("Content() = %+v, %+v", out, fig)
	}
	if _, fig := shape.Content(blocks, shape.Bytes(1000), shape.Note{}); fig.Changed() {
		t.Errorf("no note, nothing cut: Changed() = true (%+v)", fig)
	}
}
