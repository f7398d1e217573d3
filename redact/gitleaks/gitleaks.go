package gitleaks

//go:generate go run ./internal/rulegen

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/toolcap/toolcap/redact"
)

// MaxLen is the longest secret a [Detector] is sure to find whole in a
// stream ([redact.Writer] holds this many bytes back), and the farthest
// from its keyword a rule looks for one: 16 KiB. Most of gitleaks' rules
// bound their secrets to a few hundred bytes; the private key rule does
// not, and a PEM private key runs to about 6.5 KB for an 8192-bit RSA
// key (a PGP key block with subkeys to more).
const MaxLen = 16 << 10

// Detector finds secrets with gitleaks' default rules (the
// config/gitleaks.toml of the gitleaks release in rules_gen.go's header),
// run by package redact's engine: a rule's pattern runs only around its
// keywords, and is compiled the first time one of them is in a text. It
// implements [redact.Detector] and is safe for concurrent use.
type Detector struct {
	d redact.Detector
}

var _ redact.Detector = (*Detector)(nil)

// New returns a detector of gitleaks' default rules. It compiles nothing:
// each rule's patterns are compiled the first time a text holds one of
// its keywords, once per detector, so that a process that scans a few
// small texts compiles a few of the rules.
//
// It finds what gitleaks' own detector finds in a text, as gitleaks scans
// a text with no path (TestRuleSamples and TestSamplesAsGitleaks compare
// the two on the samples of gitleaks' rule tests), but for four things,
// all for text that a tool printed rather than a repository: a
// "gitleaks:allow" comment in a line does not exempt the line's secrets
// (a tool's output is not a reviewed source file); nothing is decoded
// (gitleaks can look inside base64, hex and percent encoding, and then
// reports what it decoded, which is not in the text to redact); where
// gitleaks reports a few bytes of a longer secret (jwt-base64's first
// group names the JWT's header field, microsoft-teams-webhook's is a
// part of the URL), the whole match is redacted; and a rule whose match
// need not hold its keyword (facebook-access-token, airtable's) looks
// for it within MaxLen of a keyword, where gitleaks looks in the whole
// text once it holds one. The rules gitleaks scopes to a file path (a
// Kubernetes secret in YAML, a password in a NuGet config, and the like)
// are left out: a tool's output has no path.
func New() *Detector {
	return &Detector{d: redact.New(rules(), nil)}
}

// Rules returns the IDs of the rules the detector runs, sorted.
func (d *Detector) Rules() []string {
	ids := make([]string, len(table))
	for i := range table {
		ids[i] = table[i].id
	}
	slices.Sort(ids)
	return ids
}

// MaxLen returns [MaxLen].
func (d *Detector) MaxLen() int { return MaxLen }

// Find returns the secrets gitleaks' rules find in text: for each match
// of a rule, the rule's secret group (else its first group that is not
// empty, else the whole match), named by the rule's ID. Where two
// findings overlap they are made one, named by the one that starts
// first, so that no byte of either is left; of two findings of the same
// bytes, a rule not generic names it, as gitleaks prefers.
func (d *Detector) Find(text string) []redact.Finding { return d.d.Find(text) }

// rules returns the table as redact's rules. Their patterns are the
// table's, compiled by redact on first use; the judges of their matches
// share compiled allowlists across every detector of the process.
var rules = sync.OnceValue(func() []redact.Rule {
	rs := make([]redact.Rule, len(table))
	for i := range table {
		t := &table[i]
		rs[i] = redact.Rule{
			ID:       t.id,
			Expr:     t.expr,
			Keywords: t.keywords,
			Secret:   t.secret,
			MaxLen:   MaxLen,
			// Whether a match may hold whitespace, and how far from
			// a keyword it can reach, redact works out from the
			// pattern.
			Multiline: true,
		}
	}
	return rs
})

// rule is one of gitleaks' rules, as rulegen writes it.
type rule struct {
	id       string
	expr     string
	keywords []string
	// entropy is the Shannon entropy a secret must exceed; 0 for none.
	entropy float64
	// group is the secret group; 0 for the first group not empty.
	group int
	// whole reports that the secret is the whole match.
	whole bool
	allow []allowlist
}

// allowlist is one of gitleaks' allowlists: a finding that one of its
// regexes matches in the target (or, when and, that all of its kinds of
// check allow), or whose secret holds one of its stop words, is not a
// secret.
type allowlist struct {
	// target is what regexes are matched against: "" the secret, "match"
	// the rule's whole match, "line" its lines.
	target    string
	and       bool
	regexes   []string
	stopwords []string

	once sync.Once
	re   *regexp.Regexp
	stop stopwords
}

// compile compiles a's regexes into one and indexes its stop words.
func (a *allowlist) compile() {
	a.once.Do(func() {
		if len(a.regexes) > 0 {
			// One pattern of all, as gitleaks joins them.
			a.re = regexp.MustCompile("(?:" + strings.Join(a.regexes, "|") + ")")
		}
		a.stop = newStopwords(a.stopwords)
	})
}

// allows reports whether a allows the finding of secret in the match
// text[start:end] (gitleaks' match, trimmed of newlines at either end,
// starting at start0 before the trim), as gitleaks' checkFindingAllowed
// judges a finding of a text with no path and no commit.
func (a *allowlist) allows(text string, start0, start, end int, secret string) bool {
	a.compile()
	var checks []bool
	if a.re != nil {
		target := secret
		switch a.target {
		case "match":
			target = text[start:end]
		case "line":
			target = line(text, start0, start0+end-start)
		}
		checks = append(checks, target != "" && a.re.MatchString(target))
	}
	if len(a.stopwords) > 0 {
		checks = append(checks, secret != "" && a.stop.in(strings.ToLower(secret)))
	}
	if a.and {
		return !slices.Contains(checks, false)
	}
	return slices.Contains(checks, true)
}

// secret is the judge of a match of r (see redact.Rule.Secret), as
// gitleaks' detectRule judges one: the match trimmed of newlines; the
// secret group, else the first group not empty, else the whole match;
// an entropy over the rule's; then the global allowlists and the rule's.
func (r *rule) secret(text string, m []int) (int, int, bool) {
	start, end := m[0], m[1]
	for start < end && text[start] == '\n' {
		start++
	}
	for end > start && text[end-1] == '\n' {
		end--
	}
	s, e := start, end
	if len(m) >= 4 && !r.whole {
		if r.group > 0 {
			if 2*r.group+1 >= len(m) || m[2*r.group] < 0 {
				return 0, 0, false
			}
			s, e = m[2*r.group], m[2*r.group+1]
		} else {
			for g := 2; g+1 < len(m); g += 2 {
				if m[g] >= 0 && m[g] < m[g+1] {
					s, e = m[g], m[g+1]
					break
				}
			}
		}
		// A group that held a newline trimmed from the match.
		s, e = max(s, start), min(e, end)
	}
	if s >= e {
		return 0, 0, false
	}
	secret := text[s:e]
	if r.entropy != 0 && shannon(secret) <= r.entropy {
		return 0, 0, false
	}
	for i := range globalAllow {
		if globalAllow[i].allows(text, m[0], start, end, secret) {
			return 0, 0, false
		}
	}
	for i := range r.allow {
		if r.allow[i].allows(text, m[0], start, end, secret) {
			return 0, 0, false
		}
	}
	return s, e, true
}

// shannon returns the Shannon entropy of s as gitleaks computes it: of
// its runes, over its length in bytes.
func shannon(s string) float64 {
	var ascii [utf8.RuneSelf]int
	var other map[rune]int
	for _, c := range s {
		if c < utf8.RuneSelf {
			ascii[c]++
			continue
		}
		if other == nil {
			other = map[rune]int{}
		}
		other[c]++
	}
	h := 0.0
	inv := 1 / float64(len(s))
	add := func(n int) {
		if n > 0 {
			p := float64(n) * inv
			h -= p * math.Log2(p)
		}
	}
	for _, n := range ascii {
		add(n)
	}
	for _, n := range other {
		add(n)
	}
	return h
}

// line returns the line of a match at text[start:end], as gitleaks'
// location finds it for an allowlist of target "line": from the newline
// before the match (the start of text on the first line) to the newline
// after it; but for a match after the last newline, from the start of
// text to the end of the match's line (gitleaks' location does so).
func line(text string, start, end int) string {
	if !strings.Contains(text, "\n") {
		return text[:max(len(text), end)]
	}
	from, to := 0, -1
	if j := strings.IndexByte(text[min(start+1, len(text)):], '\n'); j >= 0 {
		to = min(start+1, len(text)) + j // the first newline after start
		if k := strings.LastIndexByte(text[:start+1], '\n'); k >= 0 {
			from = k
		}
	} else {
		// After the last newline.
		i := end
		for i < len(text) && text[i] != '\n' && text[i] != '\r' {
			i++
		}
		return text[:i]
	}
	if end > 0 {
		if j := strings.IndexByte(text[min(end, len(text)):], '\n'); j >= 0 {
			to = max(to, end+j)
		}
	}
	return text[from:max(to, end)]
}

// stopwords finds whether a text holds one of a set of words: the words
// by their first two bytes.
type stopwords struct {
	short []string // words of one byte
	pairs map[uint16][]string
}

func newStopwords(words []string) stopwords {
	var s stopwords
	for _, w := range words {
		if len(w) < 2 {
			s.short = append(s.short, w)
			continue
		}
		if s.pairs == nil {
			s.pairs = map[uint16][]string{}
		}
		p := uint16(w[0])<<8 | uint16(w[1])
		s.pairs[p] = append(s.pairs[p], w)
	}
	return s
}

// in reports whether text holds one of the words.
func (s *stopwords) in(text string) bool {
	for _, w := range s.short {
		if strings.Contains(text, w) {
			return true
		}
	}
	if s.pairs == nil {
		return false
	}
	for i := 0; i+1 < len(text); i++ {
		for _, w := range s.pairs[uint16(text[i])<<8|uint16(text[i+1])] {
			if strings.HasPrefix(text[i:], w) {
				return true
			}
		}
	}
	return false
}
