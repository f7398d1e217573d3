// Package pin holds toolcap's pinned stages and their composition: the cap
// ([Cap]), the ceiling ([Ceiling]), [Pinned], which places the user's
// middleware between them with a [Recover], and what the front ends need
// around it ([Checked], an [Answerer] for results that exist already, [WithPolicy],
// [WithFits], [WithRest], a [CapObserver]). Package middleware is its
// public face; the worker and toolcap mcp build from here.
package pin
