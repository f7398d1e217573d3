// Package tokens counts tokens for toolcap's token limits: the [Tokenizer]
// interface a worker takes (worker.WithTokenizer), and [Calibrated], an
// estimator that learns how many bytes a token holds from the counts the
// model's provider reports. Exact tokenizers (o200k_base, cl100k_base) live
// in their own module, github.com/toolcap/toolcap/tiktoken, so that the core
// downloads and links none of their vocabularies.
//
// Package tokens imports only the standard library and package cut.
package tokens

import "github.com/toolcap/toolcap/cut"

// A Tokenizer counts tokens ([cut.Counter]) and names its encoding, as the
// manifest's tokenizer key names it: "calibrated", "o200k_base" or
// "cl100k_base".
type Tokenizer interface {
	cut.Counter
	// Name returns the encoding's name.
	Name() string
}

// An Observer learns from the provider's own counts: a request of bytes
// bytes of text was billed tokens input tokens. [Calibrated] is one; a
// worker passes its observations on (worker.Observe).
type Observer interface {
	Observe(bytes, tokens int)
}
