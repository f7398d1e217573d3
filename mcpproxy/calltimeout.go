package mcpproxy

import (
	"fmt"
	"time"
)

// armTimeout starts the timer of [Options.CallTimeout] for the request of
// the client's just noted with id and seq; it requires s.mu. Without a
// timeout it does nothing. The timer is kept until the request is
// answered, cancelled or failed (see disarm): a timer left running would
// hold the session and the id for the whole timeout after the answer.
func (s *session) armTimeout(id []byte, seq int64) {
	key := idKey(id)
	// A request that reuses the id of one still pending replaces its
	// record, so its timer goes with it.
	s.disarm(key)
	d := s.p.opts.CallTimeout
	if d <= 0 {
		return
	}
	s.timers[key] = time.AfterFunc(d, func() { s.expire(id, seq, d) })
}

// disarm stops the call timeout of the request id, which is answered,
// cancelled or forgotten; it requires s.mu.
func (s *session) disarm(id string) {
	if t := s.timers[id]; t != nil {
		t.Stop()
		delete(s.timers, id)
	}
}

// disarmAll stops every call timeout of the session, which has ended or
// answered everything pending; it requires s.mu.
func (s *session) disarmAll() {
	for _, t := range s.timers {
		t.Stop()
	}
	clear(s.timers)
}

// stopTimers is disarmAll for a session that ended, taking s.mu; the
// reads of the rest still running stop too.
func (s *session) stopTimers() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.disarmAll()
	s.stopReads()
	// And the spans of the requests left unanswered (Options.Trace).
	s.endAllLocked("session_ended")
}

// expire answers the request id, noted as seq, with a JSON-RPC error when
// the server has not answered it yet, and tells the server it is
// cancelled (unless it is initialize, which MCP says is never cancelled). Whichever takes the request out of the pending tables first,
// the server's answer or this, answers it: a response of the server's that
// comes later, or whose result was still being read, is dropped as one to
// no pending request, so the client gets exactly one answer.
func (s *session) expire(id []byte, seq int64, d time.Duration) {
	key := idKey(id)
	s.mu.Lock()
	method := ""
	var span *traced
	if c := s.calls[key]; c != nil && c.seq == seq && !c.cancelled {
		method, span = "tools/call", c.span
		delete(s.calls, key)
		delete(s.timers, key) // this timer, which has fired
	} else if o, ok := s.others[key]; ok && o.seq == seq {
		method, span = o.method, o.span
		delete(s.others, key)
		delete(s.lists, key)
		delete(s.timers, key)
	}
	s.mu.Unlock()
	if method == "" {
		return // answered, cancelled, or the session ended
	}
	s.p.logger.Warn("the server did not answer a request within the call timeout; the client gets an error and the server a cancellation",
		append([]any{"method", method, "id", truncID(id), "timeout", d}, span.logIDs()...)...)
	msg := fmt.Sprintf("toolcap: the MCP server did not answer %s within %s (--call-timeout); the request was cancelled", method, d)
	// A failed write is the session ending, which answers nothing more.
	_ = s.cw.write(errorResponse(id, codeInternal, msg))
	span.finish("timeout")
	if method == "initialize" {
		// MCP forbids cancelling initialize: the server is left to answer
		// it, and that late answer is dropped like any other.
		return
	}
	cancel := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"toolcap: no answer within %s"}}`, id, d)
	_ = s.sw.write(cancel)
}
