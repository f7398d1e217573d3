package mcpproxy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/wire"
)

// session is one relayed session: what the client has asked and the
// server not yet answered.
type session struct {
	p      *Proxy
	client Conn
	server Conn
	cw, sw *frameWriter
	// scope binds the refs of the rest kept for this session's results:
	// a read from another session cannot name them (package rest).
	scope string
	// clientName is the name the client gave in initialize's clientInfo,
	// whose limit holds every result of the session (see
	// generation.forClient); a request's own _meta clientInfo (the
	// stateless revision's) comes first. Guarded by mu.
	clientName string

	mu     sync.Mutex
	seq    int64
	calls  map[string]*pendingCall // tools/call, by id
	lists  map[string]bool         // tools/list, by id: whether it continues a listing
	others map[string]pending      // every other request, by id
	// timers are the call timeouts of the requests above, by id (see
	// armTimeout).
	timers map[string]*time.Timer
	// reads are the reads of the rest running, by id (answerRead).
	reads map[string]*runningRead
	// The listing in progress, from tools/list pages.
	listing []string
	schemas map[string]json.RawMessage
	// shadowWarned: the server's tool of the read tool's name was warned
	// about, once per session.
	shadowWarned bool
	// protocolVersion is the revision the server answered initialize
	// with, for Options.Trace (see endSpan).
	protocolVersion string
}

// pending is a request of the client's other than tools/call.
type pending struct {
	seq    int64
	id     []byte
	method string
	span   *traced // nil unless Options.Trace is set
}

func newSession(p *Proxy, client, server Conn, scope string) *session {
	return &session{
		p:      p,
		client: client,
		server: server,
		scope:  scope,
		cw:     &frameWriter{conn: client, client: true},
		sw:     &frameWriter{conn: server},
		calls:  map[string]*pendingCall{},
		lists:  map[string]bool{},
		others: map[string]pending{},
		timers: map[string]*time.Timer{},
		reads:  map[string]*runningRead{},
	}
}

// frameWriter hands one side the proxy's messages, whole and one at a
// time: both loops write to each side (an error answering a message that
// was not forwarded goes back the way it came).
type frameWriter struct {
	mu     sync.Mutex
	conn   Conn
	client bool
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

// write sends one message, which holds no newline.
func (w *frameWriter) write(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.conn.WriteMessage(msg); err != nil {
		return &writeError{client: w.client, err: err}
	}
	return nil
}

// writeAsSent sends m as it came: its bytes, or its parts one after the
// other.
func (w *frameWriter) writeAsSent(m *message) error {
	if m.parts == nil {
		return w.write(m.raw)
	}
	if oc, ok := w.conn.(ownedConn); ok {
		// The parts are the reader's copy of this message alone, in
		// chunks it allocated for it (wire.Scanner starts new ones for
		// the next message, and never writes these again): handed over
		// to a Conn that holds messages, rather than copied for it
		// (TestHTTPRelaysResultsHeldInParts guards this).
		w.mu.Lock()
		defer w.mu.Unlock()
		if err := oc.writeOwned(m.parts); err != nil {
			return &writeError{client: w.client, err: err}
		}
		return nil
	}
	size := 0
	for _, p := range m.parts {
		size += len(p)
	}
	return w.writeFunc(size, func(b jsonWriter) {
		for _, p := range m.parts {
			b.Write(p)
		}
	})
}

// writeFunc sends one message that write makes, which holds no newline:
// written out as it is made to a Conn that takes a message in pieces (a
// stream's), so that a capped result of many megabytes is never held
// encoded; made whole first, in a buffer of size bytes to start with, for
// any other.
func (w *frameWriter) writeFunc(size int, write func(jsonWriter)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	if pc, ok := w.conn.(piecesConn); ok {
		err = pc.writeMessageFunc(write)
	} else {
		var b bytes.Buffer
		b.Grow(size) // the message's size, when the caller knows it
		write(&b)
		err = w.conn.WriteMessage(b.Bytes())
	}
	if err != nil {
		return &writeError{client: w.client, err: err}
	}
	return nil
}

// clientLoop forwards the client's messages to the server, noting the
// requests it will have to recognise the answers of.
func (s *session) clientLoop() error {
	r := newSessionReader(s.client, s.p.max)
	defer r.release()
	for {
		m, err := r.next(nil)
		var stray *strayLine
		if errors.As(err, &stray) {
			s.p.logger.Warn(stray.describe(" from the client"))
			if m := stray.msg; m != nil && m.isRequest() {
				// Its id came before the error: the client waits for an
				// answer, and gets JSON-RPC's parse error.
				msg := fmt.Sprintf("toolcap: the request is not valid JSON (%v); it was not forwarded", stray.err)
				if err := s.cw.write(errorResponse(m.id, codeParseError, msg)); err != nil {
					return err
				}
			}
			continue
		}
		if err != nil {
			return err
		}
		if m.tooDeep {
			if err := s.refuseDeepFromClient(m); err != nil {
				return err
			}
			continue
		}
		if m.raw != nil && m.raw[0] == '[' {
			elems := splitBatch(m.raw)
			if len(elems) == 0 {
				// JSON-RPC 2.0: an empty batch is an invalid request,
				// answered with one error whose id is null; the server
				// never sees it.
				s.p.logger.Warn("an empty batch from the client is an invalid request; it was answered with an error and not forwarded")
				if err := s.cw.write(errorResponse([]byte("null"), codeInvalidRequest, "toolcap: an empty batch is an invalid request (JSON-RPC 2.0); it was not forwarded")); err != nil {
					return err
				}
				continue
			}
			gen := s.p.gen.Load()
			forward := elems[:0:0]
			for _, elem := range elems {
				if em, err := envelopeOf(elem, s.p.max); err == nil {
					em.raw = elem
					if s.cancelRead(em) {
						continue // a read's: the server never saw it
					}
					// A read of the rest is answered here, never forwarded.
					if answered, err := s.answerRead(gen, em); answered || err != nil {
						if err != nil {
							return err
						}
						continue
					}
					s.noteRequest(em)
					elem = em.raw // with the trace context Options.Trace gave it
				}
				forward = append(forward, elem)
			}
			switch {
			case len(forward) == 0:
				continue
			case len(forward) < len(elems):
				m.raw = joinBatch(forward)
			}
			if err := s.sw.write(m.raw); err != nil {
				return err
			}
			continue
		}
		if m.tooLarge {
			s.p.logger.Warn("a message from the client is over the bound and was not forwarded",
				"method", m.method, "bytes", m.size, "max_message_bytes", s.p.max)
			if m.idBytes > 0 {
				// Not even its id was held: it cannot be answered.
				s.p.logger.Warn("the message's id is longer than the bound, so it cannot be answered",
					"method", m.method, "id_bytes", m.idBytes, "max_message_bytes", s.p.max)
			}
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
		if answered, err := s.answerRead(s.p.gen.Load(), m); answered || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		if s.cancelRead(m) {
			continue // a read's: the server never saw it
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
	span := s.startSpan(m)
	id := idKey(m.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	if m.method != "subscriptions/listen" {
		// A listen is answered when it ends, which is the client's to
		// decide, as the GET stream it replaces had no bound either.
		s.armTimeout(m.id, s.seq)
	}
	switch m.method {
	case "initialize":
		if _, lane := s.client.(scopedConn); lane {
			// A lane carries many clients' requests: one client's
			// initialize names no other's (each names itself in _meta).
			break
		}
		if m.raw != nil {
			var req struct {
				Params struct {
					ClientInfo struct {
						Name string `json:"name"`
					} `json:"clientInfo"`
				} `json:"params"`
			}
			if json.Unmarshal(m.raw, &req) == nil {
				s.clientName = req.Params.ClientInfo.Name
			}
		}
	case "tools/call":
		// What decoded, as it decoded: a call whose params are not
		// what MCP says is still the server's to answer.
		params := m.toolCall()
		gen := s.p.gen.Load()
		pols, handler := gen.forClient(cmp.Or(params.clientName(), s.clientName))
		c := &pendingCall{
			id:      m.id,
			seq:     s.seq,
			callID:  "mcp-" + itoa(s.p.seq.Add(1)),
			tool:    params.Name,
			args:    params.Arguments,
			gen:     gen,
			handler: handler,
			policy:  pols.For(params.Name),
			scope:   s.scopeOf(m.id),
			span:    span,
		}
		if c.policy.Spec.Keep == "" && s.p.hasOutputSchema(c.tool) {
			// A tool with an output schema returns structuredContent, and
			// its text block is most often the same value as JSON: cut it
			// as JSON, so that it stays valid as the structured value does
			// (text that is not JSON is cut by the head rule all the same).
			c.policy.Spec.Keep = cut.KeepJSON
			c.jsonText = true
		}
		if gen.keeper != nil && c.policy.KeepRest {
			c.keeper, c.ctx = gen.keeper, rest.WithScope(context.Background(), c.scope)
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
	s.others[id] = pending{seq: s.seq, id: m.id, method: m.method, span: span}
}

// scopeOf returns the scope the refs of the request with id are bound to:
// the session's, or, on a client Conn that carries many clients' requests
// (a stateless lane), that request's own.
func (s *session) scopeOf(id []byte) string {
	if sc, ok := s.client.(scopedConn); ok {
		if scope, ok := sc.requestScope(id); ok {
			return scope
		}
	}
	return s.scope
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
	id := idKey(n.Params.RequestID)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.disarm(id)
	if o, ok := s.others[id]; ok {
		o.span.finish("cancelled")
	}
	delete(s.others, id)
	delete(s.lists, id)
	if c := s.calls[id]; c != nil {
		c.cancelled, c.args = true, nil
		c.span.finish("cancelled")
	}
}

// reduce is the reader's reduceFunc for the server's messages.
func (s *session) reduce(m *message) ([]*pendingCall, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.id != nil {
		c := s.calls[idKey(m.id)]
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
	r := newSessionReader(s.server, s.p.max)
	defer r.release()
	for {
		m, err := r.next(s.reduce)
		var stray *strayLine
		if errors.As(err, &stray) {
			s.p.logger.Warn(stray.describe(" from the server"))
			if m := stray.msg; m != nil && !m.hasMethod && m.id != nil && (m.hasResult || m.hasError) {
				// A response whose id came before the error: the request
				// it answers gets an error in its place.
				why := fmt.Sprintf("the server's response was not valid JSON (%v)", stray.err)
				if err := s.answerInPlace(m, why); err != nil {
					return err
				}
			}
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
	if m.result != nil {
		// The rest a result's streams kept for calls it did not answer
		// (or for a cut not made) is discarded once it is sent.
		defer m.result.abort()
	}
	if m.extraIDs != nil && !m.hasMethod {
		return s.dropDuplicateIDs(m)
	}
	if m.tooDeep {
		return s.refuseDeepFromServer(m)
	}
	switch {
	case m.isResponse():
		id := idKey(m.id)
		s.mu.Lock()
		call := s.calls[id]
		delete(s.calls, id)
		cont, isList := s.lists[id]
		delete(s.lists, id)
		o, other := s.others[id]
		delete(s.others, id)
		s.disarm(id)
		s.mu.Unlock()
		if call != nil {
			return s.answerCall(call, m)
		}
		if o.span != nil {
			// Ended once the answer is written (or in its place, below).
			defer s.endSpan(o.span, m)
		}
		if !other {
			// No request of the client's waits for it: an answer to an id
			// the client never sent, or a second answer to one already
			// answered (or cancelled). The client did not ask for it, and
			// forwarding it would let it past the cap.
			s.p.logger.Warn("dropped a response from the server to no pending request (an unknown id, or one already answered or cancelled)",
				"id", truncID(m.id), "bytes", m.size)
			return nil
		}
		if m.tooLarge {
			s.p.logger.Warn("a response from the server is over the bound; the client gets an error instead",
				"bytes", m.size, "max_message_bytes", s.p.max)
			msg := fmt.Sprintf("toolcap: the server's response was %d bytes, over the proxy's bound of %d bytes (--max-message); it was dropped", m.size, s.p.max)
			o.span.finish("invalid_response")
			return s.cw.write(errorResponse(m.id, codeInternal, msg))
		}
		if isList && m.hasResult {
			if s.learnTools(m.raw, cont) {
				return s.cw.write(s.withReadTool(m.raw))
			}
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

// dropDuplicateIDs drops a response with more than one "id" member: which
// request it answers is ambiguous (decoders disagree on which member wins),
// so it is invalid. Each pending request one of its ids names is answered
// with an error instead, so that it still gets exactly one answer.
func (s *session) dropDuplicateIDs(m *message) error {
	ids := m.extraIDs
	if m.id != nil {
		ids = append([][]byte{m.id}, ids...)
	}
	var owed [][]byte
	s.mu.Lock()
	for _, raw := range ids {
		id := idKey(raw)
		if c := s.calls[id]; c != nil {
			if !c.cancelled {
				owed = append(owed, raw)
			}
			c.span.finish("invalid_response")
		} else if o, ok := s.others[id]; ok {
			owed = append(owed, raw)
			o.span.finish("invalid_response")
		}
		delete(s.calls, id)
		delete(s.lists, id)
		delete(s.others, id)
		s.disarm(id)
	}
	s.mu.Unlock()
	shown := make([]string, len(ids))
	for i, id := range ids {
		shown[i] = truncID(id)
	}
	s.p.logger.Warn("dropped an invalid response from the server: it has more than one \"id\" member",
		"ids", shown, "bytes", m.size, "answered_with_error", len(owed))
	for _, id := range owed {
		msg := fmt.Sprintf("toolcap: the server's response (%d bytes) had more than one \"id\" member, so which request it answers is ambiguous; it was dropped", m.size)
		if err := s.cw.write(errorResponse(id, codeInternal, msg)); err != nil {
			return err
		}
	}
	return nil
}

// deepWhy names the nesting bound, in the errors that answer a message
// over it.
var deepWhy = fmt.Sprintf("nested deeper than %d levels, the proxy's bound (that of Go's encoding/json)", wire.MaxDepth)

// refuseDeepFromClient answers a message of the client's nested deeper
// than the scanner follows, which is not forwarded: a request gets an
// invalid-request error for its id, a response to the server's request is
// replaced by an error to the server, anything else is dropped.
func (s *session) refuseDeepFromClient(m *message) error {
	s.p.logger.Warn("a message from the client is nested deeper than the bound and was not forwarded",
		"method", m.method, "bytes", m.size, "max_depth", wire.MaxDepth)
	switch {
	case m.batch:
		// Its elements are not known: JSON-RPC's answer to a batch that
		// cannot be read is one error whose id is null.
		return s.cw.write(errorResponse([]byte("null"), codeInvalidRequest, "toolcap: the batch is "+deepWhy+"; it was not forwarded"))
	case m.isRequest():
		return s.cw.write(errorResponse(m.id, codeInvalidRequest, "toolcap: the request is "+deepWhy+"; it was not forwarded"))
	case m.isResponse():
		return s.sw.write(errorResponse(m.id, codeInternal, "toolcap: the client's response was "+deepWhy+"; it was dropped"))
	}
	return nil
}

// refuseDeepFromServer answers a message of the server's nested deeper
// than the scanner follows, which is not forwarded: the request of the
// client's that a response answers gets an error in its place (a
// tools/call result too: it was not read, so it cannot be capped), a
// request of the server's gets an invalid-request error, anything else is
// dropped.
func (s *session) refuseDeepFromServer(m *message) error {
	switch {
	case m.isResponse():
		return s.answerInPlace(m, "the server's response was "+deepWhy)
	case m.isRequest():
		s.p.logger.Warn("a request from the server is nested deeper than the bound; it is answered with an error",
			"method", m.method, "bytes", m.size, "max_depth", wire.MaxDepth)
		return s.sw.write(errorResponse(m.id, codeInvalidRequest, "toolcap: the request is "+deepWhy+"; it was not forwarded"))
	}
	s.p.logger.Warn("a message from the server is nested deeper than the bound and was dropped",
		"method", m.method, "bytes", m.size, "max_depth", wire.MaxDepth)
	return nil
}

// answerInPlace answers the pending request a response from the server
// names, which cannot be forwarded for why, with an error: the request still
// gets exactly one answer. A response to no pending request is dropped.
func (s *session) answerInPlace(m *message, why string) error {
	id := idKey(m.id)
	s.mu.Lock()
	call := s.calls[id]
	delete(s.calls, id)
	delete(s.lists, id)
	o, other := s.others[id]
	delete(s.others, id)
	s.disarm(id)
	s.mu.Unlock()
	if call != nil {
		call.span.finish("invalid_response")
	}
	o.span.finish("invalid_response")
	if (call == nil || call.cancelled) && !other {
		// Nothing waits for it: the client cancelled the call (and is owed
		// no answer), or never sent the id.
		s.p.logger.Warn("dropped a response from the server to no pending request (an unknown id, or one already answered or cancelled): "+why,
			"id", truncID(m.id), "bytes", m.size)
		return nil
	}
	args := []any{"id", truncID(m.id), "bytes", m.size}
	if call != nil {
		args = append(args, "tool", call.tool, "call_id", call.callID)
	}
	s.p.logger.Warn(why+"; the client gets an error instead", args...)
	return s.cw.write(errorResponse(m.id, codeInternal, "toolcap: "+why+"; it was dropped"))
}

// truncID is an id as logged: at most its first 64 bytes.
func truncID(id []byte) string {
	const most = 64
	if len(id) > most {
		return string(id[:most]) + "..."
	}
	return string(id)
}

// failPending answers every request the server left unanswered, so that
// each request of the client's gets exactly one answer.
func (s *session) failPending(why error) {
	s.mu.Lock()
	var left []pending
	for _, c := range s.calls {
		if !c.cancelled {
			left = append(left, pending{seq: c.seq, id: c.id, method: "tools/call", span: c.span})
		}
	}
	left = append(left, slices.Collect(maps.Values(s.others))...)
	clear(s.calls)
	clear(s.others)
	clear(s.lists)
	s.disarmAll()
	s.mu.Unlock()
	slices.SortFunc(left, func(a, b pending) int { return int(a.seq - b.seq) })
	what := "the MCP server exited before answering"
	if why != nil {
		what += " (" + strings.TrimPrefix(why.Error(), ErrServerExited.Error()+": ") + ")"
	}
	for _, p := range left {
		err := s.cw.write(errorResponse(p.id, codeInternal, "toolcap: "+what))
		p.span.finish("server_exited")
		if err != nil {
			return
		}
	}
}

// codeInvalidRequest is JSON-RPC's code for a message that is not a valid
// request, such as an empty batch or one nested past the proxy's bound.
const codeInvalidRequest = -32600

// codeParseError is JSON-RPC's code for a message that is not valid JSON.
const codeParseError = -32700

// splitBatch returns the messages of a JSON-RPC batch: none for an empty
// batch, or for one that is not valid JSON.
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

// idKey is the key by which a JSON-RPC id (or a progress token) is
// matched, its raw JSON given: ids match by value, not by their bytes, so
// that a server answering id 1 as 1.0 or 1e0 answers it (JSON has one
// number type; a peer that decodes it into a float writes it back as it
// likes), and a string never matches a number ("1" is not 1). A number's
// key is its exact decimal value (no float rounding: 9007199254740993 is
// not 9007199254740992); a string's is its decoded text after a quote; any
// other JSON is its bytes.
func idKey(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	switch c := raw[0]; {
	case c == '"':
		if bytes.IndexByte(raw, '\\') < 0 && len(raw) >= 2 && raw[len(raw)-1] == '"' {
			return string(raw[:len(raw)-1])
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return string(raw)
		}
		return `"` + s
	case c == '-' || (c >= '0' && c <= '9'):
		if k, ok := numberKey(raw); ok {
			return k
		}
	}
	return string(raw)
}

// numberKey returns the canonical form of the JSON number raw: an
// integer as its decimal digits (without a sign for zero), any other value
// as its significant digits and a power of ten ("15e-1" for 1.5 and
// 0.15e1). It reports false for what is not a JSON number.
func numberKey(raw []byte) (string, bool) {
	i := 0
	neg := raw[0] == '-'
	if neg {
		i++
	}
	intStart := i
	for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
		i++
	}
	intDigits := raw[intStart:i]
	if len(intDigits) == 0 || (len(intDigits) > 1 && intDigits[0] == '0') {
		return "", false
	}
	if i == len(raw) && len(intDigits) <= 20 && (intDigits[0] != '0' || !neg) {
		// The usual id, an integer as written, is already canonical: no
		// allocation but the key's.
		return string(raw), true
	}
	var frac []byte
	if i < len(raw) && raw[i] == '.' {
		i++
		start := i
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
		if i == start {
			return "", false
		}
		frac = raw[start:i]
	}
	exp := 0
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		eneg := false
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			eneg = raw[i] == '-'
			i++
		}
		start := i
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			// Clamped: ids whose exponents differ only past a billion
			// are taken as equal, which no peer writes.
			exp = min(exp*10+int(raw[i]-'0'), 1e9)
			i++
		}
		if i == start {
			return "", false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(raw) {
		return "", false
	}
	digits := append(append([]byte(nil), intDigits...), frac...)
	exp -= len(frac)
	digits = bytes.TrimLeft(digits, "0")
	if len(digits) == 0 {
		return "0", true
	}
	for digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	var b []byte
	if neg {
		b = append(b, '-')
	}
	b = append(b, digits...)
	switch {
	case exp >= 0 && exp <= 64:
		// An integer: written out, as one written without a fraction is.
		for range exp {
			b = append(b, '0')
		}
	default:
		b = append(b, 'e')
		b = strconv.AppendInt(b, int64(exp), 10)
	}
	return string(b), true
}
