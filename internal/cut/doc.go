// Package cut is toolcap's one rule of cutting: every cut of a tool result
// (the worker's cap and ceiling, toolcap cap, the MCP proxy's text blocks
// and structuredContent) goes through it, so there is one marker, one count
// and one character-boundary search.
//
// A cut keeps at most limit bytes, marker included, and says how much it
// dropped with [Marker]: "\n[truncated: N bytes dropped, refine your
// query]", N being exactly the bytes of the input the output does not show.
// Content within the limit is never changed. A cut never splits a UTF-8
// character of valid input, never panics for any input or int limit, and is
// idempotent: cutting its output again with the same [Spec] returns it
// unchanged.
//
// # Invalid UTF-8
//
// The limit holds in what the client decodes. A byte that is not valid
// UTF-8 reaches the model as U+FFFD, 3 bytes, so every cut replaces each
// such byte it reads by U+FFFD before it measures ([ReplaceInvalid],
// [Replacer]): the output is valid UTF-8 within the limit. What a cut reads
// is the rule of its figures:
//
//   - Content short enough to fit even at 3 bytes a byte is passed on
//     unread.
//   - A head or head_tail cut (without KeepLines) over the limit reads only
//     the windows it can show: the first limit+4 bytes, and for head_tail
//     the last limit+4 too, so that it costs O(limit) however long the
//     input. When they are valid UTF-8, the bytes past them count as they
//     are, invalid or not, and [Stats].Replaced counts only replaced bytes
//     the cut read (none).
//   - Content with an invalid byte in a window, and content a cut reads
//     whole anyway (json, KeepLines, or no longer than limit+4), is read
//     whole: every figure, the marker's N included, counts the decoded text
//     and Stats.Replaced says how many bytes were replaced.
//
// A [Writer], [Recut] and the token cuts ([CutTokens]) read every byte, so
// they count every invalid byte decoded, even where Cut would count it as
// it is. Valid UTF-8 costs one
// pass over what is read and no allocation.
//
// # Strategies
//
// [Cut] applies a [Spec], whose [Keep] names the strategy:
//
//   - [KeepHead] (the zero Spec): the longest prefix that fits beside the
//     marker. [Head] is that rule on its own, byte for byte what
//     middleware.Truncate has always done.
//
//   - [KeepHeadTail]: the start and the end share the room left after the
//     marker (TailShare of it to the tail, half by default), and the marker
//     stands on a line of its own between them:
//
//     head + "\n[truncated: N bytes dropped, refine your query]\n" + rescued lines + tail
//
//     The head ends before a newline when one lies in the last 10% of its
//     budget, the tail starts after one when one lies in the first 10% of
//     its budget; the marker's two newlines stand in for those two, which
//     count as dropped. Of the line ends within reach, the pair that keeps
//     the most bytes wins, so line-structured text fills the limit whenever
//     its line lengths allow; a side with no newline within reach is cut
//     hard at a character boundary and takes all the room the other left.
//     KeepLines rescues whole lines of the dropped middle that match one of
//     its patterns, in order and verbatim, after the marker: at most
//     [MaxRescuedLines] lines and a quarter of the limit, their room taken
//     from head and tail. Rescued lines are chosen from the middle a cut
//     without them would drop. N counts every byte neither in the head, the
//     tail nor a rescued line.
//
//   - [KeepJSON]: a JSON document whose compacted form fits is compacted
//     (nothing dropped, no marker, [Stats].Compacted set); otherwise it is
//     cut structurally into a shorter valid document, as [JSONValue]
//     describes but for one rule: the first element of an array that does
//     not fit whole is cut the same way, as an object's first member that
//     does not fit is, when a cut form of it that shows something fits
//     (JSONValue keeps whole elements past the first, a schema's rows). So
//     a nested document such as a directory tree fills the limit instead of
//     stopping at the first subtree too long to keep whole. The marker
//     follows the document on its own line, so that the text before the
//     last "\n[truncated: " always parses. Here N is the length of
//     the input less the length of the document part. Content that is not
//     JSON, longer than [JSONMaxInput], or with no valid form that fits is
//     cut by the spec's Fallback text strategy.
//
// # Streams
//
// [Writer] cuts content that arrives in pieces, with memory bounded by the
// limit (for KeepJSON, by [JSONMaxInput]), and for valid UTF-8 gives
// exactly what Cut gives for the whole (for invalid UTF-8 it counts every
// invalid byte decoded, see above): toolcap cap uses it to cut a pipe of
// any length, and the proxy to cut a result it reads in pieces.
//
// # Figures
//
// Every cut returns [Stats]: the original length, the bytes kept and
// dropped (Kept + Dropped = Original), the strategy that made the output,
// whether a document was only compacted, the lines rescued and, for a
// structural cut, the [Level]s on the cut's path ("kept 41 of 400").
//
// Package cut imports only the standard library.
package cut
