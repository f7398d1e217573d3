// Package capvalue caps tool results that are Go values rather than one
// string: a map[string]any, a []any, a string or any value encoding/json
// can encode. It is for frameworks whose tools return such values and that
// give the caller a hook to replace them, such as adk-go's
// AfterToolCallback, and it needs no framework.
//
// Every function fits a value to a tool's [shape.Policy] through package
// shape, the one home of toolcap's rules, so that a value comes out as it
// would through any other toolcap front end:
//
//   - [Cap] measures a value by its JSON encoding: what a framework
//     serializes into the request its model reads. A value whose encoding
//     fits is returned as it is. A longer string is cut as a text, by the
//     policy's strategy and token limit; any other value into a shorter
//     valid JSON value by [shape.JSON], the rule toolcap cuts MCP's
//     structuredContent by.
//   - [JSON] is that second half alone, for a value that must stay JSON of
//     its own shape, such as structuredContent: it says when no valid form
//     fits, and gives the note a result's content should carry.
//   - [Strings] fits several strings that share one budget, for outputs
//     the model reads as text, such as a command's stdout and stderr, by
//     [shape.Texts]: a short stderr survives next to a 1 MiB stdout.
package capvalue

import (
	"bytes"
	"encoding/json"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/shape"
)

// Cap returns v fitted to p by its JSON encoding, with the figures of the
// cut, in bytes of that encoding; changed is false, and v is returned as it
// is, when the encoding fits.
//
// A string is a text: it is cut by [shape.Text], p's strategy and token
// limit included, so that its encoding, quotes and escapes included, fits.
// Any other value is cut as [JSON] cuts it, into a shorter valid JSON value
// decoded back into the generic form encoding/json decodes: objects as
// map[string]any, arrays as []any, numbers as [json.Number], so a struct
// becomes a map with its JSON field names. When no valid JSON form of the
// value fits p (an object with too many keys for the limit), Cap returns
// the value's JSON text as one string, cut as a string is: the shape is
// lost, the limit holds. A value encoding/json cannot encode (a channel, a
// func, a cycle) is returned unchanged, as no framework can send it either.
// Cap never panics.
func Cap(v any, p shape.Policy) (capped any, t chain.Truncation, changed bool) {
	if s, ok := v.(string); ok {
		return asText(s, p)
	}
	out, st, ok := JSON(v, p)
	switch {
	case ok:
		return out, st.Figures, st.Cut
	case st.Raw == nil:
		return v, chain.Truncation{}, false // not encodable
	}
	return asText(string(st.Raw), p)
}

// JSON is [Cap] for a value that must stay a JSON value of its own shape,
// such as an MCP result's structuredContent: it measures v by its JSON
// encoding (encoding/json's, HTML escaped, the longer of the forms
// frameworks send) and fits it by [shape.JSON], the rule toolcap fits every
// structured value by. It returns the fitted value (v itself when its
// encoding fits, else the cut form decoded as Cap describes) and what
// shape.JSON says of the cut: Cut, the Figures in bytes of the encoding,
// and the Note a result's content should end with when a container lost
// elements. ok is false when no valid JSON form fits p, and the caller
// drops the value (s.Raw then holds v's encoding), or when v cannot be
// encoded at all (s.Raw nil).
func JSON(v any, p shape.Policy) (fitted any, s shape.Structured, ok bool) {
	enc, err := json.Marshal(v)
	if err != nil {
		return v, shape.Structured{}, false
	}
	if len(enc) <= p.MaxBytes && !p.HoldsTokens() {
		return v, shape.Structured{Raw: enc}, true
	}
	// The cut value comes back in the generic form, whose objects encode
	// with their keys sorted: cut that form, so that what a framework
	// encodes is exactly what shape.JSON made. (A struct's fields are
	// ordered as declared.)
	var generic any
	if err := decode(enc, &generic); err != nil {
		return v, shape.Structured{Raw: enc}, false
	}
	sorted, err := json.Marshal(generic)
	if err != nil {
		return v, shape.Structured{Raw: enc}, false
	}
	s, ok = shape.JSON(sorted, p, nil)
	if !ok {
		return v, shape.Structured{Raw: enc}, false
	}
	if !s.Cut {
		return v, s, true
	}
	var out any
	if err := decode(s.Raw, &out); err != nil {
		// shape.JSON returns valid JSON; should it ever not, the caller
		// drops the value rather than send an invalid one.
		return v, shape.Structured{Raw: enc}, false
	}
	return out, s, true
}

// decode decodes JSON into the generic form, numbers as json.Number so that
// they keep every digit.
func decode(raw []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// asText cuts text so that its encoding as a JSON string, quotes and
// escapes included, fits p, by [shape.Text]. Escapes make the encoding
// longer than the text; each round gives the text less room by the excess,
// so it ends after a few rounds.
func asText(text string, p shape.Policy) (string, chain.Truncation, bool) {
	q := p
	q.MaxBytes = p.MaxBytes - len(`""`)
	for {
		out, t, changed := shape.Text(text, q)
		enc, _ := json.Marshal(out) // a string always encodes
		over := len(enc) - p.MaxBytes
		if p.HoldsTokens() {
			if n := p.Counter.Count(string(enc)) - p.MaxTokens; n > 0 {
				// The escapes' tokens: both limits give way, so that a
				// text counted at a token a byte shrinks too.
				q.MaxTokens = max(q.MaxTokens-n, 1)
				over = max(over, n)
			}
		}
		if over <= 0 || q.MaxBytes <= 0 {
			if !changed {
				return text, chain.Truncation{}, false
			}
			// The figures name p's limits, not the last round's.
			t.Limit, t.LimitTokens = p.MaxBytes, 0
			if p.HoldsTokens() {
				t.LimitTokens = p.MaxTokens
			}
			return out, t, true
		}
		q.MaxBytes -= over
	}
}

// Strings fits ss, which share p's limits, as [shape.Texts] does: together
// they hold at most p.MaxBytes bytes (and p.MaxTokens tokens), markers
// included; a short string keeps whole next to a long one. It returns the
// strings in order (ss itself when they fit, and then changed is false) and
// the figures of the cuts added up.
func Strings(ss []string, p shape.Policy) (capped []string, t chain.Truncation, changed bool) {
	return shape.Texts(ss, p)
}
