package pin_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/redact"
)

// TestWithRedactor: the pinned redact stage runs the one detector
// WithRedactor names for every tool, whatever the call's policy says, and
// is left out for a nil one; without the option it runs each call's
// policy's detector.
func TestWithRedactor(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLF" // an AWS access key id of the built-in rules
	const text = "key " + key
	const redacted = "key [redacted: aws-access-token]"
	perTool := func(tool string) shape.Policy {
		p := shape.Bytes(4096)
		if tool == "Bash" {
			p.Redact = redact.Default()
		}
		return p
	}
	tests := []struct {
		name string
		opts []pin.Option
		want map[string]string // by tool
	}{
		{"each call's policy", nil, map[string]string{"Bash": redacted, "Read": text}},
		{"one detector", []pin.Option{pin.WithRedactor(redact.Default())}, map[string]string{"Bash": redacted, "Read": redacted}},
		{"none", []pin.Option{pin.WithRedactor(nil)}, map[string]string{"Bash": text, "Read": text}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := pin.NewAnswerer(pin.Pinned(perTool, nil, tt.opts...))
			got := map[string]string{}
			for tool := range tt.want {
				s := text
				got[tool] = *a.Answer(context.Background(), chain.Call{ID: "1", Tool: tool}, chain.Result{Content: &s}).Content
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("content by tool (-want +got):\n%s", diff)
			}
		})
	}
}
