package gitleaks

import "github.com/toolcap/toolcap/redact"

// FindAstray is Find, and how many of gitleaks' findings in text are not
// where it reports them (Find then redacts every copy of their secret).
func (d *Detector) FindAstray(text string) ([]redact.Finding, int) { return d.find(text) }
