package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/tiktoken"
)

// TestTrajectory plays the session through both SDKs and holds issue 36's
// targets: ageing at most halves the capped session's input tokens, breaks
// the prompt cache no more than once per batch, and every stub reads its
// original back byte for byte.
func TestTrajectory(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a 44-step session with real tools")
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	steps := script()
	if len(steps) < 40 {
		t.Fatalf("the session has %d steps; want at least 40", len(steps))
	}
	for _, sdk := range []string{"anthropic", "openai"} {
		t.Run(sdk, func(t *testing.T) {
			fs, err := playModes(sdk, root, steps, tok)
			if err != nil {
				t.Fatal(err)
			}
			r, c, a := fs[raw], fs[capped], fs[aged]
			t.Logf("steps %d: tokens raw %d, cap %d, aged %d (%.1f%% of cap); prefix breaks %d in %d batches; stubs read back %d of %d",
				len(steps), r.tokens, c.tokens, a.tokens, 100*float64(a.tokens)/float64(c.tokens), a.breaks, a.batches, a.readBack, a.stubs)
			if r.requests != len(steps)+1 || c.requests != r.requests || a.requests != r.requests {
				t.Errorf("requests raw %d, cap %d, aged %d; want %d each", r.requests, c.requests, a.requests, len(steps)+1)
			}
			if c.tokens >= r.tokens || 2*a.tokens > c.tokens {
				t.Errorf("tokens raw %d, cap %d, aged %d; want the cap below raw and ageing at most half the cap", r.tokens, c.tokens, a.tokens)
			}
			if r.breaks != 0 || c.breaks != 0 || a.batches == 0 || a.breaks > a.batches {
				t.Errorf("prefix breaks raw %d, cap %d, aged %d in %d batches; want none without ageing and at most one a batch", r.breaks, c.breaks, a.breaks, a.batches)
			}
			if a.stubs == 0 || a.readBack != a.stubs {
				t.Errorf("stubs read back %d of %d; want every stub, and some", a.readBack, a.stubs)
			}
		})
	}
}
