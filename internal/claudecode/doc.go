// Package claudecode caps the tool output Claude Code hands its model, as a
// PostToolUse hook: it reads the hook's payload, fits the tool's output to
// the tool's [shape.Policy] keeping the tool's own output shape, and builds
// the reply that replaces it. The command toolcap hook claude-code is this
// package wired to flags, a manifest and standard input and output; a Go
// program (a hook of its own, a test harness, an agent that replays Claude
// Code transcripts) calls it directly:
//
//	h := &claudecode.Hook{}
//	c, err := h.ReadCap(os.Stdin, func(tool string) (claudecode.Setup, error) {
//		return claudecode.Setup{Policy: policies.For(tool)}, nil
//	})
//	// ...
//	if c.Changed {
//		reply, _ := claudecode.MarshalReply(c.Out)
//		os.Stdout.Write(append(reply, '\n'))
//	}
//
// Here policies is a manifest's ((*manifest.WorkerManifest).Policies), with
// a counter when it sets token limits ((*shape.Policies).WithCounter).
// [Hook.ReadCap] reads a payload of any length (at most [MaxPayload]) in
// memory bounded by the limits: past [StreamAbove] it cuts the output as it
// streams, with the reply [Hook.Cap] gives for it held whole. A program
// that holds a payload already calls [ParseInput] and [Hook.Cap], or
// [CapToolResponse] for a tool_response alone.
//
// # What is cut
//
// Every cut goes through package shape, the code toolcap cap, toolcap mcp
// and the worker cut with, so a text comes out of the hook as they cut it
// under the same policy ([shape.Text]): byte limit, token limit and
// strategy (head, head_tail and its keep_lines, json). [CapToolResponse] lists what each tool's output
// shares the policy among. Binary data (a Bash image, a Read of an image or
// a PDF) is never cut: cutting base64 breaks it; an MCP tool's image
// blocks count against the limit as toolcap mcp counts them, and one that
// does not fit is dropped and named by a note.
//
// # Secrets
//
// Before anything measures, cuts or keeps a tool's output, each secret
// the policy's detector ([shape.Policy.Redact]) finds in its texts is
// replaced by a marker naming the rule ("[redacted: aws-access-token]"):
// the texts the cut fits and every other string of the output, but base64
// data (an image's, a blob's). Read's content keeps the lines of a secret
// that spans some, so that the line numbers the model reads stay the
// file's. The reply, the figures, the file of the rest and the log hold
// redacted text only; an output with a secret is replaced even when it
// fits ([Capped].Redactions counts what was redacted, by rule). A
// streamed payload is redacted as it streams, a secret split across its
// reads found whole.
//
// # No reply when nothing was cut
//
// Claude Code runs every matching PostToolUse hook in parallel on the
// tool's original output and keeps the last rewrite, so an identity
// rewrite would compete with other hooks for nothing: when the output fits
// and holds no secret, CapToolResponse reports changed == false and a hook
// prints nothing. For
// the same reason a hook cannot share a budget across the calls of a turn:
// only the per-call policy applies.
package claudecode
