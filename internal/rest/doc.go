// Package rest keeps what a cut drops, so that the model can read on
// instead of running the tool again.
//
// When a tool's result is cut (package shape), a front end with a [Store]
// writes the whole output to an entry of the store and the marker names
// the next read, inside the same limit:
//
//	[truncated: N bytes dropped, refine your query or read the rest: toolcap_read {"ref":"…","offset":K}]
//
// The read tool, toolcap_read ([Definition]), answers with a page of the
// output from that offset, itself held to the read tool's limit (and to
// the limit of the tool whose output it is, where that is lower and the
// policy says so: [shape.Policy].PageBytes, the marker's read then names a
// length), whose marker names the next offset; reading page after page from offset 0
// gives back the output byte for byte. With a pattern, it answers the
// matching lines of the whole output with their byte offsets, as grep -b
// does, and in a line longer than 1 KiB (one-line JSON) each match with
// the bytes around it, searching a line of any length in bounded memory.
//
// Entries are bounded (a quota, a per-entry bound, a time to live, oldest
// evicted first; see [Config]) and removed when they expire, while their
// store is in use ([Dir] says when). They are bound to a scope: a ref made
// in one scope is refused in every other, with the same error as an
// unknown ref ([ErrUnknown]). Two stores are here, [Memory] and [Dir]; a store that
// fails never fails a cut: the marker falls back to its plain form.
package rest
