package mcpproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/cut"
	"github.com/toolcap/toolcap/mcpproxy/internal/shape"
	"github.com/toolcap/toolcap/middleware"
)

// session is one relayed session: what the client has asked and the
// server not yet answered.
type session struct {
	p      *Proxy
	client Conn
	server Conn
	cw, sw *frameWriter

	mu     sync.Mutex
	seq    int64
	calls  map[string]*pendingCall // tools/call, by id
	lists  map[string]bool         // tools/list, by id: whether it continues a listing
	others map[string]pending      // every other request, by id
	// The listing in progress, from tools/list pages.
	listing []string
	schemas map[string]json.RawMessage
}

// pending is a request of the client's other than tools/call.
type pending struct {
	seq    int64
	id     []byte
	method string
}

func newSession(p *Proxy, client, server Conn) *session {
	return &session{
		p:      p,
		client: client,
		server: server,
		cw:     newFrameWriter(client, true),
		sw:     newFrameWriter(server, false),
		calls:  map[string]*pendingCall{},
		lists:  map[string]bool{},
		others: map[string]pending{},
	}
}

// frameWriter writes whole messages, one at a time.
type frameWriter struct {
	mu     sync.Mutex
	bw     *bufio.Writer
	client bool
}

func newFrameWriter(w io.Writer, client bool) *frameWriter {
	return &frameWriter{bw: bufio.NewWriterSize(w, 64<<10), client: client}
}

// writeError is a failure to write to one side.
type writeError struct {
	client bool
	err    error
}

func (e *writeError) Error() string {
	side := "server"
	if e.client {
		side = "client"
	}
	return fmt.Sprintf("writing to the %s: %v", side, e.err)
}

func (e *writeError) Unwrap() error { return e.err }

func (w *frameWriter) write(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.bw.Write(msg)
	if err == nil {
		err = w.bw.WriteByte('\n')
	}
	if err == nil {
		err = w.bw.Flush()
	}
	if err != nil {
		return &writeError{client: w.client, err: err}
	}
	return nil
}

// clientLoop forwards the client's messages to the server, noting the
// requests it will have to recognise the answers of.
func (s *session) clientLoop() error {
	r := newReader(s.client, s.p.max, bufferSize)
	for {
		m, err := r.next(nil)
		var stray *strayLine
		if errors.As(err, &stray) {
			s.p.logger.Warn(stray.describe(" from the client"))
			continue
		}
		if err != nil {
			return err
		}
		if m.raw != nil && m.raw[0] == '[' {
			for _, elem := range splitBatch(m.raw) {
				if em, err := envelopeOf(elem, s.p.max); err == nil {
					em.raw = elem
					s.noteRequest(em)
				}
			}
			if err := s.sw.write(m.raw); err != nil {
				return err
			}
			continue
		}
		if m.tooLarge {
			s.p.logger.Warn("a message from the client is over the bound and was not forwarded",
				"method", m.method, "bytes", m.size, "max_message_bytes", s.p.max)
			switch {
			case m.isRequest():
				msg := fmt.Sprintf("toolcap: the request was %d bytes, over the proxy's bound of %d bytes (--max-message); it was not forwarded", m.size, s.p.max)
				if err := s.cw.write(errorResponse(m.id, codeInternal, msg)); err != nil {
					return err
				}
			case m.isResponse():
				// The server waits for an answer to its request: it gets an
				// error in place of the client's.
				msg := fmt.Sprintf("toolcap: the client's response was %d bytes, over the proxy's bound of %d bytes (--max-message); it was dropped", m.size, s.p.max)
				if err := s.sw.write(errorResponse(m.id, codeInternal, msg)); err != nil {
					return err
				}
			}
			continue
		}
		s.noteRequest(m)
		if err := s.sw.write(m.raw); err != nil {
			return err
		}
	}
}

// noteRequest records a request of the client's before it is forwarded.
func (s *session) noteRequest(m *message) {
	if m.isNotification() && m.method == "notifications/cancelled" {
		s.noteCancel(m.raw)
		return
	}
	if !m.isRequest() {
		return
	}
	id := string(m.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	switch m.method {
	case "tools/call":
		var req struct {
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		_ = json.Unmarshal(m.raw, &req)
		gen := s.p.gen.Load()
		c := &pendingCall{
			id:     m.id,
			seq:    s.seq,
			callID: "mcp-" + itoa(s.p.seq.Add(1)),
			tool:   req.Params.Name,
			args:   req.Params.Arguments,
			gen:    gen,
			policy: gen.policies.For(req.Params.Name),
		}
		if c.policy.Spec.Keep == "" && s.p.hasOutputSchema(c.tool) {
			// A tool with an output schema returns structuredContent, and
			// its text block is most often the same value as JSON: cut it
			// as JSON, so that it stays valid as the structured value does
			// (text that is not JSON is cut by the head rule all the same).
			c.policy.Spec.Keep = cut.KeepJSON
			c.jsonText = true
		}
		s.calls[id] = c
		return
	case "tools/list":
		var req struct {
			Params struct {
				Cursor *string `json:"cursor"`
			} `json:"params"`
		}
		_ = json.Unmarshal(m.raw, &req)
		s.lists[id] = req.Params.Cursor != nil
	}
	s.others[id] = pending{seq: s.seq, id: m.id, method: m.method}
}

// noteCancel forgets a request the client cancelled: the server does not
// answer it (MCP says so), so nothing is owed for it. A tools/call stays
// known, without its arguments, so that an answer that comes all the same
// is still capped; it is no longer answered when the server exits.
func (s *session) noteCancel(raw []byte) {
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &n) != nil || len(n.Params.RequestID) == 0 {
		return
	}
	id := string(n.Params.RequestID)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.others, id)
	delete(s.lists, id)
	if c := s.calls[id]; c != nil {
		c.cancelled, c.args = true, nil
	}
}

// reduce is the reader's reduceFunc for the server's messages.
func (s *session) reduce(m *message) ([]*pendingCall, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.id != nil {
		c := s.calls[string(m.id)]
		if c == nil {
			return nil, 0, false
		}
		return []*pendingCall{c}, c.gen.retain, true
	}
	if len(s.calls) == 0 {
		return nil, 0, false
	}
	retain := 0
	calls := make([]*pendingCall, 0, len(s.calls))
	for _, c := range s.calls {
		retain = max(retain, c.gen.retain)
		calls = append(calls, c)
	}
	// A response answers a pending request: when all of them are
	// tools/call, so is this one.
	return calls, retain, len(s.others) == 0
}

// serverLoop forwards the server's messages to the client, capping the
// tools/call results.
func (s *session) serverLoop() error {
	r := newReader(s.server, s.p.max, bufferSize)
	for {
		m, err := r.next(s.reduce)
		var stray *strayLine
		if errors.As(err, &stray) {
			s.p.logger.Warn(stray.describe(" from the server"))
			continue
		}
		if err != nil {
			return err
		}
		if m.raw != nil && m.raw[0] == '[' {
			// A batch: its messages are handled, and forwarded, one by one.
			for _, elem := range splitBatch(m.raw) {
				sub := newReader(bytes.NewReader(append(elem, '\n')), s.p.max, len(elem)+16)
				em, err := sub.next(s.reduce)
				if err != nil {
					continue
				}
				if err := s.fromServer(em); err != nil {
					return err
				}
			}
			continue
		}
		if err := s.fromServer(m); err != nil {
			return err
		}
	}
}

// fromServer handles one message from the server.
func (s *session) fromServer(m *message) error {
	switch {
	case m.isResponse():
		id := string(m.id)
		s.mu.Lock()
		call := s.calls[id]
		delete(s.calls, id)
		cont, isList := s.lists[id]
		delete(s.lists, id)
		delete(s.others, id)
		s.mu.Unlock()
		if call != nil {
			return s.answerCall(call, m)
		}
		if m.tooLarge {
			s.p.logger.Warn("a response from the server is over the bound; the client gets an error instead",
				"bytes", m.size, "max_message_bytes", s.p.max)
			msg := fmt.Sprintf("toolcap: the server's response was %d bytes, over the proxy's bound of %d bytes (--max-message); it was dropped", m.size, s.p.max)
			return s.cw.write(errorResponse(m.id, codeInternal, msg))
		}
		if isList && m.hasResult {
			s.learnTools(m.raw, cont)
		}
	case m.isRequest():
		if m.tooLarge {
			s.p.logger.Warn("a request from the server is over the bound; it is answered with an error",
				"method", m.method, "bytes", m.size, "max_message_bytes", s.p.max)
			msg := fmt.Sprintf("toolcap: the request was %d bytes, over the proxy's bound of %d bytes (--max-message); it was not forwarded", m.size, s.p.max)
			return s.sw.write(errorResponse(m.id, codeInternal, msg))
		}
	default:
		if m.tooLarge {
			s.p.logger.Warn("a message from the server is over the bound and was dropped",
				"method", m.method, "bytes", m.size, "max_message_bytes", s.p.max)
			return nil
		}
	}
	return s.cw.write(m.raw)
}

// learnTools takes the tool names (and output schemas) from a tools/list
// result; a listing that is complete replaces the proxy's list.
func (s *session) learnTools(raw []byte, continued bool) {
	var resp struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		s.p.logger.Debug("could not read the tools of a tools/list result", "error", err)
		return
	}
	s.mu.Lock()
	if !continued {
		s.listing, s.schemas = nil, map[string]json.RawMessage{}
	}
	for _, t := range resp.Result.Tools {
		s.listing = append(s.listing, t.Name)
		if len(t.OutputSchema) > 0 && !bytes.Equal(t.OutputSchema, []byte("null")) {
			s.schemas[t.Name] = t.OutputSchema
		}
	}
	done := resp.Result.NextCursor == ""
	names, schemas := s.listing, s.schemas
	s.mu.Unlock()
	if done {
		s.p.setTools(slices.Clone(names), maps.Clone(schemas))
	}
}

// answerCall caps a tools/call's answer and sends it to the client.
func (s *session) answerCall(call *pendingCall, m *message) error {
	limit := call.gen.worker.Limit(call.tool)
	if m.rpcErr != nil {
		out := m.rpcErr.capError(m.id, limit, m.raw == nil)
		if out == nil {
			return s.cw.write(m.raw)
		}
		s.p.logger.Info("tool error capped", "tool", call.tool, "call_id", call.callID,
			"original_bytes", m.rpcErr.message.total+m.rpcErr.dataLen, "limit", limit)
		return s.cw.write(out)
	}
	if m.result == nil {
		// An answer with neither result nor error: not one a client can
		// read as a result, so it is passed on as it is when it can be.
		if m.raw != nil {
			return s.cw.write(m.raw)
		}
		return s.cw.write(errorResponse(m.id, codeInternal, "toolcap: the server's answer to tools/call had neither a result nor an error"))
	}
	out, err := s.capResult(call, m)
	if err != nil {
		s.p.logger.Warn("could not cap a tool result; the client gets an error instead", "tool", call.tool, "error", err)
		return s.cw.write(errorResponse(m.id, codeInternal, "toolcap: "+err.Error()))
	}
	if out == nil {
		return s.cw.write(m.raw)
	}
	return s.cw.write(out)
}

// capResult runs a result through the chain and shapes it for the client.
// It returns nil when the result goes to the client as the server sent it.
func (s *session) capResult(call *pendingCall, m *message) ([]byte, error) {
	res := m.result
	gen := call.gen
	limit := gen.worker.Limit(call.tool)

	// The chain starts from the result's text. A text the reader kept whole
	// is cut by the chain's byte cap; one it could not keep (larger than any
	// limit) was cut by the same rule from what it kept, here, before any
	// middleware sees it.
	var prep chain.Result
	precut := false
	if res.hasText {
		text, t, cutHere := s.precut(call, res)
		if cutHere {
			prep = prep.WithTruncation(text, t)
			precut = true
			s.p.logger.Info("tool result truncated", "tool", call.tool, "call_id", call.callID,
				"original_bytes", t.OriginalBytes, "kept_bytes", t.KeptBytes,
				"dropped_bytes", t.DroppedBytes, "limit", t.Limit, "strategy", t.Strategy)
		} else {
			prep.Content = &text
		}
	}
	if res.isError {
		prep.Summary = call.tool + " failed"
		prep = prep.AsError()
	}
	ctx := context.WithValue(context.Background(), preparedKey{}, prep)
	r := gen.worker.ExecuteTools(ctx, []chain.Call{{ID: call.callID, Tool: call.tool, Args: call.args}})[0]
	if m.raw != nil && fitsAsSent(res, prep, r, limit) {
		return nil, nil
	}

	// What the server sent, as far as it was kept, for the shaping.
	orig := &mcp.CallToolResult{IsError: res.isError}
	over := res.over
	for _, b := range res.blocks {
		c, err := decodeBlock(b)
		if err != nil {
			over = append(over, shape.Dropped{Kind: "a block", Size: len(b)})
			continue
		}
		orig.Content = append(orig.Content, c)
	}
	tooLarge := res.hasStructured && res.structured == nil
	var structured []byte
	if res.hasStructured && !bytes.Equal(res.structured, []byte("null")) {
		structured = res.structured
	}
	schema := s.p.schema(call.tool)
	sh := shape.Shape(shape.Input{
		Result:             orig,
		Text:               r.Content,
		IsError:            r.IsError(),
		Limit:              limit,
		Schema:             schema,
		Overflow:           over,
		StructuredRaw:      structured,
		StructuredPrecut:   res.structuredPrecut,
		StructuredTooLarge: tooLarge,
	})
	if t, ok := r.Truncation(); ok && t.Strategy == string(cut.KeepJSON) {
		splitJSONMarker(sh.Result)
	}
	if !sh.Changed() && !precut && !res.structuredReduced && r.IsError() == res.isError && m.raw != nil {
		return nil, nil
	}
	if sh.BlocksDropped > 0 || sh.BlocksCut > 0 || sh.StructuredCut || sh.StructuredDropped {
		s.p.logger.Info("tool result blocks capped",
			"tool", call.tool, "call_id", call.callID, "limit", limit,
			"blocks_dropped", sh.BlocksDropped,
			"blocks_cut", sh.BlocksCut,
			"structured_cut", sh.StructuredCut,
			"structured_dropped", sh.StructuredDropped)
	}
	fig := figures(res, orig, sh, limit)
	for _, t := range []func() (chain.Truncation, bool){r.Ceiling, r.Truncation} {
		if tr, ok := t(); ok && tr.Unit == string(cut.UnitTokens) && fig.Tokens == nil {
			fig.Tokens = &tokenMeta{Limit: tr.LimitTokens, Original: tr.OriginalTokens, Kept: tr.KeptTokens, Dropped: tr.DroppedTokens}
		}
	}
	return encodeResult(m.id, res, sh, fig)
}

// precut returns the text the chain starts from, and whether the reader
// cut it already, with its figures.
//
// A text the reader kept whole goes to the chain whole: its byte cap cuts
// it by the tool's strategy. A text too long to keep was cut while it was
// read, by the same strategy (a cut.Writer for each call it might answer),
// or by the head rule from the kept head past maxWriters. A tool with an
// output schema and no strategy of its own has its text cut as JSON (see
// noteRequest), here too when the text was kept whole.
func (s *session) precut(call *pendingCall, res *callResult) (string, chain.Truncation, bool) {
	w := call.gen.worker
	limit, tokens := w.Limit(call.tool), w.TokenLimit(call.tool)
	if res.text.whole() {
		text := string(res.text.head)
		if call.jsonText && len(text) > limit {
			out, st := cut.CutTokens(text, limit, tokens, w.Tokenizer(), call.policy.Spec)
			if st.Changed() {
				return out, middleware.Figures(st, limit, tokens), true
			}
		}
		return text, chain.Truncation{}, false
	}
	var out string
	var t chain.Truncation
	if wr := res.writers[call]; wr != nil {
		var st cut.Stats
		out, st = wr.Result()
		t = middleware.Figures(st, limit, 0)
	} else {
		out, t, _ = res.text.cut(limit)
	}
	if tokens > 0 {
		// Too long to count whole: cut again from what was kept, the one
		// marker counting the bytes the model does not see.
		if again, st := cut.RecutTokens(out, limit, tokens, w.Tokenizer(), call.policy.Spec); again != out {
			out, t = again, middleware.Figures(st, limit, tokens)
		}
	}
	return out, t, true
}

// splitJSONMarker puts the marker that follows a JSON document cut by the
// json strategy in a text block of its own, so that the document's block is
// valid JSON alone.
func splitJSONMarker(res *mcp.CallToolResult) {
	for i, c := range res.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		head, _, ok := cut.SplitMarker(t.Text)
		if !ok || !json.Valid([]byte(head)) {
			continue
		}
		doc := *t
		doc.Text = head
		marker := &mcp.TextContent{Text: strings.TrimPrefix(t.Text[len(head):], "\n")}
		res.Content = slices.Insert(slices.Clone(res.Content), i+1, mcp.Content(marker))
		res.Content[i] = &doc
		return
	}
}

// fitsAsSent reports, without decoding the blocks, that the server's result
// goes to the client as it was sent: the chain left its text alone and
// everything in it is within limit on any measure shape uses (the sizes
// counted here are those of the JSON, at least what shape counts).
func fitsAsSent(res *callResult, prep, r chain.Result, limit int) bool {
	if res.structuredReduced || len(res.over) > 0 || r.IsError() != res.isError {
		return false
	}
	if _, cut := r.Truncation(); cut {
		return false
	}
	if _, cut := r.Ceiling(); cut {
		return false
	}
	if (r.Content == nil) != (prep.Content == nil) || (r.Content != nil && *r.Content != *prep.Content) {
		return false
	}
	text := int(res.text.total) - max(res.texts-1, 0)*len(shape.TextSeparator)
	return text+res.kept <= limit && len(res.structured) <= limit
}

// figures gives the numbers of _meta["toolcap/truncation"]: the server's
// content, measured as shape measures it (text blocks by their text, other
// blocks by what a model may read of them), against what of it the client
// receives; toolcap's markers and notes are not counted as kept.
func figures(res *callResult, orig *mcp.CallToolResult, sh shape.Shaped, limit int) truncationMeta {
	// The joined text counts a separator between blocks, the content does
	// not.
	original := int(res.text.total) - max(res.texts-1, 0)*len(shape.TextSeparator)
	for _, c := range orig.Content {
		if _, ok := c.(*mcp.TextContent); !ok {
			original += shape.ContentSize([]mcp.Content{c})
		}
	}
	for _, d := range res.over {
		original += d.Size
	}
	fromServer := map[mcp.Content]bool{}
	for _, c := range orig.Content {
		fromServer[c] = true
	}
	kept := 0
	for _, c := range sh.Result.Content {
		t, ok := c.(*mcp.TextContent)
		switch {
		case fromServer[c]:
			kept += shape.ContentSize([]mcp.Content{c})
		case !ok:
			kept += shape.ContentSize([]mcp.Content{c}) // a block cut by shape
		default:
			text := t.Text
			if head, _, ok := cut.SplitMarker(text); ok {
				kept += len(head)
			} else if !strings.HasPrefix(text, shape.NotePrefix) && !strings.HasPrefix(text, "[truncated: ") {
				kept += len(text)
			}
		}
	}
	kept = min(kept, original)
	return truncationMeta{Unit: "bytes", Limit: limit, Original: original, Kept: kept, Dropped: original - kept}
}

// decodeBlock decodes one content block with the SDK's own decoding.
func decodeBlock(raw []byte) (mcp.Content, error) {
	var r mcp.CallToolResult
	data := make([]byte, 0, len(raw)+16)
	data = append(data, `{"content":[`...)
	data = append(data, raw...)
	data = append(data, "]}"...)
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if len(r.Content) != 1 {
		return nil, errors.New("not one content block")
	}
	return r.Content[0], nil
}

// encodeResult writes the response carrying the shaped result: the
// server's members in the server's order, content, structuredContent and
// isError as shaped, _meta with the figures added.
func encodeResult(id []byte, res *callResult, sh shape.Shaped, fig truncationMeta) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"result":{`)
	n := 0
	put := func(key string, v []byte) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		writeKey(&b, key)
		b.Write(v)
	}
	content, err := json.Marshal(sh.Result.Content)
	if err != nil {
		return nil, err
	}
	var sawContent, sawError, sawMeta bool
	for _, mem := range res.members {
		switch mem.key {
		case "content":
			sawContent = true
			put(mem.key, content)
		case "structuredContent":
			switch {
			case sh.StructuredDropped:
			case sh.StructuredRaw == nil: // the server's null
				put(mem.key, []byte("null"))
			default:
				put(mem.key, sh.StructuredRaw)
			}
		case "isError":
			sawError = true
			if sh.Result.IsError {
				put(mem.key, []byte("true"))
			} else {
				put(mem.key, []byte("false"))
			}
		case "_meta":
			sawMeta = true
			put(mem.key, withMeta(mem.raw, fig))
		default:
			if mem.raw != nil {
				put(mem.key, mem.raw)
			}
		}
	}
	if !sawContent {
		put("content", content)
	}
	if !sawError && sh.Result.IsError {
		put("isError", []byte("true"))
	}
	if !sawMeta {
		put("_meta", withMeta(nil, fig))
	}
	b.WriteString("}}")
	return b.Bytes(), nil
}

// failPending answers every request the server left unanswered, so that
// each request of the client's gets exactly one answer.
func (s *session) failPending(why error) {
	s.mu.Lock()
	var left []pending
	for _, c := range s.calls {
		if !c.cancelled {
			left = append(left, pending{seq: c.seq, id: c.id, method: "tools/call"})
		}
	}
	left = append(left, slices.Collect(maps.Values(s.others))...)
	clear(s.calls)
	clear(s.others)
	clear(s.lists)
	s.mu.Unlock()
	slices.SortFunc(left, func(a, b pending) int { return int(a.seq - b.seq) })
	what := "the MCP server exited before answering"
	if why != nil {
		what += " (" + strings.TrimPrefix(why.Error(), ErrServerExited.Error()+": ") + ")"
	}
	for _, p := range left {
		if err := s.cw.write(errorResponse(p.id, codeInternal, "toolcap: "+what)); err != nil {
			return
		}
	}
}

// codeInternal is JSON-RPC's "internal error", the code of the errors the
// proxy answers with itself.
const codeInternal = -32603

// errorResponse is a JSON-RPC error answering id.
func errorResponse(id []byte, code int, msg string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"error":{"code":`)
	b.WriteString(itoa(int64(code)))
	b.WriteString(`,"message":`)
	writeString(&b, []byte(msg))
	b.WriteString("}}")
	return b.Bytes()
}

// splitBatch returns the messages of a JSON-RPC batch.
func splitBatch(raw []byte) [][]byte {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil
	}
	out := make([][]byte, len(elems))
	for i, e := range elems {
		out[i] = e
	}
	return out
}

// envelopeOf reads the envelope of one message held in memory.
func envelopeOf(raw []byte, max int) (*message, error) {
	r := newReader(bytes.NewReader(append(slices.Clone(raw), '\n')), max, len(raw)+16)
	return r.next(nil)
}
