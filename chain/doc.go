// Package chain composes the ordered middleware that every tool result passes
// through on its way into an agent's conversation history.
//
// A [Handler] answers one [Call] with one [Result]. A [Middleware] wraps a
// Handler in another. [Chain] composes middleware once, at construction, so a
// call through the composed handler costs one function call per layer and no
// allocation.
//
// # Order
//
// Middleware compose like an onion, the usual Go convention (grpc-go's
// ChainUnaryInterceptor, connect-go's WithInterceptors): the first listed is
// the outermost. It sees the call first and the result last.
//
//	Chain(A, B, C)(h)  ==  A(B(C(h)))
//
//	call ──► A ──► B ──► C ──► h
//	                           │
//	result ◄── A ◄── B ◄── C ◄─┘
//
// # Cost
//
// A [Result] is 32 bytes, so a chain passes it in registers, and a layer that
// only calls next costs what a function call costs; its error flag and the
// figures of its cuts sit behind one pointer that is nil for a plain success.
//
// The package knows nothing about tools, limits or manifests; the byte cap
// that toolcap pins in front of every user middleware lives in package
// middleware, and the worker that installs it lives in package worker.
package chain
