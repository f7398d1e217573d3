package claudecode

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/internal/wire"
)

// ReadTool is Claude Code's tool that reads a file by lines (file_path,
// offset, limit): the markers of the hook name it, so that the model reads
// on with the tool it has.
const ReadTool = "Read"

// Hook caps the tool output of a PostToolUse payload as [CapToolResponse]
// does, with what only a hook that sees the whole payload can do:
//
//   - Output Claude Code already saved to a file (a persistedOutputPath,
//     a <persisted-output> text, an MCP result's "exceeds maximum allowed
//     tokens … saved to" error) is left as Claude Code made it: its text
//     is short and names the whole output.
//   - Read is cut on a line boundary and its line numbers (Claude Code
//     renders content as "N\tline") count against the limit; numLines
//     counts the lines kept, so that Claude Code's own paging note says
//     what arrived; the marker names the Read of the next line.
//   - With a Store, the whole text of a cut output (Bash, Grep content,
//     WebFetch, an MCP tool's text) is kept as a plain text file and the
//     marker names its Read: [truncated: N bytes dropped, refine your
//     query or read the rest: Read {"file_path":…,"offset":L,"limit":K}].
//     A Read of such a file is paged: each page holds the limit and names
//     the next offset, and the file is not kept again.
//   - Output that is not the JSON its tool promises (a wrong field type,
//     nesting deeper than a decoder takes) is cut as text when it is over
//     the limit, never passed on uncapped.
//   - The output is redacted first with the policy's Redact detector
//     (package doc, "Secrets"): within the limit, an output with a secret
//     is replaced by itself, redacted.
//
// A Hook is safe for concurrent use; the zero Hook keeps nothing.
type Hook struct {
	// Store keeps what cuts drop, in plain mode ([rest.OpenPlainDir]), one
	// scope per Claude Code session; nil keeps nothing and the markers
	// are plain. A store that fails never fails a cut.
	Store *rest.Dir
	// Logger receives store failures; nil is silent.
	Logger hclog.Logger

	// streamAbove and maxPayload are StreamAbove and MaxPayload when zero,
	// and smaller in tests.
	streamAbove int
	maxPayload  int64
	// streamed, when set, is told how many long texts a streamed payload
	// held, for tests.
	streamed func(longs int)
}

// Cap fits the tool output of in to p. It returns the replacement and the
// figures; changed is false when the output reaches the model as it is.
// The error is CapToolResponse's for output within the limit only: over
// it, output of the wrong shape is cut as text instead.
func (h *Hook) Cap(in Input, p shape.Policy) (out json.RawMessage, t chain.Truncation, changed bool, err error) {
	return h.forSession(in).cap(newDecoder(), in, p)
}

// forSession returns h, or, when in's session_id is too long to be a
// scope, h without its store, having logged why.
func (h *Hook) forSession(in Input) *Hook {
	why := in.keepsNothing()
	if h == nil || h.Store == nil || why == "" {
		return h
	}
	if h.Logger != nil {
		h.Logger.Warn(why)
	}
	return &Hook{Logger: h.Logger, streamAbove: h.streamAbove, maxPayload: h.maxPayload, streamed: h.streamed}
}

// cap is Cap, reading the output through d: each string of it is decoded
// once, by the first step that needs it, and the long texts of a streamed
// output are read from their stream (d.st).
//
// The output is redacted first, with p.Redact (redactResponse): what is
// measured, cut, kept and replied is the redacted output, and an output
// with a secret is replaced even when it fits. The counts are added to
// d.redactions.
func (h *Hook) cap(d *decoder, in Input, p shape.Policy) (out json.RawMessage, t chain.Truncation, changed bool, err error) {
	resp := bytes.TrimSpace(in.ToolResponse)
	if len(resp) == 0 || string(resp) == "null" {
		return nil, chain.Truncation{}, false, nil
	}
	redacted := false
	if red, counts := redactResponse(d, in.ToolName, resp, p.Redact); counts != nil {
		if st := d.stream(); st != nil && len(st.red) == len(resp) && &st.red[0] == &resp[0] {
			// The held part of a streamed output: its length as written
			// changes with it.
			st.rawLen += len(red) - len(resp)
			st.red = red
			st.heldRedactions = pin.AddRedactions(st.heldRedactions, counts)
		}
		d.redactions = pin.AddRedactions(d.redactions, counts)
		resp, in.ToolResponse, redacted = red, red, true
	}
	// unchanged is the reply when the cut leaves the output as it is:
	// none, or the redacted output.
	unchanged := func() (json.RawMessage, chain.Truncation, bool, error) {
		if redacted {
			return redactedAsIs(resp)
		}
		return nil, chain.Truncation{}, false, nil
	}
	if savedByClaudeCode(d, in.ToolName, resp) {
		return unchanged()
	}
	if in.ToolName == ReadTool {
		if out, t, changed, ok := h.capRead(d, in, resp, p); ok {
			if !changed {
				return unchanged()
			}
			return out, t, changed, nil
		}
	}
	if h != nil && h.Store != nil && p.KeepRest && !p.Fits(d.size(resp)) {
		// Kept first: an output that is cut is cut once.
		if kept, kt, ok := h.keep(d, in, resp, p); ok {
			return kept, kt, true, nil
		}
	}
	out, t, changed, err = capToolResponse(d, in.ToolName, resp, p)
	if err == nil && !changed {
		return unchanged()
	}
	if err != nil {
		if p.Fits(d.size(resp)) {
			if redacted {
				// Of the wrong shape, but within the limit: it goes on
				// as it is, redacted, never as it came.
				return redactedAsIs(resp)
			}
			return nil, chain.Truncation{}, false, err
		}
		// Fail closed: the output is cut as the text of its JSON.
		s, st, cutOK := d.jsonText(resp, p)
		if !cutOK {
			return nil, chain.Truncation{}, false, err
		}
		enc, merr := marshal(s)
		return enc, st, merr == nil, merr
	}
	return out, t, changed, nil
}

// savedByClaudeCode reports whether resp is Claude Code's own stand-in for
// an output it saved to a file: a persistedOutputPath (Bash), or a text
// that opens with <persisted-output> or says the MCP result "exceeds
// maximum allowed tokens" and was saved.
func savedByClaudeCode(d *decoder, tool string, resp json.RawMessage) bool {
	saved := func(s string) bool {
		head := s[:min(len(s), 4096)]
		return strings.HasPrefix(strings.TrimSpace(head), "<persisted-output>") ||
			strings.Contains(head, "exceeds maximum allowed tokens. Output has been saved to ")
	}
	switch resp[0] {
	case '"':
		s, err := d.str(resp)
		return err == nil && saved(s)
	case '[':
		blocks, ok := parseBlocks(d, resp)
		return ok && len(blocks) > 0 && blocks[0].text == "text" && saved(blocks[0].shape.Text)
	case '{':
		o, ok := d.object(resp)
		if !ok {
			return false
		}
		if p, _ := o.str("persistedOutputPath"); p != "" {
			return true
		}
		if blocks, ok := parseBlocks(d, o.raw("content")); ok && len(blocks) > 0 && blocks[0].text == "text" {
			return saved(blocks[0].shape.Text)
		}
	}
	return false
}

// readArgs returns the arguments of the Read of path from line offset,
// limit lines, as a marker names them.
func readArgs(path string, offset, limit int) string {
	p, _ := marshal(path)
	return `{"file_path":` + string(p) + `,"offset":` + strconv.Itoa(offset) + `,"limit":` + strconv.Itoa(limit) + `}`
}

// widestArgs is the longest readArgs of path: for the room a marker needs
// before its numbers are known.
func widestArgs(path string) string { return readArgs(path, 1e9, 1e9) }

// numbered returns the bytes Claude Code's cat -n rendering adds to a line
// numbered n: the number and a tab.
func numbered(n int) int { return len(strconv.Itoa(n)) + 1 }

// pageLines returns how many lines of text, from its first, a Read page of
// budget bytes holds with their numbers from line first: at least 1, at
// most 2000 (Read's own default).
func pageLines(text string, first, budget int) int {
	n, used := 0, 0
	for n < 2000 {
		i := strings.IndexByte(text, '\n')
		line := text
		if i >= 0 {
			line = text[:i]
		}
		used += numbered(first+n) + len(line) + 1
		if used > budget {
			break
		}
		n++
		if i < 0 {
			break
		}
		text = text[i+1:]
	}
	return max(n, 1)
}

// bannerLen is the length of the note Claude Code adds to a Read it paged
// for tokens ("[Truncated: PARTIAL view — PATH: showing N of T lines. …]"),
// which the model reads with the content.
func bannerLen(path string, numLines, totalLines int) int {
	const fixed = len("[Truncated: PARTIAL view \u2014 : showing  of  lines. Call Read with offset/limit to page through. Do NOT answer from this page alone if the answer may be further in the file.]") + 2
	return fixed + len(path) + len(strconv.Itoa(numLines)) + len(strconv.Itoa(totalLines))
}

// pagedNote is what the marker line of a Read that Claude Code paged for
// tokens says after the marker, when the hook's cut shows fewer lines than
// Claude Code read (lines next to last cut). Claude Code tells the model,
// in a note of its own, that the page shows lines 1 to last and that the
// next Read starts at last+1; it builds that note from the Read's original
// output after the hooks ran (a message of its harness, beside the tool
// result), so no hook can change it: this says which of its lines did not
// arrive and where to read on, so that following it skips nothing.
func pagedNote(next, last int) string {
	return " [toolcap: Claude Code's note on this Read counts lines " + strconv.Itoa(next) + "-" + strconv.Itoa(last) +
		" as shown; they were cut: read on from offset " + strconv.Itoa(next) + ", not " + strconv.Itoa(last+1) + "]"
}

// capRead fits a Read of a text file: on a line boundary, the line numbers
// counted, the marker naming the Read of the next line. A Read of a file of
// the hook's store that stops before the file's end names the next page
// even when it fits. It reports ok false for a Read it does not handle
// (images, notebooks), which CapToolResponse then fits.
func (h *Hook) capRead(d *decoder, in Input, resp json.RawMessage, p shape.Policy) (json.RawMessage, chain.Truncation, bool, bool) {
	o, ok := d.object(resp)
	if !ok || !o.is("type", "text") {
		return nil, chain.Truncation{}, false, false
	}
	file, ok := o.obj("file")
	if !ok {
		return nil, chain.Truncation{}, false, false
	}
	content, err := file.str("content")
	if err != nil {
		return nil, chain.Truncation{}, false, false
	}
	path, _ := file.str("filePath")
	if path == "" {
		var ti struct {
			FilePath string `json:"file_path"`
		}
		_ = json.Unmarshal(in.ToolInput, &ti)
		path = ti.FilePath
	}
	start, totalLines := max(file.int("startLine"), 1), file.int("totalLines")
	lines := strings.Split(content, "\n")
	budget := p.MaxBytes
	last := start + len(lines) - 1
	paged := string(file.raw("truncatedByTokenCap")) == "true"
	if paged {
		budget -= bannerLen(path, len(lines), totalLines) + len(pagedNote(last, last))
	}
	rendered := len(content)
	for i := range lines {
		rendered += numbered(start + i)
	}
	inStore := h != nil && h.Store != nil && h.Store.IsEntryPath(path)
	more := inStore && totalLines > last
	// render is what the model reads of the first k lines and, when
	// marker is not "", the marker on a numbered line of its own.
	render := func(k int, marker string) string {
		var b strings.Builder
		for i := range k {
			b.WriteString(strconv.Itoa(start + i))
			b.WriteByte('\t')
			b.WriteString(lines[i])
			if i < k-1 {
				b.WriteByte('\n')
			}
		}
		if marker != "" {
			b.WriteString("\n" + strconv.Itoa(start+k) + "\t" + marker[1:])
		}
		return b.String()
	}
	tokensFit := func(k int, marker string) bool {
		return !p.HoldsTokens() || p.Counter.Count(render(k, marker)) <= p.MaxTokens
	}
	if rendered <= budget && !more && (!p.HoldsTokens() || rendered > cut.TokenWindow(p.MaxTokens) || tokensFit(len(lines), "")) {
		return nil, chain.Truncation{}, false, true
	}
	after := 0 // bytes of the file after the lines Claude Code read
	if more {
		after = bytesAfterLine(path, last)
	}
	// The most lines whose rendering, with the marker on a numbered line
	// of its own, is within the budget.
	rest := cut.Rest{Tool: ReadTool, Args: widestArgs(path)}
	room := budget - cut.RestMarkerLen(len(content)+after, cut.UnitBytes, rest)
	k, used := 0, 0
	for k < len(lines) {
		add := numbered(start+k) + len(lines[k]) + 1
		if used+add+numbered(start+k) > room {
			break
		}
		used += add
		k++
	}
	if p.HoldsTokens() {
		// The most lines, of those the bytes allow, within the tokens.
		probe := cut.RestMarker(len(content)+after, cut.UnitBytes, rest)
		for k > 0 && !tokensFit(k, probe) {
			k = k * 3 / 4
		}
	}
	var kept string
	next := start + k
	switch {
	case k == len(lines):
		kept = content
	case k > 0:
		kept = strings.Join(lines[:k], "\n")
	default:
		// One line longer than the limit: its head, and the Read goes
		// on from the next line (Read pages by whole lines only).
		head := max(room-numbered(start), 0)
		kept = lines[0][:cut.FloorCharBoundary(lines[0], min(head, len(lines[0])))]
		next, k = start+1, 1
	}
	dropped := len(content) - len(kept) + after
	if dropped <= 0 || budget <= 0 {
		return nil, chain.Truncation{}, false, true
	}
	// The next page: as many lines as fit, of those this Read got; past
	// them, as many as this page holds (lines of a file look alike).
	limit := max(k, 1)
	if k < len(lines) {
		limit = max(limit, pageLines(strings.Join(lines[k:], "\n"), next, room-16))
	}
	args := readArgs(path, next, limit)
	marked := kept + cut.RestMarker(dropped, cut.UnitBytes, cut.Rest{Tool: ReadTool, Args: args})
	if paged && next <= last {
		marked += pagedNote(next, last)
	}
	if err := file.set("content", marked); err != nil {
		return nil, chain.Truncation{}, false, true
	}
	if err := file.set("numLines", k); err != nil {
		return nil, chain.Truncation{}, false, true
	}
	if err := o.set("file", file); err != nil {
		return nil, chain.Truncation{}, false, true
	}
	enc, err := o.encode()
	if err != nil {
		return nil, chain.Truncation{}, false, true
	}
	t := chain.Truncation{Limit: p.MaxBytes, OriginalBytes: len(content) + after, KeptBytes: len(kept), DroppedBytes: dropped}
	return enc, t, true, true
}

// bytesAfterLine returns the bytes of the file at path after its line
// last (its newline included); 0 when it cannot be read.
func bytesAfterLine(path string, last int) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	i := 0
	for n := 0; n < last && i <= len(data); n++ {
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			return 0
		}
		i += j + 1
	}
	return max(len(data)-i+1, 0) // the newline before the next line counts
}

// part is a text of a tool's output kept in the store's file: its member
// (a key of the object, "" for a bare string, or the index of a text
// block) and where it starts in the file.
type part struct {
	key  string
	text string
	base int
	// form is the text as the file holds it when that differs from text
	// (a JSON text, in its pageable form), and at maps an offset in text
	// to the same byte in form; both are zero for a text held as it is.
	form string
	at   func(int) int
}

// inFile returns the text of pt as the file holds it.
func (pt part) inFile() string {
	if pt.at != nil {
		return pt.form
	}
	return pt.text
}

// offset returns where the byte at offset i of pt's text is in its form.
func (pt part) offset(i int) int {
	if pt.at != nil {
		return pt.at(i)
	}
	return i
}

// keep keeps the whole text of a cut output in the store and cuts it again
// with room for markers that name the Read of the file. It reports false
// when the tool's output is not one it keeps (Glob, JSON values) or the
// store fails: the plain cut stands.
func (h *Hook) keep(d *decoder, in Input, resp json.RawMessage, p shape.Policy) (json.RawMessage, chain.Truncation, bool) {
	if resp[0] == '"' {
		if s, err := d.str(resp); err == nil && d.structuredText(s) {
			return h.keepJSON(d, in, s, p)
		}
	}
	parts, file, ok := keptParts(d, in.ToolName, resp)
	if !ok || len(parts) == 0 {
		return nil, chain.Truncation{}, false
	}
	e, path, ok := h.openEntry(d, in, file)
	if !ok {
		return nil, chain.Truncation{}, false
	}
	extra := cut.RestMarkerLen(0, cut.UnitBytes, cut.Rest{Tool: ReadTool, Args: widestArgs(path)}) - cut.MarkerLen(0)
	q := p
	q.MaxBytes -= extra * len(parts)
	if p.HoldsTokens() {
		q.MaxTokens -= (p.Counter.Count(widestArgs(path)) + 16) * len(parts)
	}
	if q.MaxBytes < 64 || (p.HoldsTokens() && q.MaxTokens < 16) {
		_ = e.Abort()
		return nil, chain.Truncation{}, false
	}
	out, t, changed, err := capToolResponse(d, in.ToolName, resp, q)
	if err != nil || !changed || t.DroppedBytes == 0 {
		_ = e.Abort()
		return nil, chain.Truncation{}, false
	}
	resume := -1
	unknown := false // a marker's line is past what is known of a streamed file
	mark := func(pt part, c string) string {
		f, ok := lastPlainMarker(c)
		if !ok {
			return c
		}
		pos := pt.base
		if f.Start <= len(pt.text) && c[:f.Start] == pt.text[:f.Start] {
			pos += pt.offset(f.Start)
		}
		if resume < 0 {
			resume = pos
		}
		nl, known := file.newlines(pos)
		from, reached := file.lineFrom(pos, p.MaxBytes+1)
		if !known || !reached {
			unknown = true
			return c
		}
		line := 1 + nl
		room := p.MaxBytes - cut.RestMarkerLen(file.n, cut.UnitBytes, cut.Rest{Tool: ReadTool, Args: widestArgs(path)})
		args := readArgs(path, line, pageLines(from, line, room-16))
		return cut.WithRest(c, f, cut.Rest{Tool: ReadTool, Args: args})
	}
	marked, ok := markParts(in.ToolName, out, parts, mark)
	if !ok || resume < 0 || unknown || d.failed() {
		_ = e.Abort()
		return nil, chain.Truncation{}, false
	}
	if !h.commitEntry(e, file) {
		return nil, chain.Truncation{}, false
	}
	t.Limit = p.MaxBytes
	t.Ref, t.Resume = e.Ref(), resume
	return marked, t, true
}

// lastPlainMarker finds the last plain marker of a cut text.
func lastPlainMarker(s string) (cut.Found, bool) {
	ms := cut.FindMarkers(s)
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Rest == nil {
			return ms[i], true
		}
	}
	return cut.Found{}, false
}

// keptParts returns the texts of the output a model reads that the hook
// keeps, and the file that holds them, in order, joined by newlines.
func keptParts(d *decoder, tool string, resp json.RawMessage) ([]part, *keptFile, bool) {
	var parts []part
	add := func(key, text string) { parts = append(parts, part{key: key, text: text}) }
	// joined returns the file of the parts, setting where each starts; one
	// part is its own file, not a copy of it. A streamed output's file is
	// the parts, some of which are long texts (keptFile).
	joined := func() ([]part, *keptFile, bool) {
		streamed := false
		for i := range parts {
			streamed = streamed || d.long(parts[i].text) != nil
		}
		if !streamed {
			// A JSON text held whole is kept in its pageable form, so
			// that Read pages it (pageable.go). (A streamed one is longer
			// than Claude Code hands a hook from an MCP tool: past about
			// 100 KB it hands its own error text and saved file.)
			for i := range parts {
				if pageableJSON(parts[i].text) {
					parts[i].form, parts[i].at = pageable(parts[i].text)
				}
			}
		}
		n := 0
		for i := range parts {
			if i > 0 {
				n++
			}
			parts[i].base = n
			if parts[i].at != nil {
				n += len(parts[i].form)
			} else {
				n += d.textLen(parts[i].text)
			}
		}
		switch {
		case streamed:
			return parts, &keptFile{n: n, parts: parts, d: d}, true
		case len(parts) == 1:
			return parts, &keptFile{s: parts[0].inFile(), n: n}, true
		}
		var b strings.Builder
		for i := range parts {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(parts[i].inFile())
		}
		return parts, &keptFile{s: b.String(), n: n}, true
	}
	switch tool {
	case "Glob", "Read":
		return nil, nil, false
	case "Bash", "Grep", "WebFetch":
		o, ok := d.object(resp)
		if !ok {
			return nil, nil, false
		}
		for _, k := range keptFields(tool) {
			s, err := o.str(k)
			if err != nil {
				return nil, nil, false
			}
			if s != "" {
				add(k, s)
			}
		}
		return joined()
	}
	switch resp[0] {
	case '"':
		s, err := d.str(resp)
		if err != nil {
			return nil, nil, false
		}
		if d.structuredText(s) {
			// Cut as JSON, it stays a valid document (capValue).
			return nil, nil, false
		}
		add("", s)
		return joined()
	case '[', '{':
		raw := resp
		if resp[0] == '{' {
			o, ok := d.object(resp)
			if !ok {
				return nil, nil, false
			}
			raw = o.raw("content")
		}
		blocks, ok := parseBlocks(d, raw)
		if !ok {
			return nil, nil, false
		}
		for i, bl := range blocks {
			if bl.text == "text" {
				add(strconv.Itoa(i), bl.shape.Text)
			}
		}
		return joined()
	}
	return nil, nil, false
}

// markParts applies mark to each kept part's text in out, the cut output,
// and returns it encoded again.
func markParts(tool string, out json.RawMessage, parts []part, mark func(part, string) string) (json.RawMessage, bool) {
	d := newDecoder()
	switch tool {
	case "Bash", "Grep", "WebFetch":
		o, ok := d.object(out)
		if !ok {
			return nil, false
		}
		for _, pt := range parts {
			s, err := o.str(pt.key)
			if err != nil || o.set(pt.key, mark(pt, s)) != nil {
				return nil, false
			}
		}
		enc, err := o.encode()
		return enc, err == nil
	}
	if out[0] == '"' {
		s, err := d.str(out)
		if err != nil {
			return nil, false
		}
		enc, err := marshal(mark(parts[0], s))
		return enc, err == nil
	}
	var o object
	raw := out
	if out[0] == '{' {
		var ok bool
		if o, ok = d.object(out); !ok {
			return nil, false
		}
		raw = o.raw("content")
	}
	elems, err := wire.SplitArray(raw)
	if err != nil {
		return nil, false
	}
	blocks := make([]object, len(elems))
	for i, e := range elems {
		var ok bool
		if blocks[i], ok = d.object(e); !ok {
			return nil, false
		}
	}
	// The text blocks of the cut come in the order of the kept parts; a
	// note shape added (a text block of its own) matches none of them.
	j := 0
	for _, bl := range blocks {
		if j >= len(parts) || !bl.is("type", "text") {
			continue
		}
		s, err := bl.str("text")
		if err != nil {
			return nil, false
		}
		pt := parts[j]
		if s == pt.text {
			j++
			continue
		}
		if _, cutHere := lastPlainMarker(s); cutHere {
			if bl.set("text", mark(pt, s)) != nil {
				return nil, false
			}
			j++
		}
	}
	enc, err := marshal(blocks)
	if err != nil {
		return nil, false
	}
	if !o.ok() {
		return enc, true
	}
	o.m["content"] = enc
	enc, err = o.encode()
	return enc, err == nil
}

// openEntry creates the store entry that is to keep file, for in's
// session, and returns it with the path a Read names it by. It reports
// false, and the plain cut stands, when the entry bound would keep less
// than the whole file (the Read would end early), when the store fails
// (logged), or when it names no path for the entry (aborted).
func (h *Hook) openEntry(d *decoder, in Input, file *keptFile) (rest.Entry, string, bool) {
	if int64(file.n) > h.Store.MaxEntryBytes() {
		return nil, "", false
	}
	e, err := d.create(h.Store, in.SessionID, file)
	if err != nil {
		h.fail("create", err)
		return nil, "", false
	}
	path, ok := h.Store.EntryPath(in.SessionID, e.Ref())
	if !ok {
		_ = e.Abort()
		return nil, "", false
	}
	return e, path, true
}

// commitEntry writes file to e, an entry openEntry opened, and commits
// it. It reports false, and the plain cut stands, when the write fails
// (e aborted) or the commit does (both logged), or when the entry bound
// kept less than the whole file after all: the Read would end early.
func (h *Hook) commitEntry(e rest.Entry, file *keptFile) bool {
	if err := file.writeTo(e); err != nil {
		_ = e.Abort()
		h.fail("write", err)
		return false
	}
	info, err := e.Commit()
	if err != nil {
		h.fail("commit", err)
		return false
	}
	return info.Size >= int64(file.n)
}

// fail logs a store failure; the cut goes on with a plain marker.
func (h *Hook) fail(op string, err error) {
	if h.Logger != nil {
		h.Logger.Warn("rest store failed: output cut without keeping the rest", "op", op, "error", err)
	}
}
