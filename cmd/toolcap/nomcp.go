//go:build toolcap_nomcp

package main

import (
	"github.com/toolcap/toolcap/cli"
	"github.com/toolcap/toolcap/redact/gitleaks"
)

// options are gitleaks' rules for redaction in the hook-only build, as in
// the full one: a detector of them costs a few hundred microseconds to
// build (its patterns are compiled as a payload's keywords need them).
// It links neither the exact tokenizers nor the Redis store, so that it
// starts as fast as it can.
func options() []cli.Option { return []cli.Option{cli.WithRedactor(gitleaks.New())} }
