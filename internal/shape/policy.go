package shape

import (
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/redact"
	"github.com/toolcap/toolcap/tokens"
)

// Policy is everything a front end needs to fit one tool's results: the
// limits and the cut. A manifest resolves a tool to one
// ([Policies.For]); a program may build one by hand. A Policy is
// a value, safe for concurrent use: the regexps of its Spec and its Counter
// are.
type Policy struct {
	// MaxBytes is the byte limit, marker included. Every shaping holds it.
	MaxBytes int
	// MaxTokens is the token limit, marker included; 0 means none. It is
	// held only when Counter is set.
	MaxTokens int
	// Spec is how a text over a limit is cut: head, head_tail or json, with
	// their parameters.
	Spec cut.Spec
	// Counter counts the tokens MaxTokens limits. Nil: tokens are not held,
	// whatever MaxTokens says.
	Counter tokens.Counter
	// KeepRest reports that a cut of this tool keeps the whole output, so
	// that the model can read on (package rest), wherever the front end has
	// a store. Without a store it changes nothing.
	KeepRest bool
	// Redact, when set, finds the secrets of a result before anything
	// else sees it: each is replaced by its marker ("[redacted: RULE]") before the result
	// is measured, cut, kept or logged (the pinned redact stage of every
	// front end). Nil redacts nothing.
	Redact redact.Detector
	// PageBytes, when not 0, is the most bytes a page of the read of a
	// kept output holds, its marker included: the limit of the tool whose
	// output it is, where that is below the read tool's own. The marker
	// then names the read with a length that keeps each page within it
	// (package rest). [Policies] sets it for a tool held below
	// the default, unless the read tool has a per_tool limit of its own;
	// 0: pages are held to the read tool's limit alone.
	PageBytes int
}

// DefaultMaxBytes is the byte limit of a tool nobody gave one: 16 KiB, a
// safe margin under a 30k input tokens/min rate limit. Package manifest's
// DefaultMaxBytes is this.
const DefaultMaxBytes = 16384

// Default is the policy of a tool nobody gave one: [DefaultMaxBytes], the
// head rule, the rest kept where the front end has a store, and the
// secrets of the built-in rules redacted ([redact.Default]), as a manifest
// that sets nothing resolves every tool (keep_rest and redact unset are
// true).
func Default(string) Policy {
	return Policy{MaxBytes: DefaultMaxBytes, KeepRest: true, Redact: redact.Default()}
}

// PolicyFunc returns the policy of a tool, by its registered name.
// (*shape.Policies).For has this shape.
type PolicyFunc func(tool string) Policy

// Bytes returns a Policy that holds MaxBytes only, with the head rule: the
// seed's cap, for a front end that knows only a byte limit.
func Bytes(limit int) Policy { return Policy{MaxBytes: limit} }

// HoldsTokens reports whether p holds a token limit: MaxTokens > 0 and a
// Counter to count them.
func (p Policy) HoldsTokens() bool { return p.MaxTokens > 0 && p.Counter != nil }

// Fits reports whether a text of n bytes is known to be within p without a
// look at it: within MaxBytes and, when p holds tokens, within MaxTokens
// bytes (a [tokens.Counter] counts at most a token per byte). A text that does
// not fit by this test may still fit once counted.
func (p Policy) Fits(n int) bool {
	return n <= p.MaxBytes && (!p.HoldsTokens() || n <= p.MaxTokens)
}

// FitsText reports whether s is known to be within p as the client decodes
// it: Fits(len(s)), and s valid UTF-8 unless even 3 bytes for each of its
// bytes fit (a byte that is not valid UTF-8 reaches the model as U+FFFD, 3
// bytes; see package cut). It reads s only when that is in doubt. A front
// end that holds a text uses it rather than Fits to pass the text on as it
// is.
func (p Policy) FitsText(s string) bool {
	return p.Fits(len(s)) && cut.DecodesAsIs(s, p.Fit())
}

// decoded returns s as the client decodes it under p ([cut.Decoded]).
func (p Policy) decoded(s string) (string, int) { return cut.Decoded(s, p.Fit()) }

// Fit returns the longest text known to fit p without a look at it: the
// byte limit, or the token limit when that is smaller (a [tokens.Counter]
// counts at most a token per byte, and a Counter may be set later). It is
// [Policy.Fits]' bound, for a front end that keeps one bound for many
// policies.
func (p Policy) Fit() int {
	if p.MaxTokens > 0 {
		return max(min(p.MaxBytes, p.MaxTokens), 0)
	}
	return max(p.MaxBytes, 0)
}

// Hold returns how much of a result that arrives as a stream a front end
// must hold whole to fit it exactly as [Text] fits it held whole: the byte
// limit, or under a token limit the longest input Text counts whole
// ([cut.TokenWindow]), at most [cut.JSONMaxInput] of the byte limit (8 MiB
// or 4 times the limit) so that memory stays bounded. A longer stream is
// cut as it is read ([cut.Writer]) and, under a token limit, by
// [cut.Writer.ResultTokens]: byte for byte Text's cut, except for input
// between that bound and the token window, which keeps a byte marker where
// Text's would count tokens.
func (p Policy) Hold() int {
	if p.MaxTokens <= 0 {
		return max(p.MaxBytes, 0)
	}
	return max(p.MaxBytes, min(cut.TokenWindow(p.MaxTokens), cut.JSONMaxInput(p.MaxBytes)))
}

// tokens returns the token limit p holds, 0 when none.
func (p Policy) tokens() int {
	if p.HoldsTokens() {
		return p.MaxTokens
	}
	return 0
}

// count returns the tokens of s, or len(s), a bound on them, when s is too
// long to be counted whole under p's token limit ([cut.TokenWindow]): that
// is enough to share a budget, and it keeps counting bounded.
func (p Policy) count(s string) int {
	if len(s) > cut.TokenWindow(p.MaxTokens) {
		return len(s)
	}
	return p.Counter.Count(s)
}
