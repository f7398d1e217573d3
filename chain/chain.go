package chain

import (
	"context"
	"encoding/json"
)

// Call is one tool invocation as the model asked for it.
type Call struct {
	// ID is the caller's identifier for the call (the model's tool_use id).
	ID string
	// Tool is the name the tool is registered under.
	Tool string
	// Args are the call's arguments, passed to the tool unchanged.
	Args json.RawMessage
}

// Result is what a tool call produced on its way to the history.
//
// Content is the text the model will read; nil means the result has no
// content, and such a result is neither measured nor cut. Summary is a short
// line for people and is never cut.
type Result struct {
	// Summary is one or two short lines for people; never cut.
	Summary string
	// Content is what the model reads; nil means no content.
	Content *string
	// IsError marks a failed call. A cut never sets it.
	IsError bool

	// Truncation describes the cut the byte cap made to the tool's own
	// content, or is nil when the content fitted its limit. Middleware can
	// read it to learn how much the model does not see.
	Truncation *Truncation

	// Ceiling describes a second cut, made after every user middleware ran,
	// because one of them grew the content past the limit again. It is nil
	// in a well-behaved chain.
	Ceiling *Truncation
}

// Truncation gives the figures of one cut. All sizes are in the cap's unit
// (bytes today).
type Truncation struct {
	// Limit is the limit the content was cut to, marker included.
	Limit int
	// OriginalBytes is the size of the content before the cut.
	OriginalBytes int
	// KeptBytes is how much of that content was kept, marker excluded.
	KeptBytes int
	// DroppedBytes is OriginalBytes - KeptBytes: the number the marker reports.
	DroppedBytes int
}

// Handler answers one call with one result. A Handler must be safe for
// concurrent use when the worker runs calls concurrently.
type Handler func(ctx context.Context, call Call) Result

// Middleware wraps a Handler. It may act before calling next, after it, both,
// or call next more than once (a retry); it must return a non-nil Handler.
type Middleware func(next Handler) Handler

// Chain composes mws into one Middleware. The first listed is the outermost:
// Chain(a, b, c)(h) behaves as a(b(c(h))). Nil entries are skipped, and the
// slice is copied, so changing it afterwards does not change the chain.
//
// The returned Middleware builds the whole onion each time it is applied to a
// handler, once; calls through the handler it returns allocate nothing on the
// chain's account.
func Chain(mws ...Middleware) Middleware {
	kept := make([]Middleware, 0, len(mws))
	for _, mw := range mws {
		if mw != nil {
			kept = append(kept, mw)
		}
	}
	return func(next Handler) Handler {
		for i := len(kept) - 1; i >= 0; i-- {
			next = kept[i](next)
		}
		return next
	}
}
