package shape

import (
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
)

// Messages of the log line a cut gets, by what it did.
const (
	MsgTruncated = "tool result truncated"
	MsgCompacted = "tool result compacted"
)

// Message returns the log message of a cut: [MsgCompacted] for a JSON
// document that was only compacted, [MsgTruncated] otherwise.
func Message(t chain.Truncation) string {
	if t.Compacted && t.DroppedBytes == 0 {
		return MsgCompacted
	}
	return MsgTruncated
}

// LogFields returns the fields of the one log line every front end writes
// for a cut, in one order: tool, call_id, original_bytes, kept_bytes,
// dropped_bytes and limit, then strategy (unless head), limit_tokens (with
// a token limit), unit and the token figures (when the marker counts
// tokens), batch (for a share of a batch budget), and ref and resume
// (when the rest was kept, package rest). An empty callID is
// left out: some front ends never see one.
func LogFields(tool, callID string, t chain.Truncation) []any {
	f := make([]any, 0, 24)
	f = append(f, "tool", tool)
	if callID != "" {
		f = append(f, "call_id", callID)
	}
	f = append(f,
		"original_bytes", t.OriginalBytes,
		"kept_bytes", t.KeptBytes,
		"dropped_bytes", t.DroppedBytes,
		"limit", t.Limit,
	)
	if t.Strategy != "" {
		f = append(f, "strategy", t.Strategy)
	}
	if t.LimitTokens > 0 {
		f = append(f, "limit_tokens", t.LimitTokens)
	}
	if t.Unit != "" {
		f = append(f, "unit", t.Unit,
			"original_tokens", t.OriginalTokens, "kept_tokens", t.KeptTokens, "dropped_tokens", t.DroppedTokens)
	}
	if t.Batch {
		f = append(f, "batch", true)
	}
	if t.Ref != "" {
		f = append(f, "ref", t.Ref, "resume", t.Resume)
	}
	return f
}

// Log writes the log line of a cut at info level: [Message](t) with
// [LogFields]. A nil logger, or one whose level leaves info out, costs a
// level check and builds no fields.
func Log(l hclog.Logger, tool, callID string, t chain.Truncation) {
	if l == nil || !l.IsInfo() {
		return
	}
	l.Info(Message(t), LogFields(tool, callID, t)...)
}
