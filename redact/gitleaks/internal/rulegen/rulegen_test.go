package main

import (
	"bytes"
	"os"
	"testing"
)

// TestUpToDate fails when rules_gen.go is not what rulegen writes from
// the gitleaks release go.mod requires: after a new release is required,
// run go generate in redact/gitleaks.
func TestUpToDate(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../rules_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("rules_gen.go is stale against gitleaks' default config: run go generate in redact/gitleaks")
	}
}
