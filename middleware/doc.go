// Package middleware holds toolcap's byte cap and its stock middleware.
//
// [Truncate] is the exact truncation rule: the whole output, marker included,
// fits the limit, the marker reports the exact number of bytes dropped, and
// the cut never splits a UTF-8 character. [Cap] applies it to every result of
// a [chain.Handler]; [Ceiling] applies it again after user middleware and
// warns when it had to. The worker in package worker installs both around
// the user's middleware, so most programs never call them directly.
//
// Package cut owns the rule: [Truncate] is [cut.Head], and [WithSpecs]
// makes the cap and the ceiling cut each tool with its strategy (head,
// head_tail, json) through [cut.Cut]; the worker passes the manifest's.
//
// [Recover] turns a panic into an error result, and [Logging] logs each call
// through an [hclog.Logger].
//
// # Units
//
// Limits are bytes today. The unit lives behind one seam, a [Cutter]: how a
// size is measured and where a cut may fall. A token budget measured by a
// provider can replace bytes later by passing another Cutter (and other
// limits) with [WithCutter], without touching the chain or the worker.
//
// [hclog.Logger]: https://pkg.go.dev/github.com/hashicorp/go-hclog#Logger
package middleware
