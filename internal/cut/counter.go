package cut

import "github.com/toolcap/toolcap/tokens"

// A Counter counts the tokens of a text: [tokens.Counter], whose contract
// [CutTokens] relies on (at most one token per byte, so content of at most
// maxTokens bytes needs no count).
type Counter = tokens.Counter
