// Package policytest holds what the tests of several packages share to
// build a front end from a manifest.
package policytest

import (
	"testing"

	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/shape"
)

// Of returns the policies of m ((*manifest.WorkerManifest).Policies),
// failing tb when m is invalid.
func Of(tb testing.TB, m *manifest.WorkerManifest) *shape.Policies {
	tb.Helper()
	p, err := m.Policies()
	if err != nil {
		tb.Fatalf("policies: %v", err)
	}
	return p
}
