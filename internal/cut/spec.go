package cut

import (
	"fmt"
	"regexp"
	"strconv"
)

// Keep names a strategy: which bytes of an over-long result a cut keeps.
type Keep string

// The strategies. The zero Keep is [KeepHead].
const (
	// Head keeps the start: the longest prefix that fits with the marker
	// after it.
	KeepHead Keep = "head"
	// HeadTail keeps the start and the end, the marker on a line of its own
	// between them, and rescues matching lines from the dropped middle.
	KeepHeadTail Keep = "head_tail"
	// JSON compacts a JSON document, or cuts it into a shorter valid one,
	// with the marker on a line after it; text that is not JSON is cut by
	// the spec's Fallback.
	KeepJSON Keep = "json"
)

// Bounds of a [Spec].
const (
	// DefaultTailShare is the share of the room the tail gets when a spec
	// sets none: an even split.
	DefaultTailShare = 0.5

	// MaxKeepLines is the most patterns a spec's KeepLines may hold. Every
	// line of the dropped middle is matched against each of them, so their
	// number multiplies the cost of a cut.
	MaxKeepLines = 8

	// MaxRescuedLines is the most lines one cut rescues from the dropped
	// middle.
	MaxRescuedLines = 64
)

// Spec says how to cut: the strategy and its parameters. The zero Spec is
// [KeepHead]. A Spec is a value; the regexps it holds are safe for concurrent
// use, so one Spec serves every cut of a tool.
type Spec struct {
	// Keep is the strategy; "" means Head.
	Keep Keep
	// TailShare is the share of the room, after the marker, that HeadTail
	// gives the tail, in (0, 1); 0 means DefaultTailShare. The head gets the
	// rest.
	TailShare float64
	// KeepLines are the patterns of the lines HeadTail rescues from the
	// dropped middle; at most MaxKeepLines. A line is rescued when one of
	// them matches it (without its newline).
	KeepLines []*regexp.Regexp
	// Fallback is the text strategy of JSON for content that is not a JSON
	// document (or has no valid form within the limit): Head or HeadTail,
	// with this spec's TailShare and KeepLines; "" means Head. Other
	// strategies ignore it.
	Fallback Keep
}

// ParseKeep returns the strategy named s, or an error naming s and the
// strategies there are.
func ParseKeep(s string) (Keep, error) {
	for _, k := range [...]Keep{KeepHead, KeepHeadTail, KeepJSON} {
		if s == string(k) {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown strategy %s (want %q, %q or %q)", strconv.Quote(s), KeepHead, KeepHeadTail, KeepJSON)
}

// CompileKeepLines compiles the patterns of a spec's KeepLines, in Go's
// regexp syntax (RE2). An error names the pattern, its index and what is
// wrong, and so does more than MaxKeepLines patterns.
func CompileKeepLines(patterns []string) ([]*regexp.Regexp, error) {
	if len(patterns) > MaxKeepLines {
		return nil, fmt.Errorf("%d patterns: at most %d", len(patterns), MaxKeepLines)
	}
	res := make([]*regexp.Regexp, 0, len(patterns))
	for i, p := range patterns {
		if p == "" {
			return nil, fmt.Errorf("pattern %d is empty: it would match every line", i)
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("pattern %d %s: %w", i, strconv.Quote(p), err)
		}
		res = append(res, re)
	}
	return res, nil
}

// Validate reports the first value of s that cannot be used, naming it:
// an unknown Keep or Fallback, a Fallback of JSON, a TailShare outside
// (0, 1), too many KeepLines or a nil one.
func (s Spec) Validate() error {
	if s.Keep != "" {
		if _, err := ParseKeep(string(s.Keep)); err != nil {
			return fmt.Errorf("keep: %w", err)
		}
	}
	switch s.Fallback {
	case "", KeepHead, KeepHeadTail:
	case KeepJSON:
		return fmt.Errorf("fallback %q: the fallback of json is a text strategy, %q or %q", s.Fallback, KeepHead, KeepHeadTail)
	default:
		return fmt.Errorf("fallback: unknown strategy %s (want %q or %q)", strconv.Quote(string(s.Fallback)), KeepHead, KeepHeadTail)
	}
	if s.TailShare != 0 && !(s.TailShare > 0 && s.TailShare < 1) {
		return fmt.Errorf("tail_share %v: must be above 0 and below 1", s.TailShare)
	}
	if len(s.KeepLines) > MaxKeepLines {
		return fmt.Errorf("keep_lines: %d patterns: at most %d", len(s.KeepLines), MaxKeepLines)
	}
	for i, re := range s.KeepLines {
		if re == nil {
			return fmt.Errorf("keep_lines: pattern %d is nil", i)
		}
	}
	return nil
}

// keep is s.Keep with the zero value resolved.
func (s Spec) keep() Keep {
	if s.Keep == "" {
		return KeepHead
	}
	return s.Keep
}

// text is the text strategy s cuts with: its Keep, or for JSON its
// Fallback.
func (s Spec) text() Keep {
	k := s.keep()
	if k == KeepJSON {
		if s.Fallback == KeepHeadTail {
			return KeepHeadTail
		}
		return KeepHead
	}
	return k
}

func (s Spec) tailShare() float64 {
	if s.TailShare > 0 && s.TailShare < 1 {
		return s.TailShare
	}
	return DefaultTailShare
}
