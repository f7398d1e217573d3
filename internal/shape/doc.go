// Package shape fits a tool result to its tool's [Policy]: the one home of
// "fit a result to its limit" that every front end of toolcap shares — the
// worker's cap, ceiling and batch stage, toolcap mcp, the Claude Code hook
// and each adapter. A front end only translates its own shapes into the
// ones here and back.
//
// A Policy holds a tool's byte limit, its token limit and the [cut.Spec] of
// its strategy (head, head_tail, json); package manifest resolves a tool to
// one. The functions here hold a result to it:
//
//   - [Text] and [Recut]: one text.
//   - [Share], [Texts] and [Lines]: several texts that share one budget,
//     such as a command's stdout and stderr or a list of file names, by
//     the one fair-share rule, [WaterFill].
//   - [Content] and [Fit]: the content blocks of an MCP result (text,
//     image, audio, embedded resources, resource links) within one limit,
//     notes included.
//   - [JSON] and [JSONPrecut]: a structured value, such as
//     structuredContent, cut to a valid (and schema-valid) form.
//   - [ErrorMessage] and [ErrorMessageHead]: a JSON-RPC error's message
//     and data.
//   - [Read]: a text that arrives as a stream, in bounded memory, cut as
//     Text cuts it held whole ([Policy.Hold] says how much is held).
//
// Every function returns the shaped value and the figures of what it did
// (a [chain.Truncation]) as values; none logs. [LogFields] gives the one
// field set every front end logs a cut with, and [Log] writes it. The marker, the boundary
// search and the count are package cut's.
package shape
