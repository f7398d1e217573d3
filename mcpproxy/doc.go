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
// Every tools/call goes through a [worker.Worker] built from the server's
// tool list, so its result takes toolcap's one path: byte cap first, user
// middleware, ceiling last, with the tool's name as registered by the server
// as the key of its per_tool limit. The chain sees one text: the result's
// text blocks joined by [TextSeparator], which therefore share one budget,
// in order. [Shape] puts the chain's text back into the blocks; a result
// the chain did not change reaches the client exactly as the server sent it.
//
// structuredContent, when the server sends it, is capped by the same rule
// ([CapStructured]): its string values share one budget of the tool's limit
// and are cut with the same marker. For a server whose structured result
// repeats the text (such as the reference filesystem server, whose output
// schema is {"content": string}) both copies end up identical, and the
// result stays valid for the tool's outputSchema. A structured value that
// cannot be brought within the limit that way, or that no longer matches
// the schema once cut, is dropped; a success result of a tool with an
// outputSchema then becomes an error result with a note, since a success
// without structuredContent would break the schema's contract.
//
// Image, audio and embedded-resource blocks are measured one by one
// ([CapBlocks]): a block within the limit passes unchanged, a larger one is
// replaced by a one-line note giving its kind and size.
//
// # What is forwarded
//
// Tools (and tools/list_changed), prompts, resources and resource templates
// (and their list_changed), completions, logging messages and
// logging/setLevel, progress notifications (the client's progress token
// travels in the call's _meta) and cancellation (a cancelled call cancels
// the forwarded one). A server's isError result stays an error result; a
// JSON-RPC error stays a JSON-RPC error with the server's code, its message
// and data brought within the tool's limit ([CapError]).
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
