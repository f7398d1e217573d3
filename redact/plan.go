package redact

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A plan is what a rule's pattern tells of where its matches lie around
// a keyword, worked out from the pattern's syntax the first time the
// rule's keyword is in a text:
//
//   - how far a match can reach on either side of the keyword, as a few
//     steps ("at most 41 characters, then a run with no whitespace, then
//     at most 2"), so that the pattern runs on a stretch of tens of
//     bytes around each keyword even where a secret can follow spaces,
//     as in `password = "…"`;
//   - where the pattern has a part every match of which starts with one
//     of the keywords (its anchor), a test of the pattern from that part
//     on, anchored at the keyword and loosened (no counted repetition
//     over 16, no assertion), which rules out most keywords in a few
//     hundred nanoseconds: the pattern itself runs only where the test
//     passes, and is compiled only then.
//
// A pattern with alternatives at its top (`A|B`) has a branch for each.
type plan struct {
	branches []branch
}

// A branch is one top-level alternative of a pattern.
type branch struct {
	// before and after bound a match around a keyword: before, back from
	// the keyword's start; after, on from it.
	before, after []step
	// test, when set, is the anchored test: the match's part from the
	// anchor on, loosened; a keyword where it fails starts no match of
	// the branch. Nil when the branch has no anchor: a keyword is then
	// anywhere in a match, and before and after both bound the whole
	// match.
	test *regexp.Regexp
	// min is the length in bytes of the shortest match of the part the
	// test tests: a keyword with fewer bytes after it, as far as the
	// steps let a match reach, needs no test.
	min int
	// words, when set, are the strings the anchor matches, all of them
	// keywords: the test then tests what follows the keyword, and a
	// keyword not among them starts no match of the branch; and skip,
	// first and reach are what the test's match starts with (see lead),
	// when it must match something.
	words       map[string]bool
	skip, first *byteSet
	reach       int
	// loose reports a branch with no anchor some of whose matches hold
	// no keyword (gitleaks' sourcegraph-access-token finds a bare hex
	// token in a text that says "sourcegraph"): it is looked for as far
	// from a keyword as the rule's own bounds allow.
	loose bool
}

// A step bounds part of a match: at most n bytes and runes runes (n < 0:
// no bound; a rune of (?i)k may be the three bytes of the Kelvin sign),
// and, when stop is set, no further than the first byte of that class,
// which the part cannot hold.
type step struct {
	n, runes int
	stop     stopClass
}

// stopClass is a class of bytes a part of a match cannot hold.
type stopClass uint8

const (
	stopNone    stopClass = iota
	stopNewline           // '\n'
	stopSpace             // every byte isSpace reports
)

// maxAnchorTest is the largest count a repetition keeps in a branch's
// test; one over it becomes a repetition of at least that many.
const maxAnchorTest = 16

// newPlan returns the plan of the pattern expr for keywords (in lower
// case), or nil when expr does not parse.
func newPlan(expr string, keywords []string) *plan {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	var alts []*syntax.Regexp
	if re.Op == syntax.OpAlternate {
		alts = re.Sub
	} else {
		alts = []*syntax.Regexp{re}
	}
	p := &plan{}
	for _, alt := range alts {
		p.branches = append(p.branches, newBranch(flatten(alt, nil), keywords))
	}
	return p
}

// newBranch returns the branch of a top-level alternative, the parts it
// concatenates.
func newBranch(parts []*syntax.Regexp, keywords []string) branch {
	for i := range parts {
		if !startsWithKeyword(parts[i:], keywords) {
			continue
		}
		b := branch{before: steps(parts[:i], true), after: steps(parts[i:], false)}
		tested := parts[i:]
		if words := exactKeywords(parts[i], keywords); words != nil {
			// The anchor matches a keyword and nothing more: the test
			// starts after it.
			b.words, tested = words, parts[i+1:]
			b.skip, b.first, b.reach = lead(tested)
		}
		b.min = minBytes(&syntax.Regexp{Op: syntax.OpConcat, Sub: tested})
		test := &syntax.Regexp{Op: syntax.OpConcat, Sub: []*syntax.Regexp{{Op: syntax.OpBeginText}}}
		for _, p := range tested {
			test.Sub = append(test.Sub, loosen(p))
		}
		// A loosened pattern compiles, made of a valid one's parts;
		// should one not, the branch runs as one with no anchor.
		if t, err := regexp.Compile(test.String()); err == nil {
			b.test = t
			return b
		}
		break
	}
	all := &syntax.Regexp{Op: syntax.OpConcat, Sub: parts}
	whole := []step{summary(all)}
	return branch{before: whole, after: whole, loose: !holdsKeyword(all, keywords)}
}

// exactKeywords returns the strings re matches, in lower case, when they
// are few, each one of keywords, and none the start of another (so that
// where re matches at a keyword, it matches that keyword and no more);
// nil otherwise.
func exactKeywords(re *syntax.Regexp, keywords []string) map[string]bool {
	strs, ok := language(re, 64)
	if !ok || len(strs) == 0 {
		return nil
	}
	words := map[string]bool{}
	for _, s := range strs {
		if !slices.Contains(keywords, s) {
			return nil
		}
		words[s] = true
	}
	for a := range words {
		for b := range words {
			if a != b && strings.HasPrefix(b, a) {
				return nil
			}
		}
	}
	return words
}

// language returns the strings re matches, in lower case (ASCII letters),
// and true, when there are at most limit of them, none empty.
func language(re *syntax.Regexp, limit int) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{asciiLower(string(re.Rune))}, true
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if r >= utf8.RuneSelf || len(out) > limit {
					return nil, false
				}
				if s := asciiLower(string(r)); !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
		return out, true
	case syntax.OpCapture:
		return language(re.Sub[0], limit)
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range re.Sub {
			strs, ok := language(sub, limit)
			if !ok || len(out)*len(strs) > limit {
				return nil, false
			}
			var next []string
			for _, a := range out {
				for _, b := range strs {
					if !slices.Contains(next, a+b) {
						next = append(next, a+b)
					}
				}
			}
			out = next
		}
		return out, true
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			strs, ok := language(sub, limit)
			if !ok {
				return nil, false
			}
			for _, s := range strs {
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
			if len(out) > limit {
				return nil, false
			}
		}
		return out, true
	case syntax.OpQuest:
		strs, ok := language(re.Sub[0], limit)
		return append(strs, ""), ok
	}
	return nil, false
}

// lead returns what the start of a match of the concatenation of parts
// is made of: up to reach bytes (-1: no bound) of the bytes skip, the
// parts that may match nothing, then a byte of first, the first byte of
// the first part that must match something. A match needs such a byte
// within reach of its start, after bytes of skip only: a cheap test that
// rules out most keywords where the test would fail.
func lead(parts []*syntax.Regexp) (skip, first *byteSet, reach int) {
	skip, first = &byteSet{}, &byteSet{}
	for _, p := range parts {
		if minBytes(p) > 0 {
			firstBytes(p, first)
			return skip, first, reach
		}
		if n := maxBytes(p); n < 0 || reach < 0 {
			reach = -1
		} else {
			reach += n
		}
		allBytes(p, skip)
	}
	return nil, nil, 0 // nothing is required: no test
}

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(c byte)      { s[c/64] |= 1 << (c % 64) }
func (s *byteSet) has(c byte) bool { return s[c/64]&(1<<(c%64)) != 0 }
func (s *byteSet) addAbove(c byte) {
	for b := int(c); b < 256; b++ {
		s.add(byte(b))
	}
}

// addRune adds the bytes a match of r may start with (all of the bytes
// of multi-byte characters when r is not ASCII, or folds to a rune that
// is not).
func (s *byteSet) addRune(r rune, fold bool) {
	if r >= utf8.RuneSelf {
		s.addAbove(utf8.RuneSelf)
		return
	}
	s.add(byte(r))
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf {
				s.addAbove(utf8.RuneSelf)
			} else {
				s.add(byte(f))
			}
		}
	}
}

// addClass adds the bytes a match of a character class may start with.
func (s *byteSet) addClass(ranges []rune) {
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= min(ranges[i+1], utf8.RuneSelf-1); r++ {
			s.add(byte(r))
		}
		if ranges[i+1] >= utf8.RuneSelf {
			s.addAbove(utf8.RuneSelf)
		}
	}
}

// firstBytes adds to s the bytes a match of re may start with.
func firstBytes(re *syntax.Regexp, s *byteSet) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) > 0 {
			s.addRune(re.Rune[0], re.Flags&syntax.FoldCase != 0)
		}
	case syntax.OpCharClass:
		s.addClass(re.Rune)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		s.addAbove(0)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			firstBytes(sub, s)
			if minBytes(sub) > 0 {
				return
			}
		}
	default:
		for _, sub := range re.Sub {
			firstBytes(sub, s)
		}
	}
}

// allBytes adds to s the bytes a match of re may hold.
func allBytes(re *syntax.Regexp, s *byteSet) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			s.addRune(r, re.Flags&syntax.FoldCase != 0)
		}
	case syntax.OpCharClass:
		s.addClass(re.Rune)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		s.addAbove(0)
	default:
		for _, sub := range re.Sub {
			allBytes(sub, s)
		}
	}
}

// leads reports whether text may start a match whose lead is skip, first
// and reach (see lead).
func leads(text string, skip, first *byteSet, reach int) bool {
	for i := 0; i < len(text) && (reach < 0 || i <= reach); i++ {
		switch c := text[i]; {
		case first.has(c):
			return true
		case !skip.has(c):
			return false
		}
	}
	return false
}

// holdsKeyword reports whether every match of re holds one of keywords
// (in lower case), as far as its literals tell.
func holdsKeyword(re *syntax.Regexp, keywords []string) bool {
	switch re.Op {
	case syntax.OpLiteral:
		lit := strings.ToLower(string(re.Rune))
		for _, k := range keywords {
			if strings.Contains(lit, k) {
				return true
			}
		}
		return false
	case syntax.OpCapture, syntax.OpPlus:
		return holdsKeyword(re.Sub[0], keywords)
	case syntax.OpRepeat:
		return re.Min > 0 && holdsKeyword(re.Sub[0], keywords)
	case syntax.OpConcat:
		for i, sub := range re.Sub {
			if holdsKeyword(sub, keywords) || startsWithKeyword(re.Sub[i:], keywords) {
				return true
			}
		}
		return false
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !holdsKeyword(sub, keywords) {
				return false
			}
		}
		return true
	}
	return false
}

// flatten appends to parts the parts re concatenates, looking through
// groups.
func flatten(re *syntax.Regexp, parts []*syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			parts = flatten(sub, parts)
		}
		return parts
	case syntax.OpCapture:
		return flatten(re.Sub[0], parts)
	}
	return append(parts, re)
}

// steps returns the steps that bound a match of the concatenation of
// parts, in order, or in reverse order when backward. Consecutive bounded
// parts that stop at the same class of bytes make one step.
func steps(parts []*syntax.Regexp, backward bool) []step {
	var out []step
	for k := range parts {
		p := parts[k]
		if backward {
			p = parts[len(parts)-1-k]
		}
		s := summary(p)
		if last := len(out) - 1; last >= 0 && s.n >= 0 && out[last].n >= 0 && s.stop == out[last].stop {
			out[last] = step{n: out[last].n + s.n, runes: out[last].runes + s.runes, stop: s.stop}
			continue
		}
		out = append(out, s)
		if s.n < 0 && s.stop == stopNone {
			break // the match may reach the end of the text
		}
	}
	return out
}

// summary returns the one step that bounds a match of re.
func summary(re *syntax.Regexp) step {
	s := step{n: maxBytes(re), runes: maxRunes(re)}
	switch {
	case !canMatch(re, isSpace):
		s.stop = stopSpace
	case !canMatch(re, func(c byte) bool { return c == '\n' }):
		s.stop = stopNewline
	}
	return s
}

// maxBytes returns the length in bytes of the longest match of re, or -1
// when it has no bound.
func maxBytes(re *syntax.Regexp) int {
	return longest(re, func(re *syntax.Regexp) int {
		switch re.Op {
		case syntax.OpLiteral:
			n := 0
			for _, r := range re.Rune {
				n += maxRuneLen(r, re.Flags&syntax.FoldCase != 0)
			}
			return n
		case syntax.OpCharClass:
			if len(re.Rune) == 0 {
				return 0
			}
			return utf8.RuneLen(min(re.Rune[len(re.Rune)-1], unicode.MaxRune))
		}
		return utf8.UTFMax // any character
	})
}

// maxRunes returns the length in runes of the longest match of re, or -1
// when it has no bound.
func maxRunes(re *syntax.Regexp) int {
	return longest(re, func(re *syntax.Regexp) int {
		if re.Op == syntax.OpLiteral {
			return len(re.Rune)
		}
		return 1 // a class or any character
	})
}

// longest returns the length of the longest match of re, each literal,
// character class and any character measured by leaf, or -1 when it has
// no bound.
func longest(re *syntax.Regexp, leaf func(*syntax.Regexp) int) int {
	switch re.Op {
	case syntax.OpLiteral, syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return leaf(re)
	case syntax.OpCapture, syntax.OpQuest:
		return longest(re.Sub[0], leaf)
	case syntax.OpStar, syntax.OpPlus:
		if longest(re.Sub[0], leaf) == 0 {
			return 0
		}
		return -1
	case syntax.OpRepeat:
		n := longest(re.Sub[0], leaf)
		switch {
		case n == 0:
			return 0
		case n < 0 || re.Max < 0:
			return -1
		}
		return n * re.Max
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, sub := range re.Sub {
			n := longest(sub, leaf)
			if n < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				total += n
			} else {
				total = max(total, n)
			}
		}
		return total
	}
	return 0 // empty matches and assertions
}

// minBytes returns the length in bytes of the shortest match of re.
func minBytes(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return len(re.Rune) // a fold of a rune may be shorter: one byte a rune
		}
		n := 0
		for _, r := range re.Rune {
			n += max(utf8.RuneLen(r), 1)
		}
		return n
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minBytes(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minBytes(re.Sub[0])
	case syntax.OpConcat:
		total := 0
		for _, sub := range re.Sub {
			total += minBytes(sub)
		}
		return total
	case syntax.OpAlternate:
		least := -1
		for _, sub := range re.Sub {
			if n := minBytes(sub); least < 0 || n < least {
				least = n
			}
		}
		return max(least, 0)
	}
	return 0 // empty matches, assertions, x* and x?
}

// maxRuneLen returns the length in UTF-8 of r, or of the longest rune r
// matches when fold (the Kelvin sign K matches k).
func maxRuneLen(r rune, fold bool) int {
	n := utf8.RuneLen(r)
	if n < 0 {
		n = utf8.UTFMax
	}
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			n = max(n, utf8.RuneLen(f))
		}
	}
	return n
}

// canMatch reports whether a match of re may hold a byte of the class
// in.
func canMatch(re *syntax.Regexp, in func(byte) bool) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r < utf8.RuneSelf && in(byte(r)) {
				return true
			}
		}
		return false
	case syntax.OpCharClass:
		for c := 0; c < utf8.RuneSelf; c++ {
			if in(byte(c)) && classHas(re.Rune, rune(c)) {
				return true
			}
		}
		return false
	case syntax.OpAnyChar:
		return true
	case syntax.OpAnyCharNotNL:
		for c := 0; c < utf8.RuneSelf; c++ {
			if c != '\n' && in(byte(c)) {
				return true
			}
		}
		return false
	}
	for _, sub := range re.Sub {
		if canMatch(sub, in) {
			return true
		}
	}
	return false
}

// classHas reports whether the ranges of a character class hold r.
func classHas(ranges []rune, r rune) bool {
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i] <= r && r <= ranges[i+1] {
			return true
		}
	}
	return false
}

// loosen returns re for a branch's test: matching all it matches and
// more, with no counted repetition over maxAnchorTest, no assertion and
// no group.
func loosen(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	case syntax.OpCapture:
		return loosen(re.Sub[0])
	case syntax.OpRepeat:
		if re.Max > maxAnchorTest || re.Max < 0 {
			return &syntax.Regexp{Op: syntax.OpRepeat, Flags: re.Flags, Min: min(re.Min, maxAnchorTest), Max: -1, Sub: []*syntax.Regexp{loosen(re.Sub[0])}}
		}
	}
	if len(re.Sub) == 0 {
		return re
	}
	out := *re
	out.Sub = make([]*syntax.Regexp, len(re.Sub))
	for i, sub := range re.Sub {
		out.Sub[i] = loosen(sub)
	}
	return &out
}

// startsWithKeyword reports whether every match of the concatenation of
// parts starts with one of keywords (in lower case; ASCII letters of a
// match compared case-insensitively, as the keywords are looked for).
func startsWithKeyword(parts []*syntax.Regexp, keywords []string) bool {
	if len(keywords) == 0 {
		return false
	}
	k := prefixes{keywords: keywords}
	// open holds the starts of matches seen so far that are a keyword's
	// start but not yet a whole keyword; a start that holds a keyword is
	// done with.
	open := []string{""}
	for _, p := range parts {
		open = k.extend(p, open)
		if len(open) == 0 {
			return open != nil // nil: a start that is no keyword's
		}
	}
	return false // a match may end before it holds a keyword
}

// prefixes follows the starts of a pattern's matches against keywords.
type prefixes struct {
	keywords []string
	failed   bool
}

// maxOpen bounds the starts followed at once.
const maxOpen = 1024

// extend returns the starts of matches of re after each of open: those
// that are a keyword's start and no whole keyword; nil when a start is
// neither a keyword's start nor holds a keyword (the answer is then no),
// an empty slice when every start holds a keyword.
func (k *prefixes) extend(re *syntax.Regexp, open []string) []string {
	if k.failed {
		return nil
	}
	out := k.ext(re, open)
	if k.failed {
		return nil
	}
	if out == nil {
		out = []string{}
	}
	return out
}

func (k *prefixes) ext(re *syntax.Regexp, open []string) []string {
	if k.failed || len(open) == 0 {
		return nil
	}
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return open
	case syntax.OpNoMatch:
		return nil
	case syntax.OpLiteral:
		out := open
		for _, r := range re.Rune {
			out = k.add(out, []rune{r})
		}
		return out
	case syntax.OpCharClass:
		var runes []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				runes = append(runes, r)
				if len(runes) > 256 {
					k.failed = true // a wide class: some of it starts no keyword
					return nil
				}
			}
		}
		return k.add(open, runes)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		k.failed = true
		return nil
	case syntax.OpCapture:
		return k.ext(re.Sub[0], open)
	case syntax.OpConcat:
		out := open
		for _, sub := range re.Sub {
			out = k.ext(sub, out)
		}
		return out
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			out = k.union(out, k.ext(sub, open))
		}
		return out
	case syntax.OpQuest:
		return k.union(open, k.ext(re.Sub[0], open))
	case syntax.OpStar:
		return k.repeat(re.Sub[0], open, 0, -1)
	case syntax.OpPlus:
		return k.repeat(re.Sub[0], open, 1, -1)
	case syntax.OpRepeat:
		return k.repeat(re.Sub[0], open, re.Min, re.Max)
	}
	k.failed = true
	return nil
}

// repeat returns the starts after min to max (no bound when negative)
// matches of re.
func (k *prefixes) repeat(re *syntax.Regexp, open []string, lo, hi int) []string {
	cur := open
	for range lo {
		cur = k.ext(re, cur)
	}
	out := cur
	for i := lo; (hi < 0 || i < hi) && len(cur) > 0 && !k.failed; i++ {
		next := k.ext(re, cur)
		merged := k.union(out, next)
		if len(merged) == len(out) {
			break // nothing new: the starts are bounded by the keywords
		}
		out, cur = merged, next
	}
	return out
}

// add returns each of open followed by each of runes, in lower case,
// less those that now hold a keyword; it fails when one is neither.
func (k *prefixes) add(open []string, runes []rune) []string {
	var out []string
	for _, o := range open {
		for _, r := range runes {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			s := o + string(r)
			switch k.match(s) {
			case 1:
				continue
			case 0:
				out = append(out, s)
			default:
				k.failed = true
				return nil
			}
		}
	}
	if len(out) > maxOpen {
		k.failed = true
		return nil
	}
	return k.union(nil, out)
}

// match returns 1 when s starts with a keyword, 0 when it is the start of
// one, -1 otherwise.
func (k *prefixes) match(s string) int {
	open := false
	for _, w := range k.keywords {
		if strings.HasPrefix(s, w) {
			return 1
		}
		if strings.HasPrefix(w, s) {
			open = true
		}
	}
	if open {
		return 0
	}
	return -1
}

// union returns a and b with no string twice.
func (k *prefixes) union(a, b []string) []string {
	out := a
	for _, s := range b {
		found := false
		for _, t := range out {
			if s == t {
				found = true
				break
			}
		}
		if !found {
			out = append(out, s)
		}
	}
	return out
}

// forward returns how far on from at a match can reach after the steps,
// at most to limit.
func forward(text string, at, limit int, steps []step) int {
	for _, s := range steps {
		end := limit
		if s.n >= 0 {
			end = min(at+s.n, limit)
			// Then at most s.runes runes, as regexp reads them (a byte
			// not valid UTF-8 is one).
			i := at
			for r := 0; r < s.runes && i < end; r++ {
				if text[i] < utf8.RuneSelf {
					i++
				} else {
					_, size := utf8.DecodeRuneInString(text[i:])
					i += size
				}
			}
			end = min(i, end)
		}
		switch s.stop {
		case stopSpace:
			if j := indexSpace(text[at:end]); j >= 0 {
				end = at + j
			}
		case stopNewline:
			if j := strings.IndexByte(text[at:end], '\n'); j >= 0 {
				end = at + j
			}
		}
		at = end
	}
	return at
}

// backward returns how far back from at a match can reach after the
// steps, at most to limit.
func backward(text string, at, limit int, steps []step) int {
	for _, s := range steps {
		start := limit
		if s.n >= 0 {
			start = max(at-s.n, limit)
			i := at
			for r := 0; r < s.runes && i > start; r++ {
				if text[i-1] < utf8.RuneSelf {
					i--
				} else {
					_, size := utf8.DecodeLastRuneInString(text[:i])
					i -= size
				}
			}
			start = max(i, start)
		}
		switch s.stop {
		case stopSpace:
			if j := lastIndexSpace(text[start:at]); j >= 0 {
				start += j + 1
			}
		case stopNewline:
			if j := strings.LastIndexByte(text[start:at], '\n'); j >= 0 {
				start += j + 1
			}
		}
		at = start
	}
	return at
}

// indexSpace returns the index of the first byte of s that isSpace
// reports, or -1: strings.IndexAny builds its set of bytes at each call.
func indexSpace(s string) int {
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) {
			return i
		}
	}
	return -1
}

// lastIndexSpace returns the index of the last byte of s that isSpace
// reports, or -1.
func lastIndexSpace(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if isSpace(s[i]) {
			return i
		}
	}
	return -1
}
