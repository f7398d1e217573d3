package claudecode

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/internal/wire"
	"github.com/toolcap/toolcap/redact"
)

// StreamAbove is the payload length past which [Hook.ReadCap] streams the
// payload rather than hold it: 8 MiB. A payload held whole costs the
// buffer it is read into (8 MiB and 2 MiB for alignment, of which a
// process touches only what the payload and the decoded output it holds
// fill), the decoded output that does not fit there and the cut, so one
// of 8 MiB stays under 30 MiB; a streamed one costs what the
// tool's limits make it hold (see ReadCap), a few times the limit, whatever
// its length, but one more pass over its bytes. Claude Code saves outputs
// this long to files itself, so payloads past the bound are rare: holding
// them whole is what would be costly.
const StreamAbove = 8 << 20

// Setup is what the hook applies to one tool's output: the tool's policy
// and the store that keeps what a cut drops (nil keeps nothing), as
// [Hook]'s Store.
type Setup struct {
	// Policy is the tool's policy.
	Policy shape.Policy
	// Store keeps what the cut drops, as Hook's Store; nil keeps nothing.
	Store *rest.Dir
}

// forSession returns s, without its store when in's session_id is too
// long to be a scope ([Hook.forSession]).
func (s Setup) forSession(in Input) Setup {
	if in.keepsNothing() != "" {
		s.Store = nil
	}
	return s
}

// Capped is what [Hook.ReadCap] made of a payload.
type Capped struct {
	// Input is the payload's members. Its ToolResponse is the payload's
	// when the payload was held whole, nil when it was streamed.
	Input Input
	// Out, Truncation and Changed are [Hook.Cap]'s results: the
	// replacement (nil when Changed is false), the figures of the cut.
	Out        json.RawMessage
	Truncation chain.Truncation
	Changed    bool
	// Redactions counts the secrets redacted from the output, by rule
	// (the policy's Redact detector); nil when none was. An output with
	// one is Changed, cut or not. The counts name rules, never a value:
	// a hook logs them (pin.LogRedactions).
	Redactions map[string]int
}

// SetupError is the error of [Hook.ReadCap] when the setup it was given
// failed: a configuration error, where every other error of ReadCap is the
// payload's.
type SetupError struct{ Err error }

// Error returns the setup error's message.
func (e *SetupError) Error() string { return e.Err.Error() }

// Unwrap returns the setup's error.
func (e *SetupError) Unwrap() error { return e.Err }

// ReadCap reads a PostToolUse payload from r, at most [MaxPayload] bytes,
// and caps its tool output as [Hook.Cap] does, under what setup returns
// for the payload's tool_name; the Store setup returns takes the place of
// h's. setup is called as soon as the tool's name is known: before the
// tool output is read when tool_name comes first, as Claude Code sends it,
// and once (twice when a payload names another tool after its output).
//
// A payload of at most [StreamAbove] bytes is read whole ([ParseInput])
// and capped by Cap. A longer one is read through a bounded buffer and its
// tool output cut as it streams: members the cut does not read are
// skipped, small ones held as they were written, and each long text (Bash's
// stdout and stderr, Grep's content, WebFetch's result, a string output,
// the text of an MCP tool's text blocks) decoded as it arrives into a
// [cut.Writer], and into the store's entry when the rest is kept, holding
// its head. The reply is the one Cap gives for the same payload held whole,
// byte for byte, in memory bounded by the limits (a few times the byte
// limit, the token window under a token limit): Cap then runs on the
// payload with its long texts left out, and each cut that needs one of
// them takes it from its Writer.
//
// Output of any length is never passed on uncapped. A streamed output
// that Cap would read whole as JSON (one not of the shape its tool
// promises, with a long text in it) or that holds more than 16 MiB besides
// its long texts (a Read of a huge file) is cut as the text of its JSON,
// as Cap cuts output whose shape it cannot read. When tool_name or
// session_id comes after the tool output, the output is first copied to a
// private temporary file, then read from it.
//
// ReadCap is sized for a process that handles one payload, as the hook
// does: a payload over 64 KiB read from a pipe goes into one buffer of
// the bound ([StreamAbove] and 2 MiB more), of which only the pages the
// payload fills are touched. A long-running program that already holds
// the payload's bytes calls Cap, which allocates in proportion to them.
//
// The error is the payload's, in words a user can act on, as ReadInput's
// ([ErrPayloadTooLarge] past MaxPayload); a *[SetupError] when setup
// failed; or Cap's, prefixed with the tool's name.
func (h *Hook) ReadCap(r io.Reader, setup func(tool string) (Setup, error)) (Capped, error) {
	above := StreamAbove
	if h != nil && h.streamAbove > 0 {
		above = h.streamAbove
	}
	data, spare, more, err := readPrefix(r, above)
	if err != nil {
		return Capped{}, err
	}
	if more != nil {
		return h.readStream(more, setup)
	}
	in, err := ParseInput(data)
	if err != nil {
		return Capped{}, err
	}
	s, err := setup(in.ToolName)
	if err != nil {
		return Capped{Input: in}, &SetupError{Err: err}
	}
	hk := (&Hook{Store: s.Store, Logger: h.logger()}).forSession(in)
	// The output's long strings are decoded after the payload, in its
	// buffer.
	d := newDecoder()
	d.spare = spare
	out, t, changed, err := hk.cap(d, in, s.Policy)
	if err != nil {
		return Capped{Input: in}, fmt.Errorf("tool_response of %s: %w", in.ToolName, err)
	}
	return Capped{Input: in, Out: out, Truncation: t, Changed: changed, Redactions: d.redactions}, nil
}

// logger returns h's Logger, nil for a nil h.
func (h *Hook) logger() hclog.Logger {
	if h == nil {
		return nil
	}
	return h.Logger
}

// maxField bounds the string members of a streamed payload the hook reads
// (tool_name, session_id, ...) and its tool_input, which it holds: 1 MiB.
// A longer tool_input is not held (only Read's file_path is read of it).
const maxField = 1 << 20

// readStream reads and caps a payload longer than StreamAbove.
func (h *Hook) readStream(r io.Reader, setup func(string) (Setup, error)) (Capped, error) {
	limit := int64(MaxPayload)
	if h != nil && h.maxPayload > 0 {
		limit = h.maxPayload
	}
	src := newSource(r, limit)
	var (
		fields  = map[string]json.RawMessage{}
		in      Input
		rs      *respStream
		spooled *os.File
		setups  = map[string]Setup{}
		// sessionIDBytes is the length of a session_id longer than
		// maxSessionID, which is not held.
		sessionIDBytes int
	)
	defer func() {
		if rs != nil {
			rs.close()
		}
		closeSpool(spooled)
	}()
	setupFor := func(tool string) (Setup, error) {
		if s, ok := setups[tool]; ok {
			return s, nil
		}
		s, err := setup(tool)
		if err != nil {
			return Setup{}, &SetupError{Err: err}
		}
		setups[tool] = s
		return s, nil
	}
	// current returns the value a member has so far, and whether it was
	// read at all.
	current := func(key string) (string, bool) {
		raw, ok := fields[key]
		if !ok || string(raw) == "null" {
			return "", ok
		}
		s, _ := wire.Unquote(raw)
		return s, true
	}
	err := topObject(src, func(key string) error {
		switch key {
		case "session_id":
			n := 0
			tee := src.tee
			src.tee = func(p []byte) {
				if tee != nil {
					tee(p)
				}
				n += len(p)
			}
			raw, err := captureValue(src, maxSessionID)
			src.tee = tee
			if errors.Is(err, errTooLong) {
				// Not held: counted, and nothing is kept of the output.
				sessionIDBytes, err = n, nil
				delete(fields, key)
			} else if err == nil {
				sessionIDBytes = 0
				fields[key] = raw
			}
			return err
		case "hook_event_name", "tool_name", "tool_use_id":
			raw, err := captureValue(src, maxField)
			if err != nil {
				return err
			}
			fields[key] = raw
			return nil
		case "tool_input":
			raw, err := captureValue(src, maxField)
			if errors.Is(err, errTooLong) {
				in.ToolInput = nil
				return nil
			}
			in.ToolInput = raw
			return err
		case "tool_response":
			if rs != nil {
				rs.close()
				rs = nil
			}
			closeSpool(spooled)
			spooled = nil
			tool, named := current("tool_name")
			scope, scoped := current("session_id")
			scoped = scoped || sessionIDBytes > 0
			event, evented := current("hook_event_name")
			if !named || tool == "" || !scoped || (evented && event != EventPostToolUse) {
				// The output's policy or scope is not known yet: it is
				// read from a copy once they are.
				f, err := spool(src)
				spooled = f
				return err
			}
			s, err := setupFor(tool)
			if err != nil {
				return err
			}
			if sessionIDBytes > 0 {
				s.Store = nil // no scope to keep it in (forSession)
			}
			rs = newRespStream(src, tool, scope, s)
			return rs.run()
		}
		return src.skipValue()
	})
	if err != nil {
		var se *SetupError
		if errors.As(err, &se) || src.err != nil && errors.Is(err, src.err) {
			return Capped{}, err
		}
		return Capped{}, fmt.Errorf("the payload is not a JSON hook payload: %w", err)
	}
	if err := in.envelope(fields); err != nil {
		return Capped{}, err
	}
	in.SessionIDLength = sessionIDBytes
	s, err := setupFor(in.ToolName)
	if err != nil {
		return Capped{Input: in}, err
	}
	if spooled != nil {
		if _, err := spooled.Seek(0, io.SeekStart); err != nil {
			return Capped{Input: in}, fmt.Errorf("reading the copy of the tool output: %w", err)
		}
		rs = newRespStream(newSource(spooled, MaxPayload), in.ToolName, in.SessionID, s.forSession(in))
		if err := rs.run(); err != nil {
			return Capped{Input: in}, fmt.Errorf("reading the copy of the tool output: %w", err)
		}
	}
	if h != nil && h.streamed != nil && rs != nil {
		h.streamed(len(rs.longs))
	}
	hk := (&Hook{Store: s.Store, Logger: h.logger()}).forSession(in)
	var (
		out     json.RawMessage
		t       chain.Truncation
		changed bool
		counts  map[string]int
	)
	switch {
	case rs == nil:
		// No tool output: nothing to cut.
		out, t, changed, err = hk.Cap(in, s.Policy)
	case rs.tool != in.ToolName || rs.scope != in.SessionID:
		// Named again, otherwise, after the output was read under the
		// first names: held as written, it is cut under the last ones, as
		// Cap cuts it; streamed, as text, within both policies.
		if len(rs.longs) == 0 && !rs.over {
			held := in
			held.ToolResponse = rs.red
			d := newDecoder()
			out, t, changed, err = hk.cap(d, held, s.Policy)
			counts = d.redactions
		} else {
			out, t, changed, counts, err = rs.asText(s.Policy)
		}
	default:
		out, t, changed, counts, err = rs.capWith(hk, in)
	}
	if err != nil {
		return Capped{Input: in}, fmt.Errorf("tool_response of %s: %w", in.ToolName, err)
	}
	return Capped{Input: in, Out: out, Truncation: t, Changed: changed, Redactions: counts}, nil
}

// topObject reads the payload's object as wire.SplitObject splits it, calling
// member for each member with src at its value, which member consumes,
// and checks that nothing but space follows it.
func topObject(src *source, member func(key string) error) error {
	src.space()
	if c, ok := src.peek(); !ok || c != '{' {
		if src.err != nil {
			return src.err
		}
		return errors.New("not a JSON object")
	}
	if src.open('}') {
		return trailingSpace(src)
	}
	for {
		c, ok := src.peek()
		if !ok || c != '"' {
			return src.fail("want a member name")
		}
		key, err := readKey(src)
		if err != nil {
			return fmt.Errorf("member name: %w", err)
		}
		src.space()
		if c, ok := src.peek(); !ok || c != ':' {
			return src.fail(fmt.Sprintf("want ':' after %q", key))
		}
		src.consume(1)
		src.space()
		if err := member(key); err != nil {
			var se *SetupError
			if errors.As(err, &se) || src.err != nil {
				return err
			}
			return fmt.Errorf("%s: %w", key, err)
		}
		if more, ok := src.next('}'); !ok {
			return src.fail("want ',' or '}'")
		} else if !more {
			return trailingSpace(src)
		}
	}
}

// trailingSpace checks that nothing but space follows the value.
func trailingSpace(src *source) error {
	src.space()
	if _, ok := src.peek(); ok {
		return errors.New("data after the value")
	}
	return src.err
}

// maxKey bounds what readKey decodes of a member name: the names toolcap
// looks for are short, and a longer name is none of them.
const maxKey = 4 << 10

// readKey reads a member name and decodes it as wire.Unquote does; a name
// longer than maxKey comes back cut short, which no name looked for is.
func readKey(src *source) (string, error) {
	var key []byte
	d := wire.NewStringDecoder(func(p []byte) {
		if len(key) < maxKey {
			key = append(key, p[:min(len(p), maxKey-len(key))]...)
		}
	}, 64)
	if err := decodeString(src, d); err != nil {
		return "", err
	}
	if err := d.Err(); err != nil {
		return "", err
	}
	return string(key), nil
}

// decodeString consumes the string next in src, decoding it with d.
func decodeString(src *source, d *wire.StringDecoder) error {
	src.consume(1)
	return drain(src, d)
}

// errTooLong is captureValue's error for a value longer than it holds;
// the value is consumed.
var errTooLong = errors.New("value too long to hold")

// captureValue consumes the value next in src and returns it as written,
// or errTooLong when it is longer than most bytes.
func captureValue(src *source, most int) (json.RawMessage, error) {
	var raw []byte
	over := false
	tee := src.tee
	src.tee = func(p []byte) {
		if tee != nil {
			tee(p)
		}
		if len(raw)+len(p) > most {
			over = true
			return
		}
		raw = append(raw, p...)
	}
	err := src.skipValue()
	src.tee = tee
	switch {
	case err != nil:
		return nil, err
	case over:
		return nil, errTooLong
	}
	return raw, nil
}

// spool copies the value next in src to a private temporary file, which
// it returns (to be closed by closeSpool, also after an error).
func spool(src *source) (*os.File, error) {
	f, err := createSpool()
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, srcBuf)
	var werr error
	src.tee = func(p []byte) {
		if werr == nil {
			_, werr = w.Write(p)
		}
	}
	err = src.skipValue()
	src.tee = nil
	if err == nil && werr == nil {
		werr = w.Flush()
	}
	if err == nil && werr != nil {
		err = fmt.Errorf("copying the tool output to a temporary file: %w", werr)
	}
	return f, err
}

// createSpool creates a private temporary file (0600) and removes its name
// at once where the system allows it, so that nothing is left behind
// however the hook ends.
func createSpool() (*os.File, error) {
	f, err := os.CreateTemp("", "toolcap-hook-*")
	if err != nil {
		return nil, fmt.Errorf("a temporary file for the tool output: %w", err)
	}
	_ = os.Remove(f.Name())
	return f, nil
}

// closeSpool closes a spool and removes its file, if its name is still
// there.
func closeSpool(f *os.File) {
	if f == nil {
		return
	}
	_ = f.Close()
	_ = os.Remove(f.Name())
}

// The forms of a tool output the hook streams, by the output's first byte
// and its tool: what its long texts are and how its cut reads them.
const (
	formHeld   = iota // no text is streamed: the output is held (Read, Glob, a literal)
	formString        // a string
	formFields        // Bash, Grep, WebFetch: their text members
	formBlocks        // MCP content blocks: the text of each text block
)

// keptFields returns the members of tool's output whose texts keptParts
// keeps, in the order of the kept file, or nil for a tool it keeps none
// of. A switch, not a map: a package-level map is built at every start of
// the hook's process.
func keptFields(tool string) []string {
	switch tool {
	case "Bash":
		return []string{"stdout", "stderr"}
	case "Grep":
		return []string{"content"}
	case "WebFetch":
		return []string{"result"}
	}
	return nil
}

// respStream reads one tool output (the value of tool_response) from src.
// It holds the output as written (red), but for its long texts, strings
// longer than hold once decoded: each is replaced in red by a placeholder
// of its own and decoded as it streams, into a cut.Writer (its own, or
// that of the text blocks joined) and, when the rest is kept, the store's
// entry, holding its head. Once it holds a long text, or red outgrows
// redMax, it also writes the output as written to a Writer, for a cut of
// it as text.
type respStream struct {
	src   *source
	tool  string
	scope string
	p     shape.Policy
	store *rest.Dir
	keep  bool // the texts are kept: they stream to the store's entry

	hold   int // a string this long (decoded) or shorter is held as written
	head   int // what the stand-in of a long text holds of its head
	near   int // a long text block that starts past this offset of the joined text has a stand-in of one byte
	redMax int // the most red holds

	red     []byte
	rawLen  int  // the output's length as written
	holding bool // red takes the bytes consumed
	over    bool // red outgrew redMax: the output is cut as text
	raw     *cut.Writer
	// rawIn is where the output as written goes to raw: through rawRed,
	// which redacts it as JSON text (jsonEscaped), when the policy
	// redacts; rawDone once rawRed was closed.
	rawIn   io.Writer
	rawRed  *redact.Writer
	rawDone bool
	// longRedactions counts what was redacted from the long texts, and
	// heldRedactions what the cut redacted from red.
	longRedactions map[string]int
	heldRedactions map[string]int

	ph    []byte // the placeholders' prefix
	longs []*longText
	stand map[rawKey]*longText

	form   int
	fields map[string]*fieldState // formFields: the kept members, by name

	// What was fed to the kept file (and for blocks to joined, the text
	// blocks joined, which is the same text), in the file's order: texts
	// joined by newlines.
	log        []*longText
	fed        int
	joined     *cut.Writer
	entry      rest.Entry
	entryErr   error
	entryTaken bool
	writeErr   error

	elems    [][2]int  // formBlocks: the elements read, as offsets of red
	elemLong *longText // the long text of the element being read

	odd string // why the output is cut as text
}

// fieldState is what was read of a kept member of formFields.
type fieldState struct {
	seen bool
	raw  [2]int    // where its value sits in red
	long *longText // its long text
}

// standIn returns, for an output under p, the length of a long text's
// stand-in (its head: what a cut looks at of it) and the decoded length
// past which a string is a long text.
func standIn(p shape.Policy) (head, hold int) {
	head = max(4096, 2*max(p.MaxBytes, 0)+64)
	hold = max(head+1, 64<<10)
	if p.HoldsTokens() {
		// A text counted whole under the token limit is held whole.
		hold = max(hold, cut.TokenWindow(p.MaxTokens))
	}
	return head, hold
}

// newRespStream returns the reader of a tool output of tool, in scope,
// under s, from src.
func newRespStream(src *source, tool, scope string, s Setup) *respStream {
	p := s.Policy
	limit := max(p.MaxBytes, 0)
	head, hold := standIn(p)
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	rs := &respStream{
		src: src, tool: tool, scope: scope, p: p, store: s.Store,
		hold: hold, head: head, near: 3*limit + 8192,
		redMax: max(16<<20, 4*hold),
		ph:     []byte(`"\u0000toolcap-` + hex.EncodeToString(nonce[:]) + `:`),
		stand:  map[rawKey]*longText{},
	}
	return rs
}

// tee takes the bytes src consumes of the output.
func (rs *respStream) tee(p []byte) {
	rs.rawLen += len(p)
	if rs.holding && !rs.over {
		if len(rs.red)+len(p) <= rs.redMax {
			rs.red = append(rs.red, p...)
		} else {
			rs.startRaw()
			rs.over, rs.red = true, nil
		}
	}
	if rs.raw != nil {
		_, _ = rs.rawIn.Write(p)
	}
}

// startRaw starts the Writer of the output as written, with what red
// holds of it: it is needed once red stops being the output.
func (rs *respStream) startRaw() {
	if rs.raw == nil {
		rs.raw = cut.NewWriter(rs.p.MaxBytes, rs.p.Spec)
		rs.rawIn = rs.raw
		if rs.p.Redact != nil {
			rs.rawRed = redact.NewWriter(rs.raw, jsonEscaped{rs.p.Redact})
			rs.rawIn = rs.rawRed
		}
		_, _ = rs.rawIn.Write(rs.red)
	}
}

// rawCut returns the Writer of the output as written, once all of it
// was written: what the redactor held back written on.
func (rs *respStream) rawCut() *cut.Writer {
	if rs.rawRed != nil && !rs.rawDone {
		_ = rs.rawRed.Close()
		rs.rawDone = true
	}
	return rs.raw
}

// errEnded tells the readers of the output's parts that the output was
// read to its end by counting brackets, after a syntax error.
var errEnded = errors.New("the tool output was read past a syntax error")

// run reads the output.
func (rs *respStream) run() error {
	rs.src.tee = rs.tee
	rs.holding = true
	defer func() {
		rs.holding = false
		rs.src.tee = nil
	}()
	c, ok := rs.src.peek()
	if !ok {
		return rs.src.fail("missing value")
	}
	kept := rs.store != nil && rs.p.KeepRest
	var err error
	switch {
	case c == '"':
		rs.form = formString
		rs.keep = kept && !notKept(rs.tool)
		_, err = rs.longString(nil)
	case c == '[':
		rs.form = formBlocks
		rs.keep = kept && !notKept(rs.tool)
		err = rs.array(0, rs.element)
	case c == '{' && keptFields(rs.tool) != nil:
		rs.form = formFields
		rs.keep = kept
		rs.fields = map[string]*fieldState{}
		for _, k := range keptFields(rs.tool) {
			rs.fields[k] = &fieldState{}
		}
		err = rs.object(0, rs.field)
	case c == '{' && rs.tool != "Read" && rs.tool != "Glob":
		rs.form = formBlocks
		rs.keep = kept
		err = rs.object(0, rs.resultMember)
	default:
		err = rs.src.skipValue()
	}
	if errors.Is(err, errEnded) {
		err = nil
	}
	return err
}

// notKept reports whether keptParts keeps none of tool's output but an
// object: Bash, Grep and WebFetch keep their members, Read and Glob
// nothing.
func notKept(tool string) bool {
	switch tool {
	case "Bash", "Grep", "WebFetch", "Read", "Glob":
		return true
	}
	return false
}

// lenient reads the rest of the output by counting brackets, as skipValue
// finds its end, after a syntax error where depth brackets were open.
func (rs *respStream) lenient(depth int) error {
	if err := rs.src.skipBrackets(depth); err != nil {
		return err
	}
	return errEnded
}

// object reads an object of the output, whose brace is next, as
// wire.SplitObject splits it; depth is the brackets open outside it. member
// reads each member's value.
func (rs *respStream) object(depth int, member func(key string, depth int) error) error {
	src := rs.src
	depth++
	if src.open('}') {
		return nil
	}
	for {
		if rs.over {
			return rs.lenient(depth)
		}
		c, ok := src.peek()
		if !ok {
			return src.fail("unterminated value")
		}
		if c != '"' {
			return rs.lenient(depth)
		}
		key, err := readKey(src)
		if err != nil {
			if src.err != nil {
				return err
			}
			return rs.lenient(depth)
		}
		src.space()
		if c, ok := src.peek(); !ok || c != ':' {
			return rs.lenient(depth)
		}
		src.consume(1)
		src.space()
		if err := member(key, depth); err != nil {
			return err
		}
		if more, ok := src.next('}'); !ok {
			return rs.lenient(depth)
		} else if !more {
			return nil
		}
	}
}

// array reads an array of the output as wire.SplitArray splits it; elem reads
// each element.
func (rs *respStream) array(depth int, elem func(depth int) error) error {
	src := rs.src
	depth++
	if src.open(']') {
		return nil
	}
	for {
		if rs.over {
			return rs.lenient(depth)
		}
		if err := elem(depth); err != nil {
			return err
		}
		if more, ok := src.next(']'); !ok {
			return rs.lenient(depth)
		} else if !more {
			return nil
		}
	}
}

// value reads a value the cut reads as written, as wire.ValueEnd finds
// its end in a payload in memory. Inside a container, whose end the payload's
// split finds by counting brackets, a literal that holds a bracket or a
// quote is a syntax error.
func (rs *respStream) value(depth int) error {
	src := rs.src
	c, ok := src.peek()
	if !ok {
		return src.fail("missing value")
	}
	switch c {
	case '"':
		return src.skipString()
	case '{', '[':
		return src.skipBrackets(0)
	}
	var lit wire.Literal
	for {
		if src.i == src.n && !src.more() {
			break
		}
		j := src.i
		for j < src.n && !wire.EndsLiteral(src.buf[j]) && !brackets[src.buf[j]] {
			lit.Add(src.buf[j])
			j++
		}
		src.consume(j - src.i)
		if j < src.n {
			if c := src.buf[j]; c == '"' || c == '{' || c == '[' {
				return rs.lenient(depth)
			}
			break
		}
	}
	if src.err != nil {
		return src.err
	}
	if !lit.Valid() {
		return rs.lenient(depth)
	}
	return nil
}

// field reads a member of a Bash, Grep or WebFetch output.
func (rs *respStream) field(key string, depth int) error {
	f := rs.fields[key]
	if f == nil {
		return rs.value(depth)
	}
	if f.long != nil {
		rs.odd = "a kept member named twice"
	}
	start := len(rs.red)
	var lt *longText
	var err error
	if c, _ := rs.src.peek(); c == '"' {
		lt, err = rs.longString(func() bool { return rs.fieldsBefore(key) })
	} else {
		err = rs.value(depth)
	}
	if err != nil {
		return err
	}
	*f = fieldState{seen: true, raw: [2]int{start, len(rs.red)}, long: lt}
	return nil
}

// fieldsBefore feeds the kept members that come before key in the kept
// file, when all of them were read: then the long text of key goes to the
// file next, as it streams.
func (rs *respStream) fieldsBefore(key string) bool {
	order := keptFields(rs.tool)
	for _, k := range order {
		if k == key {
			break
		}
		if !rs.fields[k].seen {
			return false
		}
	}
	for _, k := range order {
		if k == key {
			break
		}
		if f := rs.fields[k]; f.long == nil {
			if s, err := wire.Unquote(rs.red[f.raw[0]:f.raw[1]]); err == nil && s != "" {
				rs.feedHeld(k, s)
			}
		}
	}
	return true
}

// resultMember reads a member of an MCP tool's result object: its content
// is read as blocks.
func (rs *respStream) resultMember(key string, depth int) error {
	if c, _ := rs.src.peek(); key == "content" && c == '[' {
		return rs.array(depth, rs.element)
	}
	return rs.value(depth)
}

// element reads an element of an array of content blocks.
func (rs *respStream) element(depth int) error {
	if c, _ := rs.src.peek(); c != '{' {
		return rs.value(depth)
	}
	start := len(rs.red)
	rs.elemLong = nil
	err := rs.object(depth, func(key string, depth int) error {
		if c, _ := rs.src.peek(); key != "text" || c != '"' {
			return rs.value(depth)
		}
		if rs.elemLong != nil {
			rs.odd = "a block's text named twice"
		}
		lt, err := rs.longString(rs.startJoined)
		if lt != nil {
			rs.elemLong = lt
		}
		return err
	})
	if err != nil {
		return err
	}
	if rs.over {
		return nil
	}
	rs.elems = append(rs.elems, [2]int{start, len(rs.red)})
	if rs.joined != nil && rs.elemLong == nil {
		rs.feedElement(rs.red[start:])
	}
	return nil
}

// startJoined starts feeding the text blocks joined, at the first long
// text of a block, with the text blocks read before it.
func (rs *respStream) startJoined() bool {
	if rs.joined == nil {
		rs.joined = cut.NewWriter(rs.p.MaxBytes, rs.p.Spec)
		for _, e := range rs.elems {
			rs.feedElement(rs.red[e[0]:e[1]])
		}
	}
	return true
}

// feedElement feeds the text of a block held as written, when it is a
// text block, as newBlock reads it.
func (rs *respStream) feedElement(raw []byte) {
	m, err := wire.SplitObject(raw)
	if err != nil {
		return
	}
	if typ, err := wire.Unquote(m["type"]); err != nil || typ != "text" {
		return
	}
	s, _ := (object{m: m}).str("text")
	rs.feedHeld("text", s)
}

// feedHeld feeds a text held as written, the member key of the output,
// to the kept file, redacted as the cut will read it (redactResponse,
// which counts what it redacts).
func (rs *respStream) feedHeld(key, s string) {
	s, _ = redactValue(rs.p.Redact, rs.tool, key, s)
	rs.feedSep()
	rs.log = append(rs.log, &longText{text: s, held: true, n: len(s)})
	rs.feed(stringBytes(s))
}

// feedSep feeds the newline between two texts of the file.
func (rs *respStream) feedSep() {
	if len(rs.log) > 0 {
		rs.feed(newline)
	}
}

// feed writes p to the kept file (and the joined text).
func (rs *respStream) feed(p []byte) {
	rs.fed += len(p)
	if rs.joined != nil {
		_, _ = rs.joined.Write(p)
	}
	if !rs.keep || rs.writeErr != nil {
		return
	}
	if int64(rs.fed) > rs.store.MaxEntryBytes() {
		// The entry cannot hold the file: no cut keeps it (Hook.keep).
		if rs.entry != nil {
			_ = rs.entry.Abort()
		}
		rs.keep, rs.entry = false, nil
		return
	}
	if rs.entry == nil && rs.entryErr == nil {
		rs.entry, rs.entryErr = rs.store.Create(context.Background(), rs.scope)
	}
	if rs.entry != nil {
		if _, err := rs.entry.Write(p); err != nil {
			rs.writeErr = err
		}
	}
}

// longString reads a string that may be a long text, and returns it if it
// is one. The string is held as written while it is at most hold bytes
// long as written; past that it is decoded into its first bytes, still
// held as written, while it is at most hold bytes long decoded; past that
// it is a long text: start is called (to feed what comes before it in the
// kept file; it reports whether it may go there now, nil meaning yes), its
// first bytes are fed, and its rest streams.
func (rs *respStream) longString(start func() bool) (*longText, error) {
	src := rs.src
	begin := len(rs.red)
	src.consume(1)
	bs := 0
	for {
		if rs.over {
			return nil, src.skipStringRest(bs)
		}
		if src.i == src.n && !src.more() {
			return nil, src.fail("unterminated string")
		}
		chunk := src.buf[src.i:src.n]
		end, next := wire.StringEnd(chunk, bs)
		if end >= 0 && len(rs.red)-begin-1+end <= rs.hold {
			src.consume(end + 1)
			return nil, nil
		}
		if end >= 0 || len(rs.red)-begin-1+len(chunk) > rs.hold {
			break
		}
		src.consume(len(chunk))
		bs = next
	}
	// Decoded, it may still be short enough to hold.
	lt := &longText{}
	var sink func([]byte)
	d := wire.NewStringDecoder(func(p []byte) {
		if sink != nil {
			sink(p)
			return
		}
		lt.buf = append(lt.buf, p...)
	}, outBuf)
	d.Write(rs.red[begin+1:])
	for d.Len() <= rs.hold {
		if src.i == src.n && !src.more() {
			return nil, src.fail("unterminated string")
		}
		chunk := src.buf[src.i:src.n]
		if end := d.Write(chunk); end >= 0 {
			src.consume(end)
			if d.Len() <= rs.hold || rs.over {
				src.consume(1)
				return nil, nil
			}
			break // long: its quote is read below
		}
		src.consume(len(chunk))
		if rs.over {
			// red no longer holds the output: the string is only read to
			// its end.
			return nil, drain(src, d)
		}
	}
	// A long text: what red holds of it goes to the raw Writer, red holds
	// its placeholder, and it streams from here.
	rs.startRaw()
	d.Flush()
	lt.id = len(rs.longs)
	rs.longs = append(rs.longs, lt)
	rs.red = append(rs.red[:begin], rs.ph...)
	rs.red = strconv.AppendInt(rs.red, int64(lt.id), 10)
	rs.red = append(rs.red, '"')
	rs.holding = false
	defer func() { rs.holding = true }()
	first := lt.buf
	lt.buf = nil
	sink = rs.sink(lt, start)
	var red *redact.Writer
	if rs.p.Redact != nil && !dataURL(bytesString(first)) {
		// Redacted as it is decoded, before anything sees it, the
		// Writer holding back what a secret split across pieces needs.
		red = redact.NewWriter(funcWriter(sink), rs.p.Redact)
		sink = func(p []byte) { _, _ = red.Write(p) }
	}
	sink(first)
	if err := drain(src, d); err != nil {
		return nil, err
	}
	if red != nil {
		_ = red.Close()
		rs.longRedactions = pin.AddRedactions(rs.longRedactions, red.Counts())
	}
	lt.err = d.Err()
	if lt.spoolW != nil && rs.writeErr == nil {
		rs.writeErr = lt.spoolW.Flush()
	}
	lt.spoolW = nil
	rs.finish(lt)
	return lt, nil
}

// outBuf is the most a long text's decoder buffers before it hands its
// bytes on.
const outBuf = 64 << 10

// drain decodes the rest of the string with d, through its closing quote.
func drain(src *source, d *wire.StringDecoder) error {
	for {
		if src.i == src.n && !src.more() {
			return src.fail("unterminated string")
		}
		if end := d.Write(src.buf[src.i:src.n]); end >= 0 {
			src.consume(end + 1)
			d.Flush()
			return nil
		}
		src.consume(src.n - src.i)
	}
}

// sink returns where the decoded bytes of the long text lt go: its head,
// its lines, its Writer (for a text cut on its own) and the kept file (or,
// while what comes before it there was not read, a spool).
func (rs *respStream) sink(lt *longText, start func() bool) func([]byte) {
	inFile := start == nil || start()
	if rs.form != formBlocks {
		lt.w = cut.NewWriter(rs.p.MaxBytes, rs.p.Spec)
	}
	if inFile {
		rs.feedSep()
		rs.log = append(rs.log, lt)
	} else if rs.keep && rs.writeErr == nil {
		f, err := createSpool()
		if err != nil {
			rs.writeErr = err
		} else {
			lt.spool, lt.spoolW = f, bufio.NewWriterSize(f, srcBuf)
		}
	}
	lt.at = rs.fed
	return func(p []byte) {
		lt.n += len(p)
		if len(lt.buf) < rs.head {
			lt.buf = append(lt.buf, p[:min(len(p), rs.head-len(lt.buf))]...)
		}
		if rs.keep {
			lt.lines += bytes.Count(p, newline)
		}
		if lt.w != nil {
			_, _ = lt.w.Write(p)
		}
		switch {
		case inFile:
			rs.feed(p)
		case lt.spoolW != nil && rs.writeErr == nil:
			if _, err := lt.spoolW.Write(p); err != nil {
				rs.writeErr = err
			}
		}
	}
}

// finish makes the stand-in of lt, once it is read: its head, or one byte
// for a text block that starts far past where any cut of the joined text
// falls (nothing reads its bytes; see content).
func (rs *respStream) finish(lt *longText) {
	if rs.form == formBlocks && lt.at > rs.near {
		b := make([]byte, 1)
		lt.text = bytesString(b)
	} else {
		lt.text = string(lt.buf[:min(len(lt.buf), rs.head)])
		lt.known = lt.text
	}
	lt.buf = nil
	rs.stand[rawKey{unsafe.StringData(lt.text), len(lt.text)}] = lt
}

// capWith caps the output read under in's names with h, as h.Cap caps it
// held whole, and returns what was redacted from it too.
func (rs *respStream) capWith(h *Hook, in Input) (json.RawMessage, chain.Truncation, bool, map[string]int, error) {
	if rs.over {
		return rs.asText(rs.p)
	}
	in.ToolResponse = rs.red
	d := newDecoder()
	d.st = rs
	out, t, changed, err := h.cap(d, in, rs.p)
	if rs.odd != "" || len(rs.longs) > 0 && bytes.Contains(out, rs.ph) || err == nil && !changed && rs.longRedactions != nil {
		// (A long text redacted in an output the cut leaves as it is
		// cannot go on as it came.)
		return rs.asText(rs.p)
	}
	return out, t, changed, pin.AddRedactions(pin.AddRedactions(nil, d.redactions), rs.longRedactions), err
}

// asText cuts the output as the text of its JSON, under p (at most the
// limits it was read under), as Hook.Cap cuts output of the wrong shape,
// and returns what was redacted from that text too: the text is the
// output redacted as it streamed (rawRed), or, held, as Cap redacts it.
// An output redacted is replaced even when it fits. When the tool was
// named again with a detector other than the one the output streamed
// under, the cut text is redacted with it too.
func (rs *respStream) asText(p shape.Policy) (json.RawMessage, chain.Truncation, bool, map[string]int, error) {
	var s string
	var t chain.Truncation
	var changed bool
	var counts map[string]int
	if rs.raw == nil {
		held, c := redactResponse(nil, rs.tool, rs.red, p.Redact)
		counts = pin.AddRedactions(pin.AddRedactions(nil, rs.heldRedactions), c)
		s, t, changed = shape.Text(string(held), p)
	} else {
		p.MaxBytes = min(p.MaxBytes, rs.p.MaxBytes)
		s, t, changed = cutWriter(rs.rawCut(), p)
		if rs.rawRed != nil {
			counts = pin.AddRedactions(nil, rs.rawRed.Counts())
		}
		if p.Redact != nil && !sameDetector(p.Redact, rs.p.Redact) {
			var c map[string]int
			s, c = redact.Text(s, jsonEscaped{p.Redact})
			counts = pin.AddRedactions(counts, c)
		}
	}
	if !changed {
		if counts == nil {
			return nil, chain.Truncation{}, false, nil, nil
		}
		if json.Valid([]byte(s)) {
			return json.RawMessage(s), chain.Truncation{}, true, counts, nil
		}
	}
	enc, err := marshal(s)
	return enc, t, err == nil, counts, err
}

// sameDetector reports whether a and b are the same detector value (the
// tools of a manifest share theirs); false for values that cannot be
// compared.
func sameDetector(a, b redact.Detector) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && (ta == nil || ta.Comparable() && a == b)
}

// close gives up the entry no cut took, and the spools.
func (rs *respStream) close() {
	if rs.entry != nil && !rs.entryTaken {
		_ = rs.entry.Abort()
	}
	for _, lt := range rs.longs {
		closeSpool(lt.spool)
		lt.spool = nil
	}
}

var newline = []byte{'\n'}
