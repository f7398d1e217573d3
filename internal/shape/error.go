package shape

import (
	"bytes"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
)

// ErrorMessage fits a JSON-RPC error's message and data within p.MaxBytes
// bytes together: a model reads an error's message as it reads a result.
// It returns the message and data to send, the figures (in bytes of
// message and data) and whether anything changed; an error within the
// limit is returned as it is.
//
// When they do not fit, data of at most a quarter of the limit is kept and
// the message is cut to the rest by [Text] (p's strategy and, when p holds
// tokens, its token limit less the data's tokens); larger data is dropped
// (nil) and the message is cut to the whole limit. The code and the other
// members of the error are the caller's to keep.
func ErrorMessage(msg string, data []byte, p Policy) (string, []byte, chain.Truncation, bool) {
	// The message is measured as the client decodes it.
	msg, replaced := p.decoded(msg)
	total := len(msg) + len(data)
	if p.Fits(total) || (total <= p.MaxBytes && p.count(msg)+p.count(string(data)) <= p.MaxTokens) {
		if replaced > 0 {
			return msg, data, errorFigures(chain.Truncation{KeptBytes: len(msg)}, p, total, len(data)), true
		}
		return msg, data, chain.Truncation{}, false
	}
	q, data := errorRoom(p, data, len(data))
	out, t, changed := Text(msg, q)
	if !changed {
		t = chain.Truncation{OriginalBytes: len(msg), KeptBytes: len(msg)}
	}
	return out, data, errorFigures(t, p, total, len(data)), true
}

// ErrorMessageHead is [ErrorMessage] for an error read in part, as a proxy
// reads one of any size: head holds the first bytes of a message of total
// bytes (all of it, or at least p.MaxBytes+4 bytes of a longer one: enough
// for a cut), data the error's data, or nil when it was not kept, and
// dataLen the data's size as sent. A reader keeps at least p.MaxBytes bytes
// of each, so what it did not keep is over the limit. A message held whole
// is cut as ErrorMessage cuts it; a longer one by the head rule (the rest
// of it is gone), then by p's token limit when p holds one.
func ErrorMessageHead(head []byte, total int, data []byte, dataLen int, p Policy) (string, []byte, chain.Truncation, bool) {
	total = max(total, 0)
	if len(head) >= total && len(data) == dataLen {
		return ErrorMessage(string(head[:total]), data, p)
	}
	q, data := errorRoom(p, data, dataLen)
	var msg string
	var t chain.Truncation
	if len(head) >= total {
		var changed bool
		msg, t, changed = Text(string(head[:total]), q)
		if !changed {
			t = chain.Truncation{OriginalBytes: total, KeptBytes: total}
		}
	} else {
		out, dropped := cut.HeadBytes(bytes.Clone(head), total, q.MaxBytes)
		msg = string(out)
		t = chain.Truncation{OriginalBytes: total, KeptBytes: total - dropped, DroppedBytes: dropped}
		if again, t2, ok := Recut(msg, q); ok {
			msg, t = again, t2
		}
	}
	return msg, data, errorFigures(t, p, total+dataLen, len(data)), true
}

// errorRoom returns the policy the message of an error over p is cut by,
// and the data kept beside it: data of at most a quarter of the limit
// (dataLen bytes as sent; nil data was not kept) takes its room from the
// message, larger data is dropped.
func errorRoom(p Policy, data []byte, dataLen int) (Policy, []byte) {
	q := p
	if data == nil || dataLen != len(data) || len(data) > p.MaxBytes/4 {
		return q, nil
	}
	q.MaxBytes -= len(data)
	if q.HoldsTokens() {
		q.MaxTokens = max(q.MaxTokens-p.count(string(data)), 0)
		if q.MaxTokens == 0 {
			// The data alone takes the token limit: it goes.
			return p, nil
		}
	}
	return q, data
}

// errorFigures are the figures of an error's cut: t, the message's, made
// into those of message and data together (total bytes, keptData of the
// data kept) under p.
func errorFigures(t chain.Truncation, p Policy, total, keptData int) chain.Truncation {
	t.Limit, t.LimitTokens = p.MaxBytes, p.tokens()
	t.KeptBytes += keptData
	t.OriginalBytes = total
	t.DroppedBytes = total - t.KeptBytes
	return t
}
