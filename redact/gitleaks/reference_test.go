package gitleaks_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/toolcap/toolcap/redact"
	"github.com/toolcap/toolcap/redact/gitleaks"
)

// reference is the detector this package's was before it ran gitleaks'
// rules with package redact's engine: gitleaks' own detector, and its
// default rule set (the config/gitleaks.toml gitleaks embeds), its
// findings located in the text. TestRuleSamples and the benchmarks run
// it beside Detector. It is safe for concurrent use: gitleaks' detector
// keeps no state across scans of a string but a byte counter it updates
// atomically.
type reference struct {
	d *detect.Detector
	// whole holds the IDs of the rules whose secret is their whole match
	// though their pattern has groups: see secretIn.
	whole map[string]bool
}

var _ redact.Detector = (*reference)(nil)

// newReference builds a reference detector. It parses the default config
// and compiles every rule's patterns, tens of milliseconds.
//
// It differs from the gitleaks command's scan in two settings, both for
// text that a tool printed rather than a repository: a "gitleaks:allow"
// comment in a line does not exempt the line's secrets (a tool's output
// is not a reviewed source file), and nothing is decoded (gitleaks can
// look inside base64, hex and percent encoding, and then reports what it
// decoded, which is not in the text to redact). Rules that gitleaks
// scopes to a file path (a Kubernetes secret in YAML, a password in a
// NuGet config, and the like) never match: a tool's output has no path.
func newReference() (*reference, error) {
	// gitleaks' NewDetectorDefaultConfig reads the config with the global
	// viper instance, which a program may use for its own; a viper of
	// our own reads it the same way.
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("gitleaks: reading the default config: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("gitleaks: reading the default config: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("gitleaks: translating the default config: %w", err)
	}
	d := detect.NewDetector(cfg)
	d.IgnoreGitleaksAllow = true
	d.MaxDecodeDepth = 0
	whole := map[string]bool{}
	for id, r := range cfg.Rules {
		if r.Regex != nil && r.SecretGroup == 0 && r.Regex.NumSubexp() > 0 && !slices.Contains(r.Regex.SubexpNames()[1:], "") {
			whole[id] = true
		}
	}
	return &reference{d: d, whole: whole}, nil
}

// Rules returns the IDs of the rules the detector runs, sorted.
func (d *reference) Rules() []string {
	return slices.Sorted(maps.Keys(d.d.Config.Rules))
}

// MaxLen returns gitleaks.MaxLen.
func (d *reference) MaxLen() int { return gitleaks.MaxLen }

// Find returns the secrets gitleaks finds in text: for each of its
// findings, the bytes of the secret (the rule's secret group where it has
// one, else its whole match), named by the rule's ID. They are sorted by
// start; where two overlap, the one that starts first wins, and of two
// that start together the longer, and it is extended to the end of the
// other, so that no byte of either is left. A finding that is not where
// gitleaks reports it (none is, of the samples of gitleaks' rule tests)
// has every copy of its secret in text redacted.
func (d *reference) Find(text string) []redact.Finding {
	found, _ := d.find(text)
	return found
}

// find returns the secrets in text, and how many of gitleaks' findings
// are not where it says.
func (d *reference) find(text string) (found []redact.Finding, astray int) {
	fs := d.d.DetectString(text)
	if len(fs) == 0 {
		return nil, 0
	}
	lines := newlines(text)
	found = make([]redact.Finding, 0, len(fs))
	for i := range fs {
		f := &fs[i]
		if start, end, ok := d.locate(text, lines, f); ok {
			found = append(found, redact.Finding{Start: start, End: end, Rule: f.RuleID})
			continue
		}
		// Not where the finding says (gitleaks changed how it reports
		// a location): redact every copy of the secret rather than none.
		astray++
		for at := 0; f.Secret != ""; {
			j := strings.Index(text[at:], f.Secret)
			if j < 0 {
				break
			}
			found = append(found, redact.Finding{Start: at + j, End: at + j + len(f.Secret), Rule: f.RuleID})
			at += j + len(f.Secret)
		}
	}
	return mergeFolded(found), astray
}

// newlines returns the offset of each '\n' in text.
func newlines(text string) []int {
	lines := make([]int, 0, strings.Count(text, "\n"))
	for i := 0; i < len(text); i++ {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			break
		}
		i += j
		lines = append(lines, i)
	}
	return lines
}

// locate returns where in text f's secret is, and whether it is there.
//
// gitleaks reports where its rule's match starts as a line, counted from
// 0, and a column counted from 1 at the newline that ends the line before
// (from the start of text on line 0), so that the match starts at that
// newline's offset plus the column less one. The match it reports is
// trimmed of newlines at either end, and the secret is the rule's secret
// group (else its first non-empty group) in the match, as gitleaks finds
// it by running the rule's pattern on the match again.
//
// A rule whose pattern has groups, all of them named, and no secret group
// (jwt-base64, whose groups name the JWT header field a base64 JWT starts
// with) has its whole match taken for the secret: gitleaks reports the
// first group, ten bytes of the token's header, and redacting those would
// leave the token.
func (d *reference) locate(text string, lines []int, f *report.Finding) (start, end int, ok bool) {
	if f.Secret == "" || f.Match == "" || f.StartLine < 0 || f.StartLine > len(lines) || f.StartColumn < 1 {
		return 0, 0, false
	}
	at := f.StartColumn - 1
	if f.StartLine > 0 {
		at += lines[f.StartLine-1]
	}
	for at < len(text) && text[at] == '\n' {
		at++
	}
	if at > len(text) || !strings.HasPrefix(text[at:], f.Match) {
		return 0, 0, false
	}
	if d.whole[f.RuleID] {
		return at, at + len(f.Match), true
	}
	in := secretIn(d.d.Config.Rules[f.RuleID], f.Match, f.Secret)
	if in < 0 {
		return 0, 0, false
	}
	return at + in, at + in + len(f.Secret), true
}

// secretIn returns the offset of secret in match, which rule matched: of
// the group gitleaks took it from, else of its first copy.
func secretIn(rule config.Rule, match, secret string) int {
	if secret == match {
		return 0
	}
	if rule.Regex != nil {
		m := rule.Regex.FindStringSubmatchIndex(match)
		if len(m) >= 4 {
			if rule.SecretGroup > 0 {
				if g := 2 * rule.SecretGroup; g+1 < len(m) && m[g] >= 0 && match[m[g]:m[g+1]] == secret {
					return m[g]
				}
			} else {
				for g := 2; g+1 < len(m); g += 2 {
					if m[g] >= 0 && m[g] < m[g+1] {
						if match[m[g]:m[g+1]] == secret {
							return m[g]
						}
						break
					}
				}
			}
		}
	}
	return strings.Index(match, secret)
}

// mergeFolded sorts found by start, the longer first of two that start
// together (of two the same, a rule not generic, then the rule whose ID
// sorts first), and folds each finding that overlaps one kept before it
// into that one.
func mergeFolded(found []redact.Finding) []redact.Finding {
	if len(found) < 2 {
		return found
	}
	slices.SortFunc(found, func(a, b redact.Finding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		if a.End != b.End {
			return b.End - a.End
		}
		// gitleaks' order varies: of two rules that find the same bytes,
		// prefer a specific rule to a generic one, as gitleaks does.
		if ga, gb := generic(a.Rule), generic(b.Rule); ga != gb {
			if gb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	out := found[:1]
	for _, f := range found[1:] {
		last := &out[len(out)-1]
		if f.Start < last.End {
			last.End = max(last.End, f.End)
			continue
		}
		out = append(out, f)
	}
	return out
}

// generic reports whether rule is one of gitleaks' generic rules, which
// gitleaks drops a finding of where a specific rule finds the same secret.
func generic(rule string) bool { return strings.Contains(strings.ToLower(rule), "generic") }
