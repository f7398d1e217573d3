// Package ruletest records the samples of gitleaks' own rule tests: the
// true and false positives each rule function of gitleaks'
// cmd/generate/config/rules package hands to utils.Validate (or
// ValidateWithPaths), which check them with a detector of that one rule
// when gitleaks generates its default config.
//
// The package's tests copy gitleaks' rules package from the module cache,
// rewrite its calls of utils.Validate, utils.ValidateWithPaths and
// secrets.NewSecret into calls of this package's functions of the same
// names, and run a main that calls [Main] with every rule function: it
// prints the samples as JSON, each with what the rule alone finds in it.
package ruletest

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/lucasjones/reggen"
	"github.com/zricethezav/gitleaks/v8/cmd/generate/config/base"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
)

// Case is the samples of one rule.
type Case struct {
	// Func is the rule function of gitleaks' rules package.
	Func string
	// Rule is its rule ID.
	Rule string
	// PathOnly reports a rule that matches a file path, not text.
	PathOnly bool `json:",omitempty"`
	// Path reports a rule scoped to file paths: its samples have one.
	Path bool `json:",omitempty"`
	// TPs are the true positives, FPs the false positives.
	TPs, FPs []Sample
}

// Sample is one sample text.
type Sample struct {
	Text string
	// Path is the sample's file path, of a rule scoped to file paths.
	Path string `json:",omitempty"`
	// Secrets are the secrets the rule alone finds in Text (at Path), as
	// gitleaks' own validation runs it.
	Secrets []string `json:",omitempty"`
}

// Func is a rule function of gitleaks' rules package, by name.
type Func struct {
	Name string
	Fn   func() *config.Rule
}

// cases are those recorded so far.
var cases []Case

// Validate records the samples of rule r, as utils.Validate checks them,
// sorted: gitleaks' rules build some of theirs from a map, in an order
// that changes from run to run.
func Validate(r config.Rule, tps, fps []string) *config.Rule {
	d := singleRuleDetector(&r)
	c := Case{Rule: r.RuleID}
	for _, s := range slices.Sorted(slices.Values(tps)) {
		c.TPs = append(c.TPs, sample(d, s, ""))
	}
	for _, s := range slices.Sorted(slices.Values(fps)) {
		c.FPs = append(c.FPs, sample(d, s, ""))
	}
	cases = append(cases, c)
	return &r
}

// ValidateWithPaths records the samples of rule r, each at a file path,
// as utils.ValidateWithPaths checks them.
func ValidateWithPaths(r config.Rule, tps, fps map[string]string) *config.Rule {
	d := singleRuleDetector(&r)
	c := Case{Rule: r.RuleID, PathOnly: r.Regex == nil, Path: true}
	for _, p := range slices.Sorted(maps.Keys(tps)) {
		c.TPs = append(c.TPs, sample(d, tps[p], p))
	}
	for _, p := range slices.Sorted(maps.Keys(fps)) {
		c.FPs = append(c.FPs, sample(d, fps[p], p))
	}
	cases = append(cases, c)
	return &r
}

// sample returns text at path and the secrets d finds in it.
func sample(d *detect.Detector, text, path string) Sample {
	s := Sample{Text: text, Path: path}
	//lint:ignore SA1019 gitleaks v8 detects a path-bound rule only through detect.Fragment; sources.Fragment is v9's
	for _, f := range d.Detect(detect.Fragment{Raw: text, FilePath: path}) {
		s.Secrets = append(s.Secrets, f.Secret)
	}
	slices.Sort(s.Secrets)
	return s
}

// singleRuleDetector returns a detector of r and gitleaks' global
// allowlist, as gitleaks' utils.createSingleRuleDetector builds it.
func singleRuleDetector(r *config.Rule) *detect.Detector {
	seen := map[string]struct{}{}
	var keywords []string
	for _, k := range r.Keywords {
		k = strings.ToLower(k)
		if _, ok := seen[k]; !ok {
			seen[k] = struct{}{}
			keywords = append(keywords, k)
		}
	}
	r.Keywords = keywords
	cfg := base.CreateGlobalConfig()
	cfg.Rules = map[string]config.Rule{r.RuleID: *r}
	cfg.Keywords = seen
	for _, a := range cfg.Allowlists {
		if err := a.Validate(); err != nil {
			panic(err)
		}
	}
	return detect.NewDetector(cfg)
}

// generated counts the secrets generated of each pattern.
var generated = map[string]int64{}

// NewSecret returns a string that regex matches, as gitleaks'
// secrets.NewSecret does, but the same in every run: the generator is
// seeded by the pattern and how many secrets of it were generated before,
// where gitleaks' seeds it with the time.
func NewSecret(regex string) string {
	g, err := reggen.NewGenerator(regex)
	if err != nil {
		panic(err)
	}
	h := fnv.New64a()
	io.WriteString(h, regex)
	g.SetSeed(int64(h.Sum64()) + generated[regex])
	generated[regex]++
	return g.Generate(1)
}

// Main calls each rule function and writes the samples they validate to
// w, as a JSON array of [Case]; a rule function that validates nothing
// has a case with no samples.
func Main(w io.Writer, funcs []Func) error {
	var all []Case
	for _, f := range funcs {
		cases = nil
		r := f.Fn()
		if len(cases) == 0 {
			cases = []Case{{Rule: r.RuleID}}
		}
		for _, c := range cases {
			c.Func = f.Name
			all = append(all, c)
		}
	}
	e := json.NewEncoder(w)
	e.SetIndent("", "\t")
	return e.Encode(all)
}
