// Package tokenizer resolves the tokenizer a front end counts tokens with,
// from its manifest and the one its program gave, the same for the worker
// and toolcap mcp.
package tokenizer

import (
	"fmt"

	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/tokens"
)

// For returns the tokenizer a front end holding limits counts
// tokens with, as worker.New resolves it: nil when the limits set no token
// limit; given, when it is the one the manifest names; a new
// [tokens.Calibrated] for "calibrated" when none is given. An exact
// tokenizer the manifest names and the program did not give is an error,
// since the core does not carry their vocabularies; so is a given one whose
// Name is not the manifest's. The worker and toolcap mcp resolve their
// tokenizer here.
func For(l *manifest.ToolOutputLimits, given tokens.Tokenizer) (tokens.Tokenizer, error) {
	if !l.HasTokens() {
		return nil, nil
	}
	name := l.TokenizerName()
	switch {
	case given != nil && given.Name() == name:
		return given, nil
	case given != nil:
		return nil, fmt.Errorf("worker: the manifest counts tokens with %q (%s), the tokenizer given with WithTokenizer is %q",
			name, keyTokenizer, given.Name())
	}
	t, err := tokens.Builtin(name)
	if err != nil {
		return nil, fmt.Errorf("worker: %s: %w; pass it with worker.WithTokenizer", keyTokenizer, err)
	}
	return t, nil
}

const keyTokenizer = "worker.tool_output.tokenizer"
