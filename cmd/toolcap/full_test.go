package main_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/tiktoken"
)

// TestExactTokenizers: the toolcap users install counts a manifest's token
// limits with the exact tokenizer it names, in cap, where the core's
// commands alone refuse it: the output, marker included, is within the
// limit by the tiktoken module's own count, and within a few tokens of it.
// The hook-only build refuses the manifest, naming the key and the full
// build.
func TestExactTokenizers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds toolcap twice")
	}
	dir := t.TempDir()
	full := goBuild(t, dir, "toolcap", nil)
	slim := goBuild(t, dir, "toolcap-nomcp", nil, "-tags", "toolcap_nomcp")

	var in strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&in, "src/pkg%03d/file_%d.go: func Handle%d(ctx context.Context) error { return nil }\n", i%97, i, i)
	}
	for _, tt := range []struct {
		encoding string
		limit    int
	}{
		{"o200k_base", 1000},
		{"cl100k_base", 2500},
	} {
		t.Run(tt.encoding, func(t *testing.T) {
			m := filepath.Join(t.TempDir(), "toolcap.toml")
			toml := fmt.Sprintf("[worker.tool_output]\ndefault_max_tokens = %d\ntokenizer = %q\n", tt.limit, tt.encoding)
			if err := os.WriteFile(m, []byte(toml), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(full, "cap", "--tool", "Grep", "--manifest", m)
			cmd.Stdin = strings.NewReader(in.String())
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("toolcap cap: %v\n%s", err, stderr.String())
			}
			tok, err := tiktoken.New(tt.encoding)
			if err != nil {
				t.Fatal(err)
			}
			out := stdout.String()
			if !strings.Contains(out, "[truncated: ") {
				t.Fatalf("toolcap cap did not cut %d bytes to %d tokens:\n%.300s", in.Len(), tt.limit, out)
			}
			if n := tok.Count(out); n > tt.limit || n < tt.limit-16 {
				t.Errorf("the output counts %d tokens in %s; want %d, or a few under", n, tt.encoding, tt.limit)
			}

			cmd = exec.Command(slim, "cap", "--tool", "Grep", "--manifest", m)
			cmd.Stdin = strings.NewReader("x")
			stderr.Reset()
			cmd.Stderr = &stderr
			err = cmd.Run()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
				t.Fatalf("toolcap-nomcp cap: %v, want exit status 2\n%s", err, stderr.String())
			}
			for _, want := range []string{"worker.tool_output.tokenizer", tt.encoding, m, "go install github.com/toolcap/toolcap/cmd/toolcap@latest"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("toolcap-nomcp cap's error does not name %q:\n%s", want, stderr.String())
				}
			}
		})
	}
}
