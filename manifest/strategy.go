package manifest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolcap/toolcap/cut"
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
	// head_tail rescues from the dropped middle; at most cut.MaxKeepLines.
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

// spec returns s compiled, or the key (a suffix such as "keep"), the
// value and the error of its first invalid field.
func (s Strategy) spec() (cut.Spec, string, string, error) {
	spec := cut.Spec{Keep: s.Keep, TailShare: s.TailShare, Fallback: s.Fallback}
	if s.Keep != "" {
		if _, err := cut.ParseKeep(string(s.Keep)); err != nil {
			return spec, "keep", strconv.Quote(string(s.Keep)), err
		}
	}
	if err := checkFallback(s.Fallback); err != nil {
		return spec, "fallback", strconv.Quote(string(s.Fallback)), err
	}
	if s.TailShare != 0 {
		if err := checkTailShare(s.TailShare); err != nil {
			return spec, "tail_share", strconv.FormatFloat(s.TailShare, 'g', -1, 64), err
		}
	}
	res, err := cut.CompileKeepLines(s.KeepLines)
	if err != nil {
		return spec, "keep_lines", showList(s.KeepLines), err
	}
	if len(res) > 0 {
		spec.KeepLines = res
	}
	return spec, "", "", nil
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

// Policy is what a worker applies to one tool's results: the limit and
// the cut.
type Policy struct {
	// Limit is the tool's limit in bytes, marker included.
	Limit int
	// MaxTokens is the tool's token limit, marker included; 0 when it has
	// none ([ToolOutputLimits.TokensFor]).
	MaxTokens int
	// Spec is how content over the limit is cut.
	Spec cut.Spec
}

// Policies are the limits and compiled strategies of a [ToolOutputLimits],
// ready for every call: regular expressions are compiled once, here. Build
// them with [ToolOutputLimits.Policies]; they are immutable and safe for
// concurrent use.
type Policies struct {
	limits *ToolOutputLimits
	def    cut.Spec
	per    map[string]cut.Spec
}

// Policies compiles l's strategies. It returns an [*Error] for an invalid
// strategy, as [WorkerManifest.Validate] does. It is safe on a nil l: every
// tool then gets DefaultMaxBytes and the head strategy.
func (l *ToolOutputLimits) Policies() (*Policies, error) {
	p := &Policies{limits: l}
	if l == nil {
		return p, nil
	}
	const src = "WorkerManifest"
	def, key, val, err := l.Default.spec()
	if err != nil {
		return nil, &Error{Source: src, Key: defaultKey(key), Value: val, Err: err}
	}
	p.def = def
	for _, tool := range slices.Sorted(maps.Keys(l.PerToolStrategy)) {
		s := l.PerToolStrategy[tool]
		if err := checkToolName(tool); err != nil {
			return nil, &Error{Source: src, Key: perToolKey(tool), Value: "(a table)", Err: err}
		}
		if _, key, val, err := s.spec(); err != nil {
			return nil, &Error{Source: src, Key: perToolKey(tool) + "." + key, Value: val, Err: err}
		}
		// Both halves are valid, so their merge is.
		spec, _, _, _ := s.over(l.Default).spec()
		if p.per == nil {
			p.per = map[string]cut.Spec{}
		}
		p.per[tool] = spec
	}
	return p, nil
}

// defaultKey names the default_ key of a strategy field.
func defaultKey(field string) string { return "worker.tool_output.default_" + field }

// For returns the policy for tool: its limit ([ToolOutputLimits.For]) and
// its spec, the tool's own strategy fields over the defaults. Safe on a nil
// p.
func (p *Policies) For(tool string) Policy {
	if p == nil {
		return Policy{Limit: DefaultMaxBytes}
	}
	spec, ok := p.per[tool]
	if !ok {
		spec = p.def
	}
	return Policy{Limit: p.limits.For(tool), MaxTokens: p.limits.TokensFor(tool), Spec: spec}
}

// Limit returns the limit for tool; it has the shape of middleware.Limits.
func (p *Policies) Limit(tool string) int { return p.For(tool).Limit }

// Spec returns the spec for tool.
func (p *Policies) Spec(tool string) cut.Spec { return p.For(tool).Spec }

// StrategyFor returns the strategy in force for tool, the tool's own
// fields over the defaults, as written in the manifest. Safe on a nil l.
func (l *ToolOutputLimits) StrategyFor(tool string) Strategy {
	if l == nil {
		return Strategy{}
	}
	return l.PerToolStrategy[tool].over(l.Default)
}
