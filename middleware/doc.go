// Package middleware holds toolcap's byte cap and its stock middleware.
//
// [Truncate] is the exact truncation rule: the whole output, marker included,
// fits the limit, the marker reports the exact number of bytes dropped, and
// the cut never splits a UTF-8 character. [Cap] applies it to every result of
// a [chain.Handler]; [Ceiling] applies it again after user middleware and
// warns when it had to. The worker in package worker installs both around
// the user's middleware, so most programs never call them directly.
//
// [WithPolicy] holds each tool to its whole [shape.Policy] instead of a byte
// limit alone: its strategy (head, head_tail, json) and its token limit, cut
// by [shape.Text], the one rule every front end of toolcap shares. The worker
// passes the manifest's policies.
//
// [Pinned] is the one pinned composition every front end builds from: the
// cap innermost, the user's middleware, a [Recover], the ceiling last.
// [Checked] reports a middleware that returns a nil handler, and
// [Answered] with [WithAnswer] is the innermost handler of a front end
// whose tools ran before the chain, such as toolcap mcp.
//
// [Recover] turns a panic into an error result, and [Logging] logs each call
// through an [hclog.Logger].
//
// [hclog.Logger]: https://pkg.go.dev/github.com/hashicorp/go-hclog#Logger
package middleware
