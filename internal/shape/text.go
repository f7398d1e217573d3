package shape

import (
	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
)

// Text fits one text to p and returns it with the figures of the cut;
// changed is false, and s is returned as it is, when s fits.
//
// The cut is [cut.CutTokens] when p holds tokens and [cut.Cut] otherwise,
// with p's Spec: the output is within both limits, marker included, and
// the marker's N is exact in the unit it names. A text known to fit
// ([Policy.FitsText]) is returned as it is, at the cost of one comparison
// and no allocation when even 3 bytes for each of its bytes fit, and of a
// pass over it otherwise.
//
// The limits hold in what the client decodes: bytes that are not valid
// UTF-8 are replaced by U+FFFD (3 bytes each) before the text is measured,
// and the figures count the replaced text; a text that only needed that is
// changed, its figures dropping nothing.
func Text(s string, p Policy) (out string, t chain.Truncation, changed bool) {
	if p.FitsText(s) {
		return s, chain.Truncation{}, false
	}
	return fit(s, p, cut.Cut, cut.CutTokens)
}

// Recut is [Text] for a text that may be the output of an earlier cut,
// such as content a user middleware changed after the cap: the result
// still carries one marker, whose N adds what this cut drops to what the
// earlier one did ([cut.Recut], [cut.RecutTokens]).
func Recut(s string, p Policy) (out string, t chain.Truncation, changed bool) {
	if p.FitsText(s) {
		return s, chain.Truncation{}, false
	}
	return fit(s, p, cut.Recut, cut.RecutTokens)
}

// fit cuts s, known not to fit p by its length, with the byte cut or, when
// p holds tokens, the token cut of one family (Cut or Recut).
func fit(s string, p Policy,
	byBytes func(string, int, cut.Spec) (string, cut.Stats),
	byTokens func(string, int, int, cut.Counter, cut.Spec) (string, cut.Stats),
) (string, chain.Truncation, bool) {
	var out string
	var st cut.Stats
	if p.HoldsTokens() {
		out, st = byTokens(s, p.MaxBytes, p.MaxTokens, p.Counter, p.Spec)
	} else {
		out, st = byBytes(s, p.MaxBytes, p.Spec)
	}
	if !st.Changed() {
		return s, chain.Truncation{}, false
	}
	return out, Figures(st, p), true
}

// Figures returns the figures of a cut as a result records them: st from
// package cut, made under p's limits.
func Figures(st cut.Stats, p Policy) chain.Truncation {
	t := chain.Truncation{
		Limit:         p.MaxBytes,
		OriginalBytes: st.Original,
		KeptBytes:     st.Kept,
		DroppedBytes:  st.Dropped,
		Strategy:      strategyName(st.Strategy),
		Compacted:     st.Compacted,
		LimitTokens:   p.tokens(),
	}
	if st.Unit == cut.UnitTokens {
		t.Unit = string(cut.UnitTokens)
		t.OriginalTokens, t.KeptTokens, t.DroppedTokens = st.OriginalTokens, st.KeptTokens, st.DroppedTokens
	}
	return t
}

// strategyName is a strategy as chain.Truncation records it: empty for the
// head rule, the default, so that a head cut's figures are what they always
// were.
func strategyName(k cut.Keep) string {
	if k == cut.KeepHead {
		return ""
	}
	return string(k)
}
