// Package gitleaks redacts with gitleaks' default rules
// (github.com/zricethezav/gitleaks/v8's config/gitleaks.toml, two hundred
// rules: cloud keys, API tokens of most SaaS vendors, private keys, and
// generic "secret = ..." assignments) behind the core's
// [redact.Detector], run by package redact's own engine: a rule's
// pattern runs only around its keywords, and is compiled the first time
// a text holds one of them, so that a detector costs nothing to build and
// a process that scans a few small texts compiles a few rules.
//
// The rules are a table, rules_gen.go, that go generate writes from
// gitleaks' config (internal/rulegen): each rule's ID, pattern, keywords,
// entropy, secret group and allowlists (their regexes, the target each
// tests, their stop words), and the global allowlist. The package does
// not import gitleaks; its tests fail when the table is not what the
// gitleaks release go.mod requires gives, and run the true and false
// positives of gitleaks' own rule tests through it, beside gitleaks'
// detector.
//
// The toolcap command redacts with it (cli.WithRedactor). A Go program
// passes its detector to the policies:
//
//	policies = policies.WithRedactor(gitleaks.New()) // a *shape.Policies
//
// Each tool's redact_patterns and redact_allow still apply over it.
// Build one detector per process and share it: it is safe for concurrent
// use, and compiles each rule once.
package gitleaks
