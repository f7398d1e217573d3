package bench

import (
	"testing"

	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/shape"
)

// policiesOf returns the policies of m, failing tb if m is invalid.
func policiesOf(tb testing.TB, m *manifest.WorkerManifest) *shape.Policies {
	tb.Helper()
	p, err := m.Policies()
	if err != nil {
		tb.Fatalf("policies: %v", err)
	}
	return p
}
