// Package redact finds secrets in tool output and replaces each with a
// marker that names the rule that found it:
//
//	[redacted: aws-access-token]
//
// toolcap redacts before it cuts and before it keeps anything: the stage is
// pinned before the cap, so the store, the history, the marker's figures
// and the logs only ever hold redacted text. A [Detector] finds the
// secrets; [Builtin] rules cover the common credentials with no dependency,
// and the module github.com/toolcap/toolcap/redact/gitleaks has gitleaks'
// default rule set, two hundred rules, run by the same engine.
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
	// Expr, for a rule whose Pattern is nil, is the pattern's source,
	// compiled the first time the rule runs (one of its keywords is in a
	// text), so that a set of hundreds of rules costs nothing to build
	// and only the rules whose keywords a text holds are compiled. It
	// must compile: Find panics on one that does not, as
	// regexp.MustCompile does.
	Expr string
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
	// Secret, when set, tells the secret of a match in place of the
	// first submatch, Entropy and Allow, for a rule set whose rules
	// judge their matches in ways of their own (gitleaks': a numbered
	// secret group, allowlists of the whole match or its line, stop
	// words): given the text Find was given and the match's submatches
	// in it, as regexp's FindStringSubmatchIndex gives them, it returns
	// where the secret is in text, or ok false when the match holds
	// none. It must be safe for concurrent use and keep nothing of text.
	Secret func(text string, match []int) (start, end int, ok bool)
	// MaxLen is the longest secret the rule matches, in bytes.
	MaxLen int
	// Multiline reports that a secret of the rule may hold whitespace (a
	// private key block, a password after "password = "): it is looked
	// for up to MaxLen on either side of a keyword, not only up to the
	// whitespace around it.
	Multiline bool
}

// rules is a [Detector] made of rules and allow patterns.
type rules struct {
	rules  []Rule
	lower  [][]string // each rule's keywords, lower case
	allow  []*regexp.Regexp
	maxLen int
	// pattern returns each rule's pattern, compiled on first use, and
	// plan its plan (see plan), worked out on first use: nil for a rule
	// without keywords, or whose pattern does not parse.
	pattern []func() *regexp.Regexp
	plan    []func() *plan
	// pairs has a bit set for the first two bytes, in lower case, of
	// every keyword, short for those of the keywords of two bytes, and
	// triples for (a hash of) the first three of the others; byPair
	// lists the keywords that start with each pair: one pass over a text
	// finds every keyword of every rule. With gitleaks' hundreds of
	// keywords, a third of a text's pairs of letters start one, and the
	// third byte rules most of those out.
	pairs, short, triples [1 << 16 / 64]uint64
	byPair                pairTable
}

// keyword is a rule's keyword, in lower case.
type keyword struct {
	rule int
	word string
}

// New returns a detector of rs; a secret that one of allow matches whole
// is not redacted (a known test key, a placeholder). Where two findings
// overlap they are made one, named by the one that starts first (of two
// that start together, the longer; of two the same, the rule first in
// rs), so that no byte of either is left.
func New(rs []Rule, allow []*regexp.Regexp) Detector { return newRules(rs, allow) }

// newRules is New's detector.
func newRules(rs []Rule, allow []*regexp.Regexp) *rules {
	d := &rules{rules: rs, allow: allow, lower: make([][]string, len(rs)),
		pattern: make([]func() *regexp.Regexp, len(rs)), plan: make([]func() *plan, len(rs))}
	byPair := map[uint16][]keyword{}
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
			if len(k) == 2 {
				d.short[p/64] |= 1 << (p % 64)
			} else {
				t := triple(p, k[2])
				d.triples[t/64] |= 1 << (t % 64)
			}
			byPair[p] = append(byPair[p], keyword{rule: i, word: k})
		}
		d.maxLen = max(d.maxLen, r.MaxLen)
		expr := r.Expr
		if re := r.Pattern; re != nil {
			d.pattern[i] = func() *regexp.Regexp { return re }
			expr = re.String()
		} else {
			d.pattern[i] = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
		}
		if kws := d.lower[i]; len(kws) > 0 {
			d.plan[i] = sync.OnceValue(func() *plan { return newPlan(expr, kws) })
		}
	}
	d.byPair = newPairTable(byPair)
	return d
}

// MaxLen returns the longest secret of any rule.
func (d *rules) MaxLen() int { return d.maxLen }

// Find returns the secrets in text.
//
// A rule with keywords runs only around them: each of its secrets holds
// one, so its pattern runs on the stretch of text around each keyword
// that a match can reach, as the rule's plan bounds it (see plan), and,
// unless the rule is Multiline, no further than the whitespace around
// the keyword. Go's regexp runs a pattern with no literal prefix at
// about 10 MB/s, and some of gitleaks' at 1 MB/s; a log has few
// keywords.
func (d *rules) Find(text string) []Finding {
	var found []Finding
	hits := d.keywords(text)
	for i := range d.rules {
		r := &d.rules[i]
		if len(d.lower[i]) == 0 {
			found = d.findIn(r, d.pattern[i](), text, 0, len(text), nil, found)
			continue
		}
		if len(hits[i]) == 0 {
			continue
		}
		ws := d.windows(text, i, hits[i])
		var seen map[string][][]int
		if len(ws) > 1 {
			seen = map[string][][]int{}
		}
		for _, w := range ws {
			found = d.findIn(r, d.pattern[i](), text, w[0], w[1], seen, found)
		}
	}
	return merge(found)
}

// hit is where a keyword is in a text: text[pos:end].
type hit struct {
	pos, end int
	word     string // the keyword, in lower case
}

// keywords returns, for each rule with keywords, where they are in text,
// compared case-insensitively: one pass over text, a table lookup a byte.
func (d *rules) keywords(text string) map[int][]hit {
	var hits map[int][]hit
	for i := 0; i+1 < len(text); i++ {
		p := uint16(lowerASCII[text[i]])<<8 | uint16(lowerASCII[text[i+1]])
		if d.pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		if d.short[p/64]&(1<<(p%64)) == 0 {
			// No two-byte keyword: test the third byte too.
			if i+2 >= len(text) {
				continue
			}
			if t := triple(p, lowerASCII[text[i+2]]); d.triples[t/64]&(1<<(t%64)) == 0 {
				continue
			}
		}
		for _, k := range d.byPair.get(p) {
			if hasPrefixFold(text[i:], k.word) {
				if hits == nil {
					hits = map[int][]hit{}
				}
				hits[k.rule] = append(hits[k.rule], hit{i, i + len(k.word), k.word})
			}
		}
	}
	return hits
}

// triple returns the bit of a keyword's first three bytes, in lower case,
// the first two as p, in rules.triples.
func triple(p uint16, c byte) uint16 {
	return uint16((uint32(p)<<8 | uint32(c)) * 0x9e3779b1 >> 16)
}

// pairTable maps the first two bytes of keywords to the keywords, an
// open-addressed hash table: a text's pass looks it up at every pair of
// bytes some keyword starts with, and a map's lookup was most of the
// pass's time.
type pairTable struct {
	keys  []uint32 // a pair, or'ed with 1<<16 when the slot is used
	words [][]keyword
}

// newPairTable returns the table of the keywords by pair.
func newPairTable(byPair map[uint16][]keyword) pairTable {
	n := 16
	for n < 4*len(byPair) {
		n *= 2
	}
	t := pairTable{keys: make([]uint32, n), words: make([][]keyword, n)}
	for p, ks := range byPair {
		i := t.slot(p)
		t.keys[i] = uint32(p) | 1<<16
		t.words[i] = ks
	}
	return t
}

// slot returns the slot of p: where it is, or where it would go.
func (t pairTable) slot(p uint16) int {
	mask := len(t.keys) - 1
	i := int(uint32(p)*0x9e3779b1>>16) & mask
	for t.keys[i] != 0 && t.keys[i] != uint32(p)|1<<16 {
		i = (i + 1) & mask
	}
	return i
}

// get returns the keywords that start with p.
func (t pairTable) get(p uint16) []keyword {
	if len(t.keys) == 0 {
		return nil
	}
	return t.words[t.slot(p)]
}

// lowerASCII maps each byte to itself in lower case, if an ASCII letter.
var lowerASCII = func() (t [256]byte) {
	for c := range t {
		t[c] = lowerByte(byte(c))
	}
	return t
}()

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

// findIn appends to found the secrets r, of pattern re, finds in
// text[from:to]. A match that touches an end of the stretch where text
// goes on in a word is left out: the pattern saw a word boundary there
// that text does not have. seen, when set, holds the pattern's matches
// in the stretches of text it ran on before, by their text: a log's lines
// repeat, and a pattern on a stretch of tens of bytes can take
// microseconds.
func (d *rules) findIn(r *Rule, re *regexp.Regexp, text string, from, to int, seen map[string][][]int, found []Finding) []Finding {
	var ms [][]int
	if seen != nil {
		var ok bool
		if ms, ok = seen[text[from:to]]; !ok {
			ms = re.FindAllStringSubmatchIndex(text[from:to], -1)
			seen[text[from:to]] = ms
		}
	} else {
		ms = re.FindAllStringSubmatchIndex(text[from:to], -1)
	}
	for _, m := range ms {
		if (m[0] == 0 && from > 0 && isWord(text[from-1])) || (from+m[1] == to && to < len(text) && !isSpace(text[to-1])) {
			continue
		}
		m = slices.Clone(m)
		for j := range m {
			if m[j] >= 0 {
				m[j] += from
			}
		}
		start, end := m[0], m[1]
		if r.Secret != nil {
			var ok bool
			if start, end, ok = r.Secret(text, m); !ok || d.allowed(text[start:end]) {
				continue
			}
			found = append(found, Finding{Start: start, End: end, Rule: r.ID})
			continue
		}
		if len(m) >= 4 && m[2] >= 0 {
			start, end = m[2], m[3]
		}
		secret := text[start:end]
		if start == end || d.allowed(secret) || r.allowed(secret) || (r.Entropy > 0 && entropy(secret) < r.Entropy) {
			continue
		}
		found = append(found, Finding{Start: start, End: end, Rule: r.ID})
	}
	return found
}

// windows returns the stretches of text where rule i may have a secret,
// given where its keywords are: around each keyword, as far as the
// rule's plan lets a match reach and its own bounds allow (MaxLen away,
// and for a rule not Multiline, the whitespace before and after the
// keyword), with a byte more at either end, so that what a pattern looks
// at around a match is in the stretch, and at the start out to the start
// of a word the stretch would cut, so that no match starts at a word
// boundary text does not have; overlapping ones merged. A keyword where
// the plan's test fails has none.
func (d *rules) windows(text string, i int, hits []hit) [][2]int {
	r := &d.rules[i]
	p := d.plan[i]()
	var ws [][2]int
	for _, h := range hits {
		start := max(h.pos-r.MaxLen-1, 0)
		end := min(h.end+r.MaxLen+3, len(text))
		if !r.Multiline {
			if j := lastIndexSpace(text[start:h.pos]); j >= 0 {
				start += j + 1
			}
			if j := indexSpace(text[h.end:end]); j >= 0 {
				end = h.end + j + 1
			}
		}
		if p == nil {
			ws = append(ws, [2]int{start, end})
			continue
		}
		for _, b := range p.branches {
			if b.loose {
				ws = append(ws, [2]int{start, end})
				continue
			}
			to := min(forward(text, h.pos, end, b.after)+1, end)
			from := start
			if b.test != nil {
				at := h.pos
				if b.words != nil {
					if !b.words[h.word] {
						continue
					}
					at = h.end
					if b.first != nil && !leads(text[at:to], b.skip, b.first, b.reach) {
						continue
					}
				}
				if to-at < b.min || !b.test.MatchString(text[at:to]) {
					continue
				}
				from = max(backward(text, h.pos, start, b.before)-1, start)
			} else {
				// The keyword is anywhere in a match: b.before bounds
				// the whole match, back from the keyword's end.
				from = max(backward(text, h.end, start, b.before)-1, start)
			}
			for k := 0; k < contextBytes && from > 0 && isWord(text[from-1]); k++ {
				from--
			}
			ws = append(ws, [2]int{from, to})
		}
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

// isWord reports whether c is an ASCII word character, as \b sees one.
func isWord(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// isSpace reports whether c is ASCII whitespace, a boundary no secret of
// a rule with keywords crosses, unless the rule is Multiline.
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
// together, and folds each finding that overlaps one kept before it into
// that one, which then ends where the later of the two ends.
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
		if last := &out[len(out)-1]; f.Start < last.End {
			last.End = max(last.End, f.End)
			continue
		}
		out = append(out, f)
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
