package claudecode

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
)

// A streamed tool output (stream.go) reaches the cut with its long texts
// left out: each is a placeholder in the output's JSON, which the decoder
// decodes to the text's stand-in (its head, enough for every look the cut
// takes at the text's bytes), and the cuts that need the whole text (its
// share of the limit, its cut, the kept file) take it from what was
// streamed: its length, its Writer, its lines. What is here is package
// shape's Text, Share and Content and the kept file, for texts some of
// which are stand-ins; for texts none of which is, each is shape's own, so
// that an output held whole is cut as it always was.

// longText is a text of a streamed output too long to hold, or, in the
// log of what was fed to the kept file, a text held whole (held).
type longText struct {
	id   int
	n    int    // its length, decoded
	text string // its stand-in, or for a held text the text
	held bool   // a text held as written, fed to the kept file
	// known is what the stand-in holds of the text from its start: its
	// head, or nothing for a text block far from where a cut falls.
	known string
	lines int   // its newlines (when its rest is kept)
	err   error // wire.Unquote's error for it
	w     *cut.Writer
	at    int // where it starts in the kept file (the joined text)

	buf    []byte // while it streams: its first bytes
	spool  *os.File
	spoolW *bufio.Writer
}

// stringBytes returns the bytes of s without a copy, for reading only.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// bytesString returns b as a string without a copy; b is not written
// again.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// placeholder returns the long text raw stands for, or nil.
func (rs *respStream) placeholder(raw []byte) *longText {
	if len(raw) <= len(rs.ph) || !bytes.HasPrefix(raw, rs.ph) || raw[len(raw)-1] != '"' {
		return nil
	}
	id, err := strconv.Atoi(string(raw[len(rs.ph) : len(raw)-1]))
	if err != nil || id < 0 || id >= len(rs.longs) {
		return nil
	}
	return rs.longs[id]
}

// long returns the long text s is the stand-in of, or nil.
func (d *decoder) long(s string) *longText {
	if d == nil || d.st == nil || len(s) == 0 {
		return nil
	}
	return d.st.stand[rawKey{unsafe.StringData(s), len(s)}]
}

// hasLong reports whether the output holds a long text: then its JSON
// holds placeholders, and a cut that reads it as JSON cannot be made.
func (d *decoder) hasLong() bool { return d != nil && d.st != nil && len(d.st.longs) > 0 }

// textLen returns the length of s, or of the text it stands for.
func (d *decoder) textLen(s string) int {
	if lt := d.long(s); lt != nil {
		return lt.n
	}
	return len(s)
}

// size returns the length of raw, a value of the output, as written: that
// of the output itself for the output with its long texts left out.
func (d *decoder) size(raw []byte) int {
	if d != nil && d.st != nil && len(raw) > 0 && len(raw) == len(d.st.red) && &raw[0] == &d.st.red[0] {
		return d.st.rawLen
	}
	return len(raw)
}

// fail records that a cut needed a long text whole: the output is cut as
// text instead (respStream.asText).
func (d *decoder) fail(why string) {
	if d != nil && d.st != nil && d.st.odd == "" {
		d.st.odd = why
	}
}

// failed reports whether a cut needed a long text whole.
func (d *decoder) failed() bool { return d != nil && d.st != nil && d.st.odd != "" }

// structuredText is the package's structuredText of s or of the text it
// stands for: a long text is longer than any structured text.
func (d *decoder) structuredText(s string) bool {
	return d.long(s) == nil && structuredText(s)
}

// jsonText cuts resp, the output, as the text of its JSON: shape.Text of
// it, or, for a streamed output with long texts, the same cut of the
// output as written.
func (d *decoder) jsonText(resp []byte, p shape.Policy) (string, chain.Truncation, bool) {
	if d != nil && d.st != nil && d.st.raw != nil {
		q := p
		q.MaxBytes = min(q.MaxBytes, d.st.p.MaxBytes)
		return cutWriter(d.st.rawCut(), q)
	}
	return shape.Text(string(resp), p)
}

// text is [shape.Text] of s, or of the text it stands for.
func (d *decoder) text(s string, p shape.Policy) (string, chain.Truncation, bool) {
	lt := d.long(s)
	if lt == nil {
		return shape.Text(s, p)
	}
	return d.cutLong(lt, s, p)
}

// cutLong is shape.Text of the text lt, whose stand-in is s, made by its
// Writer: [cut.Writer.ResultAt] is byte for byte Cut of the text at any
// limit up to the Writer's, and [cut.Writer.ResultTokensAt] CutTokens of a
// text longer than the token window, as every long text is (see hold).
func (d *decoder) cutLong(lt *longText, s string, p shape.Policy) (string, chain.Truncation, bool) {
	if lt.w == nil || p.MaxBytes > d.st.p.MaxBytes || p.Fits(lt.n) || p.HoldsTokens() && lt.n <= cut.TokenWindow(p.MaxTokens) {
		d.fail("a long text cut otherwise than by its writer")
		return s, chain.Truncation{}, false
	}
	out, t, changed := cutWriter(lt.w, p)
	if !changed {
		return s, chain.Truncation{}, false
	}
	return out, t, true
}

// cutWriter is shape.Text of what w was written, under p: its cut by the
// byte limit, or by both limits when p holds tokens.
func cutWriter(w *cut.Writer, p shape.Policy) (string, chain.Truncation, bool) {
	var out string
	var st cut.Stats
	if p.HoldsTokens() {
		out, st = w.ResultTokensAt(p.MaxBytes, p.MaxTokens, p.Counter)
	} else {
		out, st = w.ResultAt(p.MaxBytes)
	}
	if !st.Changed() {
		return out, chain.Truncation{}, false
	}
	return out, shape.Figures(st, p), true
}

// texts is [shape.Texts], of texts some of which may be stand-ins.
func (d *decoder) texts(texts []string, p shape.Policy) ([]string, chain.Truncation, bool) {
	if !slices.ContainsFunc(texts, func(s string) bool { return d.long(s) != nil }) {
		return shape.Texts(texts, p)
	}
	parts := make([]shape.Part, len(texts))
	for i, s := range texts {
		parts[i] = shape.Part{Text: s}
	}
	return d.share(parts, p)
}

// share is [shape.Share], of parts some of which may be stand-ins: the
// same shares, by the same rule, of the parts' lengths (a long text's,
// and its count of tokens, which is its length: it is longer than the
// token window), and the same cut of each part, a long one's by its
// Writer.
func (d *decoder) share(parts []shape.Part, p shape.Policy) ([]string, chain.Truncation, bool) {
	longs := make([]*longText, len(parts))
	anyLong := false
	for i, pt := range parts {
		if longs[i] = d.long(pt.Text); longs[i] != nil {
			anyLong = true
			if pt.Lines {
				d.fail("a long list of lines")
			}
		}
	}
	if !anyLong {
		return shape.Share(parts, p)
	}
	// A long text stands in for itself: shared by its length, cut by its
	// Writer (shape.Part's Len and Cut).
	parts = slices.Clone(parts)
	for i := range parts {
		if lt, text := longs[i], parts[i].Text; lt != nil {
			parts[i].Len = lt.n
			parts[i].Cut = func(q shape.Policy) (string, chain.Truncation, bool) { return d.cutLong(lt, text, q) }
		}
	}
	return shape.Share(parts, p)
}

// content is [shape.Content], of blocks whose text blocks may be
// stand-ins: their joined text is cut by the Writer it streamed to, then
// [shape.Fit] puts the cut back into the blocks. Fit reads of a text block
// only what a text of at most the limit can match (a stand-in is longer
// than the limit, and holds the text's head), and the joined text's
// length from the cut's figures.
func (d *decoder) content(blocks []shape.Block, p shape.Policy, tail shape.Note) ([]shape.Block, shape.ContentFigures) {
	var texts []string
	anyLong := false
	for _, b := range blocks {
		if b.Kind == shape.BlockText {
			texts = append(texts, b.Text)
			anyLong = anyLong || d.long(b.Text) != nil
		}
	}
	switch {
	case !anyLong && len(texts) == 1:
		// shape.Content, but for the joined text, which is the one
		// text itself, not a copy of it (a fresh megabyte for a long
		// one). Fit joins the text blocks again: a text that a stream
		// would leave out (longer than hold) and that is cut goes to it
		// as a streamed one does, as its stand-in, which Fit reads as it
		// reads the text.
		out, t, changed := shape.Text(texts[0], p)
		if head, hold := standIn(p); changed && len(texts[0]) > hold {
			blocks = slices.Clone(blocks)
			for i := range blocks {
				if blocks[i].Kind == shape.BlockText {
					blocks[i].Text = texts[0][:head]
				}
			}
		}
		return shape.Fit(blocks, shape.Joined{Text: &out, Cut: t}, p, tail, nil)
	case !anyLong:
		return shape.Content(blocks, p, tail)
	}
	st := d.st
	if st.joined == nil || !st.logged(d, texts) || len(st.log) != len(texts) || p.MaxBytes > st.p.MaxBytes {
		d.fail("text blocks other than those streamed")
		return blocks, shape.ContentFigures{}
	}
	out, t, changed := cutWriter(st.joined, p)
	if !changed {
		d.fail("a long joined text that fits")
		return blocks, shape.ContentFigures{}
	}
	return shape.Fit(blocks, shape.Joined{Text: &out, Cut: t}, p, tail, nil)
}

// logged reports whether what was fed to the kept file begins with texts,
// in order.
func (rs *respStream) logged(d *decoder, texts []string) bool {
	if len(rs.log) > len(texts) {
		return false
	}
	for i, lg := range rs.log {
		s := texts[i]
		switch {
		case lg.held:
			if lg.text != s || d.long(s) != nil {
				return false
			}
		case d.long(s) != lg:
			return false
		}
	}
	return true
}

// keptFile is the file the store keeps of a cut output: its texts joined
// by newlines. Held whole, it is s; streamed, it is its parts, some of
// which are long texts the entry already holds or a spool does.
type keptFile struct {
	s     string
	n     int
	parts []part
	d     *decoder
}

// known returns what is known of the text of part i from its start: all
// of it, but for a long text its head.
func (f *keptFile) known(i int) (string, bool) {
	t := f.parts[i].text
	if lt := f.d.long(t); lt != nil {
		return lt.known, false
	}
	return t, true
}

// locate returns the part pos falls in, and pos in it.
func (f *keptFile) locate(pos int) (int, int) {
	i := len(f.parts) - 1
	for i > 0 && f.parts[i].base > pos {
		i--
	}
	return i, pos - f.parts[i].base
}

// newlines returns the newlines of the file before pos; false when what
// is known of the file does not say.
func (f *keptFile) newlines(pos int) (int, bool) {
	if f.parts == nil {
		return strings.Count(f.s[:pos], "\n"), true
	}
	i, off := f.locate(pos)
	n := i // the newlines between the parts
	for j := range i {
		t := f.parts[j].text
		if lt := f.d.long(t); lt != nil {
			n += lt.lines
		} else {
			n += strings.Count(t, "\n")
		}
	}
	k, _ := f.known(i)
	if off > len(k) {
		return 0, false
	}
	return n + strings.Count(k[:off], "\n"), true
}

// lineFrom returns the file from the start of the line pos is on: all of
// it, or, for a streamed file, at least want bytes of it (the file's end
// coming first); false when what is known of the file does not reach.
func (f *keptFile) lineFrom(pos, want int) (string, bool) {
	if f.parts == nil {
		return f.s[strings.LastIndexByte(f.s[:pos], '\n')+1:], true
	}
	i, off := f.locate(pos)
	k, whole := f.known(i)
	if off > len(k) {
		return "", false
	}
	var b strings.Builder
	b.WriteString(k[strings.LastIndexByte(k[:off], '\n')+1:])
	for whole && b.Len() < want && i+1 < len(f.parts) {
		i++
		b.WriteByte('\n')
		k, whole = f.known(i)
		b.WriteString(k)
	}
	if b.Len() < want && (!whole || i+1 < len(f.parts)) {
		return "", false
	}
	return b.String(), true
}

// create returns the entry to keep f in: for a streamed file, the one the
// stream wrote to, if any; otherwise a new one (an entry the stream wrote
// texts to that f does not hold is given up).
func (d *decoder) create(store *rest.Dir, scope string, f *keptFile) (rest.Entry, error) {
	if st := d.stream(); st != nil && (st.entry != nil || st.entryErr != nil) {
		st.entryTaken = true
		if f.parts != nil {
			return st.entry, st.entryErr
		}
		if st.entry != nil {
			_ = st.entry.Abort()
		}
	}
	return store.Create(context.Background(), scope)
}

// stream returns the stream d reads, nil for an output held whole.
func (d *decoder) stream() *respStream {
	if d == nil {
		return nil
	}
	return d.st
}

// errNotStreamed is writeTo's error for a streamed file whose texts the
// stream did not keep as the file holds them.
var errNotStreamed = errors.New("the kept texts are not those streamed")

// writeTo writes the file to e: held, whole; streamed, what the stream did
// not write to it already (the texts after those it fed, held ones and
// spooled ones).
func (f *keptFile) writeTo(e rest.Entry) error {
	if f.parts == nil {
		// Written from the decoded text itself: a copy would touch as
		// many fresh pages again.
		_, err := e.Write(stringBytes(f.s))
		return err
	}
	st := f.d.st
	texts := make([]string, len(f.parts))
	for i, pt := range f.parts {
		texts[i] = pt.text
	}
	if st.writeErr != nil {
		return st.writeErr
	}
	if !st.logged(f.d, texts) || (len(st.log) > 0 && e != st.entry) {
		return errNotStreamed
	}
	for i := len(st.log); i < len(f.parts); i++ {
		if i > 0 {
			if _, err := e.Write(newline); err != nil {
				return err
			}
		}
		t := f.parts[i].text
		lt := f.d.long(t)
		switch {
		case lt == nil:
			if _, err := e.Write(stringBytes(t)); err != nil {
				return err
			}
		case lt.spool != nil:
			if _, err := lt.spool.Seek(0, io.SeekStart); err != nil {
				return err
			}
			if n, err := io.Copy(e, lt.spool); err != nil || n != int64(lt.n) {
				if err == nil {
					err = errNotStreamed
				}
				return err
			}
		default:
			return errNotStreamed
		}
	}
	return nil
}
