package manifest_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/shape"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/redact"
)

// secretText holds a built-in rule's secret, a custom one and an allowed
// example key.
const secretText = "key AKIA2OGYBAH6STMMNXNN, job ci-job-token=0123456789abcdef0123456789abcdef01234567, doc AKIAIOSFODNN7EXAMPLE"

// redactedBy returns what p's policy for tool makes of secretText.
func redactedBy(p *shape.Policies, tool string) string {
	out, _ := redact.Text(secretText, p.For(tool).Redact)
	return out
}

// TestRedactionLayers: redact, redact_patterns and redact_allow, at the
// top and per tool, through a file and the environment, resolve to each
// tool's detector (issue 37).
func TestRedactionLayers(t *testing.T) {
	file := manifest.Bytes("a.toml", []byte(`
[worker.tool_output]
redact_patterns = ['ci-job-token=([a-f0-9]{40})']
[worker.tool_output.per_tool]
Bash = { redact = false }
Read = { redact_allow = ['AKIA2OGYBAH6STMMNXNN'] }
`))
	env := manifest.Environ([]string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Grep__REDACT_PATTERNS=[]"})
	m, err := manifest.Load(context.Background(), file, env)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Policies()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tool, want string
	}{
		{"Glob", "key [redacted: aws-access-token], job ci-job-token=[redacted: custom], doc AKIAIOSFODNN7EXAMPLE"},
		{"Bash", secretText},
		{"Read", "key AKIA2OGYBAH6STMMNXNN, job ci-job-token=[redacted: custom], doc AKIAIOSFODNN7EXAMPLE"},
		{"Grep", "key [redacted: aws-access-token], job ci-job-token=0123456789abcdef0123456789abcdef01234567, doc AKIAIOSFODNN7EXAMPLE"},
	} {
		if diff := cmp.Diff(tt.want, redactedBy(p, tt.tool)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.tool, diff)
		}
	}
	if p.For("Bash").Redact != nil {
		t.Error("Bash = { redact = false } still has a detector")
	}
}

// TestRedactionDefault: with no manifest, or a manifest that says nothing
// of redaction, every tool is redacted with the built-in rules; redact =
// false in the environment turns it off for all.
func TestRedactionDefault(t *testing.T) {
	var none *shape.Policies
	if got := redactedBy(none, "Read"); !strings.Contains(got, "[redacted: aws-access-token]") {
		t.Errorf("nil policies: %q", got)
	}
	m, err := manifest.Load(context.Background(), manifest.Environ([]string{"TOOLCAP_WORKER__TOOL_OUTPUT__REDACT=false"}))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := m.Policies()
	if p.For("Read").Redact != nil || redactedBy(p, "Read") != secretText {
		t.Error("redact = false from the environment left a detector")
	}
}

// TestRedactionErrors: a pattern that does not compile is an error that
// names the layer, the key and the value.
func TestRedactionErrors(t *testing.T) {
	for _, tt := range []struct {
		layer manifest.Option
		want  string
	}{
		{manifest.Bytes("a.toml", []byte("[worker.tool_output]\nredact_patterns = ['(unclosed']\n")),
			"manifest: a.toml: worker.tool_output.redact_patterns"},
		{manifest.Environ([]string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__REDACT_ALLOW=['a(']"}),
			"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__REDACT_ALLOW"},
		{manifest.Bytes("b.toml", []byte("[worker.tool_output]\nredact = 'yes'\n")), "redact"},
	} {
		_, err := manifest.Load(context.Background(), tt.layer)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("error %v, want one naming %q", err, tt.want)
		}
	}
	_, err := manifest.Load(context.Background(), manifest.Bytes("a.toml", []byte("[worker.tool_output]\nredact_patterns = ['ok', '(unclosed']\n")))
	if err == nil || !strings.Contains(err.Error(), "redact_patterns") || !strings.Contains(err.Error(), "element 1") {
		t.Errorf("error %v, want one naming redact_patterns and element 1", err)
	}
}

// TestWithRedactor: a program's own base detector replaces the built-in
// rules, under each tool's patterns, allow list and off switch.
func TestWithRedactor(t *testing.T) {
	m, err := manifest.Load(context.Background(), manifest.Bytes("a.toml", []byte(`
[worker.tool_output]
redact_patterns = ['ci-job-token=([a-f0-9]{40})']
[worker.tool_output.per_tool]
Bash = { redact = false }
`)))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := m.Policies()
	base := redact.New([]redact.Rule{{ID: "doc-key", Pattern: regexp.MustCompile(`AKIA[A-Z0-9]{16}`), MaxLen: 20}}, nil)
	q := p.WithRedactor(base)
	want := "key [redacted: doc-key], job ci-job-token=[redacted: custom], doc [redacted: doc-key]"
	if diff := cmp.Diff(want, redactedBy(q, "Glob")); diff != "" {
		t.Errorf("Glob (-want +got):\n%s", diff)
	}
	if q.For("Bash").Redact != nil {
		t.Error("Bash = { redact = false } has a detector after WithRedactor")
	}
	if got := redactedBy(p, "Glob"); strings.Contains(got, "doc-key") {
		t.Errorf("WithRedactor changed the policies it was called on: %q", got)
	}
}
