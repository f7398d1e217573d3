// Package gitleaks redacts with gitleaks' detector and its default rule
// set (github.com/zricethezav/gitleaks/v8, hundreds of rules: cloud
// keys, API tokens of most SaaS vendors, private keys, and generic
// "secret = ..." assignments) behind the core's [redact.Detector].
//
// It is a module of its own, github.com/toolcap/toolcap/redact/gitleaks,
// so that the core library does not bring gitleaks' dependencies (a
// config reader, a git diff parser, archive readers, a terminal styler,
// and more) to every program that caps tool output: the core ships
// [redact.Builtin], a dozen rules with no dependency, and a program that
// wants gitleaks' rules requires this module and passes its detector to
// the policies:
//
//	d, err := gitleaks.New()
//	if err != nil {
//		return err
//	}
//	policies = policies.WithRedactor(d) // a *shape.Policies
//
// Each tool's redact_patterns and redact_allow still apply over it. The
// toolcap command links this module, so that its redaction is gitleaks'.
//
// Build one detector per process: [New] compiles every rule's pattern.
// A [Detector] is safe for concurrent use.
package gitleaks
