package tiktoken

import (
	"fmt"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
	"github.com/toolcap/toolcap/tokens"
)

// The names of the encodings [New] knows, as a manifest's tokenizer key
// names them.
const (
	// O200kBase is the encoding of GPT-4o, GPT-4.1, GPT-5 and the o-series.
	O200kBase = "o200k_base"
	// Cl100kBase is the encoding of GPT-4 and GPT-3.5.
	Cl100kBase = "cl100k_base"
)

// codecs holds one codec of each encoding, built on first use: building
// one fills its vocabulary map (about 20 ms and 6 MB of heap for
// o200k_base), once for the process, and every tokenizer of that encoding
// shares it.
var codecs = map[string]func() (tokenizer.Codec, error){
	O200kBase:  sync.OnceValues(func() (tokenizer.Codec, error) { return tokenizer.Get(tokenizer.O200kBase) }),
	Cl100kBase: sync.OnceValues(func() (tokenizer.Codec, error) { return tokenizer.Get(tokenizer.Cl100kBase) }),
}

// New returns a tokenizer of the encoding name, "o200k_base" or
// "cl100k_base", whose Count is the exact number of tokens of a text in
// that encoding and whose Name is name. An unknown name is an error that
// names it and the known ones.
//
// The tokenizer is safe for concurrent use. The first New of an encoding
// builds its vocabulary, which takes tens of milliseconds; later ones share
// it and cost nothing.
func New(name string) (tokens.Tokenizer, error) {
	get, ok := codecs[name]
	if !ok {
		return nil, fmt.Errorf("tiktoken: unknown encoding %q (want %q or %q)", name, O200kBase, Cl100kBase)
	}
	c, err := get()
	if err != nil {
		return nil, fmt.Errorf("tiktoken: %s: %w", name, err)
	}
	return &encoding{name: name, codec: c}, nil
}

// encoding is a [tokens.Tokenizer] counting with a tiktoken codec. The
// codec's Count only reads its vocabulary and its compiled regexp (which
// keeps its matching state in a pool), and nothing here sets its error
// mode, so one codec serves any number of goroutines.
type encoding struct {
	name  string
	codec tokenizer.Codec
}

// Name returns the encoding's name.
func (e *encoding) Name() string { return e.name }

// Count returns the number of tokens of text's encoding, with no special
// tokens, and at most len(text).
//
// The codec counts without building the token ids. It can fail only on a
// regexp error (the backtracking limit of its split pattern); Count then
// returns len(text), the bound every cut.Counter keeps, so that a cut keeps
// less rather than more. Counting invalid UTF-8 as U+FFFD could in
// principle exceed a token a byte; Count never does.
//
// A run of whitespace that spans lines costs the codec time quadratic in
// its length, so text holding one longer than [maxRun] bytes is counted in
// segments cut inside such runs, each after a line break that other
// whitespace follows: the codec's split pattern ends a piece there, so the
// sum is the count of the whole (a test checks it against counting whole).
func (e *encoding) Count(text string) int {
	if text == "" {
		return 0
	}
	n := 0
	for rest := text; rest != ""; {
		seg := nextSegment(rest)
		c, err := e.codec.Count(seg)
		if err != nil {
			return len(text)
		}
		n += c
		rest = rest[len(seg):]
	}
	return min(n, len(text))
}

// maxRun is the longest run of whitespace counted in one piece of work;
// see [encoding.Count]. At 512 bytes a run costs well under a millisecond.
const maxRun = 512

// nextSegment returns the start of text up to the first place, inside a
// run of whitespace longer than maxRun, where a line break ('\n' or '\r')
// is followed by whitespace other than a line break, at least maxRun/2
// bytes into the run; or all of text when it has no such place. The split
// pattern of both encodings ends a piece there (\s*[\r\n]+ takes the line
// breaks, and what follows starts the next piece), so counting the two
// sides apart gives the count of the whole.
func nextSegment(text string) string {
	start := -1 // where the whitespace run at i began; -1: not in one
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsSpace(r) {
			start = -1
			i += size
			continue
		}
		if start < 0 {
			start = i
		}
		i += size
		if (r != '\n' && r != '\r') || i-start < maxRun/2 || i == len(text) {
			continue
		}
		next, _ := utf8.DecodeRuneInString(text[i:])
		if next != '\n' && next != '\r' && unicode.IsSpace(next) && runLongerThan(text, start, maxRun) {
			return text[:i]
		}
	}
	return text
}

// runLongerThan reports whether the whitespace run starting at start is
// longer than n bytes.
func runLongerThan(text string, start, n int) bool {
	for i := start; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsSpace(r) {
			return false
		}
		i += size
		if i-start > n {
			return true
		}
	}
	return false
}
