package otel

import (
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolcap/toolcap/chain"
)

// The attributes of OpenTelemetry's semantic conventions for MCP and
// generative AI that toolcap's spans carry.
const (
	attrMethod          = "mcp.method.name"
	attrSessionID       = "mcp.session.id"
	attrProtocolVersion = "mcp.protocol.version"
	attrRequestID       = "jsonrpc.request.id"
	attrJSONRPCVersion  = "jsonrpc.protocol.version"
	attrStatusCode      = "rpc.response.status_code"
	attrOperation       = "gen_ai.operation.name"
	attrToolName        = "gen_ai.tool.name"
	attrToolCallID      = "gen_ai.tool.call.id"
	attrErrorType       = "error.type"

	operationExecuteTool = "execute_tool"
)

// The attributes of a cut: the figures toolcap's marker and
// _meta["toolcap/truncation"] give, never content.
const (
	attrCutUnit           = "toolcap.cut.unit"     // "bytes" or "tokens": the unit that cut
	attrCutLimit          = "toolcap.cut.limit"    // the limit, in bytes
	attrCutOriginal       = "toolcap.cut.original" // bytes before the cut
	attrCutKept           = "toolcap.cut.kept"     // bytes kept, marker excluded
	attrCutDropped        = "toolcap.cut.dropped"  // bytes dropped: the marker's N in bytes
	attrCutStrategy       = "toolcap.cut.strategy" // head_tail or json; absent for head
	attrCutBatch          = "toolcap.cut.batch"    // the limit was a share of a batch budget
	attrCutRef            = "toolcap.cut.ref"      // the kept rest's ref
	attrCutResume         = "toolcap.cut.resume"   // where the read of the rest starts
	attrCutLimitTokens    = "toolcap.cut.limit_tokens"
	attrCutOriginalTokens = "toolcap.cut.original_tokens"
	attrCutKeptTokens     = "toolcap.cut.kept_tokens"
	attrCutDroppedTokens  = "toolcap.cut.dropped_tokens"
	// structuredContent's cut, in the relay.
	attrStructuredLimit    = "toolcap.structured.limit"
	attrStructuredOriginal = "toolcap.structured.original"
	attrStructuredKept     = "toolcap.structured.kept"
	attrStructuredDropped  = "toolcap.structured.dropped"
	// A result within its limit: its size and the limit.
	attrSize  = "toolcap.result.bytes"
	attrLimit = "toolcap.result.limit"
	// What was redacted: the rules that found secrets, and how many each
	// found, in the same order, and their total.
	attrRedactionRules  = "toolcap.redaction.rules"
	attrRedactionCounts = "toolcap.redaction.counts"
	attrRedactionCount  = "toolcap.redaction.count"
	// A read of the rest the relay answered itself.
	attrRead = "toolcap.read"
)

// setCut sets the attributes of a cut made with figures t on span.
func setCut(span trace.Span, t chain.Truncation) {
	unit := "bytes"
	if t.Unit == "tokens" {
		unit = "tokens"
	}
	kvs := make([]attribute.KeyValue, 0, 13)
	kvs = append(kvs,
		attribute.String(attrCutUnit, unit),
		attribute.Int(attrCutLimit, t.Limit),
		attribute.Int(attrCutOriginal, t.OriginalBytes),
		attribute.Int(attrCutKept, t.KeptBytes),
		attribute.Int(attrCutDropped, t.DroppedBytes),
	)
	if t.Strategy != "" {
		kvs = append(kvs, attribute.String(attrCutStrategy, t.Strategy))
	}
	if t.Batch {
		kvs = append(kvs, attribute.Bool(attrCutBatch, true))
	}
	if t.Ref != "" {
		kvs = append(kvs, attribute.String(attrCutRef, t.Ref), attribute.Int(attrCutResume, t.Resume))
	}
	if t.LimitTokens > 0 {
		kvs = append(kvs, attribute.Int(attrCutLimitTokens, t.LimitTokens))
	}
	if unit == "tokens" {
		kvs = append(kvs, attribute.Int(attrCutOriginalTokens, t.OriginalTokens),
			attribute.Int(attrCutKeptTokens, t.KeptTokens), attribute.Int(attrCutDroppedTokens, t.DroppedTokens))
	}
	span.SetAttributes(kvs...)
}

// cut reports whether t records a change to the content.
func cut(t chain.Truncation) bool { return t.DroppedBytes > 0 || t.Compacted }

// setRedactions sets the attributes of what was redacted, counts by rule.
func setRedactions(span trace.Span, counts map[string]int) {
	if len(counts) == 0 {
		return
	}
	rules := make([]string, 0, len(counts))
	for r := range counts {
		rules = append(rules, r)
	}
	slices.Sort(rules)
	ns := make([]int, len(rules))
	total := 0
	for i, r := range rules {
		ns[i] = counts[r]
		total += ns[i]
	}
	span.SetAttributes(attribute.StringSlice(attrRedactionRules, rules), attribute.IntSlice(attrRedactionCounts, ns),
		attribute.Int(attrRedactionCount, total))
}
