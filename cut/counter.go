package cut

// A Counter counts the tokens of a text, as a model's tokenizer counts the
// text it is sent. [CutTokens] cuts with one.
//
// Count must be safe for concurrent use, must not be negative, and must
// count at most one token per byte: Count(s) <= len(s). Every byte-level
// BPE tokenizer does (each token holds at least one byte), and so does the
// estimate of package tokens. CutTokens relies on it to return content of
// at most maxTokens bytes without counting it.
type Counter interface {
	Count(text string) int
}
