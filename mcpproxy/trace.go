package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// A Span is one request of a client's, as [Options.Trace] sees it: what
// the proxy knows of it when it reads it, the trace context the server is
// to get with it, and, when Trace's end function is called, how it ended.
// The proxy never puts content in it: tool names, ids and figures only.
type Span struct {
	// Method is the request's JSON-RPC method, such as "tools/call".
	Method string
	// Tool is the name a tools/call names; "" for other methods.
	Tool string
	// Listed reports that Tool is one of the server's tools, as its last
	// complete tools/list gave them, or the read tool the proxy lists
	// beside them: a set of names the server bounds, where Tool is
	// whatever the client sent.
	Listed bool
	// RequestID is the request's JSON-RPC id as it came (1, "a"); on the
	// server connection a stateless request shares, the id it goes to the
	// server under.
	RequestID string
	// SessionID is the Mcp-Session-Id of the client's streamable HTTP
	// session; "" over stdio and for a request of the stateless revision.
	SessionID string
	// ProtocolVersion is the MCP revision of the request: its own
	// (_meta's io.modelcontextprotocol/protocolVersion), else the one its
	// session's initialize was answered with; "" before that is known.
	ProtocolVersion string
	// TraceParent, TraceState and Baggage are the W3C trace context the
	// request carries in its params._meta (traceparent, tracestate and
	// baggage, as MCP documents), or, for what its _meta lacks, in the
	// headers of the HTTP POST that carried it; "" when it carries none.
	//
	// Trace may set TraceParent and TraceState to its span's own context:
	// the request then goes to the server with them in its params._meta,
	// in place of the client's (members added when it had none), so that
	// the server's spans are children of the proxy's. Left as they came,
	// the request goes as it came. Once Trace set TraceParent, the proxy's
	// log lines about the request carry its trace_id and span_id.
	TraceParent, TraceState, Baggage string

	// What the proxy sets before it calls the end function.

	// ErrorType is "" for a request that was answered with a result, and
	// otherwise says why not: the JSON-RPC error's code ("-32602"),
	// "tool_error" for a tools/call result with isError, "timeout" (no
	// answer within [Options.CallTimeout]), "cancelled" (the client
	// cancelled it), "server_exited" (the server ended first),
	// "invalid_response" (the server's answer could not be forwarded) or
	// "session_ended" (the client's side ended first).
	ErrorType string
	// Content holds the figures of a tools/call result's content (its
	// blocks together, as _meta["toolcap/truncation"] gives them when it
	// is cut): Limit, OriginalBytes, and KeptBytes and DroppedBytes, equal
	// to OriginalBytes and 0 for a result within its limit; the token
	// figures when a token limit cut it; Ref and Resume when its rest was
	// kept. Nil when the request was no tools/call, or was not answered
	// with a result.
	Content *chain.Truncation
	// Structured holds the figures of the cut of a result's
	// structuredContent, nil when it was not cut.
	Structured *chain.Truncation
	// Redactions counts what was redacted from the answer, by rule; nil
	// when nothing was.
	Redactions map[string]int
	// Read reports that the proxy answered the request itself: a page of
	// a rest it kept, read with its read tool (Tool), never forwarded.
	Read bool
}

// traced is a request's span, while the request is pending.
type traced struct {
	span Span
	// content holds what span.Content points to, so that the figures
	// take no allocation of their own.
	content chain.Truncation
	ctx     context.Context
	end     func()
	once    sync.Once
	// ids are the trace_id and span_id fields of the log lines about the
	// request; nil when the hook left its trace context as it came.
	ids []any
}

// finish ends the span, once, with errorType ("" for a result).
func (t *traced) finish(errorType string) {
	if t == nil {
		return
	}
	t.once.Do(func() {
		if t.span.ErrorType == "" {
			t.span.ErrorType = errorType
		}
		t.end()
	})
}

// context returns the context the chain's middleware get for the request:
// the hook's, or ctx when it is not traced.
func (t *traced) context(ctx context.Context) context.Context {
	if t == nil || t.ctx == nil {
		return ctx
	}
	return t.ctx
}

// logIDs returns the trace_id and span_id fields of the log lines about
// the request, or nil.
func (t *traced) logIDs() []any {
	if t == nil {
		return nil
	}
	return t.ids
}

// logger returns l with the request's trace_id and span_id when it
// has them and a line is to be logged (need), l otherwise.
func (t *traced) logger(l hclog.Logger, need bool) hclog.Logger {
	if !need || t == nil || t.ids == nil {
		return l
	}
	return l.With(t.ids...)
}

// startSpan calls the trace hook for a request of the client's, m, and
// puts the trace context the hook gives in m.raw, which is then what is
// forwarded. It returns nil when nothing traces.
func (s *session) startSpan(m *message) *traced {
	hook := s.p.opts.Trace
	if hook == nil || !m.isRequest() || m.raw == nil {
		return nil
	}
	t := &traced{}
	sp := &t.span
	sp.Method = m.method
	sp.RequestID = string(m.id)
	if hs, ok := s.client.(*httpSession); ok {
		sp.SessionID = hs.id
	}
	if m.method == "tools/call" {
		sp.Tool = m.toolCall().Name
		sp.Listed = s.p.listed(sp.Tool)
	}
	// A request without _meta has no trace context to read: it is walked
	// only if the hook gives it one.
	var meta metaScan
	if bytes.Contains(m.raw, []byte(`"_meta"`)) {
		meta = scanMeta(m.raw)
	}
	sp.TraceParent, sp.TraceState, sp.Baggage = meta.value(metaTraceParent), meta.value(metaTraceState), meta.value(metaBaggage)
	sp.ProtocolVersion = meta.value(metaProtocolVersion)
	if sp.ProtocolVersion == "" {
		s.mu.Lock()
		sp.ProtocolVersion = s.protocolVersion
		s.mu.Unlock()
	}
	parent, state := sp.TraceParent, sp.TraceState
	t.ctx, t.end = hook(context.Background(), sp)
	if t.end == nil {
		t.end = func() {}
	}
	if sp.TraceParent != parent || sp.TraceState != state {
		if !meta.ok {
			meta = scanMeta(m.raw)
		}
		if out := meta.withTrace(m.raw, sp.TraceParent, sp.TraceState); out != nil {
			m.raw = out
		}
		if tid, sid, ok := traceIDs(sp.TraceParent); ok {
			t.ids = []any{"trace_id", tid, "span_id", sid}
		}
	}
	return t
}

// listed reports whether tool is one of the server's listed tools or the
// read tool.
func (p *Proxy) listed(tool string) bool {
	if k := p.gen.Load().keeper; k != nil && k.Tool() == tool {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Contains(p.tools, tool)
}

// endSpan ends the span of a request other than tools/call that the
// server answered with m.
func (s *session) endSpan(t *traced, m *message) {
	if t == nil {
		return
	}
	if m.hasError {
		t.finish(errorCode(m.raw))
		return
	}
	if t.span.Method == "initialize" && m.raw != nil {
		// The revision the session speaks: the server's answer to the
		// client's initialize.
		var res struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal(m.raw, &res) == nil && res.Result.ProtocolVersion != "" {
			s.mu.Lock()
			s.protocolVersion = res.Result.ProtocolVersion
			s.mu.Unlock()
		}
	}
	t.finish("")
}

// errorCode returns the code of a JSON-RPC error response as error.type
// wants it ("-32601"), or "jsonrpc_error" when it has none that reads.
func errorCode(raw []byte) string {
	var e struct {
		Error struct {
			Code *json.Number `json:"code"`
		} `json:"error"`
	}
	if raw == nil || json.Unmarshal(raw, &e) != nil || e.Error.Code == nil {
		return "jsonrpc_error"
	}
	return e.Error.Code.String()
}

// callErrorCode returns the code of a JSON-RPC error answering a
// tools/call, as read.
func callErrorCode(e *callError) string {
	for _, m := range e.members {
		if m.key == "code" && m.raw != nil && isNumber(m.raw) {
			return string(m.raw)
		}
	}
	return "jsonrpc_error"
}

// endAll ends the spans of the requests still pending when a session
// ends; it requires s.mu.
func (s *session) endAllLocked(errorType string) {
	for _, c := range s.calls {
		c.span.finish(errorType)
	}
	for _, o := range s.others {
		o.span.finish(errorType)
	}
}

// setContent records the figures of the result's content.
func (t *traced) setContent(fig chain.Truncation) {
	t.content = fig
	t.span.Content = &t.content
}

// traceIDs returns the trace id and the span id of a W3C traceparent
// ("00-<trace-id>-<span-id>-<flags>").
func traceIDs(parent string) (traceID, spanID string, ok bool) {
	if len(parent) < 55 || parent[2] != '-' || parent[35] != '-' || parent[52] != '-' {
		return "", "", false
	}
	return parent[3:35], parent[36:52], true
}

// The _meta keys of the W3C trace context (MCP's params._meta, SEP-414).
const (
	metaTraceParent = "traceparent"
	metaTraceState  = "tracestate"
	metaBaggage     = "baggage"
)

// metaScan is what scanMeta found of a request's params._meta: where its
// objects open, and the values of the members the tracing reads.
type metaScan struct {
	ok     bool // the message is an object that reads
	top    int  // the offset of the message's opening brace
	params int  // the offset of params' opening brace; -1: no params, -2: not an object
	meta   int  // the offset of _meta's opening brace; -1: none, -2: not an object
	// paramsEmpty and metaEmpty: those objects have no member.
	paramsEmpty, metaEmpty bool
	found                  [4]metaMember
}

// metaMember is one member of _meta: where its value lies (quotes
// included) and its text.
type metaMember struct {
	from, to int
	text     string
	ok       bool
}

// metaKeys are the members of _meta scanMeta reads, by index in found.
var metaKeys = [...]string{metaTraceParent, metaTraceState, metaBaggage, metaProtocolVersion}

// value returns the text of the member key of _meta, "" when absent.
func (ms *metaScan) value(key string) string {
	for i, k := range metaKeys {
		if k == key {
			return ms.found[i].text
		}
	}
	return ""
}

// scanMeta reads the members of msg's params._meta that the tracing uses,
// without decoding the rest: it walks the message's top-level object and
// skips every value but params and _meta.
func scanMeta(msg []byte) metaScan {
	ms := metaScan{params: -1, meta: -1}
	w := walker{b: msg}
	if w.peek() != '{' {
		return ms
	}
	ms.top = w.i
	ms.ok = w.members(nil, func(key []byte) bool {
		if string(key) != "params" {
			return w.skip()
		}
		if w.peek() != '{' {
			ms.params = -2
			return w.skip()
		}
		ms.params = w.i
		return w.members(&ms.paramsEmpty, func(key []byte) bool {
			if string(key) != "_meta" {
				return w.skip()
			}
			if w.peek() != '{' {
				ms.meta = -2
				return w.skip()
			}
			ms.meta = w.i
			return w.members(&ms.metaEmpty, func(key []byte) bool {
				i := slices.Index(metaKeys[:], string(key))
				if i < 0 || ms.found[i].ok || w.peek() != '"' {
					return w.skip()
				}
				from := w.i
				if !w.str() {
					return false
				}
				raw := w.b[from+1 : w.i-1]
				text := string(raw)
				if slices.Contains(raw, '\\') {
					var decoded string
					if json.Unmarshal(w.b[from:w.i], &decoded) != nil {
						return false
					}
					text = decoded
				}
				ms.found[i] = metaMember{from: from, to: w.i, text: text, ok: true}
				return true
			})
		})
	})
	return ms
}

// withTrace returns msg, which scan read, with traceparent and tracestate
// in its params._meta: in place of the values there, or added (a
// tracestate of "" is not added); nil when msg cannot take them (params
// or _meta not an object).
func (ms *metaScan) withTrace(msg []byte, parent, state string) []byte {
	if !ms.ok || ms.params == -2 || ms.meta == -2 {
		return nil
	}
	type edit struct {
		at, n int
		with  []byte
	}
	var edits []edit
	var add []byte // members to add to _meta, each followed by a comma
	for _, kv := range [...]struct {
		i     int
		value string
	}{{0, parent}, {1, state}} {
		f := ms.found[kv.i]
		switch {
		case f.ok && f.text != kv.value:
			edits = append(edits, edit{f.from, f.to - f.from, appendQuoted(nil, kv.value)})
		case !f.ok && kv.value != "":
			add = appendQuoted(add, metaKeys[kv.i])
			add = append(add, ':')
			add = appendQuoted(add, kv.value)
			add = append(add, ',')
		}
	}
	if len(add) > 0 {
		members := add[:len(add)-1] // without the last comma
		switch {
		case ms.meta >= 0:
			if !ms.metaEmpty {
				members = add
			}
			edits = append(edits, edit{ms.meta + 1, 0, members})
		case ms.params >= 0:
			with := append(append([]byte(`"_meta":{`), members...), '}')
			if !ms.paramsEmpty {
				with = append(with, ',')
			}
			edits = append(edits, edit{ms.params + 1, 0, with})
		default:
			with := append(append([]byte(`"params":{"_meta":{`), members...), "}},"...)
			edits = append(edits, edit{ms.top + 1, 0, with})
		}
	}
	if len(edits) == 0 {
		return nil
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.at - b.at })
	size := len(msg)
	for _, e := range edits {
		size += len(e.with) - e.n
	}
	out := make([]byte, 0, size)
	at := 0
	for _, e := range edits {
		out = append(out, msg[at:e.at]...)
		out = append(out, e.with...)
		at = e.at + e.n
	}
	return append(out, msg[at:]...)
}

// walker reads a JSON text held whole, for the few members the tracing
// looks for; every other value is skipped, not decoded. Each method
// reports false for a text that does not read.
type walker struct {
	b []byte
	i int
}

func (w *walker) space() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// peek returns the next byte that is not a space, 0 at the end.
func (w *walker) peek() byte {
	w.space()
	if w.i >= len(w.b) {
		return 0
	}
	return w.b[w.i]
}

// members reads an object, calling member after each key with the
// walker at its value, which member reads or skips; empty, when not nil,
// is set when the object has no member.
func (w *walker) members(empty *bool, member func(key []byte) bool) bool {
	if w.peek() != '{' {
		return false
	}
	w.i++
	if w.peek() == '}' {
		w.i++
		if empty != nil {
			*empty = true
		}
		return true
	}
	for {
		if w.peek() != '"' {
			return false
		}
		from := w.i
		if !w.str() {
			return false
		}
		key := w.b[from+1 : w.i-1]
		if slices.Contains(key, '\\') {
			var k string
			if json.Unmarshal(w.b[from:w.i], &k) != nil {
				return false
			}
			key = []byte(k)
		}
		if w.peek() != ':' {
			return false
		}
		w.i++
		if !member(key) {
			return false
		}
		switch w.peek() {
		case ',':
			w.i++
		case '}':
			w.i++
			return true
		default:
			return false
		}
	}
}

// str reads past a string, its opening quote at w.i.
func (w *walker) str() bool {
	for j := w.i + 1; j < len(w.b); j++ {
		switch w.b[j] {
		case '\\':
			j++
		case '"':
			w.i = j + 1
			return true
		}
	}
	return false
}

// skip reads past one value.
func (w *walker) skip() bool {
	switch w.peek() {
	case '"':
		return w.str()
	case '{', '[':
		depth := 0
		for w.i < len(w.b) {
			switch w.b[w.i] {
			case '"':
				if !w.str() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					w.i++
					return true
				}
			}
			w.i++
		}
		return false
	case 0:
		return false
	}
	// A number or a literal: up to the next delimiter.
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return true
		}
		w.i++
	}
	return true
}

// traceFits records in the call's span a result that goes to the client
// as the server sent it: its text within the call's limit.
func (c *pendingCall) traceFits(res *callResult) {
	if c.span == nil {
		return
	}
	size := int(res.text.total) - max(res.texts-1, 0)*len(shape.TextSeparator) + res.kept
	c.span.setContent(chain.Truncation{Limit: c.policy.MaxBytes, OriginalBytes: size, KeptBytes: size})
	if res.isError {
		c.span.span.ErrorType = "tool_error"
	}
}

// traceResult records in the call's span the figures of a result the
// proxy wrote out: its content's (fig, with the read of the rest and the
// token figures of r, the chain's result), its structuredContent's when
// structCut, what was redacted, and whether it is an error.
func (c *pendingCall) traceResult(fig chain.Truncation, r chain.Result, structFig chain.Truncation, structCut bool, redacted map[string]int, isError bool) {
	if c.span == nil {
		return
	}
	sp := &c.span.span
	if fig.Limit == 0 {
		fig.Limit = c.policy.MaxBytes
	}
	if t := chainCut(r); t.Ref != "" && fig.Ref == "" {
		fig.Ref, fig.Resume = t.Ref, t.Resume
	}
	for _, t := range [...]func() (chain.Truncation, bool){r.Ceiling, r.Truncation} {
		if tr, ok := t(); ok && tr.Unit == string(cut.UnitTokens) {
			fig.Unit, fig.LimitTokens, fig.OriginalTokens, fig.KeptTokens, fig.DroppedTokens = tr.Unit, tr.LimitTokens, tr.OriginalTokens, tr.KeptTokens, tr.DroppedTokens
			break
		}
	}
	c.span.setContent(fig)
	if structCut {
		sp.Structured = &structFig
	}
	sp.Redactions = redacted
	if isError {
		sp.ErrorType = "tool_error"
	}
}

// traceError records in the call's span the JSON-RPC error that answers
// it.
func (c *pendingCall) traceError(e *callError) {
	if c.span == nil {
		return
	}
	c.span.span.ErrorType = callErrorCode(e)
	c.span.span.Redactions = e.redactions
}

// traceRead records in a span the page of a read of the rest the proxy
// answered: its figures (the page within limit, or the ceiling's cut of
// it) and whether it failed.
func (t *traced) traceRead(limit int, r chain.Result) {
	if t == nil {
		return
	}
	t.span.Read = true
	size := 0
	if r.Content != nil {
		size = len(*r.Content)
	}
	fig := chain.Truncation{Limit: limit, OriginalBytes: size, KeptBytes: size}
	if c := chainCut(r); c.OriginalBytes > 0 {
		fig = c
	}
	t.setContent(fig)
	if r.IsError() && t.span.ErrorType == "" {
		t.span.ErrorType = "tool_error"
	}
}

// setError records why the request failed, before it is answered.
func (t *traced) setError(errorType string) {
	if t != nil {
		t.span.ErrorType = errorType
	}
}

// appendQuoted appends s to b as a JSON string. The values the tracing
// writes (W3C headers, ASCII without quotes or controls) take the fast
// path; anything else is escaped as encoding/json escapes it.
func appendQuoted(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
