// Package worker runs an agent's tool calls and hands back results that are
// safe to put in the conversation history.
//
// A [Worker] holds the registered [Tool] values, the limits of a
// [manifest.WorkerManifest] and the user's middleware. Every result takes the
// same path:
//
//	Tool.Run ─► byte cap ─► user middleware ─► ceiling ─► [batch] ─► history
//	            pinned first   (listed order,      pinned after the user's
//	                            onion)
//
// The worker installs the byte cap ([middleware.Cap]) innermost, next to the
// tool, and no option places user middleware below it: user middleware only
// ever see capped content, with the figures of the cut in
// [chain.Result.Truncation]. The ceiling ([middleware.Ceiling]) runs after
// all of them, so no content longer than its tool's limit reaches the
// history, whatever they do.
//
// With a batch budget (batch_max_bytes, batch_max_tokens or both),
// [Worker.ExecuteTools] shares it among the results of its calls once all of
// them are in, after every ceiling, water-filled in call order; a result
// over its share is cut again from its tool's content, so that it carries
// one marker whose N is all of that content the model does not see. See
// ExecuteTools.
//
// The result is one type from the tool to the history, [chain.Result]
// ([ToolOutput] and [ToolResult] are aliases of it). [Worker.ExecuteTools]
// returns exactly one per call, in call order, whatever the tools do: an
// error, a panic, an unknown tool name, a tool still running when the context
// ends or one that calls runtime.Goexit all become error results, and every
// one of them passes the whole chain.
//
// [manifest.WorkerManifest]: https://pkg.go.dev/github.com/toolcap/toolcap/manifest#WorkerManifest
package worker
