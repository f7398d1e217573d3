package chain

// Result is what a tool call produced, from the tool to the history: one type
// the whole way, so nothing is copied or converted between the layers.
//
// Content is the text the model will read; nil means the result has no
// content, and such a result is neither measured nor cut. Summary is a short
// line for people and is never cut.
//
// The error flag and the figures of the cuts are read with [Result.IsError],
// [Result.Truncation] and [Result.Ceiling], and set with [Result.AsError] and
// the cut methods, which return a changed copy. They sit behind one pointer
// so that a Result is 32 bytes: a value that size passes between layers in
// registers, and each layer of a chain costs what a function call costs (see
// docs/benchmarks.md). That pointer is nil for a success no cut touched, so
// the common result allocates nothing.
//
// Content may point to a string the result holds itself, in that same
// allocation ([ErrorResult], the cut methods, [Result.WithContent]); see
// [Result.Owns] for why the ceiling cares.
//
// The zero Result is a success with no summary and no content.
type Result struct {
	// Summary is one or two short lines for people; never cut.
	Summary string
	// Content is what the model reads; nil means no content.
	Content *string

	// meta is never written through: every change makes a new one, so a
	// Result is a value, and copies of it never affect each other.
	meta *meta
}

// meta holds what a Result carries beside its text. It is small, so that
// a result holding its own content ([Result.WithContent]) costs a small
// allocation; the figures of the cuts, large, sit behind figures.
type meta struct {
	isError bool
	// content is the storage of Content for a result that holds its own:
	// one made by a cut, by [ErrorResult] or by [Result.WithContent], so
	// that the text and what it carries take one allocation.
	content string
	// figures is nil for a result no cut touched; never written through,
	// so copies of a meta share it.
	figures *figures
}

// figures are the figures of the cuts of one result. A cut records at
// least one unit dropped or a compaction, so a zero Truncation means "no
// cut".
type figures struct {
	truncation Truncation
	ceiling    Truncation
	// redacted counts the secrets replaced before the cut, by rule;
	// never written after it is set, so copies of figures share it.
	redacted map[string]int
}

// cutMeta is a meta and its figures in one allocation: what a cut makes.
type cutMeta struct {
	meta
	f figures
}

// errorMeta is the meta of an error result without figures. It is never
// written (see Result.meta), so sharing it is safe and saves an allocation
// per error.
var errorMeta = &meta{isError: true}

// Truncation gives the figures of one cut: always in bytes, and in tokens
// too when a token limit cut (Unit "tokens").
type Truncation struct {
	// Limit is the byte limit the content was cut to, marker included.
	Limit int
	// OriginalBytes is the size of the content before the cut.
	OriginalBytes int
	// KeptBytes is how much of that content was kept, marker excluded.
	KeptBytes int
	// DroppedBytes is OriginalBytes - KeptBytes: the number the marker reports.
	// It is at least 1 for any cut, and 0 when a JSON document was only
	// compacted.
	DroppedBytes int
	// Strategy names the strategy that cut when it is not the head rule,
	// the default: "head_tail" or "json". Empty for a head cut (so the
	// figures of a head cut are what they always were).
	Strategy string
	// Compacted reports that the content was a JSON document that fitted
	// once the whitespace between its tokens was removed: nothing was
	// dropped, and the content changed.
	Compacted bool
	// Batch reports that the limit was the result's share of a batch
	// budget (batch_max_bytes, see package worker), smaller than the
	// tool's own limit, rather than the tool's own limit.
	Batch bool

	// Unit is the unit of the marker's count: "" for bytes, "tokens" when
	// the token limit cut and the content was counted whole (see
	// cut.CutTokens).
	Unit string
	// LimitTokens is the token limit the content was held to, marker
	// included; 0 when it has none.
	LimitTokens int
	// OriginalTokens, KeptTokens and DroppedTokens are the figures in
	// tokens of a cut whose marker counts tokens; DroppedTokens is the
	// marker's N. Zero otherwise.
	OriginalTokens, KeptTokens, DroppedTokens int
	// Ref names the entry of a store that keeps the whole content, when
	// the cut kept it (package rest); empty otherwise. The marker then
	// names the read of the rest: Ref and Resume.
	Ref string
	// Resume is the offset, in bytes of the content, at which the read the
	// marker names starts: the first byte the cut did not show. 0 when Ref
	// is empty.
	Resume int
}

// cut reports whether t records a change: a cut, or a compaction.
func (t Truncation) cut() bool { return t.DroppedBytes > 0 || t.Compacted }

// ErrorResult returns an error result with summary and content, in one
// allocation.
func ErrorResult(summary, content string) Result {
	m := &meta{isError: true, content: content}
	return Result{Summary: summary, Content: &m.content, meta: m}
}

// IsError reports whether r is a failed call: a tool error, a panic, an
// unknown tool or a call cut short by its context. A cut never sets it.
func (r Result) IsError() bool { return r.meta != nil && r.meta.isError }

// AsError returns r marked as an error; Summary, Content and the figures are
// kept.
func (r Result) AsError() Result {
	switch {
	case r.meta == nil:
		r.meta = errorMeta
	case !r.meta.isError:
		old := r.meta
		m := &meta{isError: true, content: old.content, figures: old.figures}
		if r.Content == &old.content {
			r.Content = &m.content
		}
		r.meta = m
	}
	return r
}

// Owns reports whether r holds its content itself: Content points to
// storage made with r (by [ErrorResult], a cut or [Result.WithContent]),
// or is nil. A result that does not points to a string someone else made,
// who may have kept the pointer and write through it later.
//
// The ceiling (package middleware) passes on a result that owns its
// content as it is, and copies the content of one that does not: a
// middleware that returns a pointer of its own cannot change the result
// after the chain returned it.
func (r Result) Owns() bool {
	return r.Content == nil || (r.meta != nil && r.Content == &r.meta.content)
}

// WithContent returns r holding its own copy of content as its Content, in
// one allocation; the error flag and the figures are kept. A pointer anyone
// kept to r's former content cannot change the result it returns.
func (r Result) WithContent(content string) Result {
	m := &meta{content: content}
	if r.meta != nil {
		m.isError, m.figures = r.meta.isError, r.meta.figures
	}
	r.meta, r.Content = m, &m.content
	return r
}

// Truncation returns the figures of the byte cap's cut of the tool's own
// content, and false when the content fitted its limit unchanged. When a
// batch budget cut the result again from the tool's content, these are the
// figures of that cut, with Batch set (see package worker).
func (r Result) Truncation() (Truncation, bool) {
	if r.meta == nil || r.meta.figures == nil || !r.meta.figures.truncation.cut() {
		return Truncation{}, false
	}
	return r.meta.figures.truncation, true
}

// Ceiling returns the figures of the ceiling's cut, made after every user
// middleware ran because one of them grew the content past the limit again,
// and false in a well-behaved chain. A batch budget's cut of content a user
// middleware changed is recorded here too, with Batch set (see package
// worker).
func (r Result) Ceiling() (Truncation, bool) {
	if r.meta == nil || r.meta.figures == nil || !r.meta.figures.ceiling.cut() {
		return Truncation{}, false
	}
	return r.meta.figures.ceiling, true
}

// Redactions returns the secrets replaced in r's content before it was
// measured and cut, counted by the rule that found them (package redact),
// and nil when none was. The map is r's: do not change it.
func (r Result) Redactions() map[string]int {
	if r.meta == nil || r.meta.figures == nil {
		return nil
	}
	return r.meta.figures.redacted
}

// WithRedactions returns r with content, the redacted text, as its
// Content and counts as its [Result.Redactions], in one allocation; the
// error flag and the figures of earlier cuts are kept. counts must not be
// changed afterwards.
func (r Result) WithRedactions(content string, counts map[string]int) Result {
	m := r.cut(content)
	m.f.redacted = counts
	r.meta, r.Content = &m.meta, &m.content
	return r
}

// WithTruncation returns r with content as its Content and t as the figures
// of the byte cap's cut, in one allocation. It is how a cap records what it
// did; t.DroppedBytes must be at least 1, or t.Compacted set.
func (r Result) WithTruncation(content string, t Truncation) Result {
	m := r.cut(content)
	m.f.truncation = t
	r.meta, r.Content = &m.meta, &m.content
	return r
}

// WithCeiling is [Result.WithTruncation] for the ceiling's cut.
func (r Result) WithCeiling(content string, t Truncation) Result {
	m := r.cut(content)
	m.f.ceiling = t
	r.meta, r.Content = &m.meta, &m.content
	return r
}

// cut returns a new meta holding content, r's error flag and a copy of r's
// figures, for a cut to record its own in.
func (r Result) cut(content string) *cutMeta {
	m := &cutMeta{}
	if r.meta != nil {
		m.isError = r.meta.isError
		if r.meta.figures != nil {
			m.f = *r.meta.figures
		}
	}
	m.content = content
	m.figures = &m.f
	return m
}
