package redact

import "regexp"

// Builtin returns the rules the core ships, which need no dependency: the
// credentials an agent's tools most often print (a private key block, AWS
// access keys, GitHub tokens, Anthropic and OpenAI API keys, JWTs, the
// password of a URL). Their IDs and patterns are gitleaks' (v8.30) where
// gitleaks has the rule, so that a marker names the same rule whichever
// detector found it. Each call returns new rules (compiled once per call):
// build a detector once and keep it.
func Builtin() []Rule {
	return []Rule{
		{
			ID:        "private-key",
			Pattern:   regexp.MustCompile(`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]{64,}?KEY(?: BLOCK)?-----`),
			Keywords:  []string{"-----begin"},
			MaxLen:    16 << 10, // a 8192-bit RSA key in PEM is about 6.5 KB
			Multiline: true,
		},
		{
			ID:       "aws-access-token",
			Pattern:  regexp.MustCompile(`\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b`),
			Keywords: []string{"a3t", "akia", "asia", "abia", "acca"},
			Entropy:  3,
			Allow:    []*regexp.Regexp{regexp.MustCompile(`.+EXAMPLE$`)},
			MaxLen:   20,
		},
		{
			ID:       "github-pat",
			Pattern:  regexp.MustCompile(`ghp_[0-9a-zA-Z]{36}`),
			Keywords: []string{"ghp_"},
			Entropy:  3,
			MaxLen:   40,
		},
		{
			ID:       "github-fine-grained-pat",
			Pattern:  regexp.MustCompile(`github_pat_\w{82}`),
			Keywords: []string{"github_pat_"},
			Entropy:  3,
			MaxLen:   93,
		},
		{
			ID:       "github-oauth",
			Pattern:  regexp.MustCompile(`gho_[0-9a-zA-Z]{36}`),
			Keywords: []string{"gho_"},
			Entropy:  3,
			MaxLen:   40,
		},
		{
			ID:       "github-app-token",
			Pattern:  regexp.MustCompile(`(?:ghu|ghs)_[0-9a-zA-Z]{36}`),
			Keywords: []string{"ghu_", "ghs_"},
			Entropy:  3,
			MaxLen:   40,
		},
		{
			ID:       "github-refresh-token",
			Pattern:  regexp.MustCompile(`ghr_[0-9a-zA-Z]{36}`),
			Keywords: []string{"ghr_"},
			Entropy:  3,
			MaxLen:   40,
		},
		{
			ID:       "anthropic-api-key",
			Pattern:  regexp.MustCompile(`\b(sk-ant-api03-[a-zA-Z0-9_\-]{93}AA)(?:[\x60'"\s;]|\\[nr]|$)`),
			Keywords: []string{"sk-ant-api03"},
			MaxLen:   110,
		},
		{
			ID:       "anthropic-admin-api-key",
			Pattern:  regexp.MustCompile(`\b(sk-ant-admin01-[a-zA-Z0-9_\-]{93}AA)(?:[\x60'"\s;]|\\[nr]|$)`),
			Keywords: []string{"sk-ant-admin01"},
			MaxLen:   112,
		},
		{
			ID:       "openai-api-key",
			Pattern:  regexp.MustCompile(`\b(sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20})(?:[\x60'"\s;]|\\[nr]|$)`),
			Keywords: []string{"t3blbkfj"},
			Entropy:  3,
			MaxLen:   170,
		},
		{
			ID:      "jwt",
			Pattern: regexp.MustCompile(`\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?)(?:[\x60'"\s;]|\\[nr]|$)`),
			// gitleaks' keyword is "ey"; a JWT's header is JSON, so it
			// starts "eyJ", and "ey" alone sends the pattern through
			// most English text ("key", "they").
			Keywords: []string{"eyj"},
			Entropy:  3,
			MaxLen:   8 << 10,
		},
		{
			// Not a gitleaks rule: the password of a URL's userinfo, as in
			// postgres://app:s3cret@db:5432/app or a git remote with a
			// token; the scheme and user stay.
			ID:       "url-password",
			Pattern:  regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@'"]{1,100}:([^\s@/'"]{1,200})@`),
			Keywords: []string{"://"},
			// What a redacted or templated URL shows in place of a
			// password: net/url's xxxxx, ***, <password>, $PASSWORD.
			Allow:  []*regexp.Regexp{regexp.MustCompile(`^(?:x+|X+|\*+|<[^>]*>|\$\{?\w+\}?|%s)$`)},
			MaxLen: 330,
		},
	}
}
