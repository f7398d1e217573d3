package manifest

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/redact"
	"github.com/toolcap/toolcap/tokens"
)

// Strategy is how a tool's over-long results are cut: the manifest's keep,
// tail_share, keep_lines and fallback keys (default_keep and its siblings
// for every tool, or a per_tool entry's long form). A zero field is "not
// set": a tool's own field wins over the default's, field by field, and
// what neither sets is package cut's default (head; half the room to the
// tail; no rescued lines; head as json's fallback).
type Strategy struct {
	// Keep is "head", "head_tail" or "json".
	Keep cut.Keep
	// TailShare is head_tail's share of the room for the tail, in (0, 1).
	TailShare float64
	// KeepLines are the regular expressions (Go syntax) of the lines
	// head_tail rescues from the dropped middle; at most 8.
	KeepLines []string
	// Fallback is json's strategy for content that is not JSON: "head" or
	// "head_tail".
	Fallback cut.Keep
}

// isZero reports whether s sets nothing.
func (s Strategy) isZero() bool {
	return s.Keep == "" && s.TailShare == 0 && s.KeepLines == nil && s.Fallback == ""
}

// over returns s with the fields it does not set taken from def.
func (s Strategy) over(def Strategy) Strategy {
	if s.Keep == "" {
		s.Keep = def.Keep
	}
	if s.TailShare == 0 {
		s.TailShare = def.TailShare
	}
	if s.KeepLines == nil {
		s.KeepLines = def.KeepLines
	}
	if s.Fallback == "" {
		s.Fallback = def.Fallback
	}
	return s
}

// spec returns s compiled. Its fields must be valid: keys' check, which
// [ToolOutputLimits.validate] runs, compiles the same KeepLines, so that
// what could fail here has been reported there.
func (s Strategy) spec() cut.Spec {
	spec := cut.Spec{Keep: s.Keep, TailShare: s.TailShare, Fallback: s.Fallback}
	if res, err := cut.CompileKeepLines(s.KeepLines); err == nil && len(res) > 0 {
		spec.KeepLines = res
	}
	return spec
}

func checkFallback(k cut.Keep) error {
	switch k {
	case "", cut.KeepHead, cut.KeepHeadTail:
		return nil
	case cut.KeepJSON:
		return errors.New(`json's fallback must be a text strategy, "head" or "head_tail"`)
	}
	return fmt.Errorf("unknown strategy (want %q or %q)", cut.KeepHead, cut.KeepHeadTail)
}

func checkTailShare(f float64) error {
	if !(f > 0 && f < 1) {
		return errors.New("must be above 0 and below 1 (a share of the room, such as 0.3)")
	}
	return nil
}

// showList writes patterns as a TOML array, each a literal string ('...',
// no escapes, as regular expressions are best written) when it can be.
func showList(ss []string) string {
	out := "["
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		if strings.ContainsAny(s, "'\n\r") || !utf8.ValidString(s) || hasControl(s) {
			out += strconv.Quote(s)
		} else {
			out += "'" + s + "'"
		}
	}
	return out + "]"
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return true
		}
	}
	return false
}

// Policies are the limits and compiled strategies of a [ToolOutputLimits],
// resolved for each tool once: regular expressions are compiled here, and
// [Policies.For] is one map lookup. Build them with
// [ToolOutputLimits.Policies]; they are immutable and safe for concurrent
// use, and a later change to the limits they were built from does not
// reach them.
type Policies struct {
	def     shape.Policy            // every tool without a per_tool entry
	per     map[string]shape.Policy // each tool with one
	counter tokens.Counter          // set on every Policy For returns
	fit     int                     // see Fits
	clients map[string]int          // the client limits, see ForClient
	ceiling int                     // a client's limit over every tool; 0 none
	// base is the detector every redacting tool starts from (the built-in
	// rules, or WithRedactor's), and redactions each tool's own redaction,
	// "" for the default: what WithRedactor rebuilds the detectors from.
	base       redact.Detector
	redactions map[string]redaction
}

// redaction is one tool's resolved redaction: whether it redacts, and the
// rules and allow list of its own.
type redaction struct {
	on    bool
	rules []redact.Rule
	allow []*regexp.Regexp
}

// customMaxLen is the longest secret of a redact_patterns pattern that a
// stream is sure to redact whole when it is split across reads.
const customMaxLen = 4 << 10

// redactionFor resolves the redaction of tool ("" for the default): the
// tool's own fields over the table's. The patterns were checked when l
// was validated.
func (l *ToolOutputLimits) redactionFor(tool string) redaction {
	r := redaction{on: true}
	own := Redaction{}
	if tool != "" {
		own = l.PerTool[tool].Redaction
	}
	if b := cmp.Or(own.Redact, l.Redaction.Redact); b != nil {
		r.on = *b
	}
	patterns, allow := l.Redaction.Patterns, l.Redaction.Allow
	if own.Patterns != nil {
		patterns = own.Patterns
	}
	if own.Allow != nil {
		allow = own.Allow
	}
	res, _ := compilePatterns(patterns)
	for _, re := range res {
		r.rules = append(r.rules, redact.Rule{ID: "custom", Pattern: re, MaxLen: customMaxLen})
	}
	r.allow, _ = compilePatterns(allow)
	return r
}

// detector returns the detector of r over base: nil when r is off.
func (r redaction) detector(base redact.Detector) redact.Detector {
	if !r.on {
		return nil
	}
	return redact.Extend(base, r.rules, r.allow)
}

// defaultPolicy is the policy of every tool of a nil [ToolOutputLimits]:
// DefaultMaxBytes, the head strategy, and the rest kept where the front
// end has a store (keep_rest unset is true).
var defaultPolicy = shape.Default("")

// Policies validates l as [WorkerManifest.Validate] does, returning its
// [*Error], and resolves every tool's policy: each limit, strategy field
// and keep_rest is the tool's own where its per_tool entry sets one,
// otherwise the default. It is safe on a nil l: every tool then gets
// DefaultMaxBytes, the head strategy and KeepRest.
func (l *ToolOutputLimits) Policies() (*Policies, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	p := &Policies{def: defaultPolicy, fit: DefaultMaxBytes, clients: builtinClients}
	if l == nil {
		return p, nil
	}
	// No tool is named "" (validate): For(""), TokensFor("") and
	// KeepRestFor("") are the defaults.
	p.base = redact.Default()
	p.redactions = map[string]redaction{"": l.redactionFor("")}
	p.def = shape.Policy{MaxBytes: l.For(""), MaxTokens: l.TokensFor(""), Spec: l.Default.spec(), KeepRest: l.KeepRestFor(""),
		Redact: p.redactions[""].detector(p.base)}
	for tool, e := range l.PerTool {
		pol := shape.Policy{MaxBytes: l.For(tool), MaxTokens: l.TokensFor(tool), Spec: p.def.Spec, KeepRest: l.KeepRestFor(tool), Redact: p.def.Redact}
		if !e.Redaction.isZero() {
			p.redactions[tool] = l.redactionFor(tool)
			pol.Redact = p.redactions[tool].detector(p.base)
		}
		if !e.Strategy.isZero() {
			pol.Spec = e.Strategy.over(l.Default).spec()
		}
		if p.per == nil {
			p.per = make(map[string]shape.Policy, len(l.PerTool))
		}
		p.per[tool] = pol
	}
	// A page of the read of a tool's output is held to that tool's limit
	// when it is below the read tool's, unless the read tool has a limit
	// of its own (issue 38, item 4: a tool held to 2 KiB was read back in
	// 16 KiB pages).
	if read := l.RestTool(); l.PerTool[read].MaxBytes == 0 {
		for tool, pol := range p.per {
			if tool != read && pol.MaxBytes < p.def.MaxBytes {
				pol.PageBytes = pol.MaxBytes
				p.per[tool] = pol
			}
		}
	}
	p.fit = p.def.Fit()
	for _, pol := range p.per {
		p.fit = min(p.fit, pol.Fit())
	}
	p.clients = l.ClientLimits()
	return p, nil
}

// ForClient returns the policies for the results an MCP client is sent,
// the client naming itself client (initialize's clientInfo.name): every
// tool's byte limit, and a page's (shape.Policy.PageBytes), at most the
// client's limit ([ToolOutputLimits.ClientLimit]), so that the client
// keeps each result whole. It returns p itself for a client without one.
// Safe on a nil p.
func (p *Policies) ForClient(client string) *Policies {
	if p == nil {
		q, _ := (*ToolOutputLimits)(nil).Policies()
		p = q
	}
	c, ok := p.clients[client]
	if !ok || c <= 0 {
		return p
	}
	q := *p
	q.ceiling = c
	q.fit = min(q.fit, c)
	return &q
}

// Fit returns the longest content known to fit every tool's policy
// without a look at it or at the policy ([shape.Policy.Fit]): a front end
// passes content of at most that many bytes on without looking its tool's
// policy up (see middleware.WithPolicy). Safe on a nil p.
func (p *Policies) Fit() int {
	if p == nil {
		return DefaultMaxBytes
	}
	return p.fit
}

// For returns the policy for tool: its limits ([ToolOutputLimits.For],
// [ToolOutputLimits.TokensFor]), its spec (the tool's own strategy fields
// over the defaults), its KeepRest ([ToolOutputLimits.KeepRestFor]) and
// the counter of [Policies.WithCounter], if any. It has the shape of
// [shape.PolicyFunc]. A nil p gives DefaultMaxBytes, the head strategy
// and KeepRest to every tool.
func (p *Policies) For(tool string) shape.Policy {
	if p == nil {
		return defaultPolicy
	}
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
// base redacts only the manifest's own patterns. On a nil p it returns the
// policies of a nil [ToolOutputLimits] with base.
func (p *Policies) WithRedactor(base redact.Detector) *Policies {
	q, _ := (*ToolOutputLimits)(nil).Policies()
	if p != nil {
		*q = *p
	}
	q.base = base
	def := q.redactions[""]
	if q.redactions == nil {
		def = redaction{on: true}
	}
	q.def.Redact = def.detector(base)
	q.per = maps.Clone(q.per)
	for tool, pol := range q.per {
		r, ok := q.redactions[tool]
		if !ok {
			r = def
		}
		pol.Redact = r.detector(base)
		q.per[tool] = pol
	}
	return q
}

// WithCounter returns a copy of p whose For sets Policy.Counter to c, so
// that the policies hold their token limits: a front end that counts
// tokens (a worker with a tokenizer, toolcap mcp) passes its counter here.
// p itself is unchanged; a nil c gives policies that hold bytes only. On a
// nil p it returns the policies of a nil [ToolOutputLimits] with c.
func (p *Policies) WithCounter(c tokens.Counter) *Policies {
	q := &Policies{def: defaultPolicy, fit: DefaultMaxBytes, clients: builtinClients}
	if p != nil {
		*q = *p
	}
	q.counter = c
	return q
}

// StrategyFor returns the strategy in force for tool, the tool's own
// fields over the defaults, as written in the manifest. Safe on a nil l.
func (l *ToolOutputLimits) StrategyFor(tool string) Strategy {
	if l == nil {
		return Strategy{}
	}
	return l.PerTool[tool].Strategy.over(l.Default)
}

// unused is a strategy key that no tool's cut reads, and the warning
// that says so.
type unused struct {
	tool, key, msg string
}

// usesKeepLines reports whether a cut with s reads its keep_lines: a
// head_tail cut does, and a json cut whose fallback is head_tail does, for
// content that is not JSON.
func usesKeepLines(s Strategy) bool {
	return s.Keep == cut.KeepHeadTail || s.Keep == cut.KeepJSON && s.Fallback == cut.KeepHeadTail
}

// unusedKeepLines returns a warning for each keep_lines that no cut reads,
// as the layers resolved them: a per_tool entry's when the tool's cut is
// not head_tail (nor json falling back to it), and default_keep_lines
// when neither the default nor any per_tool entry without keep_lines of
// its own cuts with head_tail. A pattern that is never used is a mistake
// the manifest would otherwise keep silently.
func unusedKeepLines(l *ToolOutputLimits) []unused {
	var out []unused
	tools := slices.Sorted(maps.Keys(l.PerTool))
	defaultUsed := usesKeepLines(l.Default)
	for _, tool := range tools {
		e := l.PerTool[tool]
		s := e.Strategy.over(l.Default)
		if e.Strategy.KeepLines == nil {
			defaultUsed = defaultUsed || usesKeepLines(s)
			continue
		}
		if !usesKeepLines(s) {
			key := "per_tool." + settings.TOMLKey(tool) + ".keep_lines"
			out = append(out, unused{tool, keyTable + "." + key, fmt.Sprintf(
				"%s is not used: the tool's cut is %s, and only head_tail (or json falling back to it) rescues lines; set keep = \"head_tail\" for it", key, keepName(s.Keep))})
		}
	}
	if l.Default.KeepLines != nil && !defaultUsed {
		out = append(out, unused{"", keyTable + ".default_keep_lines", fmt.Sprintf(
			"default_keep_lines is not used: the default cut is %s and no per_tool entry without keep_lines of its own cuts with head_tail; set default_keep = \"head_tail\"", keepName(l.Default.Keep))})
	}
	return out
}

// keepName names a strategy as a manifest writes it; "" is head.
func keepName(k cut.Keep) string {
	if k == "" {
		return string(cut.KeepHead)
	}
	return string(k)
}
