package mcpproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/hugepage"
	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/internal/wire"
	"github.com/toolcap/toolcap/redact"
)

// A pendingCall is a tools/call the client sent and the server has not
// answered yet.
type pendingCall struct {
	// scope is what the refs of the call's results are bound to: the
	// session's, or on a lane the request's principal's.
	scope  string
	id     []byte
	seq    int64  // order among the session's requests
	callID string // the chain's call id, for logs
	tool   string
	args   json.RawMessage
	gen    *generation  // the limits and chain the call was sent under
	policy shape.Policy // the tool's, with the worker's tokenizer as its counter
	// handler is gen's chain for the call's client (generation.forClient).
	handler pin.Answerer
	// jsonText: the tool's text is cut as JSON although its strategy is
	// the default (it has an output schema).
	jsonText bool
	// cancelled: the client cancelled it; an answer is still capped, none
	// is owed.
	cancelled bool
	// keeper keeps the rest of the call's cut, under ctx's scope (the
	// session's); nil when the proxy keeps nothing or the tool's policy
	// does not keep the rest.
	keeper *rest.Keeper
	ctx    context.Context
	// span is the call's, while it is pending; nil unless Options.Trace
	// is set.
	span *traced
}

// member is one member of a JSON object, as it came.
type member struct {
	key string
	raw []byte // nil: the member's value was over its bound and is dropped
	// str: raw holds a string's decoded content, written out as JSON
	// (writeString) only if the block is kept.
	str bool
}

// headText keeps the first max bytes of a text read in pieces, and counts
// all of it: what a cut by the rule of text needs of a text of any length.
type headText struct {
	head  []byte
	max   int
	total int64
}

// write adds b to the text, and returns how many of its first bytes the
// head took.
func (h *headText) write(b []byte) int {
	taken := 0
	if room := h.max - len(h.head); room > 0 {
		taken = min(room, len(b))
		h.head = appendDoubling(h.head, b[:taken], h.max)
	}
	h.total += int64(len(b))
	return taken
}

// appendDoubling appends p to b, doubling b's capacity as it grows, to at
// most most bytes (len(b)+len(p) must be within it): append grows a large
// slice by a quarter at a time, so that holding a text of 64 MiB would
// allocate and copy about five times that, where doubling allocates twice
// it. The first piece gets a buffer of its own size: the text of a small
// result (most of them) comes in one piece, and a 4 KiB floor cleared
// 4 KiB a call for a 64-byte text.
func appendDoubling(b, p []byte, most int) []byte {
	if len(b)+len(p) > cap(b) {
		nb := make([]byte, len(b), min(most, max(2*cap(b), len(b)+len(p))))
		copy(nb, b)
		b = nb
	}
	return append(b, p...)
}

// bytesString returns b as a string without a copy: b must not change
// afterwards. The text the reader held is read this way, by the chain and
// the shaping, once the result has been read.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// whole reports whether the head holds the whole text.
func (h *headText) whole() bool { return int64(len(h.head)) == h.total }

// cut cuts the text to limit by the head rule ([cut.Head]),
// from its head alone: the head holds at least limit+utf8.UTFMax bytes of a
// longer text, all a cut needs. ok is false when the text fits.
func (h *headText) cut(limit int) (string, chain.Truncation, bool) {
	if h.total <= int64(limit) {
		return string(h.head), chain.Truncation{}, false
	}
	// The rest of the text is gone; what the rule needs of it is its
	// length.
	head, d := cut.HeadBytes(bytes.Clone(h.head), int(h.total), limit)
	capped, dropped := string(head), int64(d)
	return capped, chain.Truncation{
		Limit:         limit,
		OriginalBytes: int(h.total),
		KeptBytes:     int(h.total - dropped),
		DroppedBytes:  int(dropped),
	}, true
}

// callResult is a tools/call result as read: what the proxy needs of it to
// cap it, however large it was. Its text blocks are kept up to the retain
// bound of the joined text and counted whole; other blocks are kept while
// they fit the retain bound together and otherwise noted as dropped.
type callResult struct {
	members []member // in order; content, structuredContent and isError hold nil
	blocks  []heldBlock
	// text is the text blocks' texts joined by shape.TextSeparator: all of
	// it counted, its first retain+utf8.UTFMax bytes held but while raw
	// (none yet) and once headCut.
	text headText
	// writers cut that text as it is read, for each call the result may
	// answer, by the call's strategy (a tail needs the whole text to pass).
	// They are fed only once the text outgrows the head (fed), from its
	// first byte: a text the head holds whole is cut from it, and so held
	// once. The head then keeps only the texts before the one being read
	// (see cross), unless keepHead.
	writers map[*pendingCall]*cut.Writer
	// streams do for the calls whose rest is kept what writers do for the
	// others, and write the text to the store as it is read, so that it is
	// never held whole (rest.Stream).
	streams map[*pendingCall]*rest.Stream
	fed     bool
	// keepHead: the head is kept whole past the cuts' feeding, for a call
	// without a Writer (past maxWriters), whose text is cut from it, or one
	// whose structuredContent may mirror the text (keptText).
	keepHead bool
	// headCut: the head was cut back to the texts before the one being read
	// when the cuts were fed; it no longer holds the text's first bytes.
	headCut bool
	// sc is the scanner reading the message. When the message is known to
	// answer a tools/call (stopTee), its copy of it (see reader.teeBound)
	// is stopped as soon as the result cannot go to the client as it came.
	sc      *wire.Scanner
	stopTee bool
	// raw: while the result may go to the client as it came, its text is
	// not held decoded, only counted: the scanner's copy of the message
	// holds it as written, and it is decoded again from there
	// (materialize) when the result turns out to be cut or is read to its
	// end, so that a text is held once while it is read. spans are the
	// offsets in the message of the opening quotes of the texts read.
	raw   bool
	spans []int64
	// unread holds the copy of a result read whole within its bound while
	// its text is not yet decoded: it is decoded (materialize) only when
	// something reads it (see decodeText), and a result that goes out as
	// it came through the pinned chain alone never is. unreadDirect: the
	// copy was valid UTF-8 as read (see materialize).
	unread       [][]byte
	unreadDirect bool
	// curFrom is the offset in the joined text of the text being read (its
	// length between texts): what comes before it is whole.
	curFrom int64
	texts   int // text blocks, kept or not
	// written is the bytes of the texts' strings as written, quotes
	// included: what the message holds of what the limit measures.
	written int64
	hasText bool
	kept    int // bytes of the non-text blocks kept
	retain  int
	over    []shape.Dropped // blocks not kept

	isError bool

	// detector redacts the result as it is read (see redact.go); nil when
	// no call it may answer redacts. red redacts the text being read,
	// when it is; redactions counts all that was redacted, by rule, and
	// textRedactions what of it was in the joined text.
	detector       redact.Detector
	red            *textRedactor
	redactions     map[string]int
	textRedactions map[string]int

	hasStructured bool
	// structured is structuredContent as it came, but for strings longer
	// than retain and the tails of containers past what a cut can keep,
	// left out as the reducer reads (structuredReduced then says so, and
	// structuredPrecut and structuredElided say what went); nil when no
	// form of it can fit.
	structured        []byte
	structuredReduced bool
	structuredPrecut  []shape.Precut
	structuredElided  []shape.Elided
	structuredSize    int64
}

// maxMemberBytes bounds the members of a result other than its content and
// structuredContent (_meta, fields toolcap does not know).
const maxMemberBytes = 1 << 20

// maxStructured bounds the copy of a structuredContent the reducer holds,
// as a safety: the reducer keeps far less of a value of any size (see
// reducer), and a copy still larger is dropped as one that cannot be
// brought within the limit is.
func maxStructured(retain int) int { return max(4*retain, 4<<20) }

// maxWriters bounds the cuts a result read before its id is made for: one
// per pending tools/call it may answer. Past it, a call's text is cut from
// the kept head (by the head rule) whatever its strategy.
const maxWriters = 8

// heldBlock is a content block as the reader kept it: its JSON, but for
// its text member, which is held in the joined text (callResult.text)
// rather than written out again: raw holds "" in its place, at [at, at+2),
// and the text is what the head holds of text.head[from:to]. at is -1 for
// a block kept whole in raw. splice: the block is not a text block (its
// text came before its type), so the text goes back in place before the
// block is read.
type heldBlock struct {
	raw      []byte
	at       int
	from, to int64
	splice   bool
}

// text returns what the head holds of the block's text.
func (hb heldBlock) text(h *headText) []byte {
	n := int64(len(h.head))
	return h.head[min(hb.from, n):min(hb.to, n)]
}

// readCallResult reads a result that may answer calls, keeping of its text
// retain bytes (and the cuts of it as it is read, for each call). known
// says the message is known to answer one of them: the copy of the message
// the scanner makes is then stopped as soon as the result cannot go out
// as it came.
func readCallResult(sc *wire.Scanner, retain int, calls []*pendingCall, known bool) (*callResult, error) {
	res := &callResult{retain: retain, text: headText{max: retain + utf8.UTFMax}, sc: sc, stopTee: known}
	res.detector = detectorOf(calls)
	res.keepHead = len(calls) > maxWriters
	for _, c := range calls {
		res.keepHead = res.keepHead || c.jsonText
	}
	if res.raw = known && sc.Teeing(); res.raw {
		sc.OnTeeOver(func(teed [][]byte) { res.materialize(teed, sc.Replaced() == 0) })
	}
	for _, c := range calls[:min(len(calls), maxWriters)] {
		if c.keeper != nil {
			if res.streams == nil {
				res.streams = map[*pendingCall]*rest.Stream{}
			}
			res.streams[c] = c.keeper.NewStream(c.ctx, c.policy)
			continue
		}
		if res.writers == nil {
			res.writers = map[*pendingCall]*cut.Writer{}
		}
		res.writers[c] = cut.NewWriter(c.policy.MaxBytes, c.policy.Spec)
	}
	err := sc.Object(func(key string) error {
		switch key {
		case "content":
			c, err := sc.Kind()
			if err != nil {
				return err
			}
			if c != '[' {
				// Not a content array: kept as a member toolcap does not
				// know (bounded), the result has no blocks.
				break
			}
			res.members = append(res.members, member{key: key})
			return sc.Array(func(int) error { return res.block(sc) })
		case "isError":
			c, err := sc.Kind()
			if err != nil {
				return err
			}
			if c != 't' && c != 'f' {
				break
			}
			res.members = append(res.members, member{key: key})
			b, err := sc.Bool()
			res.isError = b
			return err
		case "structuredContent":
			res.members = append(res.members, member{key: key})
			res.hasStructured = true
			start := sc.Offset()
			r := newReducer(sc, retain)
			r.detector = res.detector
			err := r.value(0)
			res.structuredSize = sc.Offset() - start
			if !r.over {
				res.structured = r.out.Bytes()
				res.structuredReduced = r.cut
				res.structuredPrecut = r.precut
				res.structuredElided = r.elided
				res.redactStructured(r.precutAt)
			}
			if r.over || r.cut {
				res.cutHere() // it is cut, so the result is written out
			}
			return err
		}
		raw, _, err := sc.Capture(maxMemberBytes)
		res.members = append(res.members, member{key: key, raw: raw})
		return err
	})
	if res.raw && err == nil {
		// Read whole and within the bound: the text is decoded again, for
		// the chain, from the copy, which goes on to the message's end;
		// when the chain reads it (see decodeText).
		sc.OnTeeOver(nil)
		if teed, ok := sc.TeedParts(); ok {
			res.unread, res.unreadDirect = teed, sc.Replaced() == 0
		}
	}
	return res, err
}

// decodeText decodes the text of a result read whole as it came, if it
// is not yet (see unread): what the chain and the shaping read.
func (res *callResult) decodeText() {
	if teed := res.unread; teed != nil {
		res.unread = nil
		res.materialize(teed, res.unreadDirect)
	}
}

// writeText adds a piece of the joined text: through the redactor of the
// text being read, when it is redacted (see beginText), else as it is.
func (res *callResult) writeText(b []byte) {
	t := res.red
	if t == nil {
		res.put(b)
		return
	}
	t.in += int64(len(b))
	_, _ = t.w.Write(b) // writes to put: no error
	if res.raw && t.w.Counts() != nil {
		// A secret in a result read raw: the text is redone from the
		// copy (see materialize), redacted.
		res.cutHere()
	}
}

// put adds a piece of the joined text as the result holds it, redacted.
func (res *callResult) put(b []byte) {
	switch {
	case res.fed:
		res.text.total += int64(len(b))
		res.feed(b)
		return
	case res.raw:
		// Counted only: the copy holds it (see materialize).
		res.text.total += int64(len(b))
		if !res.fits() {
			res.cutHere()
		}
		return
	}
	taken := res.text.write(b)
	if !res.fits() {
		res.cutHere()
	}
	if !res.text.whole() {
		res.cross(b[taken:])
	}
}

// cross starts the cuts made as the text is read, once it has outgrown
// the head: they are fed the head, then left, what of the piece being
// read the head did not take. The head then keeps only the texts before
// the one being read, which the blocks that hold them need, unless
// keepHead: the cuts hold what a cut of the text shows.
func (res *callResult) cross(left []byte) {
	res.fed = true
	res.feed(res.text.head)
	res.feed(left)
	if !res.keepHead {
		res.text.head = bytes.Clone(res.text.head[:min(res.curFrom, int64(len(res.text.head)))])
		res.headCut = true
	}
}

// materialize ends raw: the joined text read so far (text.total bytes) is
// decoded again from teed, the copy of the message, which holds every byte
// of it as written (see wire.Scanner.OnTeeOver), and goes where writeText
// would have put it. When it has outgrown the head, it goes to the cuts
// straight from the copy, and the head takes only the texts before the one
// being read (unless keepHead), so that the text is never held twice.
//
// A text with a secret found while it was read raw (res.red has counts) is
// not in the copy as the result holds it: what its redactor wrote was
// counted, not held. The texts before it, in which none was found, are
// taken from the copy as they are, and it is decoded from the copy again
// into a redactor of its own (redo), which goes on with it.
func (res *callResult) materialize(teed [][]byte, direct bool) {
	res.raw = false
	old := res.red
	redo := old != nil && old.w.Counts() != nil
	total := res.text.total
	if redo {
		total = res.curFrom
		res.text.total = total
	}
	over := total > int64(res.text.max)
	hold := min(total, int64(res.text.max))
	if over && !res.keepHead {
		hold = min(hold, res.curFrom)
		res.headCut = true
	}
	if len(res.text.head) == 0 {
		// What the head takes is known: one allocation of that size.
		res.text.head = make([]byte, 0, hold)
		hugepage.Advise(res.text.head)
	}
	var pos int64
	emit := func(p []byte) {
		p = p[:min(int64(len(p)), total-pos)]
		if room := hold - pos; room > 0 {
			res.text.head = appendDoubling(res.text.head, p[:min(room, int64(len(p)))], res.text.max)
		}
		if over {
			res.feed(p)
		}
		pos += int64(len(p))
	}
	// Valid UTF-8 as it was read (direct: nothing replaced), a text
	// decodes again straight from the copy, in place, not checked twice.
	var br *bufio.Reader
	var cur partsCursor
	for i, at := range res.spans {
		if pos >= total {
			break
		}
		if i > 0 {
			emit([]byte(shape.TextSeparator))
		}
		if redo && i == len(res.spans)-1 {
			break
		}
		// Each text from its opening quote, to its closing one or to the
		// end of the copy, for the text being read.
		if direct {
			wire.DecodeParts(teed, at, emit)
			continue
		}
		if br == nil {
			br = bufio.NewReaderSize(nil, readBuffer)
		}
		br.Reset(cur.from(teed, at))
		_, _ = wire.NewScanner(br).String(emit)
	}
	res.fed = over
	if redo {
		res.redo(teed, direct, old)
	}
}

// redo decodes the text being read (the last of spans) again from teed,
// the copy of the message, as far as old, its redactor, was written, into
// a redactor that takes old's place: it writes to the result as it holds
// a text (put), no longer raw.
func (res *callResult) redo(teed [][]byte, direct bool, old *textRedactor) {
	old.stale = true
	t := res.newTextRedactor()
	res.red = t
	in := func(p []byte) {
		p = p[:min(int64(len(p)), old.in-t.in)]
		if len(p) > 0 {
			t.in += int64(len(p))
			_, _ = t.w.Write(p)
		}
	}
	at := res.spans[len(res.spans)-1]
	if direct {
		wire.DecodeParts(teed, at, in)
		return
	}
	var cur partsCursor
	br := bufio.NewReaderSize(cur.from(teed, at), readBuffer)
	_, _ = wire.NewScanner(br).String(in)
}

// partsCursor reads a message held in parts from increasing offsets.
type partsCursor struct {
	i    int   // the part the last offset was in
	base int64 // the offset of part i
}

// from returns a reader of parts from offset at on, at least the offset
// of the last call.
func (c *partsCursor) from(parts [][]byte, at int64) io.Reader {
	for c.i < len(parts) && at-c.base >= int64(len(parts[c.i])) {
		c.base += int64(len(parts[c.i]))
		c.i++
	}
	if c.i == len(parts) {
		return bytes.NewReader(nil)
	}
	rs := []io.Reader{bytes.NewReader(parts[c.i][at-c.base:])}
	for _, p := range parts[c.i+1:] {
		rs = append(rs, bytes.NewReader(p))
	}
	return io.MultiReader(rs...)
}

// feed writes a piece of the joined text to the cuts made as it is read.
func (res *callResult) feed(b []byte) {
	if len(b) == 0 {
		return
	}
	for _, w := range res.writers {
		_, _ = w.Write(b)
	}
	for _, st := range res.streams {
		_, _ = st.Write(b) // a Stream never fails: it gives up its store
	}
}

// cutHere notes that the result cannot go to the client as it came: the
// copy of the message, which only that would use, is let go, once what
// the result needs of it is taken.
func (res *callResult) cutHere() {
	if !res.stopTee {
		return
	}
	if res.raw {
		if teed, ok := res.sc.TeedParts(); ok {
			res.materialize(teed, res.sc.Replaced() == 0)
		}
	}
	res.sc.StopTee()
}

// fits reports whether what was read of the result so far may still go to
// the client as it came: within the retain bound, which is at least every
// limit (see fitsAsSent), with no block dropped.
func (res *callResult) fits() bool {
	text := res.text.total - int64(max(res.texts-1, 0)*len(shape.TextSeparator))
	return text+int64(res.kept) <= int64(res.retain) && len(res.over) == 0
}

// release lets go of what the result holds for the shaping, once it is
// known to go out as it came.
func (res *callResult) release() {
	res.text.head, res.blocks, res.members, res.structured = nil, nil, nil, nil
}

// abort discards what the streams kept of a text no cut of theirs
// answered; a stream whose cut was made keeps its entry (Abort after
// Result is a no-op on a committed entry).
func (res *callResult) abort() {
	for _, st := range res.streams {
		st.Abort()
	}
}

// block reads one content block. A block is kept while the blocks kept so
// far take less than retain bytes of JSON and its members fit what is
// left; one that is not is read past, measured as [shape.Block.Size]
// measures a block (what a model may read of it: its MIME type, data, URI,
// names; the JSON of a block of a kind the proxy does not know) and
// counted by kind ([callResult.drop]), so that any number of blocks takes
// O(retain) memory and the figures are in one measure.
func (res *callResult) block(sc *wire.Scanner) error {
	if c, err := sc.Kind(); err != nil {
		return err
	} else if c != '{' {
		// Not a block: kept as it came while it fits, as a block the
		// shaping cannot read (and notes as dropped).
		start := sc.Offset()
		raw, ok, err := sc.Capture(max(res.retain-res.kept, 0))
		if ok && res.kept < res.retain {
			res.kept += len(raw)
			res.blocks = append(res.blocks, heldBlock{raw: raw, at: -1})
		} else {
			res.drop(shape.BlockOther, int(sc.Offset()-start))
		}
		return err
	}
	var (
		typ      string
		fields   []member
		textFrom int64
		textTo   int64
		textAt   = -1
		isText   bool
		complete = true
		size     int   // bytes of the members kept, other than the text
		content  int64 // what a model may read of the block
		// headFull: the head holds nothing of a text that starts here.
		headFull = res.fed || res.text.total >= int64(res.text.max)
	)
	start := sc.Offset()
	err := sc.Object(func(key string) error {
		switch {
		case key == "type":
			raw, ok, err := sc.Capture(maxMethodBytes)
			switch {
			case string(raw) == `"text"`: // nearly every block, without a decode
				typ = "text"
			case ok:
				_ = json.Unmarshal(raw, &typ)
			}
			fields = append(fields, member{key: key, raw: raw})
			return err
		case key == "text" && (typ == "" || typ == "text"):
			if _, err := sc.Kind(); err != nil {
				return err
			}
			// The text is counted, and its span noted, before the
			// separator that comes before it: the separator belongs to it
			// for fits (texts-1 separators) and for materialize (one
			// before each span but the first), which may run as it is
			// written; counted before them, one that took the text past
			// the limit was measured one byte over and lost on the way to
			// the cuts.
			res.texts++
			res.hasText, isText = true, true
			if res.raw {
				res.spans = append(res.spans, sc.Offset())
			}
			if res.texts > 1 {
				res.writeText([]byte(shape.TextSeparator))
			}
			textFrom = res.text.total
			res.curFrom = textFrom
			from := sc.Offset()
			res.beginText()
			_, err := sc.String(res.writeText)
			res.endText() // the redacted text, whole: text.total is its end
			res.written += sc.Offset() - from
			textTo = res.text.total
			res.curFrom = res.text.total
			textAt = len(fields)
			fields = append(fields, member{key: key})
			return err
		}
		f, n, err := readMember(sc, key, max(res.retain-res.kept-size, 0))
		content += n
		if f.raw == nil {
			complete = false
		} else {
			size += f.size()
		}
		fields = append(fields, f)
		return err
	})
	if err != nil {
		return err
	}
	kind := blockKind(typ)
	switch {
	case isText && headFull:
		// Past the retained part of the joined text: counted, not kept.
		return nil
	case !isText && (!complete || res.kept >= res.retain):
		if kind == shape.BlockOther {
			content = sc.Offset() - start
		}
		res.drop(kind, int(content))
		return nil
	}
	// A text block's text stays where it is, in the joined text: the block
	// holds "" in its place, and the text is written out from there, once,
	// if the block goes to the client.
	held := heldBlock{at: -1}
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for i, f := range fields {
		if f.raw == nil && i != textAt {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		writeKey(&b, f.key)
		switch {
		case i == textAt:
			held.at, held.from, held.to = b.Len(), textFrom, textTo
			held.splice = typ != "text"
			b.WriteString(`""`)
		case f.str:
			writeString(&b, f.raw)
		default:
			b.Write(f.raw)
		}
	}
	b.WriteByte('}')
	raw := b.Bytes()
	if res.detector != nil {
		// Its members other than the joined text (an embedded resource's
		// text, a link's description, annotations), redacted as they are
		// kept.
		red, counts, edits := redactJSON(raw, res.detector, binaryMembers)
		if counts != nil {
			if held.at >= 0 {
				held.at = movedBy(edits, held.at)
			}
			size += len(red) - len(raw)
			raw = red
			res.redacted(counts)
		}
	}
	if isText {
		res.kept += size
	} else {
		res.kept += len(raw)
	}
	held.raw = raw
	res.blocks = append(res.blocks, held)
	if !res.fits() {
		res.cutHere()
	}
	return nil
}

// drop counts a block not kept, of size bytes in the measure of
// [shape.Block.Size]: one [shape.Dropped] per kind, whatever the number of
// blocks.
func (res *callResult) drop(kind shape.BlockKind, size int) {
	res.cutHere() // the result is written out without the block
	for i := range res.over {
		if res.over[i].Kind == kind {
			res.over[i].Count++
			res.over[i].Size += size
			return
		}
	}
	res.over = append(res.over, shape.Dropped{Kind: kind, Size: size, Count: 1})
}

// counted lists the members of a block whose strings a model may read,
// as [shape.Block.Size] counts them: an image's or an audio clip's MIME
// type and data, a resource link's URI, name, title, MIME type and
// description; "resource" holds an embedded resource (see resourceCounted).
var counted = map[string]bool{"mimeType": true, "data": true, "uri": true, "name": true, "title": true, "description": true}

// resourceCounted lists the members of an embedded resource that count.
var resourceCounted = map[string]bool{"uri": true, "mimeType": true, "blob": true, "text": true}

// size is a bound on the bytes of m's value as JSON, as the reader counts
// it against retain: the decoded bytes and quotes of a string, whose
// escapes are written only for a block that is kept.
func (m member) size() int {
	if m.str {
		return len(m.raw) + 2
	}
	return len(m.raw)
}

// readMember reads the value of a block's member key, keeping it (m.raw
// not nil) when it takes at most room bytes, and returns n, the bytes of
// it that count in the measure of [shape.Block.Size], whether kept or not.
func readMember(sc *wire.Scanner, key string, room int) (m member, n int64, err error) {
	m.key = key
	c, err := sc.Kind()
	if err != nil {
		return m, 0, err
	}
	switch {
	case c == '"':
		m.raw, n, err = readString(sc, room)
		m.str = true
		if !counted[key] {
			n = 0
		}
		return m, n, err
	case c == '{' && key == "resource":
		var b bytes.Buffer
		ok := true
		b.WriteByte('{')
		err := sc.Object(func(k string) error {
			var kb bytes.Buffer
			if b.Len() > 1 {
				kb.WriteByte(',')
			}
			writeKey(&kb, k)
			left := room - b.Len() - kb.Len() - 1
			var raw []byte
			var m int64
			var err error
			if c, e := sc.Kind(); e != nil {
				return e
			} else if c == '"' {
				var s []byte
				s, m, err = readString(sc, left)
				if s != nil {
					var sb bytes.Buffer
					writeString(&sb, s)
					raw = sb.Bytes()
				}
				if resourceCounted[k] {
					n += m
				}
			} else {
				raw, _, err = sc.Capture(max(left, 0))
			}
			if raw == nil {
				ok = false
			}
			if ok {
				b.Write(kb.Bytes())
				b.Write(raw)
			}
			return err
		})
		b.WriteByte('}')
		if ok && b.Len() <= room {
			m.raw = b.Bytes()
		}
		return m, n, err
	}
	m.raw, _, err = sc.Capture(room)
	return m, 0, err
}

// readString reads a string value and returns its decoded content when
// that and the quotes take at most room bytes (nil otherwise), and its
// length decoded.
func readString(sc *wire.Scanner, room int) ([]byte, int64, error) {
	var buf []byte
	over := room < 2
	n, err := sc.String(func(b []byte) {
		if over {
			return
		}
		if len(buf)+len(b)+2 > room {
			over, buf = true, nil
			return
		}
		buf = append(buf, b...)
	})
	if over || err != nil {
		return nil, n, err
	}
	if buf == nil {
		buf = []byte{} // the empty string, kept
	}
	return buf, n, nil
}

// callError is a JSON-RPC error answering a tools/call, as read.
type callError struct {
	members []errorMember // in order; message and data hold nil
	message headText
	data    []byte // nil when absent or over the bound
	dataLen int64
	// rewritten: the message was not a string and is sent as one, so the
	// error is written out whether or not it is cut.
	rewritten bool
	// redactions counts the secrets redacted from the message, data and
	// other members as they were read, by rule: an error that had any is
	// written out whether or not it is cut.
	redactions map[string]int
}

// errorMember is a member of an error object other than its message and
// data, as it came: its code, and any member JSON-RPC does not define.
type errorMember struct {
	key  string
	raw  []byte // nil: over the bound, dropped
	size int64  // the value's bytes as sent
}

// maxCodeBytes bounds an error's code the proxy passes on without counting
// it against the limit: a JSON-RPC code is an integer.
const maxCodeBytes = 24

// readCallError reads a JSON-RPC error answering a tools/call, redacting
// it as it is read with d (nil: not at all): its message as a text is,
// its data and other members as JSON (see redactJSON).
func readCallError(sc *wire.Scanner, retain int, d redact.Detector) (*callError, error) {
	e := &callError{message: headText{max: retain + utf8.UTFMax}}
	err := sc.Object(func(key string) error {
		switch key {
		case "message":
			c, err := sc.Kind()
			if err != nil {
				return err
			}
			e.members = append(e.members, errorMember{key: key})
			if c == '"' {
				if d == nil {
					_, err = sc.String(func(b []byte) { e.message.write(b) })
					return err
				}
				w := redact.NewWriter(headWriter{&e.message}, d)
				_, err = sc.String(func(b []byte) { _, _ = w.Write(b) })
				_ = w.Close()
				e.redactions = pin.AddRedactions(e.redactions, w.Counts())
				return err
			}
			// Not a string, as JSON-RPC wants it: the call is answered all
			// the same, with the value's JSON text as its message (cut like
			// any message), or a note when that is over the bound.
			e.rewritten = true
			start := sc.Offset()
			raw, ok, err := sc.Capture(retain)
			if !ok {
				raw = fmt.Appendf(nil, "toolcap: the error's message was not a string (%d bytes of JSON); it was dropped", sc.Offset()-start)
			}
			text, counts := redact.Text(string(raw), d)
			e.redactions = pin.AddRedactions(e.redactions, counts)
			e.message.write([]byte(text))
			return err
		case "data":
			e.members = append(e.members, errorMember{key: key})
			start := sc.Offset()
			raw, _, err := sc.Capture(retain)
			e.data, e.dataLen = raw, sc.Offset()-start
			if red, counts, _ := redactJSON(raw, d, nil); counts != nil {
				e.data, e.dataLen = red, e.dataLen+int64(len(red)-len(raw))
				e.redactions = pin.AddRedactions(e.redactions, counts)
			}
			return err
		}
		start := sc.Offset()
		raw, _, err := sc.Capture(min(retain, maxMemberBytes))
		size := sc.Offset() - start
		if red, counts, _ := redactJSON(raw, d, nil); counts != nil {
			raw, size = red, size+int64(len(red)-len(raw))
			e.redactions = pin.AddRedactions(e.redactions, counts)
		}
		e.members = append(e.members, errorMember{key: key, raw: raw, size: size})
		return err
	})
	return e, err
}

// headWriter writes to a headText.
type headWriter struct{ h *headText }

func (w headWriter) Write(p []byte) (int, error) {
	w.h.write(p)
	return len(p), nil
}

// others decides which members of the error other than its message and
// data go to the client. A numeric code goes, uncounted as the envelope
// is. The rest (members JSON-RPC does not define, a code that is not a
// number) are read by a model as the message is: they are kept, in order,
// while together they fit a quarter of what p lets through without a count
// ([shape.Policy.Fit]: bytes bound tokens), and take that room from the
// message and data; the others are dropped. It returns the members to
// drop, the bytes the kept ones take and the bytes of all of them, each
// counted as written with its key.
func (e *callError) others(p shape.Policy) (drop map[int]bool, kept, total int) {
	room := p.Fit() / 4
	for i, m := range e.members {
		if m.key == "message" || m.key == "data" {
			continue
		}
		if m.key == "code" && m.raw != nil && len(m.raw) <= maxCodeBytes && isNumber(m.raw) {
			continue
		}
		n := len(m.key) + 4 + int(m.size) // quotes, colon and comma
		total += n
		if m.raw != nil && kept+n <= room {
			kept += n
			continue
		}
		if drop == nil {
			drop = map[int]bool{}
		}
		drop[i] = true
	}
	return drop, kept, total
}

// isNumber reports whether raw, a JSON value, is a number.
func isNumber(raw []byte) bool {
	return raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9'
}

// capError brings the error within the call's policy by
// [shape.ErrorMessageHead]: when its message and data together exceed the
// limit, data of at most a quarter of it is kept and the message cut to the
// rest, larger data is dropped and the message cut to the limit. Members
// other than these and a numeric code count against the limit too (see
// [callError.others]). It returns the response to send, the figures and
// whether it cut; the response is nil when the error fits, unless rebuild
// asks for it to be written out all the same (the reader kept no copy of
// the message) or the reader redacted something from it.
func (e *callError) capError(id []byte, pol shape.Policy, rebuild bool) ([]byte, chain.Truncation, bool) {
	drop, kept, total := e.others(pol)
	q := pol
	q.MaxBytes = max(q.MaxBytes-kept, 0)
	if q.MaxTokens > 0 {
		// kept bytes are at least as many tokens (a tokens.Counter counts at
		// most a token per byte); at most a quarter of the limit, so some
		// are left.
		q.MaxTokens = max(q.MaxTokens-kept, 1)
	}
	msg, data, t, capped := shape.ErrorMessageHead(e.message.head, int(e.message.total), e.data, int(e.dataLen), q)
	if drop != nil {
		if !capped {
			n := int(e.message.total) + int(e.dataLen)
			t = chain.Truncation{OriginalBytes: n, KeptBytes: n}
		}
		capped = true
	}
	if capped {
		t.Limit, t.LimitTokens = pol.MaxBytes, 0
		if pol.HoldsTokens() {
			t.LimitTokens = pol.MaxTokens
		}
		t.OriginalBytes += total
		t.KeptBytes += kept
		t.DroppedBytes = t.OriginalBytes - t.KeptBytes
	}
	if !capped && !rebuild && !e.rewritten && e.redactions == nil {
		return nil, t, false
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"error":{`)
	n := 0
	for i, m := range e.members {
		var v []byte
		switch m.key {
		case "message":
			enc, _ := json.Marshal(msg)
			v = enc
		case "data":
			v = data
		default:
			v = m.raw
		}
		if v == nil || drop[i] {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		writeKey(&b, m.key)
		b.Write(v)
	}
	b.WriteString("}}")
	return b.Bytes(), t, capped
}

// reducer copies a structuredContent as it is read, keeping of it no more
// than a cut to the limit can use, so that a value of any size is held in
// O(retain) bytes and cut to a prefix of whole elements as if it had been
// held whole ([shape.JSONReduced]):
//
//   - a string longer than retain keeps its first bytes, and how many it
//     had ([shape.Precut]);
//   - a container leaves out its tail ([shape.Elided]) once the part it is
//     in holds more than a cut of that part can keep: the root value when
//     it is not an object, each member's value of a root object, whose
//     members the cut keeps all of, sharing the limit by [shape.WaterFill].
//     A member's share is at most the water level of the members read so
//     far with its own demand unbounded (later members only lower it), so
//     the part keeps that level plus slack, which is more than its share:
//     the cut never reaches what was left out, and counts it as dropped.
//
// Elements left out are read past and counted, never held. over is set
// when no form can fit whatever the cut (a root object whose keys alone
// are over retain), or as a safety when the copy still exceeds max; the
// rest of the value is then read past.
type reducer struct {
	sc     *wire.Scanner
	retain int
	max    int
	out    bytes.Buffer
	over   bool
	cut    bool
	precut []shape.Precut
	// precutAt is where each string of precut starts (its opening quote)
	// in out.
	precutAt []int
	elided   []shape.Elided
	// detector, when the result is redacted, keeps a string cut short
	// from ending in the first bytes of a secret (see stringRawRedacted).
	detector redact.Detector

	// from is where the part being read starts in out, keep how much of it
	// is kept before containers leave out their tails; stale says keep is
	// an older (higher) water level, to compute again before it is relied
	// on to leave anything out.
	from  int
	keep  int
	stale bool
	// members are the lengths of the root object's member values read so
	// far, and keys the bytes its keys and punctuation take.
	members []int
	keys    int
	path    []string // the JSON Pointer tokens of the value being read
}

// reducerSlack is what a part keeps beyond its water level: the level is
// a bound on its share up to the one unit WaterFill's rounding may add.
const reducerSlack = 16

func newReducer(sc *wire.Scanner, retain int) *reducer {
	return &reducer{sc: sc, retain: retain, max: maxStructured(retain), keep: retain + reducerSlack}
}

func (r *reducer) write(b []byte) {
	if r.over {
		return
	}
	if r.out.Len()+len(b) > r.max {
		r.over = true
		r.out = bytes.Buffer{}
		return
	}
	r.out.Write(b)
}

// full reports whether the part being read holds all that a cut can keep
// of it, so that the containers in it leave out the elements that follow.
func (r *reducer) full() bool {
	if r.out.Len()-r.from <= r.keep {
		return false
	}
	if r.stale {
		r.refresh()
	}
	return r.out.Len()-r.from > r.keep
}

// refresh sets keep from the water level of the root object's members so
// far, the current one's demand unbounded.
func (r *reducer) refresh() {
	r.stale = false
	demand := append(r.members, math.MaxInt/2)
	level := shape.WaterFill(demand, r.retain-r.keys)[len(demand)-1]
	r.keep = level + reducerSlack
}

// value reads one value; depth 0 is structuredContent itself.
func (r *reducer) value(depth int) error {
	if depth > wire.MaxDepth {
		return &wire.SyntaxError{Offset: r.sc.Offset(), Msg: "nesting too deep"}
	}
	c, err := r.sc.Kind()
	if err != nil {
		return err
	}
	switch c {
	case '{':
		return r.object(depth)
	case '[':
		return r.array(depth)
	case '"':
		// A string is kept as written; a longer one than the part has
		// room for keeps its first bytes, and how many it had, for the
		// count of the cut that follows (see shape.Precut). A stale level
		// is an upper bound, refreshed as the members double in number
		// (not for each, which would cost a water-filling per member):
		// the strings of n members then take O(retain log n).
		if r.stale && len(r.members)&(len(r.members)-1) == 0 {
			r.refresh()
		}
		room := min(r.retain, max(r.keep-(r.out.Len()-r.from), 0))
		var head []byte
		var written int64
		var whole bool
		if r.detector != nil {
			head, written, whole, err = stringRawRedacted(r.sc, room+16, r.detector)
		} else {
			head, written, whole, err = r.sc.StringRaw(room + 16)
		}
		if err != nil {
			return err
		}
		if !whole {
			r.precut = append(r.precut, shape.Precut{Head: head, Extra: int(written) - len(head)})
			r.precutAt = append(r.precutAt, r.out.Len())
			r.cut = true
		}
		r.write([]byte{'"'})
		r.write(head)
		r.write([]byte{'"'})
		return nil
	}
	raw, ok, err := r.sc.Capture(r.max)
	if !ok {
		r.over = true
	}
	r.write(raw)
	return err
}

// object reads an object. The root object keeps every member, each value
// a part of its own; a nested one leaves out the members that follow once
// its part is full.
func (r *reducer) object(depth int) error {
	root := depth == 0
	var left *shape.Elided
	n := 0
	r.write([]byte("{"))
	if root {
		r.keys = 2 // the braces
	}
	err := r.sc.Object(func(key string) error {
		if r.over {
			return r.sc.Skip()
		}
		var kb bytes.Buffer
		if n > 0 {
			kb.WriteByte(',')
		}
		writeKey(&kb, key)
		if !root && r.full() {
			if left == nil {
				left = &shape.Elided{Pointer: r.pointer()}
			}
			start := r.sc.Offset()
			err := r.sc.Skip()
			left.Count++
			left.Bytes += kb.Len() + int(r.sc.Offset()-start)
			return err
		}
		n++
		r.write(kb.Bytes())
		r.path = append(r.path, cut.PointerToken(key))
		defer func() { r.path = r.path[:len(r.path)-1] }()
		if !root {
			return r.value(depth + 1)
		}
		// A member of the root object: its value is a part.
		r.keys += kb.Len()
		if r.keys > r.retain {
			// The keys alone are over every limit: the cut keeps them
			// all, so no form fits.
			r.over = true
			return r.sc.Skip()
		}
		r.from, r.stale = r.out.Len(), true
		err := r.value(depth + 1)
		r.members = append(r.members, r.out.Len()-r.from)
		return err
	})
	r.write([]byte("}"))
	r.leftOut(left)
	return err
}

// array reads an array, leaving out the elements that follow once its part
// is full.
func (r *reducer) array(depth int) error {
	var left *shape.Elided
	n := 0
	r.write([]byte("["))
	err := r.sc.Array(func(i int) error {
		if r.over {
			return r.sc.Skip()
		}
		if r.full() {
			if left == nil {
				left = &shape.Elided{Pointer: r.pointer()}
			}
			start := r.sc.Offset()
			err := r.sc.Skip()
			left.Count++
			left.Bytes += 1 + int(r.sc.Offset()-start) // the comma
			return err
		}
		if n > 0 {
			r.write([]byte(","))
		}
		n++
		r.path = append(r.path, strconv.Itoa(i))
		defer func() { r.path = r.path[:len(r.path)-1] }()
		return r.value(depth + 1)
	})
	r.write([]byte("]"))
	r.leftOut(left)
	return err
}

// leftOut notes the tail a container left out, if any.
func (r *reducer) leftOut(e *shape.Elided) {
	if e != nil {
		r.elided = append(r.elided, *e)
		r.cut = true
	}
}

// pointer returns the JSON Pointer of the value being read.
func (r *reducer) pointer() string {
	var b strings.Builder
	for _, t := range r.path {
		b.WriteByte('/')
		b.WriteString(t)
	}
	return b.String()
}
