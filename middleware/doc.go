// Package middleware holds toolcap's byte cap and its stock middleware.
//
// [Truncate] is the exact truncation rule: the whole output, marker included,
// fits the limit, the marker reports the exact number of bytes dropped, and
// the cut never splits a UTF-8 character. [Cap] applies it to every result of
// a [chain.Handler]; [Ceiling] applies it again after user middleware and
// warns when it had to.
//
// [Pinned] is the one pinned composition every front end of toolcap builds
// from: the cap innermost, the user's middleware, a [Recover], the ceiling
// last, each tool held to its whole [shape.Policy] (strategy and token limit
// included). The worker in package worker installs it around the user's
// middleware, so most programs never call these directly.
//
// [Recover] turns a panic into an error result, and [Logging] logs each call
// through an [hclog.Logger].
//
// [hclog.Logger]: https://pkg.go.dev/github.com/hashicorp/go-hclog#Logger
package middleware
