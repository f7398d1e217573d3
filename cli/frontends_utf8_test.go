package cli

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/worker"
)

// TestFrontEndsAgreeInvalidUTF8: the worker and toolcap cap, the front ends
// that see a tool's raw bytes, give the same output for text that is not
// valid UTF-8, under and over the limit, by one rule (shape.Policy.FitsText):
// a text that is known to fit as the client decodes it (each invalid byte a
// U+FFFD, 3 bytes), being valid UTF-8 within the limit or at most a third
// of it, is passed on as it is; any other is decoded, then cut when over
// (issue 38, item 2: for 5,000 random bytes the worker returned them, cap
// wrote 9,254 bytes).
func TestFrontEndsAgreeInvalidUTF8(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 2))
	random := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return string(b)
	}
	dir := t.TempDir()
	file := writeFile(t, dir, "toolcap.toml", "[worker.tool_output]\nkeep_rest = false\n")
	m, err := manifest.Load(context.Background(), manifest.File(file))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		in       string
		asItIs   bool // passed on as it is
		wantCuts bool
	}{
		{"5,000 random bytes: at most a third of the limit", random(5000), true, false},
		{"10,000 random bytes: within the limit, over it as decoded", random(10000), false, true},
		{"50,000 random bytes: over the limit", random(50000), false, true},
		{"valid text and one stray byte, within the limit: decoded", strings.Repeat("héllo ", 2000) + "\xff", false, false},
		{"valid text and stray bytes, over the limit", strings.Repeat("héllo\xff ", 4000), false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			echo := worker.Func("echo", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
				return worker.ToolOutput{Content: &in}, nil
			})
			w, err := worker.New([]worker.Tool{echo}, worker.WithPolicies(policytest.Of(t, m)))
			if err != nil {
				t.Fatal(err)
			}
			res := w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: "echo"}})[0]
			r := runWith(t, cleanEnv(), strings.NewReader(in), "cap", "--tool", "echo", "--manifest", file)
			if r.code != exitOK {
				t.Fatalf("toolcap cap: exit %d: %s", r.code, r.stderr)
			}
			if diff := cmp.Diff(*res.Content, r.stdout); diff != "" {
				t.Errorf("worker and cap disagree (-worker +cap): %d and %d bytes", len(*res.Content), len(r.stdout))
			}
			if got := *res.Content == in; got != tt.asItIs {
				t.Errorf("passed on as it is: %v, want %v", got, tt.asItIs)
			}
			_, cut := res.Truncation()
			if cut != tt.wantCuts {
				t.Errorf("cut: %v, want %v", cut, tt.wantCuts)
			}
			if cut && (!utf8.ValidString(*res.Content) || len(*res.Content) > 16384) {
				t.Errorf("a cut text of %d bytes, valid UTF-8 %v: want at most 16384, valid", len(*res.Content), utf8.ValidString(*res.Content))
			}
		})
	}
}
