package shape_test

import (
	"testing"

	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/redact"
)

// TestRedactor: policies are uniform when no tool has a redaction of its
// own, and then name the default's detector.
func TestRedactor(t *testing.T) {
	d := redact.Default()
	def := shape.Policy{MaxBytes: 4096, Redact: d}
	tests := []struct {
		name        string
		p           *shape.Policies
		wantD       redact.Detector
		wantUniform bool
	}{
		{"nil", nil, d, true},
		{"default only", shape.NewPolicies(shape.PoliciesConfig{Default: def, Redactions: map[string]shape.Redaction{"": {On: true}}}), d, true},
		{"per-tool limit only", shape.NewPolicies(shape.PoliciesConfig{Default: def, PerTool: map[string]shape.Policy{"Bash": def},
			Redactions: map[string]shape.Redaction{"": {On: true}}}), d, true},
		{"per-tool redaction", shape.NewPolicies(shape.PoliciesConfig{Default: def, PerTool: map[string]shape.Policy{"Bash": {MaxBytes: 4096}},
			Redactions: map[string]shape.Redaction{"": {On: true}, "Bash": {}}}), nil, false},
		{"off", shape.NewPolicies(shape.PoliciesConfig{Default: shape.Policy{MaxBytes: 4096}}), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotD, gotUniform := shape.Redactor(tt.p)
			if gotD != tt.wantD || gotUniform != tt.wantUniform {
				t.Errorf("Redactor() = %v, %t; want %v, %t", gotD, gotUniform, tt.wantD, tt.wantUniform)
			}
		})
	}
}
