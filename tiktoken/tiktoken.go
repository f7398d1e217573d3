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

// encodings holds one encoding of each name, built on first use: building
// one fills the codec's vocabulary map and this package's rank table
// (tens of milliseconds and megabytes of heap for o200k_base), once for the process,
// and every tokenizer of that name shares it.
var encodings = map[string]func() (*encoding, error){
	O200kBase:  sync.OnceValues(func() (*encoding, error) { return build(O200kBase, tokenizer.O200kBase, 199998, splitO200k) }),
	Cl100kBase: sync.OnceValues(func() (*encoding, error) { return build(Cl100kBase, tokenizer.Cl100kBase, 100256, splitCl100k) }),
}

// build makes the encoding name from the codec of enc, whose ranks are 0
// to size-1, splitting text with split.
func build(name string, enc tokenizer.Encoding, size int, split func(string, int) int) (*encoding, error) {
	c, err := tokenizer.Get(enc)
	if err != nil {
		return nil, err
	}
	r, err := newRanks(c, size)
	if err != nil {
		return nil, err
	}
	return &encoding{name: name, codec: c, ranks: r, split: split}, nil
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
	get, ok := encodings[name]
	if !ok {
		return nil, fmt.Errorf("tiktoken: unknown encoding %q (want %q or %q)", name, O200kBase, Cl100kBase)
	}
	e, err := get()
	if err != nil {
		return nil, fmt.Errorf("tiktoken: %s: %w", name, err)
	}
	return e, nil
}

// encoding is a [tokens.Tokenizer] counting with a tiktoken codec's
// vocabulary. Valid UTF-8 is split and merged here ([splitO200k],
// [ranks.count]), allocating nothing; other text is counted by the codec
// itself, which reads only its vocabulary and its compiled regexp (which
// keeps its matching state in a pool), and nothing here sets its error
// mode, so one encoding serves any number of goroutines.
type encoding struct {
	name  string
	codec tokenizer.Codec
	ranks *ranks
	// split returns the end of the piece of the encoding's split pattern
	// at s[i], or i when the pattern skips the rune there.
	split func(s string, i int) int
}

// Name returns the encoding's name.
func (e *encoding) Name() string { return e.name }

// Count returns the number of tokens of text's encoding, with no special
// tokens, and at most len(text).
//
// Valid UTF-8 is split into the pieces the codec's split pattern makes
// and each piece byte-pair encoded, in time linear in the text (but for
// the merges within a piece) and with no allocation; a test checks the
// count against the codec's own on every rune and on fuzzed text.
//
// Other text is counted by the codec, which decodes each invalid byte as
// U+FFFD. It can fail only on a regexp error (the backtracking limit of
// its split pattern); Count then returns len(text), the bound every
// cut.Counter keeps, so that a cut keeps less rather than more. Counting
// invalid UTF-8 as U+FFFD could in principle exceed a token a byte; Count
// never does. A run of whitespace that spans lines costs the codec time
// quadratic in its length, so such text holding one longer than [maxRun]
// bytes is counted in segments cut inside such runs, each after a line
// break that other whitespace follows: the codec's split pattern ends a
// piece there, so the sum is the count of the whole (a test checks it
// against counting whole).
func (e *encoding) Count(text string) int {
	if text == "" {
		return 0
	}
	if utf8.ValidString(text) {
		n := 0
		for i := 0; i < len(text); {
			j := e.split(text, i)
			if j == i {
				// No alternative matches here (DEL): the codec's matcher
				// moves on a rune, and the rune is in no piece.
				_, size := utf8.DecodeRuneInString(text[i:])
				i += size
				continue
			}
			n += e.ranks.count(text[i:j])
			i = j
		}
		return min(n, len(text))
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
