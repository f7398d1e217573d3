package cli

import (
	"fmt"

	"github.com/toolcap/toolcap/tokens"
)

// sameTokenizer returns an error when a reloaded manifest counts tokens
// with another tokenizer, now ("" when it sets no token limit), than the
// proxy was started with: given, the exact one it was given, or
// "calibrated" when nil. The proxy keeps the tokenizer it starts with.
func sameTokenizer(given tokens.Tokenizer, now string) error {
	was := tokens.CalibratedName
	if given != nil {
		was = given.Name()
	}
	if now == "" || now == was {
		return nil
	}
	return fmt.Errorf("worker.tool_output.tokenizer = %q: toolcap mcp counts with the tokenizer it started with, %q; restart it to count with another", now, was)
}
