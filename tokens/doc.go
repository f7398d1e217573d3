// Package tokens counts tokens for toolcap's token limits: the [Tokenizer]
// interface a worker takes (worker.WithTokenizer), and [Calibrated], an
// estimator that learns how many bytes a token holds from the counts the
// model's provider reports. Exact tokenizers (o200k_base, cl100k_base) live
// in their own module, github.com/toolcap/toolcap/tiktoken, so that the core
// downloads and links none of their vocabularies.
//
// Package tokens imports only the standard library.
package tokens

// A Counter counts the tokens of a text, as a model's tokenizer counts the
// text it is sent.
//
// Count must be safe for concurrent use, must not be negative, and must
// count at most one token per byte: Count(s) <= len(s). Every byte-level
// BPE tokenizer does (each token holds at least one byte), and so does
// [Calibrated]. A token cut relies on it to keep content of at most
// max_tokens bytes without counting it.
type Counter interface {
	Count(text string) int
}

// A Tokenizer counts tokens and names its encoding, as the manifest's
// tokenizer key names it: "calibrated", "o200k_base" or "cl100k_base".
type Tokenizer interface {
	Counter
	// Name returns the encoding's name.
	Name() string
}

// An Observer learns from the provider's own counts: a request of bytes
// bytes of text was billed tokens input tokens. [Calibrated] is one; a
// worker passes its observations on (worker.Observe).
type Observer interface {
	Observe(bytes, tokens int)
}
