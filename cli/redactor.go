package cli

import (
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/redact"
)

// WithRedactor makes every command redact secrets with d in place of the
// built-in rules ([redact.Default]): cap, read, hook, mcp (and its
// reloads) and demo, each tool's redact_patterns and redact_allow still
// applied over it, and a tool with redact = false still redacting
// nothing. The toolcap command passes gitleaks' rules (module
// github.com/toolcap/toolcap/redact/gitleaks). A nil d leaves the
// built-in rules.
func WithRedactor(d redact.Detector) Option {
	return func(o *options) { o.redactor = d }
}

// redacting returns p redacting with the detector of WithRedactor, or p
// itself without one.
func (o *options) redacting(p *shape.Policies) *shape.Policies {
	if o.redactor == nil {
		return p
	}
	return p.WithRedactor(o.redactor)
}

// defaultRedactor returns the detector of a policy that no manifest set:
// WithRedactor's, else the built-in rules.
func (o *options) defaultRedactor() redact.Detector {
	if o.redactor == nil {
		return redact.Default()
	}
	return o.redactor
}
