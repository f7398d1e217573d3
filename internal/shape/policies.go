package shape

import (
	"maps"
	"regexp"
	"slices"
	"sync"

	"github.com/toolcap/toolcap/redact"
	"github.com/toolcap/toolcap/tokens"
)

// Policies are the policies of every tool of one front end, resolved once
// (a manifest compiles its regexps into them, so that [Policies.For] is
// one map lookup), and what the front end needs beside them: the batch
// budget, the tokenizer the token limits count with, the read tool. A
// manifest builds them ((*manifest.WorkerManifest).Policies); a nil
// *Policies is the policies of a manifest that sets nothing. They are
// immutable and safe for concurrent use.
type Policies struct {
	def     Policy            // every tool without an entry of its own
	per     map[string]Policy // each tool with one
	counter tokens.Counter    // set on every Policy For returns
	fit     int               // see Fit
	clients map[string]int    // the client limits, see ForClient
	ceiling int               // a client's limit over every tool; 0 none
	// base is the detector every redacting tool starts from (the built-in
	// rules, or WithRedactor's), and redactions each tool's own redaction,
	// "" for the default: what WithRedactor rebuilds the detectors from.
	base       redact.Detector
	redactions map[string]Redaction
	front      Front
}

// Front is what a front end needs beside each tool's policy, as a
// manifest resolves it.
type Front struct {
	// Batch and BatchTokens are the budget of one batch of results in
	// bytes and tokens; 0 none.
	Batch, BatchTokens int
	// Tokenizer names the tokenizer the token limits count with, and
	// Tokens reports whether any limit is in tokens.
	Tokenizer string
	Tokens    bool
	// ReadTool is the name of the tool that reads a kept rest, and
	// KeepsRest reports whether any tool keeps one.
	ReadTool  string
	KeepsRest bool
}

// Redaction is one tool's resolved redaction: whether it redacts, and the
// rules and allow list of its own over the base detector.
type Redaction struct {
	On    bool
	Rules []redact.Rule
	Allow []*regexp.Regexp
}

// Detector returns the detector of r over base: nil when r is off.
func (r Redaction) Detector(base redact.Detector) redact.Detector {
	if !r.On {
		return nil
	}
	return redact.Extend(base, r.Rules, r.Allow)
}

// BuiltinClients are the client limits of the built-in default layer, by
// the name a client gives in MCP's clientInfo. Each is what that client
// keeps whole of a tool result before it cuts the result again, out of
// toolcap's sight, measured against the real client (docs/mcp.md):
//
//   - codex-mcp-client, the Codex CLI (0.171.0): with a model it does not
//     know, Codex shows the model at most 12,000 bytes of a result, "Wall
//     time: S seconds\nOutput:\n" and structuredContent serialized, and
//     keeps 6,000 from each end of a longer one; 11,776 leaves room for
//     its header and for a number it writes longer. (gpt-5.5 keeps 48,000,
//     its default model 40,000: raise the limit for those.)
//
// Claude Code (2.1.328) passes a 16,384-byte result whole, so it has none.
// Callers must not modify it.
var BuiltinClients = map[string]int{"codex-mcp-client": 11776}

// defaultPolicies are the policies of a nil *Policies, built on first use:
// at package initialisation they would compile the built-in rules in
// every process that links the package, the hook's included.
var defaultPolicies = sync.OnceValue(func() *Policies {
	return &Policies{def: Default(""), fit: DefaultMaxBytes, clients: BuiltinClients,
		front: Front{ReadTool: DefaultReadTool, KeepsRest: true}}
})

// DefaultReadTool is the read tool's name unless a manifest names another
// (rest.DefaultTool is this).
const DefaultReadTool = "toolcap_read"

// PoliciesConfig is what [NewPolicies] builds policies from.
type PoliciesConfig struct {
	// Default is the policy of every tool without an entry in PerTool.
	Default Policy
	PerTool map[string]Policy
	// Base is the detector every redacting tool starts from, and
	// Redactions each tool's own redaction ("" the default's); the
	// policies' Redact fields are those over Base.
	Base       redact.Detector
	Redactions map[string]Redaction
	Clients    map[string]int
	Front      Front
}

// NewPolicies builds the policies of c. It keeps c's maps: the caller
// must not modify them later.
func NewPolicies(c PoliciesConfig) *Policies {
	p := &Policies{def: c.Default, per: c.PerTool, clients: c.Clients, base: c.Base, redactions: c.Redactions, front: c.Front}
	p.fit = p.def.Fit()
	for _, pol := range p.per {
		p.fit = min(p.fit, pol.Fit())
	}
	return p
}

// orDefault returns p, or the default policies when p is nil.
func (p *Policies) orDefault() *Policies {
	if p == nil {
		return defaultPolicies()
	}
	return p
}

// ForClient returns the policies for the results an MCP client is sent,
// the client naming itself client (initialize's clientInfo.name): every
// tool's byte limit, and a page's ([Policy.PageBytes]), at most the
// client's limit (the manifest's clients table over the built-in
// limits), so that the client keeps each result whole. It returns p
// itself for a client without one. Safe on a nil p.
func (p *Policies) ForClient(client string) *Policies {
	c, ok := p.orDefault().clients[client]
	if !ok || c <= 0 {
		return p
	}
	q := *p.orDefault()
	q.ceiling = c
	q.fit = min(q.fit, c)
	return &q
}

// Fit returns the longest content known to fit every tool's policy
// without a look at it or at the policy ([Policy.Fit]): a front end
// passes content of at most that many bytes on without looking its tool's
// policy up. Safe on a nil p.
func (p *Policies) Fit() int { return p.orDefault().fit }

// For returns the policy for tool: its limits, its spec, its KeepRest,
// its redaction and the counter of [Policies.WithCounter], if any. It has
// the shape of a [PolicyFunc]. A nil p gives every tool [Default]'s
// policy.
func (p *Policies) For(tool string) Policy {
	p = p.orDefault()
	pol, ok := p.per[tool]
	if !ok {
		pol = p.def
	}
	pol.Counter = p.counter
	if c := p.ceiling; c > 0 {
		pol.MaxBytes = min(pol.MaxBytes, c)
		if pol.PageBytes > c {
			pol.PageBytes = c
		}
	}
	return pol
}

// WithRedactor returns a copy of p whose policies redact with base in
// place of the built-in rules (redact.Default): a program that links a
// larger rule set, such as gitleaks' (module
// github.com/toolcap/toolcap/redact/gitleaks), passes it here. Each
// tool's redact_patterns and redact_allow still apply over it, and a tool
// with redact = false still redacts nothing. p itself is unchanged; a nil
// base redacts only the manifest's own patterns. On a nil p it returns
// the default policies with base.
func (p *Policies) WithRedactor(base redact.Detector) *Policies {
	q := *p.orDefault()
	q.base = base
	def, ok := q.redactions[""]
	if !ok {
		def = Redaction{On: true}
	}
	q.def.Redact = def.Detector(base)
	q.per = maps.Clone(q.per)
	for tool, pol := range q.per {
		r, ok := q.redactions[tool]
		if !ok {
			r = def
		}
		pol.Redact = r.Detector(base)
		q.per[tool] = pol
	}
	return &q
}

// WithCounter returns a copy of p whose For sets Policy.Counter to c, so
// that the policies hold their token limits: a front end that counts
// tokens passes its counter here. p itself is unchanged; a nil c gives
// policies that hold bytes only. On a nil p it returns the default
// policies with c.
func (p *Policies) WithCounter(c tokens.Counter) *Policies {
	q := *p.orDefault()
	q.counter = c
	return &q
}

// FrontOf returns what the front end of p needs beside each tool's
// policy. Safe on a nil p.
func FrontOf(p *Policies) Front { return p.orDefault().front }

// Tools returns the tools with a policy of their own, sorted, for a front
// end's warnings about names its registry does not know. Safe on a nil p.
func Tools(p *Policies) []string { return slices.Sorted(maps.Keys(p.orDefault().per)) }

// Redactor reports whether every tool of p redacts with one detector,
// and which (nil: no tool redacts), so that a front end's redact stage
// runs it without a look at each call's policy. Safe on a nil p.
func Redactor(p *Policies) (d redact.Detector, uniform bool) {
	p = p.orDefault()
	// A tool without a redaction of its own redacts as the default does
	// (NewPolicies' callers build per so); detectors are not compared,
	// since a program's may not be comparable.
	for tool := range p.per {
		if _, own := p.redactions[tool]; own {
			return nil, false
		}
	}
	return p.def.Redact, true
}

// Clients returns the client limits of p, by client name. Callers must
// not modify the map. Safe on a nil p.
func Clients(p *Policies) map[string]int { return p.orDefault().clients }
