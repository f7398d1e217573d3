// Package resulttest turns a [chain.Result] into a plain value that tests can
// compare with cmp.Diff: a Result keeps its error flag and figures behind an
// unexported pointer, which cmp does not look into.
package resulttest

import "github.com/toolcap/toolcap/chain"

// View is everything a [chain.Result] says, as exported fields.
type View struct {
	Summary    string
	Content    *string
	IsError    bool
	Truncation *chain.Truncation
	Ceiling    *chain.Truncation
}

// Of returns r's View.
func Of(r chain.Result) View {
	v := View{Summary: r.Summary, Content: r.Content, IsError: r.IsError()}
	if t, ok := r.Truncation(); ok {
		v.Truncation = &t
	}
	if t, ok := r.Ceiling(); ok {
		v.Ceiling = &t
	}
	return v
}

// All returns the Views of rs.
func All(rs []chain.Result) []View {
	vs := make([]View, len(rs))
	for i, r := range rs {
		vs[i] = Of(r)
	}
	return vs
}
