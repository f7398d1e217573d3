package manifest

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/redact"
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

// redactionFor resolves the redaction of tool ("" for the default): the
// tool's own fields over the table's. The patterns were checked when l
// was validated.
func (l *ToolOutputLimits) redactionFor(tool string) shape.Redaction {
	r := shape.Redaction{On: true}
	own := Redaction{}
	if tool != "" {
		own = l.PerTool[tool].Redaction
	}
	if b := cmp.Or(own.Redact, l.Redaction.Redact); b != nil {
		r.On = *b
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
		r.Rules = append(r.Rules, redact.Rule{ID: "custom", Pattern: re, MaxLen: customMaxLen})
	}
	r.Allow, _ = compilePatterns(allow)
	return r
}

// customMaxLen is the longest secret of a redact_patterns pattern that a
// stream is sure to redact whole when it is split across reads.
const customMaxLen = 4 << 10

// Policies validates l as [WorkerManifest.Validate] does, returning its
// [*Error], and resolves every tool's policy, for a worker
// (worker.WithPolicies) or toolcap mcp's relay (mcpproxy.Options): each
// limit, strategy field, keep_rest and redaction is the tool's own where
// its per_tool entry sets one, otherwise the default. The policies also
// hold the batch budget, the tokenizer, the read tool and the client
// limits. It is safe on a nil l: every tool then gets DefaultMaxBytes,
// the head strategy, KeepRest and the built-in redaction rules.
func (l *ToolOutputLimits) Policies() (*shape.Policies, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	if l == nil {
		return nil, nil
	}
	base := redact.Default()
	redactions := map[string]shape.Redaction{"": l.redactionFor("")}
	def := shape.Policy{MaxBytes: l.For(""), MaxTokens: l.TokensFor(""), Spec: l.Default.spec(), KeepRest: l.KeepRestFor(""),
		Redact: redactions[""].Detector(base)}
	// No tool is named "" (validate): For(""), TokensFor("") and
	// KeepRestFor("") are the defaults.
	var per map[string]shape.Policy
	for tool, e := range l.PerTool {
		pol := shape.Policy{MaxBytes: l.For(tool), MaxTokens: l.TokensFor(tool), Spec: def.Spec, KeepRest: l.KeepRestFor(tool), Redact: def.Redact}
		if !e.Redaction.isZero() {
			redactions[tool] = l.redactionFor(tool)
			pol.Redact = redactions[tool].Detector(base)
		}
		if !e.Strategy.isZero() {
			pol.Spec = e.Strategy.over(l.Default).spec()
		}
		if per == nil {
			per = make(map[string]shape.Policy, len(l.PerTool))
		}
		per[tool] = pol
	}
	// A page of the read of a tool's output is held to that tool's limit
	// when it is below the read tool's, unless the read tool has a limit
	// of its own (issue 38, item 4: a tool held to 2 KiB was read back in
	// 16 KiB pages).
	if read := l.RestTool(); l.PerTool[read].MaxBytes == 0 {
		for tool, pol := range per {
			if tool != read && pol.MaxBytes < def.MaxBytes {
				pol.PageBytes = pol.MaxBytes
				per[tool] = pol
			}
		}
	}
	return shape.NewPolicies(shape.PoliciesConfig{
		Default: def, PerTool: per, Base: base, Redactions: redactions, Clients: l.ClientLimits(),
		Front: shape.Front{
			Batch: l.Batch(), BatchTokens: l.BatchTokens(),
			Tokenizer: l.TokenizerName(), Tokens: l.HasTokens(),
			ReadTool: l.RestTool(), KeepsRest: l.KeepsRest(),
		},
	}), nil
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
