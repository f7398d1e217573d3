// Package mcpproxy puts toolcap's byte cap in front of any MCP server.
//
// A [Proxy] is an MCP server towards one client and an MCP client towards
// one real server, both built on the official Go SDK
// ([github.com/modelcontextprotocol/go-sdk/mcp]). [Connect] starts the
// session with the server (usually a subprocess over an
// [mcp.CommandTransport]) and mirrors its tools, prompts and resources;
// [Proxy.Serve] serves the client (usually over an [mcp.StdioTransport])
// until either side ends. The command "toolcap mcp" is a thin wrapper
// around the two.
//
// # What is capped
//
// Two things are bounded by the tool's limit, each on its own: the content
// blocks of a result, all of them together and the proxy's notes included
// (text by its bytes, other blocks by their encoded size); and its
// structuredContent. A JSON-RPC error from the server is brought within the
// limit too.
//
// Every tools/call goes through a [worker.Worker] built from the server's
// tool list, so its result takes toolcap's one path: byte cap first, user
// middleware, ceiling last, with the tool's name as registered by the server
// as the key of its per_tool limit. The chain sees one text: the result's
// text blocks joined by newlines, in order, which therefore share one
// budget. The proxy puts the chain's text back into the blocks; a result
// the chain did not change, and within the limit, reaches the client
// exactly as the server sent it.
//
// Then all the blocks share the limit, in their order in the result: a text
// block that no longer fits is cut again by the rule
// of text (the marker's count stays exact); an image, audio or embedded
// blob that does not fit whole is dropped; the text of an embedded text
// resource and the description of a resource link are cut by the rule of
// text, or their block dropped when even the marker does not fit. The
// dropped blocks are replaced by one short note, whose room is set aside
// before the blocks take theirs.
//
// structuredContent, when the server sends it, is capped by the same rule:
// its string values share one budget of the tool's limit
// and are cut with the same marker. For a server whose structured result
// repeats the text (such as the reference filesystem server, whose output
// schema is {"content": string}) both copies end up identical, and the
// result stays valid for the tool's outputSchema. A structured value that
// cannot be brought within the limit that way, or that no longer matches
// the schema once cut, is dropped; a success result of a tool with an
// outputSchema then becomes an error result with a note (counted with the
// content blocks), since a success without structuredContent would break
// the schema's contract.
//
// # What is forwarded
//
// Tools (and tools/list_changed), prompts, resources and resource templates
// (and their list_changed), completions, logging messages and
// logging/setLevel, progress notifications (the client's progress token
// travels in the call's _meta) and cancellation (a cancelled call cancels
// the forwarded one). A server's isError result stays an error result; a
// JSON-RPC error stays a JSON-RPC error with the server's code, its message
// and data brought within the tool's limit.
// Requests from the server to the client (roots, sampling, elicitation) are
// not forwarded: the proxy advertises none of those capabilities, so the
// server falls back to its own configuration. Resource subscriptions are not
// forwarded either.
//
// # Ending
//
// [Connect] gives up after [Options.InitTimeout] ([ErrInitTimeout]).
// [Proxy.Serve] returns nil when the client closed the connection and
// shuts the server down; it returns an error wrapping [ErrServerExited]
// when the server went away first, and the connection's error when the
// client sent something that is not JSON-RPC.
//
// [worker.Worker]: https://pkg.go.dev/github.com/toolcap/toolcap/worker#Worker
package mcpproxy
