package shape

import (
	"slices"
	"strings"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
)

// Part is one of several texts of a result that share its policy, such as
// a command's stdout and stderr, the text blocks of an MCP result, or
// Grep's matches and the names of the files they are in.
type Part struct {
	// Text is the part's text.
	Text string
	// Lines marks a list of lines joined by "\n", such as file names: it is
	// cut between lines, keeping the longest run of whole lines from the
	// start, and its marker is a line of its own ([cut.MarkerLine]) that
	// counts bytes. Other parts are cut by the policy's Spec.
	Lines bool
	// Len and Cut stand for a text a front end does not hold whole, such
	// as one it cuts as it streams (a cut.Writer): Len is the whole text's
	// length as the client decodes it, Text what the front end holds of
	// its start, and Cut cuts the whole text to a policy as [Text] cuts it
	// held whole. Such a part is shared by Len (and counted at Len past
	// [cut.TokenWindow]), cut by Cut, and never decoded again. Both are
	// zero for a text held whole.
	Len int
	Cut func(q Policy) (string, chain.Truncation, bool)
}

// size is the part's length as the client decodes it.
func (pt Part) size() int {
	if pt.Cut != nil {
		return pt.Len
	}
	return len(pt.Text)
}

// Texts is [Share] for parts that are all texts.
func Texts(texts []string, p Policy) (out []string, t chain.Truncation, changed bool) {
	parts := make([]Part, len(texts))
	for i, s := range texts {
		parts[i] = Part{Text: s}
	}
	return Share(parts, p)
}

// Share fits parts that share p's limits: together they hold at most
// MaxBytes bytes and, when p holds tokens, MaxTokens tokens, markers
// included. It returns the texts in order (the input texts themselves when
// they fit, and then changed is false) and the figures of the cuts added
// up: Limit and LimitTokens are p's, the byte figures are summed, and the
// token figures are left zero (the parts' markers count in their own
// units).
//
// The byte limit is shared by [WaterFill] over the parts' lengths: a short
// part keeps whole next to a long one. When that gives a cut part a share
// too small for its marker, the budget goes to the parts in order instead,
// each whole while it fits, so that a cut carries its marker whenever the
// budget can hold one. The token limit is shared the same way over the
// parts' counts (a part too long to count under the limit,
// [cut.TokenWindow], is counted at its length, a bound). Each part over its
// shares is then cut to them by [Text] (Lines parts between lines).
func Share(parts []Part, p Policy) (out []string, t chain.Truncation, changed bool) {
	// Shares are measured on the texts as the client decodes them.
	replaced := false
	for i, pt := range parts {
		if pt.Cut != nil {
			continue // decoded as it streamed
		}
		if r, n := p.decoded(pt.Text); n > 0 {
			if !replaced {
				parts = slices.Clone(parts)
				replaced = true
			}
			parts[i].Text = r
		}
	}
	changed = replaced
	out = make([]string, len(parts))
	lens := make([]int, len(parts))
	total := 0
	for i, pt := range parts {
		out[i] = pt.Text
		lens[i] = pt.size()
		total += lens[i]
	}
	t = chain.Truncation{Limit: p.MaxBytes, LimitTokens: p.tokens()}
	var counts, tokShares []int
	if p.HoldsTokens() && total > p.MaxTokens {
		counts = make([]int, len(parts))
		sum := 0
		for i, pt := range parts {
			if pt.Cut != nil && lens[i] > cut.TokenWindow(p.MaxTokens) {
				counts[i] = lens[i] // a bound, as p.count gives for a long text
			} else {
				counts[i] = p.count(pt.Text)
			}
			sum += counts[i]
		}
		if sum > p.MaxTokens {
			tokShares = SharesWithMarkers(counts, p.MaxTokens, func(i int) int {
				return p.Counter.Count(cut.TokenMarker(counts[i]))
			})
		}
	}
	if total <= p.MaxBytes && tokShares == nil && !replaced {
		return out, t, false
	}
	byteShares := lens
	if total > p.MaxBytes {
		byteShares = SharesWithMarkers(lens, p.MaxBytes, func(i int) int { return cut.MarkerLen(lens[i]) })
	}
	for i, pt := range parts {
		q := Policy{MaxBytes: byteShares[i], Spec: p.Spec}
		if counts != nil {
			q.Counter, q.MaxTokens = p.Counter, counts[i]
			if tokShares != nil {
				q.MaxTokens = tokShares[i]
				if q.MaxTokens == 0 {
					// More parts than tokens: this one is dropped whole.
					q.MaxBytes = 0
				}
			}
		}
		if q.MaxBytes >= lens[i] && (counts == nil || q.MaxTokens >= counts[i]) {
			continue
		}
		var pt2 chain.Truncation
		var ok bool
		switch {
		case pt.Cut != nil:
			out[i], pt2, ok = pt.Cut(q)
		case pt.Lines:
			out[i], pt2, ok = lines(pt.Text, q)
		default:
			out[i], pt2, ok = Text(pt.Text, q)
		}
		if !ok {
			continue
		}
		changed = true
		t.OriginalBytes += pt2.OriginalBytes
		t.KeptBytes += pt2.KeptBytes
		t.DroppedBytes += pt2.DroppedBytes
		t.Compacted = t.Compacted || pt2.Compacted
		if t.Strategy == "" {
			t.Strategy = pt2.Strategy
		}
	}
	// The parts no cut touched are shown whole.
	for i := range parts {
		if out[i] == parts[i].Text {
			t.OriginalBytes += lens[i]
			t.KeptBytes += lens[i]
		}
	}
	return out, t, changed
}

// SharesWithMarkers shares budget among texts of demand bytes (or tokens)
// each, as [Texts] shares p's limit among its texts: by [WaterFill], or,
// when that leaves a text it cuts less than room(i), what that text's
// marker takes, the budget in order (whole while the texts fit, the rest
// to the first that does not, moved back to the nearest text before it
// when that rest cannot hold its marker), so that a cut carries its
// marker whenever the budget can hold one. A share >= its demand means
// "keep whole". It is for a front end that knows the lengths of the texts
// it shares a limit among before it holds them (a stream), and must cut
// them as Texts would.
func SharesWithMarkers(demand []int, budget int, room func(i int) int) []int {
	shares := WaterFill(demand, budget)
	for i, s := range shares {
		if s < demand[i] && s < room(i) {
			return inOrder(demand, max(budget, 0), room)
		}
	}
	return shares
}

// inOrder gives the budget to the texts in order: whole while they fit,
// then the rest to the first that does not, then nothing. When the rest is
// smaller than that text's marker (room), the nearest text before it that
// has any is cut instead, with its own share and the rest, so that a cut
// carries its marker whenever the budget can hold one.
func inOrder(demand []int, budget int, room func(i int) int) []int {
	out := make([]int, len(demand))
	left := budget
	cutAt := -1
	for i, n := range demand {
		out[i] = min(n, left)
		left -= out[i]
		if cutAt < 0 && out[i] < n {
			cutAt = i
		}
	}
	for cutAt > 0 && out[cutAt] < room(cutAt) {
		j := cutAt - 1
		for j >= 0 && demand[j] <= 0 {
			j--
		}
		if j < 0 {
			break
		}
		out[j] = min(out[j]+out[cutAt], demand[j]-1) // below its demand: it is cut
		out[cutAt] = 0
		cutAt = j
	}
	return out
}

// Lines fits a list of lines, such as file names, to p: it keeps the
// longest run of whole lines from the start whose join, with the marker as
// a last line of its own, is within MaxBytes and, when p holds tokens,
// within MaxTokens. It returns the kept lines with the marker line last
// ([cut.MarkerLine], counting the bytes of the join not shown), or ss
// itself and changed == false when they fit.
func Lines(ss []string, p Policy) (out []string, t chain.Truncation, changed bool) {
	joined := strings.Join(ss, "\n")
	kept, t, changed := lines(joined, p)
	if !changed {
		return ss, t, false
	}
	return strings.Split(kept, "\n"), t, true
}

// lines is Lines on the joined text.
func lines(text string, p Policy) (string, chain.Truncation, bool) {
	text, replaced := p.decoded(text)
	if len(text) <= p.MaxBytes && (!p.HoldsTokens() || len(text) <= p.MaxTokens || p.Counter.Count(text) <= p.MaxTokens) {
		if replaced > 0 {
			return text, chain.Truncation{Limit: p.MaxBytes, LimitTokens: p.tokens(), OriginalBytes: len(text), KeptBytes: len(text)}, true
		}
		return text, chain.Truncation{}, false
	}
	// A cut drops at least one line, so it is made below the text's
	// length even when the byte limit holds the text (the tokens cut).
	most := min(p.MaxBytes, len(text)-1)
	out, k := cutLines(text, most)
	if p.HoldsTokens() && p.Counter.Count(out) > p.MaxTokens {
		// The longest byte limit below that whose cut fits the tokens.
		lo, hi := 0, most-1
		for lo < hi {
			mid := lo + (hi-lo+1)/2
			if o, _ := cutLines(text, mid); p.Counter.Count(o) <= p.MaxTokens {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		out, k = cutLines(text, lo)
	}
	return out, chain.Truncation{
		Limit: p.MaxBytes, LimitTokens: p.tokens(),
		OriginalBytes: len(text), KeptBytes: k, DroppedBytes: len(text) - k,
	}, true
}

// cutLines cuts text, lines joined by "\n", by the head rule, but between
// lines: text[:k] + Marker(len(text)-k), within limit, k at a line's end
// (or 0, and then the marker line alone). It requires limit < len(text).
func cutLines(text string, limit int) (string, int) {
	_, dropped := cut.Head(text, limit)
	k := len(text) - dropped
	if k < len(text) && text[k] != '\n' {
		k = max(strings.LastIndexByte(text[:k], '\n'), 0)
	}
	if k > 0 && k+cut.MarkerLen(len(text)-k) > limit {
		k = 0 // a limit too small for the marker: no line at all
	}
	if k == 0 {
		if m := cut.MarkerLine(len(text)); len(m) <= limit {
			return m, 0
		}
		return "", 0 // no room even for the marker
	}
	return text[:k] + cut.Marker(len(text)-k), k
}
