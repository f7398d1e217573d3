package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/claudecode"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/manifest"
)

const hookHelp = `Usage: toolcap hook claude-code [--manifest FILE]... [-v] < payload

A Claude Code PostToolUse hook. Reads the hook's JSON payload on standard
input (tool_name, tool_response, ...) and, when the tool's output is over the
policy a toolcap worker applies to tool_name (its per_tool entry, or else the
defaults, from the built-in default, the --manifest files and the TOOLCAP_
environment), prints

  {"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":...}}

whose updatedToolOutput has the tool's own output shape, cut to the policy
as toolcap cap and toolcap mcp cut (byte limit, token limit, strategy: head,
or head_tail and keep_lines, or json), marker "[truncated: N bytes dropped,
refine your query]" included. Output within the policy prints nothing.

What the model reads shares the policy: Bash's stdout and stderr, Grep's
content and file names (a short one whole, long ones equal shares), Read's
file content, Glob's file names (cut between names), WebFetch's result, an
MCP tool's text or content blocks (the text blocks cut as one text, images
and other blocks counted too: one that does not fit is dropped and a note
says so). Notebook cells, structuredContent and any other tool's output are
held to the policy as JSON, kept valid. A Bash image and a Read of an
image or PDF are left alone.

A token limit (default_max_tokens, a per_tool entry's max_tokens) is
counted by the tokenizer the manifest names: "calibrated" (the default) at
its conservative default, 2 bytes a token (the hook sees no provider's
counts), or exactly with "o200k_base" or "cl100k_base". When the token
limit cuts a text, its marker counts tokens: "[truncated: N tokens
dropped, refine your query]"; a text longer than 32 bytes per token of its share, and a list of
file names, keep a marker that counts bytes. The hook-only build
(-tags toolcap_nomcp) has no exact tokenizer: a manifest that sets a token
limit and names one is a configuration error there.

Secrets are redacted first, before anything measures, cuts or keeps the
output: each text of it (Bash's stdout and stderr, Read's content, Grep's
and Glob's names, WebFetch's result, an MCP tool's text blocks and the
strings of its structuredContent) has each secret the tool's rules find
replaced by "[redacted: RULE]" (the built-in rules, the manifest's
redact_patterns and redact_allow; redact = false turns it off for a tool),
so that neither the reply nor a kept file holds one; an output with a
secret is replaced even when it fits. -v logs the rules and counts of each
redacting call, never a value.

Output Claude Code saved itself (persistedOutputPath, <persisted-output>)
is left alone. Read is cut between lines, its line numbers counted, the
marker naming the Read of the next line. With keep_rest (on by default) a
cut output's whole text is kept as a plain file under the user cache
directory (toolcap/claude-code/<session>/<ref>.txt, bounded by the rest
table) and the marker names its Read: "... or read the rest: Read
{"file_path":...,"offset":L,"limit":K}]". A store that cannot be opened
leaves the plain marker.

Claude Code runs hooks in parallel, each on the tool's original output, so
only the per-call limit applies here: no budget across calls.

settings.json:

  {"hooks": {"PostToolUse": [{"matcher": "*",
    "hooks": [{"type": "command", "command": "toolcap hook claude-code"}]}]}}

Exit status: 0 when the payload was handled, and also when it was not a
PostToolUse payload, not JSON or over 4 GiB (a payload over 8 MiB is cut
as it streams, in memory bounded by the limits; Claude Code saves long
outputs to files itself, so no payload it sends comes near): then one
warning goes to standard error,
nothing to standard output, and the tool's output reaches the model as it is
(the hook never blocks a tool). 1 on a configuration error (a bad manifest or
TOOLCAP_ variable), which Claude Code reports without blocking the tool. 2
on a usage error. -v logs the limit in force and the cut.

The hook is package github.com/toolcap/toolcap/internal/claudecode, which a
Go program can call.
`

// runHook wires the Claude Code hook: flags, the manifest's layers, the
// counter, standard input and output, exit codes and the log. What the
// hook does to a tool's output is package claudecode's.
func runHook(ctx context.Context, o *options, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	fs, logs := newFlags("hook")
	var (
		layers  layerFlags
		verbose verbosity
	)
	layers.register(fs)
	fs.Var(&verbose, "v", "log the limit in force and the cut to standard error")
	operands, code, ok := parse(fs, hookHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	switch {
	case len(operands) == 0:
		fmt.Fprintln(stderr, "toolcap hook: name the agent: toolcap hook claude-code")
		return exitUsage
	case operands[0] != "claude-code":
		fmt.Fprintf(stderr, "toolcap hook: unknown agent %q: the one supported is claude-code\n", operands[0])
		return exitUsage
	case len(operands) > 1:
		fmt.Fprintf(stderr, "toolcap hook claude-code: unexpected argument %q: the payload comes on standard input\n", operands[1])
		return exitUsage
	}

	// A hook is a short process that allocates a few times a payload it
	// holds, and little per byte of one it streams, and exits: collecting
	// garbage only slows it (a collection on a busy machine stalls it for
	// tens of milliseconds, the p95 of the benchmark tripled), so the
	// collector waits for a memory limit instead, which bounds what a
	// streamed payload of any length can leave behind.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(hookMemoryLimit))

	logger := logs.logger(stderr, verbose).Named("toolcap")
	hook := &claudecode.Hook{Logger: logger}
	c, err := hook.ReadCap(stdin, func(tool string) (claudecode.Setup, error) {
		policy, res, err := o.hookPolicy(ctx, &layers, env, logger, tool)
		if err != nil {
			return claudecode.Setup{}, err
		}
		debug.SetMemoryLimit(hookMemoryLimit + 8*int64(policy.Hold()))
		s := claudecode.Setup{Policy: policy}
		if policy.KeepRest {
			// keep_rest is on by default; a store that cannot be opened
			// leaves the plain marker, never a failed hook.
			if d, err := openHookStore(res, logger); err != nil {
				logger.Warn("keep_rest: the store could not be opened; the output is cut without keeping the rest", "error", oneLine(err.Error()))
			} else {
				s.Store = d
			}
		}
		return s, nil
	})
	var setupErr *claudecode.SetupError
	switch {
	case errors.As(err, &setupErr):
		// A configuration error, a plain line as every command's; exit 1,
		// not 2: Claude Code shows a hook's exit 2 to the model.
		fmt.Fprintf(stderr, "toolcap: %s (tool output left as it is)\n", oneLine(setupErr.Err.Error()))
		return exitFailed
	case err != nil:
		// Fail open: the tool's output goes on unchanged.
		logger.Warn(oneLine(err.Error()) + "; tool output left as it is")
		return exitOK
	}
	// The secrets redacted before the cut: rules and counts, never a value.
	pin.LogRedactions(logger, c.Input.ToolName, c.Input.ToolUseID, c.Redactions)
	if !c.Changed {
		return exitOK
	}
	if c.Truncation != (chain.Truncation{}) {
		shape.Log(logger, c.Input.ToolName, c.Input.ToolUseID, c.Truncation)
	}
	reply, err := claudecode.MarshalReply(c.Out)
	if err == nil {
		_, err = stdout.Write(append(reply, '\n'))
	}
	if err != nil {
		logger.Error("standard output: " + oneLine(err.Error()))
		return exitFailed
	}
	return exitOK
}

// hookPolicy resolves the manifest's layers to tool's policy, with the
// counter toolcap cap and toolcap mcp count with (counterFor), so that a
// token cut is the same whichever front end made it, and logs the limit in
// force. It returns the resolution too, for the store's settings: the
// layers are read once per hook process.
func (o *options) hookPolicy(ctx context.Context, layers *layerFlags, env []string, logger hclog.Logger, tool string) (shape.Policy, *manifest.Resolution, error) {
	res, err := layers.resolve(ctx, env, logger)
	if err != nil {
		return shape.Policy{}, nil, err
	}
	policies, err := res.Manifest.Policies()
	if err != nil {
		return shape.Policy{}, nil, err
	}
	counter, err := o.counterFor(res)
	if err != nil {
		return shape.Policy{}, nil, err
	}
	p := o.redacting(policies).WithCounter(counter).For(tool)
	warnToolCase(res, tool, logger)
	_, source := limitFor(res, tool)
	fields := []any{"tool", tool, "limit", p.MaxBytes, "source", source}
	if k := p.Spec.Keep; k != "" && k != cut.KeepHead {
		fields = append(fields, "strategy", string(k))
	}
	if p.HoldsTokens() {
		fields = append(fields, "limit_tokens", p.MaxTokens, "tokenizer", res.Manifest.Limits().TokenizerName())
	}
	logger.Info("limit in force", fields...)
	return p, res, nil
}

// openHookStore opens the hook's store of what cuts drop: a plain
// directory store (files Claude Code's Read opens), under the rest table's
// dir when the manifest sets one, else under the user cache directory,
// bounded by the rest table's max_bytes, max_entry_bytes and ttl.
func openHookStore(res *manifest.Resolution, logger hclog.Logger) (*rest.Dir, error) {
	c := res.Manifest.Limits().RestConfig()
	dir := c.Dir
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("no directory for the store: %w", err)
		}
		dir = filepath.Join(cache, "toolcap")
	}
	return rest.OpenPlainDir(filepath.Join(dir, "claude-code"), restConfig(c, logger))
}

// hookMemoryLimit is the heap size at which the hook collects garbage,
// and more by 8 times what the tool's policy holds of a streamed text
// (shape.Policy.Hold). A payload the hook holds whole (at most
// claudecode.StreamAbove, 8 MiB) costs it under 30 MiB (the buffer of the
// bound, 10 MiB, counted whole); a longer one is streamed in memory bounded by
// the limits, and this bounds the garbage its reading leaves. The limit is
// soft: past it the collector runs, as it would with its default setting,
// which costs time, not the hook's failure.
const hookMemoryLimit = 64 << 20
