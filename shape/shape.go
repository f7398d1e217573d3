// Package shape fits a tool's result to its limits: the [Policy] of a tool
// (a byte limit, an optional token limit, the strategy of the cut) and the
// two ways to hold a result to it, [Text] for a string and [Read] for a
// stream. Every front end of toolcap (the worker's cap, toolcap mcp, the
// Claude Code hook, each adapter) fits results through the same code, so a
// program that fits a text here gets byte for byte what they would give.
//
// A manifest resolves a tool to its Policy ([Policies.For]); a
// program may build one by hand, with [Bytes] or a struct literal:
//
//	p := shape.Policy{MaxBytes: 4096, Spec: shape.Spec{Keep: shape.KeepHeadTail}}
//	out, t, changed := shape.Text(output, p)
//
// A cut ends with the marker
//
//	[truncated: N bytes dropped, refine your query]
//
// (or "N tokens" under a token limit), N exact in the unit it names, and
// the output with its marker is within every limit of the policy.
package shape

import (
	"io"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/redact"
)

// Policy is everything needed to fit one tool's results: the byte limit
// (MaxBytes, marker included), the token limit (MaxTokens, held when
// Counter is set), the Spec of the cut, the detector of the secrets
// replaced before anything else (Redact, package redact), whether a cut
// keeps the rest for reading on (KeepRest, where the front end has a
// store), and the page size of that read (PageBytes). A Policy is a value,
// safe for concurrent use.
type Policy = shape.Policy

// PolicyFunc returns the policy of a tool, by its registered name.
// [Policies.For] has this shape.
type PolicyFunc = shape.PolicyFunc

// Policies are the policies of every tool of one worker or relay, and what
// such a front end needs beside them: the batch budget, the tokenizer its
// token limits count with, the client limits, the read tool. A manifest
// resolves them once ((*manifest.WorkerManifest).Policies compiles every
// regexp), so that [Policies.For] is one map lookup; worker.WithPolicies
// and mcpproxy.Options take them. A nil *Policies is the policies of a
// manifest that sets nothing: every tool at [DefaultMaxBytes], the head
// rule, the rest kept, the built-in secrets redacted. Policies are
// immutable and safe for concurrent use; the With methods return copies.
type Policies = shape.Policies

// Spec is how a text over a limit is cut: which part is kept ([Keep]), the
// tail's share of head_tail, the lines head_tail rescues from the cut part,
// and the strategy json falls back to for a text that is not JSON.
type Spec = cut.Spec

// Keep names what a cut keeps: [KeepHead], [KeepHeadTail] or [KeepJSON],
// as the manifest's keep key spells them.
type Keep = cut.Keep

// The strategies of a cut.
const (
	// KeepHead keeps the start of the text (the default).
	KeepHead = cut.KeepHead
	// KeepHeadTail keeps the start and the end, the marker between them.
	KeepHeadTail = cut.KeepHeadTail
	// KeepJSON keeps a valid JSON document: whole members and elements,
	// cut where they stop fitting, every bracket closed.
	KeepJSON = cut.KeepJSON
)

// DefaultMaxBytes is the byte limit of a tool nobody gave one: 16 KiB, a
// safe margin under a 30k input tokens/min rate limit.
const DefaultMaxBytes = shape.DefaultMaxBytes

// Bytes returns a Policy that holds a byte limit only, with the head rule.
func Bytes(limit int) Policy { return shape.Bytes(limit) }

// Text fits one text to p and returns it with the figures of the cut;
// changed is false, and s is returned as it is, when s fits and holds no
// secret.
//
// The secrets p.Redact finds are replaced first, as the pinned redact
// stage of every front end replaces them; the cut then measures the
// redacted text. The output is within p's limits, marker included, and
// the marker's N is exact in the unit it names. The limits hold in what
// the client decodes: bytes that are not valid UTF-8 are replaced by
// U+FFFD (3 bytes each) before the text is measured.
func Text(s string, p Policy) (out string, t chain.Truncation, changed bool) {
	r, counts := redact.Text(s, p.Redact)
	out, t, changed = shape.Text(r, p)
	return out, t, changed || counts != nil
}

// Read reads r to its end and fits what it read to p in memory bounded by
// p's limits, whatever the length of the input: it is [Text] for a result
// that arrives as a stream, and gives Text's output on the whole input
// (but for input of more than 8 MiB, or 4 times the byte limit, under a
// token limit, whose marker then counts bytes, exactly), its secrets
// redacted as they are read ([redact.Reader]). A read error other than
// io.EOF ends the read: Read returns it, wrapped, with nothing else.
func Read(r io.Reader, p Policy) (out string, t chain.Truncation, changed bool, err error) {
	if p.Redact == nil {
		return shape.Read(r, p)
	}
	rr := redact.NewReader(r, p.Redact)
	out, t, changed, err = shape.Read(rr, p)
	return out, t, changed || rr.Counts() != nil, err
}
