package mcpproxy

import (
	"fmt"
	"time"
)

// armTimeout starts the timer of [Options.CallTimeout] for the request of
// the client's just noted with id and seq; it requires s.mu. Without a
// timeout it does nothing.
func (s *session) armTimeout(id []byte, seq int64) {
	d := s.p.opts.CallTimeout
	if d <= 0 {
		return
	}
	time.AfterFunc(d, func() { s.expire(id, seq, d) })
}

// expire answers the request id, noted as seq, with a JSON-RPC error when
// the server has not answered it yet, and tells the server it is
// cancelled. Whichever takes the request out of the pending tables first,
// the server's answer or this, answers it: a response of the server's that
// comes later, or whose result was still being read, is dropped as one to
// no pending request, so the client gets exactly one answer.
func (s *session) expire(id []byte, seq int64, d time.Duration) {
	key := string(id)
	s.mu.Lock()
	method := ""
	if c := s.calls[key]; c != nil && c.seq == seq && !c.cancelled {
		method = "tools/call"
		delete(s.calls, key)
	} else if o, ok := s.others[key]; ok && o.seq == seq {
		method = o.method
		delete(s.others, key)
		delete(s.lists, key)
	}
	s.mu.Unlock()
	if method == "" {
		return // answered, cancelled, or the session ended
	}
	s.p.logger.Warn("the server did not answer a request within the call timeout; the client gets an error and the server a cancellation",
		"method", method, "id", truncID(id), "timeout", d)
	msg := fmt.Sprintf("toolcap: the MCP server did not answer %s within %s (--call-timeout); the request was cancelled", method, d)
	// A failed write is the session ending, which answers nothing more.
	_ = s.cw.write(errorResponse(id, codeInternal, msg))
	cancel := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"toolcap: no answer within %s"}}`, id, d)
	_ = s.sw.write(cancel)
}
