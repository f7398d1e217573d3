// Package owned lets the ceiling of a pinned chain (middleware.Pinned) know,
// per call and without an allocation of its own, which content pointer the
// cap passed up, so that it copies only content a user middleware replaced:
// a pointer such a middleware kept could otherwise change a result after the
// chain returned it.
//
// The ceiling gives the chain below it a [Call] as the call's context. The
// cap records in it the pointer it passed up ([Call.Passed]); the innermost
// handler may store its own copy of a tool's content in it ([Content]), so
// that the one allocation of the Call replaces the one of that copy and a
// call costs what it did without user middleware. The price: such a
// content keeps its Call, and so the call's parent context, reachable as
// long as the result is.
package owned

import (
	"context"
	"sync/atomic"
)

// Call is the context of one call below the ceiling of one pinned chain.
type Call struct {
	context.Context
	chain   any                    // the chain's key (see For)
	passed  atomic.Pointer[string] // the content the cap passed up last
	taken   atomic.Bool            // content is in use (see Content)
	content string
}

// storageKey finds the nearest Call for [Content], whatever its chain.
type storageKey struct{}

// New returns the context of one call of the chain identified by key (a
// pointer unique to the chain) under ctx.
func New(ctx context.Context, key any) *Call {
	return &Call{Context: ctx, chain: key}
}

// Value answers the chain's key and the storage key with c, and delegates
// any other to the parent: c is a context like any other below the ceiling.
func (c *Call) Value(key any) any {
	if key == c.chain || key == (storageKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// For returns the Call of the chain identified by key that ctx belongs to,
// or nil when there is none (a middleware below the ceiling replaced the
// context with one that is not derived from it).
func For(ctx context.Context, key any) *Call {
	c, _ := ctx.Value(key).(*Call)
	return c
}

// Pass records p as the content the cap passed up. The last call wins: a
// middleware that calls next more than once returns the content of one
// attempt, and when it is not the last one's the ceiling copies it, which
// is safe.
func (c *Call) Pass(p *string) { c.passed.Store(p) }

// Passed reports whether p is the content the cap passed up last.
func (c *Call) Passed(p *string) bool { return p != nil && c.passed.Load() == p }

// Content returns a pointer to content (its string header: the bytes of a
// string never change), stored in the nearest Call of ctx the first time it
// is asked for per call, and in a new allocation otherwise (no Call, or one
// whose storage a first attempt of the call took already). The innermost
// handler takes a tool's content with it, so that a pointer the tool kept
// reaches nothing the chain passes on.
func Content(ctx context.Context, content string) *string {
	if c, ok := ctx.Value(storageKey{}).(*Call); ok && c.taken.CompareAndSwap(false, true) {
		c.content = content
		return &c.content
	}
	// Not &content: taking the parameter's address would move it to the
	// heap on every call, the one above included.
	p := new(string)
	*p = content
	return p
}
