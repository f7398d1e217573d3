package rest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// The bounds of a read with a pattern. An entry keeps up to
// [DefaultMaxEntryBytes] of an output, often in one line (an MCP tool's
// JSON): a read holds a window of the output at a time, never a whole
// line, and searches a line longer than the window window by window.
const (
	// maxMatchLine is the most bytes of a line an answer shows for one
	// match: a line up to this long is shown whole, a longer one as this
	// many bytes around the match.
	maxMatchLine = 1024
	// grepWindow is the most bytes of the output a read with a pattern
	// holds at once: the memory it costs, whatever the length of a line.
	grepWindow = 256 << 10
	// maxMatchBytes is the longest match the search of a line longer than
	// a window is sure to find: consecutive windows overlap by this much,
	// so that a match of at most this many bytes lies whole in one window
	// wherever it starts, with the character before it and the one after
	// it, which are all that an RE2 assertion (^, $, \b, \B) reads. A
	// match that runs to the end of a window (a longer one, or one the
	// regexp takes for one because the window ends there) is settled by a
	// search of the line itself from where the window's search began,
	// rune by rune to the match's end, linear in the bytes it reads, in
	// bounded memory. What may be missed is a longer match that the
	// window it starts in holds no match for at all, such as x.*y with x
	// and y further apart than this.
	//
	// 64 KiB is what a line could be before (a longer line was searched
	// in its first 64 KiB only) and a quarter of the window: the windows
	// of a long line read it 4/3 times over.
	maxMatchBytes = 64 << 10
	// grepCheck is the most bytes of short lines a read with a pattern
	// searches between two looks at its call's context.
	grepCheck = 4 << 10
)

// grep answers a read with a pattern: the lines of the output from
// a.Offset on that match re, each as "OFFSET:line", as many as p holds,
// with a marker naming the read of the next ones. A line longer than
// maxMatchLine is shown as a stretch around each match instead, prefixed
// by the offset of its first byte, with "…" where the line goes on.
func (k *Keeper) grep(ctx context.Context, r Reader, info Info, a ReadArgs, re *regexp.Regexp, p shape.Policy) (string, error) {
	return k.grepSized(ctx, r, info, a, re, p, grepWindow, maxMatchBytes)
}

// grepSized is grep with a window of window bytes, overlapping by overlap
// (at most window/4), which tests make small.
func (k *Keeper) grepSized(ctx context.Context, r Reader, info Info, a ReadArgs, re *regexp.Regexp, p shape.Policy, window, overlap int) (string, error) {
	g := grepped{k: k, info: info, a: a, p: p, overlap: overlap}
	m := newMatcher(re)
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("%s: reading ref %s: %w", k.tool, strconv.Quote(a.Ref), err)
	}
	// The buffer starts at a quarter of a window (64 KiB), which holds
	// the lines of most texts, and grows to a window at the first line
	// longer than that: a read of short lines allocates no more.
	most := int(min(int64(window), info.Size-a.Offset+utf8.UTFMax))
	t := &text{r: r, end: info.Size, buf: make([]byte, min(most, window/4)), most: most}
	pos := a.Offset
	// A read from inside a line (the marker of a match in a long line
	// names one) searches the rest of it as the line it is: what is
	// before only decides the assertions at pos, as in the whole line.
	cw, err := t.contextWidth(pos)
	if err != nil {
		return fail(err)
	}
	checked := pos
	for i := 0; pos < info.Size; i++ {
		// The call's context is asked every 4 KiB searched, and every 256
		// lines: a costly pattern takes milliseconds for a line of 1 KiB
		// (.{500}Z, 6 ms; (\w+\s*){1,100}q, 16 ms), and a check every 4096
		// lines let one run for a minute past its deadline (issue 39,
		// item 2). A check costs a few nanoseconds.
		if i%256 == 0 || pos-checked >= grepCheck {
			if err := ctx.Err(); err != nil {
				return "", fmt.Errorf("%s: %w", k.tool, context.Cause(ctx))
			}
			checked = pos
		}
		c := pos - int64(cw)
		b := t.held(c)
		var end int
		var next int64
		ends := false
		if len(b) > cw {
			end, next, ends = lineIn(b, cw, c, info.Size)
		}
		if !ends && len(b) < len(t.buf) {
			// The line may end past what the buffer holds: hold more.
			if b, err = t.fill(c); err != nil {
				return fail(err)
			}
			end, next, ends = lineIn(b, cw, c, info.Size)
		}
		if ends && end-cw <= maxMatchLine {
			if m.matches(b[:end], cw) {
				text := string(b[cw:end])
				if cw > 0 {
					text = "…" + text // the rest of a line, as a stretch of a long one shows it
				}
				if !g.add(pos, text) {
					return g.end(len(g.ends), pos, p)
				}
			}
			pos, cw = next, 0
			continue
		}
		next, full, err := g.long(ctx, t, m, pos, cw)
		if err != nil {
			return "", err
		}
		if full {
			return g.end(len(g.ends), next, p)
		}
		pos, cw = next, 0
	}
	out := g.b.String()
	if len(g.ends) == 0 {
		out = fmt.Sprintf("no line matches %s from offset %d to the end (%d bytes)", clip([]byte(strconv.Quote(a.Pattern))), a.Offset, info.Size)
		if g.windowed {
			out += fmt.Sprintf("; a line longer than %s was searched in parts, where a match longer than %s may be missed", size(t.most), size(g.overlap))
		}
	}
	if info.Size < info.Original {
		out += cut.Marker(int(info.Original - info.Size))
	}
	if !fits(out, p) {
		if len(g.ends) == 0 {
			return "", k.tooSmall(p)
		}
		// A token limit tighter than the byte limit: show fewer lines.
		return g.end(len(g.ends)-1, g.ats[len(g.ats)-1], p)
	}
	return out, nil
}

// long searches the line from pos on (cw bytes before pos are the
// character before it, when pos is inside the line), one longer than
// maxMatchLine or than t's buffer, window by window, and adds an entry for
// each match: the stretch of the line around it, after which the search
// goes on. It returns the offset of the next line, or, when an entry does
// not fit the answer, its offset and full.
func (g *grepped) long(ctx context.Context, t *text, m *matcher, pos int64, cw int) (next int64, full bool, err error) {
	fail := func(err error) (int64, bool, error) {
		if ctx.Err() != nil {
			return 0, false, fmt.Errorf("%s: %w", g.k.tool, context.Cause(ctx))
		}
		return 0, false, fmt.Errorf("%s: reading ref %s: %w", g.k.tool, strconv.Quote(g.a.Ref), err)
	}
	// The line's start, where a stretch shown needs no "…" before it;
	// -1 when the search starts inside the line.
	lineStart := pos
	if cw > 0 {
		lineStart = -1
	}
	t.grow()
	// The search goes on from p, whose character before is pw bytes.
	p, pw := pos, cw
	for {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		c := p - int64(pw)
		// Three times the overlap: a window that ends inside the line
		// hands the next one a search from at least twice the overlap on.
		b, err := t.window(c, 3*g.overlap)
		if err != nil {
			return fail(err)
		}
		// be is where the line or the window ends; matches from limit on
		// are the next window's, which holds overlap bytes after them.
		be, next, lineEnds := lineIn(b, pw, c, t.end)
		limit := be
		if !lineEnds {
			g.windowed = true
			limit = cut.FloorCharBoundary(unsafeString(b), be-g.overlap)
		}
		s, e, ok := m.find(b[:be], pw)
		if !ok || s >= limit && !lineEnds {
			if lineEnds {
				return next, false, nil
			}
			p, pw = c+int64(limit), lastRuneWidth(b[:limit])
			continue
		}
		if lineEnds || e < be {
			np, done, fit := g.show(b[:be], c, lineEnds, lineStart, p, c+int64(s), c+int64(e))
			switch {
			case !fit:
				return np, true, nil
			case done:
				return next, false, nil
			}
			p, pw = np, lastRuneWidth(b[:np-c])
			continue
		}
		// A match that runs to the window's end may go on past it, or be
		// one only because the regexp sees the window end there ($, \b):
		// the line itself settles it, read from p to the leftmost match's
		// end.
		ls, le, ok, lineNext, err := m.stream(ctx, t, p, pw)
		if err != nil {
			return fail(err)
		}
		if !ok {
			return lineNext, false, nil
		}
		// The stretch around the match, no earlier than p, from a window
		// that starts a quarter of one before it (at least half a stretch
		// with grepWindow) and so holds the stretch's end too.
		base := max(p, ls-int64(len(t.buf)/4))
		if b, err = t.window(base, 3*g.overlap); err != nil {
			return fail(err)
		}
		be, next, lineEnds = lineIn(b, 0, base, t.end)
		np, done, fit := g.show(b[:be], base, lineEnds, lineStart, base, ls, le)
		switch {
		case !fit:
			return np, true, nil
		case done:
			return next, false, nil
		}
		p = np
		if pw, err = t.contextWidth(p); err != nil {
			return fail(err)
		}
	}
}

// lineIn returns where the line ends in b, which holds the output from
// base on and has from bytes before the line's part (its context): be, the
// end of the line's bytes (before "\r\n" or "\n"), next, the offset of the
// line after it, and true; or len(b) and false when the line goes on past
// b. end is the output's end.
func lineIn(b []byte, from int, base, end int64) (be int, next int64, lineEnds bool) {
	if nl := bytes.IndexByte(b[from:], '\n'); nl >= 0 {
		be = from + nl
		next = base + int64(be) + 1
		if be > from && b[be-1] == '\r' {
			be--
		}
		return be, next, true
	}
	if base+int64(len(b)) == end {
		return len(b), end, true
	}
	return len(b), 0, false
}

// show adds the entry of the match [s, e) of a long line: the stretch
// around it, from no earlier than from, that b holds (the output from base
// on, to the line's end when lineEnds). lineStart is the line's start, or
// -1 when it is before the search's. It returns where the search goes on
// (after the stretch and the match) and whether the line ends there; or
// the entry's offset and false when the entry does not fit the answer.
func (g *grepped) show(b []byte, base int64, lineEnds bool, lineStart, from, s, e int64) (np int64, done, fit bool) {
	rs := int(s - base)
	ws, we := around(b, int(from-base), rs, int(min(e-base, int64(len(b)))))
	if we == len(b) && !lineEnds {
		// b ends where its window does, perhaps inside a character:
		// the stretch ends before it.
		we = max(ws+1, completeEnd(b))
	}
	var text strings.Builder
	text.Grow(we - ws + 2*len("…"))
	if base+int64(ws) != lineStart {
		text.WriteString("…")
	}
	text.Write(b[ws:we])
	if we < len(b) || !lineEnds {
		text.WriteString("…")
	}
	at := base + int64(ws)
	if !g.add(at, text.String()) {
		return at, false, false
	}
	np = max(base+int64(we), e)
	return np, lineEnds && np >= base+int64(len(b)), true
}

// around returns the stretch [ws, we) of line b shown for its match
// [s, e): maxMatchLine bytes with the match in the middle (its head, when
// it is longer), none before from, on character boundaries.
func around(b []byte, from, s, e int) (ws, we int) {
	n := min(e-s, maxMatchLine)
	ws = max(from, s-(maxMatchLine-n)/2)
	for ws < s && !utf8.RuneStart(b[ws]) {
		ws++
	}
	we = cut.FloorCharBoundary(unsafeString(b), min(len(b), ws+maxMatchLine))
	if we <= ws {
		// A character longer than the whole stretch: only bytes that are
		// no character (a run of continuation bytes) make one.
		we = min(len(b), ws+maxMatchLine)
	}
	return ws, we
}

// completeEnd returns len(b), or where a character starts that b cuts
// short: the bytes there begin a valid sequence that b does not finish.
func completeEnd(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// size writes n bytes for the model: in KiB when they are whole.
func size(n int) string {
	if n >= 1<<10 && n%(1<<10) == 0 {
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// unsafeString returns b as a string without a copy, for the functions of
// package cut that read one; b does not change while it is used.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// lastRuneWidth returns the width of the character that ends b, the
// context of a search from len(b): 0 for an empty b.
func lastRuneWidth(b []byte) int {
	_, w := utf8.DecodeLastRune(b)
	return w
}

// matcher finds the matches of a read's pattern in a part of a line, as
// a search of the whole line finds them. The regexp takes a part for a
// text of its own: what it cannot tell from the part alone is at its
// edges, where an assertion reads the character beyond.
type matcher struct {
	re *regexp.Regexp
	// looksBack is set when re has an assertion that reads the character
	// before a position (^, \A, \b, \B): a search from inside a line
	// shows the regexp that character.
	looksBack bool
	// after is re preceded by any one character, compiled when first
	// needed: a search with it from the character before a position finds
	// re's leftmost match from that position with its context.
	after    *regexp.Regexp
	afterErr error
}

func newMatcher(re *regexp.Regexp) *matcher {
	m := &matcher{re: re}
	// Each of those assertions is written with ^ or \: a pattern without
	// either, most of them, needs no parse.
	if strings.ContainsAny(re.String(), `^\`) {
		tree, err := syntax.Parse(re.String(), syntax.Perl)
		m.looksBack = err != nil || looksBack(tree)
	}
	return m
}

// looksBack reports whether re has an assertion that reads the character
// before the position it is at.
func looksBack(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, sub := range re.Sub {
		if looksBack(sub) {
			return true
		}
	}
	return false
}

// matches reports whether re matches line b from from on, b[:from] being
// the character before (none at the start of a line).
func (m *matcher) matches(b []byte, from int) bool {
	if from == 0 {
		return m.re.Match(b)
	}
	_, _, ok := m.find(b, from)
	return ok
}

// find returns the leftmost match [s, e) of re in b that starts at from
// or after, as a search of the line from there finds it when the line
// ends where b does: b[:from] is the character before from (none when
// from is 0, the line's start).
func (m *matcher) find(b []byte, from int) (s, e int, ok bool) {
	if from == 0 || !m.looksBack {
		// Nothing before from changes a match from there on.
		return m.findFrom(b, from)
	}
	// From the character before, every position from from on has its
	// context; the character itself is taken for a line's start.
	loc := m.re.FindIndex(b)
	if loc == nil {
		return 0, 0, false
	}
	if loc[0] >= from {
		return loc[0], loc[1], true
	}
	// A match at the character before from, which may hide one from from
	// on: ask the slower form that reads that character as context.
	after, err := m.afterForm()
	if err != nil {
		// Not expected: re compiled, and so does any character before it.
		// Search without the context rather than not at all.
		return m.findFrom(b, from)
	}
	loc = after.FindIndex(b)
	if loc == nil {
		return 0, 0, false
	}
	_, w := utf8.DecodeRune(b[loc[0]:])
	return loc[0] + w, loc[1], true
}

// findFrom returns the leftmost match of re in b[from:], taking from for
// the start of a text.
func (m *matcher) findFrom(b []byte, from int) (s, e int, ok bool) {
	loc := m.re.FindIndex(b[from:])
	if loc == nil {
		return 0, 0, false
	}
	return from + loc[0], from + loc[1], true
}

// afterForm returns re preceded by any one character, compiled once. re
// is written from its parse, not as given: a pattern such as `\Qa` would
// swallow the parenthesis that closes it.
func (m *matcher) afterForm() (*regexp.Regexp, error) {
	if m.after == nil && m.afterErr == nil {
		var tree *syntax.Regexp
		if tree, m.afterErr = syntax.Parse(m.re.String(), syntax.Perl); m.afterErr == nil {
			m.after, m.afterErr = regexp.Compile(`(?s:.)(?:` + tree.String() + `)`)
		}
	}
	return m.after, m.afterErr
}

// stream returns the leftmost match [s, e) of re in the line from p on
// (pw bytes before p are the character before it), reading the line
// itself, rune by rune, from a small buffer: for a match a window cannot
// settle. When there is none it returns the offset of the line after.
// regexp reads from a RuneReader with its NFA, in time linear in what it
// reads: to the match's end and what decides it, or the line's end.
func (m *matcher) stream(ctx context.Context, t *text, p int64, pw int) (s, e int64, ok bool, next int64, err error) {
	re, c := m.re, p
	if pw > 0 && m.looksBack {
		if re, err = m.afterForm(); err != nil {
			re, pw = m.re, 0
		} else {
			c = p - int64(pw)
		}
	}
	lr := &lineReader{ctx: ctx, r: bufio.NewReaderSize(io.NewSectionReader(t.r, c, t.end-c), 16<<10), off: c}
	loc := re.FindReaderIndex(lr)
	if lr.err != nil {
		return 0, 0, false, 0, lr.err
	}
	if loc == nil {
		return 0, 0, false, lr.next, nil
	}
	s, e = c+int64(loc[0]), c+int64(loc[1])
	if c < p {
		// The match of the form with the character before: re's starts
		// after that character.
		var r [utf8.UTFMax]byte
		n, err := t.r.ReadAt(r[:min(int64(len(r)), t.end-s)], s)
		if n == 0 {
			return 0, 0, false, 0, err
		}
		_, w := utf8.DecodeRune(r[:n])
		s += int64(w)
	}
	return s, e, true, 0, nil
}

// lineReader reads the runes of one line, to its end ("\r\n", "\n" or
// the output's end), for regexp's search of a RuneReader. An error of the
// read or of ctx ends the line for regexp: the search's result then stands
// for nothing, and err says why.
type lineReader struct {
	ctx  context.Context
	r    *bufio.Reader
	off  int64 // the offset of the next byte
	next int64 // once the line ended: the offset of the line after
	n    int
	done bool
	err  error
}

func (l *lineReader) ReadRune() (rune, int, error) {
	if l.done {
		return 0, 0, io.EOF
	}
	if l.n++; l.n%grepCheck == 0 && l.ctx.Err() != nil {
		return l.end(0, context.Cause(l.ctx))
	}
	r, size, err := l.r.ReadRune()
	switch {
	case err == io.EOF:
		return l.end(0, nil)
	case err != nil:
		return l.end(0, err)
	case r == '\n':
		return l.end(1, nil)
	case r == '\r':
		if nl, _ := l.r.Peek(1); len(nl) == 1 && nl[0] == '\n' {
			return l.end(2, nil)
		}
	}
	l.off += int64(size)
	return r, size, nil
}

// end ends the line, whose end of n bytes was read, for err.
func (l *lineReader) end(n int, err error) (rune, int, error) {
	l.done, l.err, l.next = true, err, l.off+int64(n)
	return 0, 0, io.EOF
}

// text holds a stretch of an entry, at most len(buf) bytes from off.
type text struct {
	r    io.ReaderAt
	end  int64 // the entry's size
	buf  []byte
	most int // the size buf grows to
	off  int64
	n    int
}

// grow makes t's buffer as large as it gets, keeping what it holds.
func (t *text) grow() {
	if len(t.buf) < t.most {
		buf := make([]byte, t.most)
		copy(buf, t.buf[:t.n])
		t.buf = buf
	}
}

// held returns what t holds from at on: nothing when it does not hold at.
func (t *text) held(at int64) []byte {
	if at < t.off || at >= t.off+int64(t.n) {
		return nil
	}
	return t.buf[at-t.off : t.n]
}

// fill makes t hold the bytes from at on, as many as its buffer holds,
// keeping what it holds of them already.
func (t *text) fill(at int64) ([]byte, error) {
	want := int(min(int64(len(t.buf)), t.end-at))
	kept := copy(t.buf, t.held(at))
	n, err := t.r.ReadAt(t.buf[kept:want], at+int64(kept))
	t.off, t.n = at, kept+n
	if t.n < want {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return t.buf[:want], nil
}

// window returns the bytes t holds from at on, filling it first when they
// are fewer than least and do not reach the entry's end. A filled buffer
// holds least bytes, or reaches the end: its size is at least least, or
// the entry's size from where the read began.
func (t *text) window(at int64, least int) ([]byte, error) {
	if b := t.held(at); len(b) > 0 && (len(b) >= least || at+int64(len(b)) == t.end) {
		return b, nil
	}
	return t.fill(at)
}

// contextWidth returns the width of the character before pos when pos is
// inside a line: 0 at the start of the entry or of a line.
func (t *text) contextWidth(pos int64) (int, error) {
	if pos == 0 {
		return 0, nil
	}
	var before [utf8.UTFMax]byte
	b := before[:min(pos, utf8.UTFMax)]
	if _, err := t.r.ReadAt(b, pos-int64(len(b))); err != nil {
		return 0, err
	}
	if b[len(b)-1] == '\n' {
		return 0, nil
	}
	return lastRuneWidth(b), nil
}

// grepped is the answer of a read with a pattern, as it is built.
type grepped struct {
	k    *Keeper
	info Info
	a    ReadArgs
	p    shape.Policy
	b    strings.Builder
	ends []int   // where each shown line ends in b
	ats  []int64 // where each shown line starts in the output
	// overlap is the overlap of the windows of a long line: the longest
	// match they are sure to find (maxMatchBytes).
	overlap int
	// windowed is set when a line was searched in windows: a match
	// longer than overlap may have been missed.
	windowed bool
}

// add appends the entry of text at offset at, and reports whether it fit
// beside the marker that would name the read of the next ones.
func (g *grepped) add(at int64, text string) bool {
	// As a client decodes it, and so measured: a byte of the entry that
	// is not valid UTF-8 is shown as U+FFFD.
	text, _ = cut.ReplaceInvalid(text)
	entry := strconv.FormatInt(at, 10) + ":" + text + "\n"
	if g.b.Len()+len(entry)+len(g.marker(at)) > g.p.MaxBytes {
		return false
	}
	g.b.WriteString(entry)
	g.ends = append(g.ends, g.b.Len())
	g.ats = append(g.ats, at)
	return true
}

// marker returns the marker naming the read of the matching lines from
// offset at.
func (g *grepped) marker(at int64) string {
	return cut.RestMarker(int(g.info.Original-at), cut.UnitBytes, cut.Rest{Tool: g.k.tool, Args: grepArgs(g.a.Ref, at, g.a.Pattern)})
}

// end returns the first n lines shown, or fewer when they do not fit p
// with their marker, and the marker naming the read from the first line
// not shown (next, when all n are shown); an error when not one line fits
// beside the marker.
func (g *grepped) end(n int, next int64, p shape.Policy) (string, error) {
	text := g.b.String()
	for ; n > 0; n-- {
		at := next
		if n < len(g.ats) {
			at = g.ats[n]
		}
		out := strings.TrimSuffix(text[:g.ends[n-1]], "\n") + g.marker(at)
		if fits(out, p) {
			return out, nil
		}
	}
	// Not one line beside the marker: an answer of the marker alone would
	// name the same read again.
	return "", g.k.tooSmall(p)
}

// grepArgs returns the arguments of the read of the matching lines of ref
// from offset.
func grepArgs(ref string, offset int64, pattern string) string {
	q, _ := json.Marshal(pattern) // a string always marshals
	return `{"ref":"` + ref + `","offset":` + strconv.FormatInt(offset, 10) + `,"pattern":` + string(q) + `}`
}
