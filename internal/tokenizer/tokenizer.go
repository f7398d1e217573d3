// Package tokenizer resolves the tokenizer a front end counts tokens with,
// from its policies and the one its program gave, the same for the worker
// and toolcap mcp.
package tokenizer

import (
	"fmt"

	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/tokens"
)

// For returns the tokenizer a front end counts tokens with, as
// worker.New resolves it, from the front's policies (shape.FrontOf): nil
// when they set no token
// limit; given, when it is the one the manifest names; a new
// [tokens.Calibrated] for "calibrated" when none is given. An exact
// tokenizer the manifest names and the program did not give is an error,
// since the core does not carry their vocabularies; so is a given one whose
// Name is not the manifest's. The worker and toolcap mcp resolve their
// tokenizer here.
func For(front shape.Front, given tokens.Tokenizer) (tokens.Tokenizer, error) {
	if !front.Tokens {
		return nil, nil
	}
	name := front.Tokenizer
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
