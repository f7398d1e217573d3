package mcpproxy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/settings"
)

// This file is the proxy's side of keeping the rest (package rest): the
// read tool it adds to the server's tools/list and answers itself.

// answerRead answers m when it is a tools/call of the read tool: the page
// the keeper reads, under the session's scope, held to the read tool's
// policy and passed through the chain like any result, as a tools/call
// result (isError with the error's text for a read that fails). It is
// never forwarded: the server does not know the tool, and a ref must not
// leave the proxy. It reports false, and does nothing, for any other
// message; the error is the client's write failing.
//
// The read runs off the client's loop, which goes on forwarding what the
// client sends (a ping, a cancellation) while it runs: a read with a
// pattern searches up to the whole entry, and a costly pattern took
// minutes there, the session deaf meanwhile (issue 39, item 2). Its
// context ends at the call timeout (--call-timeout), when the client
// cancels it (notifications/cancelled, cancelRead: then nothing answers
// it, as MCP asks), and when the session ends. At most maxReads run at
// once in a session; a read past them is answered with an error at once.
func (s *session) answerRead(gen *generation, m *message) (bool, error) {
	if gen.keeper == nil || !m.isRequest() || m.method != "tools/call" || m.raw == nil {
		return false, nil
	}
	params := m.toolCall()
	if params.err != nil || params.Name != gen.keeper.Tool() {
		return false, nil
	}
	name := params.Name
	call := chain.Call{ID: "mcp-" + itoa(s.p.seq.Add(1)), Tool: name, Args: params.Arguments}
	// What the read needs of m, taken now: the reader reuses m's bytes
	// once the loop reads on.
	id := bytes.Clone(m.id)
	span := s.startSpan(m)
	scoped := rest.WithScope(span.context(context.Background()), s.scopeOf(m.id))
	complete := stateless(requestVersion(m.raw))
	key := idKey(m.id)
	s.mu.Lock()
	client := cmp.Or(params.clientName(), s.clientName)
	run, busy := (*runningRead)(nil), len(s.reads) >= maxReads
	ctx := scoped
	if !busy {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(scoped)
		stop := func() {}
		if d := s.p.opts.CallTimeout; d > 0 {
			ctx, stop = context.WithTimeoutCause(ctx, d, &readTimeout{d})
		}
		run = &runningRead{cancel: func(err error) { cancel(err); stop() }}
		s.reads[key] = run
	}
	s.mu.Unlock()
	pols, handler := gen.forClient(client)
	policy := pols.For(name)
	answer := func(page string, err error) error {
		var prep chain.Result
		if err != nil {
			prep = chain.ErrorResult(name+" failed", err.Error())
		} else {
			prep.Content = &page
		}
		r := handler.Answer(scoped, call, prep)
		span.traceRead(policy.MaxBytes, r)
		err = s.writeRead(id, call, r, complete, span.logIDs()...)
		span.finish("")
		return err
	}
	if busy {
		return true, answer("", fmt.Errorf("%s: %d reads are running in this session already; wait for one to finish", name, maxReads))
	}
	go func() {
		defer func() {
			s.mu.Lock()
			if s.reads[key] == run {
				delete(s.reads, key)
			}
			s.mu.Unlock()
			run.cancel(errReadDone)
		}()
		page, err := gen.keeper.Read(ctx, params.Arguments, policy)
		if ctx.Err() != nil {
			var timeout *readTimeout
			switch cause := context.Cause(ctx); {
			case errors.Is(cause, errReadCancelled):
				s.p.logger.Debug("a read of the rest was cancelled by its client and stopped", "tool", name, "call_id", call.ID)
				span.finish("cancelled")
				return // MCP: a cancelled request is not answered
			case errors.Is(cause, errSessionEnded):
				span.finish("session_ended")
				return
			case errors.As(cause, &timeout):
				s.p.logger.Warn("a read of the rest did not finish within the call timeout and was stopped", "tool", name, "call_id", call.ID, "timeout", timeout.d)
				page, err = "", fmt.Errorf("%s: the read did not finish within %s (--call-timeout) and was stopped: its pattern costs too much over this output; use a simpler pattern, or read pages without one", name, timeout.d)
				span.setError("timeout")
			}
		}
		// A failed write is the session ending, which answers nothing more.
		_ = answer(page, err)
	}()
	return true, nil
}

// maxReads bounds the reads of the rest that run at once in a session.
const maxReads = 8

// runningRead is a read of the rest running in a session (answerRead).
type runningRead struct {
	cancel context.CancelCauseFunc
}

// The causes that end a read's context, but its call timeout's
// (readTimeout).
var (
	errReadCancelled = errors.New("the client cancelled the read")
	errSessionEnded  = errors.New("the session ended")
	errReadDone      = errors.New("the read is answered")
)

// readTimeout is the cause of a read's context that ended at the call
// timeout, d.
type readTimeout struct{ d time.Duration }

func (e *readTimeout) Error() string { return fmt.Sprintf("no answer within %s (--call-timeout)", e.d) }

// cancelRead stops the read that m, a notifications/cancelled of the
// client's, names, and reports whether it named one: the server never saw
// that request, so the notification is not forwarded.
func (s *session) cancelRead(m *message) bool {
	if !m.isNotification() || m.method != "notifications/cancelled" || m.raw == nil {
		return false
	}
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(m.raw, &n) != nil || len(n.Params.RequestID) == 0 {
		return false
	}
	key := idKey(n.Params.RequestID)
	s.mu.Lock()
	run := s.reads[key]
	delete(s.reads, key)
	s.mu.Unlock()
	if run == nil {
		return false
	}
	run.cancel(errReadCancelled)
	return true
}

// stopReads stops every read of the session, which has ended; it requires
// s.mu.
func (s *session) stopReads() {
	for key, run := range s.reads {
		run.cancel(errSessionEnded)
		delete(s.reads, key)
	}
}

// writeRead writes the answer r of the read call, whose request's id is
// id, as a tools/call result ("resultType":"complete" with complete).
func (s *session) writeRead(id []byte, call chain.Call, r chain.Result, complete bool, ids ...any) error {
	text := ""
	if r.Content != nil {
		text = *r.Content
	}
	s.p.logger.Debug("answered a read of the rest", append([]any{"tool", call.Tool, "call_id", call.ID, "bytes", len(text), "is_error", r.IsError()}, ids...)...)

	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"result":{"content":[{"type":"text","text":`)
	writeString(&b, []byte(text))
	b.WriteString(`}]`)
	if r.IsError() {
		b.WriteString(`,"isError":true`)
	}
	if complete {
		// Every result of the stateless revision says what it is
		// (SEP-2322): a page is complete.
		b.WriteString(`,"resultType":"complete"`)
	}
	if t := chainCut(r); t.OriginalBytes > 0 {
		// A user middleware grew the page past the limit, and the
		// ceiling cut it: the figures, as on any cut result.
		fig := truncationMeta{Unit: "bytes", Limit: t.Limit, Original: t.OriginalBytes, Kept: t.KeptBytes, Dropped: t.DroppedBytes}
		if t.Ref != "" {
			resume := t.Resume
			fig.Ref, fig.Resume = t.Ref, &resume
		}
		b.WriteString(`,"_meta":`)
		b.Write(withMeta(nil, fig))
	}
	b.WriteString("}}")
	return s.cw.write(b.Bytes())
}

// withReadTool returns the last page of a tools/list result with the read
// tool appended to its tools, when the proxy keeps the rest; raw itself
// otherwise, or when it has no tools array. A server tool of the same name
// is left out of the list (the proxy answers every call of that name), and
// a warning, once per session, says so and how to rename the read tool.
// The server's tools are passed on byte for byte.
func (s *session) withReadTool(raw []byte) []byte {
	gen := s.p.gen.Load()
	if gen.keeper == nil {
		return raw
	}
	def := gen.keeper.Definition()
	start, end, ok := toolsSpan(raw)
	if !ok {
		s.p.logger.Debug("a tools/list result has no tools array; the read tool is not added to it")
		return raw
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(raw[start:end], &tools); err != nil {
		return raw
	}
	var b bytes.Buffer
	b.Grow(len(raw) + 1024)
	b.Write(raw[:start])
	b.WriteByte('[')
	shadowed := false
	for _, t := range tools {
		var named struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(t, &named) == nil && named.Name == def.Name {
			shadowed = true
			continue
		}
		b.Write(t)
		b.WriteByte(',')
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Name        string          `json:"name"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Annotations json.RawMessage `json:"annotations"`
	}{def.Name, def.Title, def.Description, def.InputSchema, def.Annotations})
	b.Truncate(b.Len() - 1) // Encode's newline: a message holds none
	b.WriteByte(']')
	b.Write(raw[end:])
	if shadowed {
		s.mu.Lock()
		warn := !s.shadowWarned
		s.shadowWarned = true
		s.mu.Unlock()
		if warn {
			s.p.logger.Warn("the server has a tool named as toolcap's read tool; toolcap's read tool shadows it, and the server's is not listed or called. "+
				"Rename the read tool with [worker.tool_output.rest] tool = \"NAME\" (or "+settings.EnvRestTool+"=NAME)",
				"tool", def.Name)
		}
	}
	return b.Bytes()
}

// toolsSpan returns where the value of result.tools lies in raw, a
// JSON-RPC response, when it is an array.
func toolsSpan(raw []byte) (start, end int, ok bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	if !openObject(d) {
		return 0, 0, false
	}
	for d.More() {
		key, err := d.Token()
		if err != nil {
			return 0, 0, false
		}
		if key != "result" {
			var skip json.RawMessage
			if d.Decode(&skip) != nil {
				return 0, 0, false
			}
			continue
		}
		if !openObject(d) {
			return 0, 0, false
		}
		for d.More() {
			key, err := d.Token()
			if err != nil {
				return 0, 0, false
			}
			var v json.RawMessage
			if d.Decode(&v) != nil {
				return 0, 0, false
			}
			if key == "tools" {
				if len(v) == 0 || v[0] != '[' {
					return 0, 0, false
				}
				// Decode leaves the offset right after the value, and v
				// holds it without the spaces before it.
				end := int(d.InputOffset())
				return end - len(v), end, true
			}
		}
		return 0, 0, false
	}
	return 0, 0, false
}

// openObject reads the '{' that opens an object.
func openObject(d *json.Decoder) bool {
	t, err := d.Token()
	return err == nil && t == json.Delim('{')
}

// joinBatch writes elems as a JSON-RPC batch.
func joinBatch(elems [][]byte) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteByte(']')
	return b.Bytes()
}
