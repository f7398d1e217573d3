package main

import (
	"context"
	"fmt"
	"io"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/cut"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/shape"
)

const capHelp = `Usage: toolcap cap --tool NAME [--keep STRATEGY] [--manifest FILE]... [-v] < input > output

Reads standard input to its end and writes it to standard output, capped at
the limits a toolcap worker applies to the results of tool NAME, and cut with
that tool's strategy: its per_tool entry, or else the defaults, from the
built-in default, the --manifest files (later wins) and the TOOLCAP_
environment. Input within the limit is copied unchanged. Longer input is cut
at UTF-8 character boundaries and carries the marker
"[truncated: N bytes dropped, refine your query]"; the output, marker
included, is never longer than the limit. Bytes that are not valid UTF-8 are
treated as single bytes. Use it in a pipeline or as an agent's post-tool hook.

Strategies (keep in the manifest, or --keep, which overrides the tool's):
head keeps the start, the marker last; head_tail keeps the start and the
end, the marker on its own line between them, and rescues keep_lines from
the middle; json compacts a JSON document or cuts it into a shorter valid
one, the marker on a line after it, and cuts other input as text.

Token limits (default_max_tokens, a per_tool entry's max_tokens): both
limits hold, and the marker names the unit that cut:
"[truncated: N tokens dropped, refine your query]". toolcap counts tokens
with the "calibrated" tokenizer, an estimate that never learns here (cap sees
no provider's counts) and so keeps its conservative default, 2 bytes a
token. A manifest that sets a token limit and names an exact tokenizer
(o200k_base, cl100k_base) is a configuration error: those live in the Go
module github.com/toolcap/toolcap/tiktoken, for programs that build a
worker. Input of at most 32 bytes per token of the limit (and at most 8 MiB
or 4 times the byte limit) is held whole, counted and cut as a worker cuts
it; longer input is cut as it streams, then to the token limit from what
was kept, as a worker cuts it held whole (but for input over 8 MiB or 4
times the byte limit and within the token window, which a worker would
count whole), and its marker counts bytes.

Memory: with head, cap keeps the first limit+4 bytes of the input in one
buffer, which becomes the output without a copy; the rest is read once, in
64 KiB reads, counted and discarded. Its peak memory is the limit plus about
10 MiB, whatever the input size: 74 MiB for a 200 MB input at the maximum
limit of 64 MiB. head_tail keeps the first and the last limit+4 bytes (and
the lines it may rescue), about twice the limit: 140 MiB for that input. json holds the whole
input while it is at most 8 MiB or 4 times the limit long (a structural cut
needs the whole document); longer input is cut as text. With a token limit,
cap also holds the input while it is short enough to be held whole (above).
The output is written when the input ends.

Exit status: 0 when the input was copied or capped; 1 on a read or write
error or an interrupt; 2 on a usage or configuration error (a bad value, a broken or missing
manifest, a bad TOOLCAP_ variable): then nothing is written to standard
output and one line on standard error names the source, key and value.
Warnings (an unknown key or variable) go to standard error and do not change
the exit status. -v logs the limit in force and the cut.
`

func runCap(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	fs := newFlags("cap")
	var (
		layers  layerFlags
		tool    = fs.String("tool", "", "the registered `NAME` of the tool whose output this is (required)")
		keep    = fs.String("keep", "", "cut with `STRATEGY` (head, head_tail or json) instead of the tool's")
		verbose verbosity
	)
	layers.register(fs)
	fs.Var(&verbose, "v", "log the limit in force and the cut to standard error")
	operands, code, ok := parse(fs, capHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(operands) > 0 {
		fmt.Fprintf(stderr, "toolcap cap: unexpected argument %q: cap reads standard input\n", operands[0])
		return exitUsage
	}
	if *tool == "" {
		fmt.Fprintln(stderr, "toolcap cap: --tool NAME is required: the limit depends on the tool")
		return exitUsage
	}

	var extra []manifest.Option
	if *keep != "" {
		k, err := cut.ParseKeep(*keep)
		if err != nil {
			fmt.Fprintf(stderr, "toolcap cap: --keep: %v\n", err)
			return exitUsage
		}
		// --keep is the highest layer, for this tool's strategy only: the
		// tool's tail_share and keep_lines still apply.
		extra = append(extra, manifest.Overrides("flag --keep", manifest.ToolOutputLimits{
			PerTool: map[string]manifest.ToolEntry{*tool: {Strategy: manifest.Strategy{Keep: k}}},
		}))
	}

	logger := newLogger(stderr, verbose.level()).Named("toolcap")
	res, err := layers.resolve(ctx, env, logger, extra...)
	if err != nil {
		return configError(stderr, err)
	}
	policies, err := res.Manifest.Limits().Policies()
	if err != nil {
		return configError(stderr, err)
	}
	policy := policies.For(*tool)
	limit, source := limitFor(res, *tool)
	fields := []any{"tool", *tool, "limit", limit, "source", source}
	if k := policy.Spec.Keep; k != "" && k != cut.KeepHead {
		fields = append(fields, "strategy", string(k))
	}
	counter, err := counterFor(res)
	if err != nil {
		return configError(stderr, err)
	}
	if policy.MaxTokens > 0 {
		fields = append(fields, "limit_tokens", policy.MaxTokens, "tokenizer", res.Manifest.Limits().TokenizerName())
		policy.Counter = counter
	}
	logger.Info("limit in force", fields...)

	capped, t, err := capReader(ctx, stdin, policy)
	if err != nil {
		fmt.Fprintf(stderr, "toolcap cap: standard input: %v\n", err)
		return exitFailed
	}
	if t != (chain.Truncation{}) && logger.IsInfo() {
		logger.Info(shape.Message(t), shape.LogFields(*tool, "", t)...)
	}
	if _, err := io.WriteString(stdout, capped); err != nil {
		fmt.Fprintf(stderr, "toolcap cap: standard output: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// capReader reads r to its end and fits it to policy as a worker fits a
// result held whole ([shape.Read]: memory bounded by the policy, see
// [shape.Policy.Hold]), returning when ctx ends (an interrupt), even while
// a read is blocked; the read then goes on in the background until the
// process exits.
func capReader(ctx context.Context, r io.Reader, policy shape.Policy) (string, chain.Truncation, error) {
	type result struct {
		capped string
		t      chain.Truncation
		err    error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		res.capped, res.t, _, res.err = shape.Read(r, policy)
		done <- res
	}()
	select {
	case res := <-done:
		return res.capped, res.t, res.err
	case <-ctx.Done():
		return "", chain.Truncation{}, context.Cause(ctx)
	}
}
