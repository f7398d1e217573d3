package gitleaks_test

import (
	"testing"

	"github.com/toolcap/toolcap/internal/redacttest"
	"github.com/toolcap/toolcap/redact/gitleaks"
)

// TestGOROOTFalsePositives counts what gitleaks' rules redact in the Go
// tree's sources, beside the built-in rules' (package redact's test of
// the same name): the figures per MB, by rule, are docs/redaction.md's.
// It fails past 1 per MB, about twice what gitleaks' v8.30.1 rules
// redact (0.51), so that a rule made looser, or a new gitleaks release,
// is noticed.
func TestGOROOTFalsePositives(t *testing.T) {
	redacttest.GOROOTFalsePositives(t, gitleaks.New(), 1.0)
}
