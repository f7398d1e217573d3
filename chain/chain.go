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

// Handler answers one call with one result. A Handler must be safe for
// concurrent use when the worker runs calls concurrently.
//
// Call is passed and Result returned by value: the handler cannot change the
// caller's call, and a chain of handlers passes both in registers.
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
