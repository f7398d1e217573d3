package mcpproxy

import (
	"bytes"
	"net/http"
)

// The trace context of requests over streamable HTTP: a client's POST may
// carry it in the W3C headers rather than in the message's _meta, and a
// server reached over HTTP gets it in both.

// withHeaderTrace returns body, one JSON-RPC message a client POSTed, with
// the trace context of the POST's headers (traceparent, tracestate,
// baggage) in its params._meta, for what _meta does not name itself: the
// relay reads a request's trace context from _meta alone. It returns body
// when the headers carry none, or when it cannot take them.
func withHeaderTrace(body []byte, h http.Header) []byte {
	parent := h.Get(metaTraceParent)
	if parent == "" || len(body) == 0 || body[0] != '{' {
		return body
	}
	ms := scanMeta(body)
	if !ms.ok || ms.found[0].ok {
		// The message's own trace context comes first.
		return body
	}
	// withTrace adds what _meta lacks: traceparent and tracestate here,
	// baggage (which the proxy reads, never changes) on its own.
	out := ms.withTrace(body, parent, h.Get(metaTraceState))
	if out == nil {
		return body
	}
	if b := h.Get(metaBaggage); b != "" && !ms.found[2].ok {
		ms2 := scanMeta(out)
		if more := ms2.withMember(out, metaBaggage, b); more != nil {
			out = more
		}
	}
	return out
}

// withMember returns msg, which scan read, with the string member key
// added to its params._meta, which has a member already; nil when it
// cannot be read.
func (ms *metaScan) withMember(msg []byte, key, value string) []byte {
	if !ms.ok || ms.meta < 0 {
		return nil
	}
	add := appendQuoted(nil, key)
	add = append(add, ':')
	add = appendQuoted(add, value)
	if !ms.metaEmpty {
		add = append(add, ',')
	}
	out := make([]byte, 0, len(msg)+len(add))
	out = append(out, msg[:ms.meta+1]...)
	out = append(out, add...)
	return append(out, msg[ms.meta+1:]...)
}

// setTraceHeaders sets the W3C trace headers of a POST to a server from
// the params._meta of msg, the message it carries, so that a server that
// reads them from HTTP, as most instrumented HTTP servers do, gets the
// same trace context as one that reads _meta.
func setTraceHeaders(h http.Header, msg []byte) {
	if !bytes.Contains(msg, []byte(`"`+metaTraceParent+`"`)) {
		return // most messages: not read at all
	}
	ms := scanMeta(msg)
	if !ms.found[0].ok {
		return
	}
	h.Set(metaTraceParent, ms.found[0].text)
	for i, key := range [...]string{1: metaTraceState, 2: metaBaggage} {
		if i > 0 && ms.found[i].ok && ms.found[i].text != "" {
			h.Set(key, ms.found[i].text)
		}
	}
}
