// Package mcpproxy puts toolcap's byte cap in front of any MCP server, as a
// relay that forwards every JSON-RPC message as it came and caps the
// results of tools/call while it reads them.
//
// A [Proxy] relays sessions between a client and a server, each a [Conn]:
// read as a stream of newline-delimited JSON-RPC messages, MCP's stdio
// framing, so that a result of any size is capped while it is read, and
// written one whole message at a time, so that a transport carrying
// messages one by one has no bytes to split. [StreamConn] makes a Conn of a
// byte stream; [Command] runs a server over stdio in a process group of its
// own; [DialHTTP] reaches one over streamable HTTP; [Proxy.HTTPHandler]
// serves clients over streamable HTTP. The command "toolcap mcp" is a thin
// wrapper around these.
//
// # What is forwarded
//
// Everything, as it came and in the order it came, in both directions:
// initialize with the client's real capabilities, tools/list with every
// field, requests from the server to the client and their answers,
// notifications, methods toolcap does not know, _meta. Each direction is one
// reader that forwards a message before it reads the next. A message other
// than a tools/call result is bounded by [Options.MaxMessageBytes]: one
// larger is not forwarded, and a request or response over it is answered
// with a JSON-RPC error for its id, so the session goes on. A line that is
// not a JSON-RPC message is logged and skipped.
//
// # What is capped
//
// The answer to each tools/call the client sent. Its text, the text blocks
// joined by newlines, takes toolcap's one pinned path, [middleware.Pinned],
// composed once, as the worker composes it: byte cap first, user
// middleware, ceiling last, with the tool's name as
// registered by the server as the key of its per_tool limit. Then the
// blocks share the limit, text by its bytes and other blocks by their
// encoded size, notes included. Text is cut by the tool's strategy (head,
// head_tail or json); a tool with an outputSchema and no strategy of its own
// has its text cut as JSON. structuredContent is cut on its own as JSON, its
// serialization within the limit, every member of an object kept and a note
// saying what was kept; it is dropped (a success then becomes an error with
// a note, when the tool has an outputSchema) only when no form valid for the
// schema fits. When the text's rest is kept ([Options.Rest]), the marker of
// structuredContent's last cut string names the read of that kept text, as
// written in JSON ([rest.Keeper.JSONKept]): from where the string's head
// ends in the text when the text begins with it, as with a server that
// answers {"content": text}, and from 0 otherwise, its N what that read
// returns; a client that shows its model structuredContent rather than the
// text can read on too. A text within the limit whose structured copy is
// cut is kept for that read ([rest.Keeper.Keep]). A JSON-RPC
// error answering a tools/call is brought within the limit too. A capped
// result carries its figures in _meta["toolcap/truncation"]; a result
// within its limit is forwarded byte for byte.
//
// A result over its limit is never held whole: the reader cuts its text as
// it reads it (keeping what the strategy needs, the first limit+4 bytes for
// head), keeps the other blocks that fit, and shortens each long string of
// structuredContent as it is read, so a result of any size costs the same
// memory. A result that may still go out as it came is held once, as
// written, and goes out as those bytes; it is let go as soon as it is
// known to be cut. The limits can change while the proxy runs
// ([Proxy.SetPolicies]); a call keeps the limits it was sent under.
//
// # Secrets
//
// The secrets of a result are redacted before anything else sees them
// (the tool's redact setting, on by default: package redact's built-in
// rules). The reader redacts each text as it decodes it, through a
// [redact.Writer] that holds back the longest secret's length, so that a
// secret split across the server's writes is found whole; the head it
// keeps, the cuts it makes while reading, the store the rest is written
// to, the marker's figures and the chain's text
// ([chain.Result.Redactions]) all hold redacted text. It redacts the
// string values of structuredContent, of the blocks other than their
// joined text (an embedded resource's text; base64 data and blobs are left
// alone) and of a JSON-RPC error answering the call (its message, data and
// other members) the same way, before they are cut. A result anything was
// redacted from is never forwarded as it came: it is written out with
// each secret's marker ("[redacted: aws-access-token]") and
// _meta["toolcap/redaction"], the counts by rule ({"rules":
// {"aws-access-token": 1}, "count": 1}), and one line is logged, rules
// and counts, never a value. A result read before its id is known, which
// may answer calls whose tools redact differently, is redacted by all of
// their detectors: a tool with redact = false may then see a marker.
//
// # Both generations of MCP
//
// [Proxy.HTTPHandler] serves the 2025 revisions, whose initialize starts a
// session with a server of its own, and the stateless revision 2026-07-28
// beside them: a request that names it (its MCP-Protocol-Version header,
// or its _meta) is carried, under an id of the proxy's own, by one of a
// few server connections shared by every stateless client
// ([HTTPOptions.StatelessServers]), each a relay session like a 2025
// one, so that its result is cut, kept and read back the same way. Its
// answer comes back with the client's id, with the HTTP status its error
// calls for; a ref it is given is readable by its principal's later
// requests (a keyed hash of its Authorization). Over stdio every message
// passes as it came, whatever its revision; with [DialHTTP], a stateless
// request of a client over stdio goes up with the headers its body
// implies (SEP-2243).
//
// # Ending
//
// [Proxy.Serve] returns nil when the client ended the session, after closing
// the server. When the server ends first, every request it left unanswered
// gets a JSON-RPC error, and Serve returns an error wrapping
// [ErrServerExited] that says how the server ended.
//
// See docs/mcp.md for the figures: memory against result size, latency,
// the transports.
//
// [middleware.Pinned]: https://pkg.go.dev/github.com/toolcap/toolcap/middleware#Pinned
// [rest.Keeper.JSONKept]: https://pkg.go.dev/github.com/toolcap/toolcap/rest#Keeper.JSONKept
// [rest.Keeper.Keep]: https://pkg.go.dev/github.com/toolcap/toolcap/rest#Keeper.Keep
// [redact.Writer]: https://pkg.go.dev/github.com/toolcap/toolcap/redact#Writer
// [chain.Result.Redactions]: https://pkg.go.dev/github.com/toolcap/toolcap/chain#Result.Redactions
package mcpproxy
