package shape

import (
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
)

// TextSeparator joins the text blocks of a result into the one text that is
// cut by the policy ([JoinText]), and counts against the limit there. The
// joined text alone is therefore within the limit; what bounds what the
// model receives is [Fit], which brings the text blocks, the other blocks
// and the notes within the limit together.
const TextSeparator = "\n"

// BlockKind is the kind of a content [Block], as MCP names them.
type BlockKind int

// The kinds of block. The zero BlockKind is [BlockText].
const (
	// BlockText is a text block: Text is its text.
	BlockText BlockKind = iota
	// BlockImage is an image: Fixed counts its MIME type and its data as
	// sent (base64).
	BlockImage
	// BlockAudio is an audio clip, counted as an image is.
	BlockAudio
	// BlockResource is an embedded resource: Fixed counts its URI, MIME
	// type and blob (base64); Text is its text, for a text resource.
	BlockResource
	// BlockLink is a resource link: Fixed counts its URI, name, title and
	// MIME type; Text is its description.
	BlockLink
	// BlockOther is any other block: Fixed counts what a model may read of
	// it.
	BlockOther
)

// Block is one content block of a result, as shape sees it: the bytes a
// model may read of it, split into a text shape may cut and the rest. A
// front end translates its blocks into these and back, by From.
type Block struct {
	// Kind is the block's kind.
	Kind BlockKind
	// Text is the part of the block shape may cut: a text block's text, an
	// embedded text resource's text, a resource link's description. Empty
	// for a block shape keeps whole or drops.
	Text string
	// Fixed is the bytes the block takes besides Text that a model may
	// read: MIME type, URI, name, base64 data. The JSON around them,
	// annotations and _meta are not counted, as the JSON wrapping of a text
	// block is not.
	Fixed int
	// Name is what a note calls the block: its MIME type or URI. shape
	// clips it to a few dozen bytes.
	Name string
	// From is, in the output of [Fit] and [Content], the index of the input
	// block this one comes from, whose Kind it has (its Text may be cut);
	// -1 for a text block shape added: a note, or text the chain gave a
	// result that had none. It is ignored in the input.
	From int
}

// Size returns the bytes of b a model may read: Fixed + len(Text).
func (b Block) Size() int { return b.Fixed + len(b.Text) }

// Size returns the bytes of blocks a model may read, the measure [Fit]
// holds to its limit: the sum of their [Block.Size].
func Size(blocks []Block) int {
	n := 0
	for _, b := range blocks {
		n += b.Size()
	}
	return n
}

// JoinText returns the texts of the text blocks of blocks joined by
// [TextSeparator], in order, and whether there was any text block. A
// result without text blocks has no text to cut: it is neither measured
// nor cut as a text.
func JoinText(blocks []Block) (string, bool) {
	n, count, only := 0, 0, ""
	for _, b := range blocks {
		if b.Kind == BlockText {
			n += len(b.Text)
			count++
			only = b.Text
		}
	}
	switch count {
	case 0:
		return "", false
	case 1:
		// One text is its own join: no copy of what may be megabytes.
		return only, true
	}
	var sb strings.Builder
	sb.Grow(n + (count-1)*len(TextSeparator))
	first := true
	for _, b := range blocks {
		if b.Kind != BlockText {
			continue
		}
		if !first {
			sb.WriteString(TextSeparator)
		}
		first = false
		sb.WriteString(b.Text)
	}
	return sb.String(), true
}

// Dropped is a block dropped before the blocks are fitted, such as one a
// front end could not read or hold: [Fit]'s note counts it with the blocks
// it drops itself.
type Dropped struct {
	// Kind says what the note calls it, as for a [Block].
	Kind BlockKind
	// Name is the MIME type or URI the note names, as for a [Block].
	Name string
	// Size is its size, in the measure of [Block.Size] (the bytes a model
	// may read of it), or, for a block a front end could not read, its
	// bytes as sent; for several blocks (Count), their sizes added up.
	Size int
	// Count is how many blocks of this Kind it stands for, so that a front
	// end dropping any number of blocks holds a count, not a record per
	// block; 0 means 1. A Dropped for several blocks names none of them
	// (Name is ignored).
	Count int
}

// blocks returns how many blocks d stands for.
func (d Dropped) blocks() int { return max(d.Count, 1) }

// Note is a text shape ends a result's content with, beside its own notes
// and markers, such as the note of a cut or dropped structuredContent
// ([Structured]). It counts against the limit with the blocks.
type Note struct {
	// Long is the note; "" means none.
	Long string
	// Short replaces Long when Long would take more than half the limit.
	Short string
}

// Joined is what a front end's chain made of [JoinText] of a result's
// blocks, for [Fit].
type Joined struct {
	// Text is the chain's text; nil: the chain left no content, and every
	// text block is dropped.
	Text *string
	// Cut holds the figures of the cut that made Text from the joined text
	// (chain.Result's Ceiling when there was one, its Truncation
	// otherwise); the zero value when nothing cut it. Fit's figures build on
	// it: OriginalBytes is then the length of the whole joined text, which
	// may be longer than the blocks a front end could hold.
	Cut chain.Truncation
	// Texts is how many text blocks the joined text was joined from, when
	// the blocks hold fewer of them (a front end that could not hold them
	// all); 0 means those of the blocks. The separators between them are
	// not content.
	Texts int
}

// ContentFigures are the figures of [Fit] and [Content].
type ContentFigures struct {
	// Figures are in bytes of the content as [Size] measures it: Limit, and
	// the server's blocks (text blocks by their text, blocks dropped before,
	// see [Dropped]) against what of them the output shows, markers and
	// notes not counted. Strategy, Compacted and the token figures are the
	// text cut's.
	Figures chain.Truncation
	// TextChanged reports that the text blocks differ from the input's.
	TextChanged bool
	// BlocksDropped counts the blocks replaced by the note (the rest of the
	// text dropped whole counts as one, so do blocks dropped before), and
	// DroppedBytes their sizes added up.
	BlocksDropped int
	DroppedBytes  int
	// BlocksCut counts the embedded text resources and resource links whose
	// text was cut.
	BlocksCut int
	// Noted reports that the tail note ends the output.
	Noted bool
}

// Changed reports whether the output blocks differ from the input's: a
// cut, a drop, or the tail note added.
func (f ContentFigures) Changed() bool { return f.BlocksChanged() || f.Noted }

// BlocksChanged reports whether the input's blocks were cut or dropped:
// Changed but for the tail note, and what Figures then describe.
func (f ContentFigures) BlocksChanged() bool {
	return f.TextChanged || f.BlocksDropped > 0 || f.BlocksCut > 0
}

// Content fits the blocks of one result to p: the text blocks, joined by
// [TextSeparator], are cut as one text by p ([Text]: strategy, tokens),
// then put back into their blocks; then all the blocks together, notes
// included, are brought within p.MaxBytes ([Fit]), tail (a note such as
// [Structured]'s, or the zero Note for none) ending them. It returns the
// blocks to send and the figures; when nothing had to change and there is
// no tail, the output holds the input blocks unchanged (with From set) and
// Changed reports false.
func Content(blocks []Block, p Policy, tail Note) ([]Block, ContentFigures) {
	joined, had := JoinText(blocks)
	var j Joined
	if had {
		out, t, _ := Text(joined, p)
		j = Joined{Text: &out, Cut: t}
	}
	return Fit(blocks, j, p, tail, nil)
}

// Fit is the second half of [Content], for a front end whose chain has cut
// the joined text already: text is the chain's version of [JoinText](blocks),
// tail an optional note to end the content with, and pre the blocks dropped
// before. blocks is not modified.
//
// The text goes back into the text blocks first: each text block that the
// chain's text still holds whole, in order and followed by the separator,
// is kept as it was; the first one that is not takes the rest of the text
// (for a cut text: the kept part of that block and the marker), and the
// text blocks after it are dropped. Other blocks keep their places.
//
// Then the blocks take p.MaxBytes in order, each what it needs of what the
// blocks before it left. Text that does not fit is cut again by p
// ([Recut]: one marker, counting what the chain dropped too); when even the
// marker does not fit, the rest of the text is dropped. An image, audio or
// blob that does not fit whole is dropped; the text of an embedded text
// resource or a resource link that does not fit is cut by the head rule,
// marker included, when the block's fixed bytes leave room for the marker,
// and the block is dropped otherwise. Dropped blocks (and pre) are replaced
// by one text note, at the place of the first, saying what was dropped and
// how large it was. The notes count against the limit: when a block has to
// be dropped, room for the note is set aside and the blocks are measured
// again, so the text is cut further when the note needs the room. Notes
// take at most half the limit in their long forms (tail first), their short
// forms past that. [Size] of the output never exceeds p.MaxBytes.
func Fit(blocks []Block, text Joined, p Policy, tail Note, pre []Dropped) ([]Block, ContentFigures) {
	split, textChanged := splitText(blocks, text.Text)
	total := -1 // the length of the original of the chain's text, when known
	if text.Cut.OriginalBytes > 0 {
		total = text.Cut.OriginalBytes
	}
	out, st := fitBlocks(split, p, tail, pre, total)
	fig := ContentFigures{
		TextChanged:   textChanged || st.textRecut,
		BlocksDropped: st.dropped,
		DroppedBytes:  st.droppedBytes,
		BlocksCut:     st.cut,
		Noted:         st.noted,
	}
	fig.Figures = contentFigures(blocks, out, text, st, p, pre)
	return out, fig
}

// contentFigures measures the input's blocks against what out shows of
// them.
func contentFigures(in, out []Block, text Joined, st fitStats, p Policy, pre []Dropped) chain.Truncation {
	t := text.Cut
	if st.textRecut && t.Strategy == "" {
		t.Strategy = st.recutKeep
	}
	t.Limit, t.LimitTokens = p.MaxBytes, p.tokens()
	t.Batch = false

	texts, textLen := 0, 0
	original := 0
	for _, b := range in {
		if b.Kind == BlockText {
			texts++
			textLen += len(b.Text)
			continue
		}
		original += b.Size()
	}
	if text.Texts > 0 {
		texts = text.Texts
	}
	if text.Cut.OriginalBytes > 0 && texts > 0 {
		// The whole joined text, which the blocks may hold only in part.
		original += text.Cut.OriginalBytes - (texts-1)*len(TextSeparator)
	} else {
		original += textLen
	}
	for _, d := range pre {
		original += d.Size
	}

	kept := 0
	consumed := 0 // bytes of the joined text before the block at hand
	for _, b := range out {
		if b.From < 0 {
			continue
		}
		src := in[b.From]
		switch {
		case b.Kind != BlockText:
			if b.Text == src.Text {
				kept += b.Size()
			} else {
				kept += b.Fixed + st.blockKept[b.From]
			}
		case b.Text == src.Text:
			kept += len(b.Text)
			consumed += len(b.Text) + len(TextSeparator)
		default:
			// The block that holds the end of the chain's text.
			// Its text may hold the tail of later blocks (a head_tail
			// cut), so only a text no cut made is bounded by its block's.
			var k int
			switch {
			case st.textRecut:
				k = st.recutKept
			case text.Cut.OriginalBytes > 0:
				k = text.Cut.KeptBytes - consumed
			default:
				k = min(len(b.Text), len(src.Text))
			}
			kept += max(0, min(k, len(b.Text)))
		}
	}
	kept = min(kept, original)
	t.OriginalBytes, t.KeptBytes, t.DroppedBytes = original, kept, original-kept
	return t
}

// splitText puts text, the chain's version of JoinText(blocks), back into
// the text blocks, as [Fit] describes, and reports whether the text blocks
// changed. The output's From fields are set.
func splitText(blocks []Block, text *string) ([]Block, bool) {
	joined, had := JoinText(blocks)
	out := make([]Block, 0, len(blocks)+1)
	if (text != nil && had && *text == joined) || (!had && (text == nil || *text == "")) {
		for i, b := range blocks {
			b.From = i
			out = append(out, b)
		}
		return out, false
	}

	// The new text blocks, one per input text block at most, by index.
	repl := map[int]Block{}
	var added *Block
	if text != nil {
		rest := *text
		var idx []int
		for i, b := range blocks {
			if b.Kind == BlockText {
				idx = append(idx, i)
			}
		}
		for k, i := range idx {
			b := blocks[i]
			b.From = i
			last := k == len(idx)-1
			if !last && strings.HasPrefix(rest, b.Text+TextSeparator) {
				repl[i] = b
				rest = rest[len(b.Text)+len(TextSeparator):]
				continue
			}
			if !(last && rest == b.Text) {
				b.Text = rest
			}
			repl[i] = b
			break
		}
		if len(idx) == 0 {
			// A middleware gave text to a result that had none.
			added = &Block{Kind: BlockText, Text: rest, From: -1}
		}
	}
	if added != nil {
		out = append(out, *added)
	}
	for i, b := range blocks {
		if b.Kind == BlockText {
			if r, ok := repl[i]; ok {
				out = append(out, r)
			}
			continue
		}
		b.From = i
		out = append(out, b)
	}
	return out, true
}

// fitStats says what fitBlocks did.
type fitStats struct {
	dropped      int         // blocks replaced by the note (the rest of the text counts as one)
	droppedBytes int         // their sizes added up
	cut          int         // embedded text resources and resource links whose text was cut
	textRecut    bool        // the text blocks were cut again
	recutKept    int         // of the text cut again: the bytes of its original it kept
	recutKeep    string      // and the strategy that cut it
	blockKept    map[int]int // by From: the bytes of Text a cut block kept
	noted        bool        // the tail note ends the output
}

// fitBlocks brings blocks (with From set) within p.MaxBytes as [Fit]
// describes. total is the length of the original of their joined text, -1
// when it is that text itself.
func fitBlocks(blocks []Block, p Policy, tail Note, pre []Dropped, total int) ([]Block, fitStats) {
	limit := max(p.MaxBytes, 0)
	if tail.Long == "" && len(pre) == 0 && Size(blocks) <= limit {
		return blocks, fitStats{}
	}

	// Room for the notes. The drop note gets the room of the longest note
	// it could be: one block's, or that of every block the allocation can
	// drop (all non-text blocks and the text), with their sizes added up.
	var count, sum, oneNote int
	hasText := false
	for _, d := range pre {
		count += d.blocks()
		sum += d.Size
		oneNote = max(oneNote, len(droppedNote(describe(d.Kind, d.Name), d.Size, limit)))
	}
	for _, b := range blocks {
		if b.Kind == BlockText {
			hasText = true
			continue
		}
		n := b.Size()
		count++
		sum += n
		oneNote = max(oneNote, len(droppedNote(describe(b.Kind, b.Name), n, limit)))
	}
	if hasText {
		n := total
		if n < 0 {
			joined, _ := JoinText(blocks)
			n = len(joined)
		}
		count++
		sum += n
		oneNote = max(oneNote, len(droppedNote(restOfText, n, limit)))
	}
	dropRoom := max(oneNote, len(droppedNote(blocksWhat(count), sum, limit)))
	note := tail.Long
	if len(note) > limit/2 {
		note = tail.Short
	}
	tailRoom := min(len(note), limit)
	long := dropRoom+tailRoom <= limit/2
	if !long {
		dropRoom = len(shortDroppedNote(count))
	}
	dropRoom = min(dropRoom, limit-tailRoom)

	out, drops, st := allocate(blocks, p, limit-tailRoom, total)
	if len(drops) > 0 || len(pre) > 0 {
		out, drops, st = allocate(blocks, p, limit-tailRoom-dropRoom, total)
	}
	for _, d := range pre {
		what := describe(d.Kind, d.Name)
		if d.blocks() > 1 {
			what = blocksWhat(d.blocks())
		}
		drops = append(drops, dropped{what, d.Size, d.blocks()})
	}
	if len(drops) > 0 {
		size, n := 0, 0
		for _, d := range drops {
			size += d.size
			n += d.count
		}
		var text string
		switch {
		case !long:
			text = shortDroppedNote(n)
		case n == 1:
			text = droppedNote(drops[0].what, size, limit)
		default:
			text = droppedNote(blocksWhat(n), size, limit)
		}
		text, _ = cut.Head(text, dropRoom)
		// out holds a block with From == dropMark where a block was
		// dropped: the note takes the first such place, the others go.
		placed := false
		kept := out[:0]
		for _, b := range out {
			if b.From == dropMark {
				if !placed && text != "" {
					kept = append(kept, Block{Kind: BlockText, Text: text, From: -1})
				}
				placed = true
				continue
			}
			kept = append(kept, b)
		}
		if !placed && text != "" {
			kept = append(kept, Block{Kind: BlockText, Text: text, From: -1})
		}
		out = kept
		st.dropped = n
		st.droppedBytes = size
	}
	if note != "" {
		if t, _ := cut.Head(note, tailRoom); t != "" {
			out = append(out, Block{Kind: BlockText, Text: t, From: -1})
			st.noted = true
		}
	}
	return out, st
}

// dropMark marks, in allocate's output, the place of a dropped block.
const dropMark = -2

// dropped is a block allocate could not fit, or blocks dropped before
// ([Dropped]): what a note calls it, its size and how many blocks it
// stands for.
type dropped struct {
	what  string
	size  int
	count int
}

// allocate fits blocks within budget, the blocks taking it in order, each
// what it needs of what the blocks before it left. A text block that does
// not fit is cut there by p ([Recut]: the marker counts the bytes dropped
// from it and from the text blocks after it, which go, and those a cut
// before dropped); when even the marker does not fit, the rest of the text
// is dropped. Another block that does not fit is cut ([cutBlock]) or
// dropped. The returned blocks hold a dropMark block in place of each
// dropped block. blocks is not modified. total is as for fitBlocks.
func allocate(blocks []Block, p Policy, budget, total int) (out []Block, drops []dropped, st fitStats) {
	left := max(budget, 0)
	out = make([]Block, 0, len(blocks))
	var joined string
	textAt := 0       // offset in joined of the next text block
	textDone := false // the text was cut: the text blocks after the cut go
	for _, b := range blocks {
		if b.Kind == BlockText {
			if textDone {
				continue
			}
			if len(b.Text) <= left {
				out = append(out, b)
				left -= len(b.Text)
				textAt += len(b.Text) + len(TextSeparator)
				continue
			}
			if joined == "" {
				joined, _ = JoinText(blocks)
			}
			rest := joined[textAt:]
			textDone, st.textRecut = true, true
			size := len(rest)
			if total >= 0 {
				size = max(total-textAt, 0) // the original of the rest
			}
			if left < cut.MarkerLen(size)+1 {
				out = append(out, Block{From: dropMark})
				drops = append(drops, dropped{restOfText, size, 1})
				continue
			}
			q := p
			q.MaxBytes = left
			text, t, changed := Recut(rest, q)
			st.recutKept, st.recutKeep = len(rest), ""
			if changed {
				st.recutKept, st.recutKeep = t.KeptBytes, t.Strategy
			}
			b.Text = text
			out = append(out, b)
			left -= len(text)
			continue
		}
		n := b.Size()
		if n <= left {
			out = append(out, b)
			left -= n
			continue
		}
		if c, kept, ok := cutBlock(b, left); ok {
			out = append(out, c)
			left -= c.Size()
			st.cut++
			if st.blockKept == nil {
				st.blockKept = map[int]int{}
			}
			st.blockKept[b.From] = kept
			continue
		}
		out = append(out, Block{From: dropMark})
		drops = append(drops, dropped{describe(b.Kind, b.Name), n, 1})
	}
	return out, drops, st
}

// cutBlock cuts the text of an embedded text resource, or the description
// of a resource link, so that the block takes at most room bytes, by the
// head rule; kept is the bytes of its text the cut kept. It reports false
// when the block has no such text, or when its fixed bytes leave no room
// for at least one byte and the marker.
func cutBlock(b Block, room int) (Block, int, bool) {
	if (b.Kind != BlockResource && b.Kind != BlockLink) || b.Text == "" {
		return Block{}, 0, false
	}
	left := room - b.Fixed
	if left < cut.MarkerLen(len(b.Text))+1 {
		return Block{}, 0, false
	}
	text, dropped := cut.Head(b.Text, left)
	kept := len(b.Text) - dropped
	b.Text = text
	return b, kept, true
}

// droppedNote is the text that replaces what Fit dropped: what (one
// block's kind, or a count of blocks) of size bytes, over limit.
func droppedNote(what string, size, limit int) string {
	return fmt.Sprintf("%sdropped %s of %d bytes, over this tool's limit of %d bytes; refine your query]", notePrefix, what, size, limit)
}

// shortDroppedNote replaces droppedNote when the limit is too small to
// spend that much on notes.
func shortDroppedNote(count int) string {
	if count == 1 {
		return notePrefix + "1 block over the limit dropped]"
	}
	return fmt.Sprintf("%s%d blocks over the limit dropped]", notePrefix, count)
}

// notePrefix starts every note shape adds to a result's content.
const notePrefix = "[toolcap: "

// restOfText is what a note calls text dropped whole.
const restOfText = "the rest of the text"

// blocksWhat names count dropped blocks in a note.
func blocksWhat(count int) string { return fmt.Sprintf("%d blocks", count) }

// describe names a block for a note; the name the server chose (MIME type,
// URI) is clipped so that a note stays short.
func describe(k BlockKind, name string) string {
	var what string
	switch k {
	case BlockText:
		return "a text block"
	case BlockImage:
		what = "an image block"
	case BlockAudio:
		what = "an audio block"
	case BlockResource:
		what = "an embedded resource"
	case BlockLink:
		what = "a resource link"
	default:
		return "a block"
	}
	if name == "" {
		return what
	}
	return what + " (" + clip(name) + ")"
}

// clip shortens a name the server chose to at most 40 bytes, on a UTF-8
// character boundary.
func clip(s string) string {
	const most = 40
	if len(s) <= most {
		return s
	}
	return s[:cut.FloorCharBoundary(s, most-len("..."))] + "..."
}
