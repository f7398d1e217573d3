package tiktoken

import (
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2/syntax"
)

// The codec splits text into pieces with a regexp (compiled to Go by
// regexp2cg) before it byte-pair encodes each piece, and that regexp
// allocates a match object per piece and a string per match: about 2
// allocations and 1 µs a token. The splitters here make the same pieces,
// byte for byte, with no allocation. They follow the generated matcher,
// not the pattern's intent, wherever the two differ:
//
//   - \s*[\r\n]+ backtracks to the FIRST line break of a whitespace run,
//     not the last (the generated code searches forwards), so the piece is
//     the run up to and including its first run of line breaks;
//   - the ASCII bitmaps of the two negated sets leave out DEL (0x7f), so
//     DEL belongs to no alternative and the matcher skips it: it is in no
//     piece and counts no token;
//   - (?i:'s) also takes U+017F (ſ); the other contraction letters take
//     ASCII only.
//
// A test compares the pieces' tokens with the codec's on every rune in
// several contexts, and a fuzz target on arbitrary valid UTF-8.

// Rune classes, as the generated matcher tests them.
const (
	cP  = 1 << iota // [^\r\n\p{L}\p{N}]: the optional prefix of a word
	cU              // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLw             // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	cL              // \p{L}
	cN              // \p{N}
	cS              // \s (unicode.IsSpace)
	cO              // [^\s\p{L}\p{N}]: punctuation and symbols
)

// The generated matcher's sets, for runes >= 128 (the same encoded sets
// it builds); under 128 it tests the bitmaps below.
var (
	setPrefix = syntax.NewCharSetRuntime("\x01\x02\x00\x00\x00\x02\x00\x00\x00\n\n\r\r\x01L\x01N")
	setOther  = syntax.NewCharSetRuntime("\x01\x00\x00\x00\x00\x03\x00\x00\x00\x01 \x01L\x01N")
)

// The generated matcher's ASCII bitmaps (low 64 bits, high 64 bits) of
// [^\r\n\p{L}\p{N}] and [^\s\p{L}\p{N}].
const (
	prefixLo, prefixHi = 0xfc00ffffffffdbff, 0x78000001f8000001
	otherLo, otherHi   = 0xfc00fffeffffc1ff, 0x78000001f8000001
)

// inBitmap reports whether c < 128 is set in the bitmap lo, hi.
func inBitmap(c rune, lo, hi uint64) bool {
	if c < 64 {
		return lo&(1<<uint(c)) != 0
	}
	return hi&(1<<uint(c-64)) != 0
}

// asciiClass holds the classes of the runes under 128, computed once.
var asciiClass = func() (t [128]uint8) {
	for c := range rune(128) {
		t[c] = classOf(c)
	}
	return t
}()

// classOf computes the classes of r as the generated matcher tests them.
func classOf(r rune) uint8 {
	var c uint8
	if r < 128 {
		if inBitmap(r, prefixLo, prefixHi) {
			c |= cP
		}
		if inBitmap(r, otherLo, otherHi) {
			c |= cO
		}
	} else {
		if setPrefix.CharIn(r) {
			c |= cP
		}
		if setOther.CharIn(r) {
			c |= cO
		}
	}
	if unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M) {
		c |= cU
	}
	if unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M) {
		c |= cLw
	}
	if unicode.In(r, unicode.L) {
		c |= cL
	}
	if unicode.In(r, unicode.N) {
		c |= cN
	}
	if unicode.IsSpace(r) {
		c |= cS
	}
	return c
}

// at returns the classes and the length of the rune at s[i]; i < len(s)
// and s is valid UTF-8.
func at(s string, i int) (uint8, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return classOf(r), n
}

// runOf returns the end of the run of runes from i that have a class of
// want.
func runOf(s string, i int, want uint8) int {
	for i < len(s) {
		c, n := at(s, i)
		if c&want == 0 {
			break
		}
		i += n
	}
	return i
}

// contraction returns the end of (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i], as
// the generated matcher takes it, or i when there is none.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return i
	}
	r, n := utf8.DecodeRuneInString(s[i+1:])
	switch r {
	case 'S', 'T', 's', 't', 'ſ':
		return i + 1 + n
	case 'M', 'm', 'D', 'd':
		return i + 2
	case 'R', 'r', 'V', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return i + 3
		}
	case 'L', 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return i + 3
		}
	}
	return i
}

// space returns the end of the piece the whitespace alternatives
// (\s*[\r\n]+|\s+(?!\S)|\s+) take at s[i], or i when s[i] is not
// whitespace.
func space(s string, i int) int {
	e, last := i, 0
	for e < len(s) {
		c, n := at(s, e)
		if c&cS == 0 {
			break
		}
		if s[e] == '\n' || s[e] == '\r' {
			// The first run of line breaks ends the piece (see above): no
			// need to read the rest of the run.
			for e < len(s) && (s[e] == '\n' || s[e] == '\r') {
				e++
			}
			return e
		}
		e, last = e+n, n
	}
	if e == i || e == len(s) || e-last == i {
		return e
	}
	// \s+(?!\S): all but the run's last rune, which starts the next piece.
	return e - last
}

// numbers returns the end of \p{N}{1,3} at s[i], or i.
func numbers(s string, i int) int {
	for k := 0; k < 3 && i < len(s); k++ {
		c, n := at(s, i)
		if c&cN == 0 {
			break
		}
		i += n
	}
	return i
}

// symbols returns the end of ` ?[^\s\p{L}\p{N}]+` followed by a run of
// the bytes in tail (ASCII) at s[i], or i.
func symbols(s string, i int, slash bool) int {
	j := i
	if s[j] == ' ' {
		j++
	}
	e := runOf(s, j, cO)
	if e == j {
		return i
	}
	for e < len(s) && (s[e] == '\n' || s[e] == '\r' || slash && s[e] == '/') {
		e++
	}
	return e
}

// splitO200k returns the end of the piece o200k_base's pattern matches at
// s[i], or i when no alternative matches there (the matcher then moves on
// a rune).
func splitO200k(s string, i int) int {
	c0, n0 := at(s, i)
	if c0&(cP|cU|cLw) != 0 {
		starts := [2]int{i + n0, i}
		first := 1
		if c0&cP != 0 {
			first = 0
		}
		// [^\r\n\p{L}\p{N}]?[Lu Lt Lm Lo M]*[Ll Lm Lo M]+: the upper run
		// gives back runes until one of the lower class starts the lower
		// run; with the prefix first, then without it.
		for _, j := range starts[first:] {
			if e := upperLower(s, j); e > j {
				return contraction(s, e)
			}
		}
		// [^\r\n\p{L}\p{N}]?[Lu Lt Lm Lo M]+[Ll Lm Lo M]*.
		for _, j := range starts[first:] {
			if u := runOf(s, j, cU); u > j {
				return contraction(s, runOf(s, u, cLw))
			}
		}
	}
	if c0&cN != 0 {
		return numbers(s, i)
	}
	if e := symbols(s, i, true); e > i {
		return e
	}
	return space(s, i)
}

// upperLower returns the end of [Lu Lt Lm Lo M]*[Ll Lm Lo M]+ at s[j], as
// a backtracking matcher takes it, or j.
func upperLower(s string, j int) int {
	// The upper run, noting where its last rune of the lower class starts:
	// the matcher backtracks to it when no lower rune follows the run.
	k, lastLower := j, -1
	for k < len(s) {
		c, n := at(s, k)
		if c&cU == 0 {
			break
		}
		if c&cLw != 0 {
			lastLower = k
		}
		k += n
	}
	if k < len(s) {
		if c, _ := at(s, k); c&cLw != 0 {
			return runOf(s, k, cLw)
		}
	}
	if lastLower < 0 {
		return j
	}
	return runOf(s, lastLower, cLw)
}

// splitCl100k returns the end of the piece cl100k_base's pattern matches
// at s[i], or i when no alternative matches there.
func splitCl100k(s string, i int) int {
	if e := contraction(s, i); e > i {
		return e
	}
	c0, n0 := at(s, i)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c0&cP != 0 && i+n0 < len(s) {
		if e := runOf(s, i+n0, cL); e > i+n0 {
			return e
		}
	}
	if c0&cL != 0 {
		return runOf(s, i, cL)
	}
	if c0&cN != 0 {
		return numbers(s, i)
	}
	if e := symbols(s, i, false); e > i {
		return e
	}
	return space(s, i)
}
