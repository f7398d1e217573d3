package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/tokens"
)

// byteTokens counts a token per byte, under the name it is given: a
// stand-in for an exact tokenizer whose counts a test can predict.
type byteTokens string

func (b byteTokens) Name() string        { return string(b) }
func (byteTokens) Count(text string) int { return len(text) }

// TestWithTokenizers: a program's WithTokenizers opens the exact tokenizer
// a manifest names, and cap counts with it; an error it returns is a
// configuration error naming the layer, the key, the value and the error.
func TestWithTokenizers(t *testing.T) {
	dir := t.TempDir()
	open := WithTokenizers(func(name string) (tokens.Tokenizer, error) {
		if name == "cl100k_base" {
			return nil, errors.New("no vocabulary here")
		}
		return byteTokens(name), nil
	})
	run := func(m, stdin string) result {
		var stdout, stderr strings.Builder
		code := Run(t.Context(), []string{"cap", "--tool", "Read", "--manifest", m}, strings.NewReader(stdin), &stdout, &stderr, nil, open)
		return result{code, stdout.String(), stderr.String()}
	}

	o200k := writeFile(t, dir, "o200k.toml", "[worker.tool_output]\ndefault_max_tokens = 500\ntokenizer = \"o200k_base\"\n")
	got := run(o200k, strings.Repeat("x", 2000))
	if got.code != exitOK || len(got.stdout) > 500 || !strings.Contains(got.stdout, "[truncated: ") {
		t.Errorf("cap with o200k_base counting a token a byte: exit %d, %d bytes out (want at most 500, cut); stderr %q",
			got.code, len(got.stdout), got.stderr)
	}

	cl100k := writeFile(t, dir, "cl100k.toml", "[worker.tool_output]\ndefault_max_tokens = 500\ntokenizer = \"cl100k_base\"\n")
	got = run(cl100k, "hi")
	want := `toolcap: manifest: file "` + cl100k + `": worker.tool_output.tokenizer = "cl100k_base": no vocabulary here` + "\n" + capAtDefaultNote
	if diff := cmp.Diff(result{exitUsage, "hi", want}, got, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("cap with a tokenizer that fails to open (-want +got):\n%s", diff)
	}
}

// TestSameTokenizer: toolcap mcp keeps the tokenizer it started with; a
// reload that counts with another is refused, naming both.
func TestSameTokenizer(t *testing.T) {
	for _, tt := range []struct {
		name  string
		given tokens.Tokenizer
		now   string
		want  string // "" for no error
	}{
		{"no token limit", byteTokens("o200k_base"), "", ""},
		{"calibrated, as started", nil, "calibrated", ""},
		{"the same exact one", byteTokens("o200k_base"), "o200k_base", ""},
		{"calibrated to exact", nil, "o200k_base", `worker.tool_output.tokenizer = "o200k_base": toolcap mcp counts with the tokenizer it started with, "calibrated"; restart it to count with another`},
		{"exact to calibrated", byteTokens("o200k_base"), "calibrated", `worker.tool_output.tokenizer = "calibrated": toolcap mcp counts with the tokenizer it started with, "o200k_base"; restart it to count with another`},
		{"exact to another", byteTokens("o200k_base"), "cl100k_base", `worker.tool_output.tokenizer = "cl100k_base": toolcap mcp counts with the tokenizer it started with, "o200k_base"; restart it to count with another`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := sameTokenizer(tt.given, tt.now)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sameTokenizer's error (-want +got):\n%s", diff)
			}
		})
	}
}
