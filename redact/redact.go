// Package redact finds secrets in tool output and replaces each with a
// marker that names the rule that found it:
//
//	[redacted: aws-access-token]
//
// toolcap redacts before it cuts and before it keeps anything: the stage is
// pinned before the cap, so the store, the history, the marker's figures
// and the logs only ever hold redacted text. A [Detector] finds the
// secrets; [Builtin] rules cover the common credentials with no dependency,
// and the module github.com/toolcap/toolcap/redact/gitleaks wraps gitleaks'
// detector and its default rule set, hundreds of rules, behind the same
// interface.
//
// [Text] redacts a whole text; a [Writer] redacts a stream as it is
// written, in bounded memory, finding a secret split across writes.
// Redaction reports rules and counts, never the values it removed.
package redact

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A Finding is one secret in a text: the bytes text[Start:End], found by
// the rule named Rule.
type Finding struct {
	Start, End int
	Rule       string
}

// A Detector finds the secrets in a text. Find returns them sorted by
// Start, none overlapping another; it must be safe for concurrent use, and
// must keep nothing of text after it returns (a [Writer] gives it its own
// buffer, which it then reuses).
//
// MaxLen is the longest secret the detector finds: a [Writer] holds that
// many bytes back from its output until it has seen what follows them, so
// that a secret split across writes is found whole.
type Detector interface {
	Find(text string) []Finding
	MaxLen() int
}

// Rule is one kind of secret.
type Rule struct {
	// ID names the rule in the marker and the counts, as gitleaks names
	// its rules where there is one of the same kind: "aws-access-token".
	ID string
	// Pattern matches the secret: the whole match, or its first
	// parenthesized submatch when it has one (so that a pattern can
	// require context it does not redact, as in "password=" followed by
	// the password).
	Pattern *regexp.Regexp
	// Keywords, when set, are words one of which a text must hold
	// (compared case-insensitively) for Pattern to run on it: a cheap
	// test that keeps the cost of a rule near zero on text without its
	// secrets.
	Keywords []string
	// Entropy, when set, is the least Shannon entropy (bits per byte) a
	// match must have to count as a secret, as gitleaks' rules set it:
	// AKIAXXXXXXXXXXXXXXXX is a placeholder, not a key.
	Entropy float64
	// Allow matches secrets of this rule that are not redacted (found
	// anywhere in the secret, as gitleaks' rule allowlists are): a
	// documented example key such as AKIAIOSFODNN7EXAMPLE.
	Allow []*regexp.Regexp
	// MaxLen is the longest secret the rule matches, in bytes.
	MaxLen int
	// Multiline reports that a secret of the rule may hold whitespace (a
	// private key block): it is looked for up to MaxLen past a keyword,
	// not only up to the whitespace after it.
	Multiline bool
}

// rules is a [Detector] made of rules and allow patterns.
type rules struct {
	rules  []Rule
	lower  [][]string // each rule's keywords, lower case
	allow  []*regexp.Regexp
	maxLen int
	// pairs has a bit set for the first two bytes, in lower case, of
	// every keyword, and byPair lists the keywords that start with each:
	// one pass over a text finds every keyword of every rule.
	pairs  [1 << 16 / 64]uint64
	byPair map[uint16][]keyword
}

// keyword is a rule's keyword, in lower case.
type keyword struct {
	rule int
	word string
}

// New returns a detector of rs; a secret that one of allow matches whole
// is not redacted (a known test key, a placeholder). Rules are tried in
// order: where two findings overlap, the one that starts first wins, and
// of two that start together the longer.
func New(rs []Rule, allow []*regexp.Regexp) Detector { return newRules(rs, allow) }

// newRules is New's detector.
func newRules(rs []Rule, allow []*regexp.Regexp) *rules {
	d := &rules{rules: rs, allow: allow, lower: make([][]string, len(rs)), byPair: map[uint16][]keyword{}}
	for i, r := range rs {
		for _, k := range r.Keywords {
			k = asciiLower(k)
			if len(k) < 2 {
				d.lower[i] = nil // a one-byte keyword rules out nothing: scan every text
				break
			}
			d.lower[i] = append(d.lower[i], k)
		}
		for _, k := range d.lower[i] {
			p := uint16(k[0])<<8 | uint16(k[1])
			d.pairs[p/64] |= 1 << (p % 64)
			d.byPair[p] = append(d.byPair[p], keyword{rule: i, word: k})
		}
		d.maxLen = max(d.maxLen, r.MaxLen)
	}
	return d
}

// MaxLen returns the longest secret of any rule.
func (d *rules) MaxLen() int { return d.maxLen }

// Find returns the secrets in text.
//
// A rule with keywords runs only around them: on each stretch of text
// from the whitespace before a keyword to the whitespace after it, at most
// the rule's MaxLen away on either side, since each of its secrets holds
// one of its keywords and, unless the rule is Multiline, no whitespace. Go's regexp runs a pattern with no
// literal prefix at about 10 MB/s; a log has few keywords.
func (d *rules) Find(text string) []Finding {
	var found []Finding
	hits := d.keywords(text)
	for i := range d.rules {
		r := &d.rules[i]
		if len(d.lower[i]) == 0 {
			found = d.findIn(r, text, 0, len(text), found)
			continue
		}
		for _, w := range windows(text, hits[i], r.MaxLen, r.Multiline) {
			found = d.findIn(r, text, w[0], w[1], found)
		}
	}
	return merge(found)
}

// hit is where a keyword is in a text: text[pos:end].
type hit struct{ pos, end int }

// keywords returns, for each rule with keywords, where they are in text,
// compared case-insensitively: one pass over text, a table lookup a byte.
func (d *rules) keywords(text string) map[int][]hit {
	var hits map[int][]hit
	for i := 0; i+1 < len(text); i++ {
		p := uint16(lowerByte(text[i]))<<8 | uint16(lowerByte(text[i+1]))
		if d.pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, k := range d.byPair[p] {
			if hasPrefixFold(text[i:], k.word) {
				if hits == nil {
					hits = map[int][]hit{}
				}
				hits[k.rule] = append(hits[k.rule], hit{i, i + len(k.word)})
			}
		}
	}
	return hits
}

// hasPrefixFold reports whether s starts with lower, a lower-case word,
// ASCII letters compared case-insensitively.
func hasPrefixFold(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for j := 0; j < len(lower); j++ {
		if lowerByte(s[j]) != lower[j] {
			return false
		}
	}
	return true
}

// lowerByte returns c in lower case if it is an ASCII letter.
func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// findIn appends to found the secrets r finds in text[from:to]. A match
// that touches an end of the stretch where that end is not a boundary in
// text (the start of text, or whitespace) is left out: the pattern saw
// a boundary there that text does not have.
func (d *rules) findIn(r *Rule, text string, from, to int, found []Finding) []Finding {
	for _, m := range r.Pattern.FindAllStringSubmatchIndex(text[from:to], -1) {
		if (m[0] == 0 && from > 0 && !isSpace(text[from-1])) || (from+m[1] == to && to < len(text) && !isSpace(text[to-1])) {
			continue
		}
		start, end := from+m[0], from+m[1]
		if len(m) >= 4 && m[2] >= 0 {
			start, end = from+m[2], from+m[3]
		}
		secret := text[start:end]
		if start == end || d.allowed(secret) || r.allowed(secret) || (r.Entropy > 0 && entropy(secret) < r.Entropy) {
			continue
		}
		found = append(found, Finding{Start: start, End: end, Rule: r.ID})
	}
	return found
}

// windows returns the stretches of text around each keyword hit: from
// just after the whitespace before it to just after the whitespace after
// it (unless multiline), each side at most maxLen (and 3 bytes of context
// a pattern may need past the secret) away; overlapping ones merged.
func windows(text string, hits []hit, maxLen int, multiline bool) [][2]int {
	var ws [][2]int
	for _, h := range hits {
		start := max(h.pos-maxLen-1, 0)
		if j := strings.LastIndexAny(text[start:h.pos], spaces); j >= 0 {
			start += j + 1
		}
		end := min(h.end+maxLen+3, len(text))
		if j := strings.IndexAny(text[h.end:end], spaces); !multiline && j >= 0 {
			end = h.end + j + 1
		}
		ws = append(ws, [2]int{start, end})
	}
	if len(ws) < 2 {
		return ws
	}
	slices.SortFunc(ws, func(a, b [2]int) int { return a[0] - b[0] })
	out := ws[:1]
	for _, w := range ws[1:] {
		if last := &out[len(out)-1]; w[0] <= last[1] {
			last[1] = max(last[1], w[1])
		} else {
			out = append(out, w)
		}
	}
	return out
}

// spaces are the bytes isSpace reports.
const spaces = " \t\n\r\f\v"

// isSpace reports whether c is ASCII whitespace, a boundary no secret of
// a rule with keywords crosses.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// allowed reports whether an allow pattern matches secret whole.
func (d *rules) allowed(secret string) bool {
	for _, a := range d.allow {
		if loc := a.FindStringIndex(secret); loc != nil && loc[0] == 0 && loc[1] == len(secret) {
			return true
		}
	}
	return false
}

// allowed reports whether one of r's allow patterns matches in secret.
func (r *Rule) allowed(secret string) bool {
	for _, a := range r.Allow {
		if a.MatchString(secret) {
			return true
		}
	}
	return false
}

// entropy returns the Shannon entropy of s, in bits per byte.
func entropy(s string) float64 {
	var n [256]int
	for i := 0; i < len(s); i++ {
		n[s[i]]++
	}
	h := 0.0
	for _, c := range n {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// merge sorts found by start, the longer first of two that start
// together, and drops each finding that overlaps one kept before it.
func merge(found []Finding) []Finding {
	if len(found) < 2 {
		return found
	}
	slices.SortStableFunc(found, func(a, b Finding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	out := found[:1]
	for _, f := range found[1:] {
		if f.Start >= out[len(out)-1].End {
			out = append(out, f)
		}
	}
	return out
}

// asciiLower returns s with A-Z in lower case and every other byte as it
// is, so that offsets in it are offsets in s (strings.ToLower may change
// lengths).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// marker returns what replaces a secret found by rule.
func marker(rule string) string { return "[redacted: " + rule + "]" }

// Text returns text with each secret d finds replaced by the marker
// "[redacted: RULE]", and the count of redactions by rule; text itself
// and nil counts when it holds none. A nil d finds nothing.
func Text(text string, d Detector) (string, map[string]int) {
	if d == nil {
		return text, nil
	}
	found := d.Find(text)
	if len(found) == 0 {
		return text, nil
	}
	counts := map[string]int{}
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, f := range found {
		b.WriteString(text[at:f.Start])
		b.WriteString(marker(f.Rule))
		counts[f.Rule]++
		at = f.End
	}
	b.WriteString(text[at:])
	return b.String(), counts
}

// defaultRules is the detector of the built-in rules, compiled on first
// use and shared: a compiled regexp is safe for concurrent use.
var defaultRules = sync.OnceValue(func() *rules { return newRules(Builtin(), nil) })

// Default returns the detector of the [Builtin] rules, compiled once per
// process, on first use.
func Default() Detector { return defaultRules() }

// Extend returns a detector that finds what base finds and what rules
// find, less what allow matches whole: the base rules of a program (the
// built-in ones, or gitleaks') with the patterns and allow list of one
// tool. A nil base is none; with no rules and no allow it returns base.
func Extend(base Detector, rs []Rule, allow []*regexp.Regexp) Detector {
	if len(rs) == 0 && len(allow) == 0 {
		return base
	}
	return &extended{base: base, own: newRules(rs, allow)}
}

// extended is a base detector with rules and an allow list of its own.
type extended struct {
	base Detector
	own  *rules
}

func (e *extended) MaxLen() int {
	if e.base == nil {
		return e.own.MaxLen()
	}
	return max(e.base.MaxLen(), e.own.MaxLen())
}

func (e *extended) Find(text string) []Finding {
	found := e.own.Find(text)
	if e.base == nil {
		return found
	}
	for _, f := range e.base.Find(text) {
		if !e.own.allowed(text[f.Start:f.End]) {
			found = append(found, f)
		}
	}
	return merge(found)
}
