package redact_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/redact"
)

// windowRules are rules of the shapes gitleaks' rules have, each with
// keywords that every match holds: a name, an assignment and a value
// (whitespace between them), a prefixed token, a token after an
// alternative of prefixes, one of two patterns, a block over lines, and a
// value after a boundary that may be the start of the text.
func windowRules(keywords bool) []redact.Rule {
	rules := []redact.Rule{
		{ID: "assign", Expr: `(?i)[\w.-]{0,50}?(?:access|auth|key|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[\x60'"\s;]|\\[nr]|$)`,
			Keywords: []string{"access", "auth", "key", "token"}},
		{ID: "prefixed", Expr: `\b(tk_[a-zA-Z0-9]{12})(?:[\x60'"\s;]|\\[nr]|$)`, Keywords: []string{"tk_"}},
		{ID: "either", Expr: `\b((?:xa|xb)-[0-9]{6,}|zz\.[a-z]{8})\b`, Keywords: []string{"xa-", "xb-", "zz."}},
		{ID: "two", Expr: `(?i)vendor[ \t]*[:=][ \t]*([0-9a-f]{8})|\bVND([A-Z]{6})\b`, Keywords: []string{"vendor", "vnd"}},
		{ID: "block", Expr: `(?s)-----BEGIN BLOCK-----.{4,200}?-----END BLOCK-----`, Keywords: []string{"-----begin"}},
		{ID: "bounded", Expr: `(?:^|[\s'"=:])(q~[a-z]{6})(?:$|[\s'"])`, Keywords: []string{"q~"}},
	}
	for i := range rules {
		rules[i].MaxLen = 4 << 10
		rules[i].Multiline = true
		if !keywords {
			rules[i].Keywords = nil
		}
	}
	return rules
}

// TestKeywordWindowsFindAsAFullScan: on texts made of the pieces these
// rules' secrets are made of, in random orders, with spaces, newlines
// and quotes between them, rules that run only around their keywords
// (on the stretches their patterns' plans bound) find what the same rules
// find run over the whole text.
func TestKeywordWindowsFindAsAFullScan(t *testing.T) {
	windowed := redact.New(windowRules(true), nil)
	whole := redact.New(windowRules(false), nil)
	pieces := []string{
		"access", "Auth", "KEY", "token", "my_key", "api.token", "tk_", "xa-", "xb-", "zz.", "vendor", "VND", "q~",
		"-----BEGIN BLOCK-----", "-----END BLOCK-----",
		"=", ":", ":=", "=>", ",", "?=", "||", "'", `"`, "`", ";", `\n`,
		"abcdefgh", "ABCDEFGH", "0123456789", "deadbeef", "x9Y8z7W6v5U4", "abcdef", "=/+",
		" ", " ", " ", "\t", "\n", "\n", "  ",
	}
	r := rand.New(rand.NewPCG(7, 8))
	found := 0
	for n := range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(24) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := b.String()
		want, got := whole.Find(text), windowed.Find(text)
		if diff := cmp.Diff(spans(text, want), spans(text, got)); diff != "" {
			t.Fatalf("text %d %q: around keywords (+) and over the whole text (-) differ:\n%s", n, text, diff)
		}
		found += len(want)
	}
	if found < 2000 {
		t.Errorf("%d findings in the texts: too few to tell", found)
	}
}

// spans returns what each finding covers, by rule.
func spans(text string, fs []redact.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %d:%d %q", f.Rule, f.Start, f.End, text[f.Start:f.End]))
	}
	return out
}

// TestExprCompiledOnFirstUse: a rule's Expr is compiled the first time a
// text holds one of its keywords, not before: a detector of a rule whose
// Expr does not compile is built, and finds in text without the keyword,
// and panics on the first text with it, as regexp.MustCompile does.
func TestExprCompiledOnFirstUse(t *testing.T) {
	d := redact.New([]redact.Rule{
		{ID: "broken", Expr: `(unclosed`, Keywords: []string{"unclosed"}, MaxLen: 16},
		{ID: "fine", Expr: `fine-[0-9]{4}`, Keywords: []string{"fine-"}, MaxLen: 9},
	}, nil)
	if got, _ := redact.Text("a fine-1234 text", d); got != "a [redacted: fine] text" {
		t.Errorf("Text = %q", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic on the first text with the broken rule's keyword")
		}
	}()
	d.Find("an unclosed group")
}

// TestSecret: a rule's Secret picks the secret of a match (here its
// second group, as a gitleaks rule's secret group) or rejects it, in
// place of the first group; the detector's allow list still applies.
func TestSecret(t *testing.T) {
	secret := func(text string, m []int) (int, int, bool) {
		if text[m[4]:m[5]] == "placeholder" {
			return 0, 0, false
		}
		return m[4], m[5], true
	}
	d := redact.New([]redact.Rule{{
		ID: "pair", Expr: `(user|svc)=(\w+)`, Keywords: []string{"user=", "svc="}, Secret: secret, MaxLen: 64,
	}}, []*regexp.Regexp{regexp.MustCompile(`allowed`)})
	for text, want := range map[string]string{
		"login user=hunter2 ok":   "login user=[redacted: pair] ok",
		"svc=placeholder":         "svc=placeholder",
		"user=allowed and svc=x9": "user=allowed and svc=[redacted: pair]",
	} {
		if got, _ := redact.Text(text, d); got != want {
			t.Errorf("Text(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestMultilineAcrossSpaces: a Multiline rule finds a secret whose match
// holds spaces and a newline around its keyword, and where its match
// starts before the whitespace before the keyword.
func TestMultilineAcrossSpaces(t *testing.T) {
	d := redact.New([]redact.Rule{{
		ID: "pw", Expr: `(?i)"?\s*password\s*"?\s*[:=]\s*"([^"\s]{8,})"`, Keywords: []string{"password"}, MaxLen: 256, Multiline: true,
	}}, nil)
	text := "config {\n  \"password\" :\n    \"s3cr3t-V4lue\"\n}"
	if got, _ := redact.Text(text, d); got != "config {\n  \"password\" :\n    \"[redacted: pw]\"\n}" {
		t.Errorf("Text = %q", got)
	}
}
