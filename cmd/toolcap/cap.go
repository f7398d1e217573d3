package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/toolcap/toolcap/cut"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/middleware"
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
it; longer input is cut as it streams, then to the token limit, and its
marker counts bytes.

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
	} else {
		counter = nil // no token limit for this tool: bytes only
	}
	logger.Info("limit in force", fields...)

	capped, st, err := capReader(ctx, stdin, policy, counter)
	if err != nil {
		fmt.Fprintf(stderr, "toolcap cap: standard input: %v\n", err)
		return exitFailed
	}
	if st.Changed() {
		msg := "tool result truncated"
		if st.Compacted {
			msg = "tool result compacted"
		}
		fields := []any{
			"tool", *tool,
			"original_bytes", st.Original,
			"kept_bytes", st.Kept,
			"dropped_bytes", st.Dropped,
			"limit", limit,
		}
		if st.Strategy != "" && st.Strategy != cut.KeepHead {
			fields = append(fields, "strategy", string(st.Strategy))
		}
		if policy.MaxTokens > 0 {
			fields = append(fields, "limit_tokens", policy.MaxTokens)
		}
		if st.Unit == cut.UnitTokens {
			fields = append(fields, "unit", "tokens", "original_tokens", st.OriginalTokens,
				"kept_tokens", st.KeptTokens, "dropped_tokens", st.DroppedTokens)
		}
		logger.Info(msg, fields...)
	}
	if _, err := io.WriteString(stdout, capped); err != nil {
		fmt.Fprintf(stderr, "toolcap cap: standard output: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// capReader reads r to its end and cuts it as a worker applying policy
// would, returning when ctx ends (an interrupt), even while a read is
// blocked; the read then goes on in the background until the process exits.
// The head rule reads through [middleware.TruncateReader], which keeps only
// limit+4 bytes; the other strategies through a [cut.Writer]. With a token
// limit (c not nil), input of at most [cut.TokenWindow] bytes is held whole
// and cut as the worker cuts it ([cut.CutTokens]); longer input is cut to
// the byte limit as it streams, then again from what was kept
// ([cut.RecutTokens]), its one marker counting the bytes of the input the
// output does not show.
func capReader(ctx context.Context, r io.Reader, policy shape.Policy, c cut.Counter) (string, cut.Stats, error) {
	type result struct {
		capped string
		st     cut.Stats
		err    error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		if c != nil {
			// Held whole up to the window, as json is held: at most 4 times
			// the limit or 8 MiB.
			window := min(cut.TokenWindow(policy.MaxTokens), max(4*policy.MaxBytes, 8<<20))
			head, err := io.ReadAll(io.LimitReader(r, int64(window)+1))
			switch {
			case err != nil:
				res.err = fmt.Errorf("read: %w", err)
				done <- res
				return
			case len(head) <= window:
				res.capped, res.st = cut.CutTokens(string(head), policy.MaxBytes, policy.MaxTokens, c, policy.Spec)
				done <- res
				return
			}
			r = io.MultiReader(bytes.NewReader(head), r)
		}
		res.capped, res.st, res.err = capStream(r, policy)
		if res.err == nil && c != nil {
			if out, st := cut.RecutTokens(res.capped, policy.MaxBytes, policy.MaxTokens, c, policy.Spec); out != res.capped {
				res.capped, res.st = out, st
			}
		}
		done <- res
	}()
	select {
	case res := <-done:
		return res.capped, res.st, res.err
	case <-ctx.Done():
		return "", cut.Stats{}, context.Cause(ctx)
	}
}

// capStream cuts r to the policy's byte limit as it reads it.
func capStream(r io.Reader, policy shape.Policy) (string, cut.Stats, error) {
	if k := policy.Spec.Keep; k == "" || k == cut.KeepHead {
		capped, d, err := middleware.TruncateReader(r, policy.MaxBytes)
		n := int64(len(capped))
		if d > 0 {
			n -= int64(middleware.MarkerLen(int(d)))
		}
		return capped, cut.Stats{Original: int(n + d), Kept: int(n), Dropped: int(d), Strategy: cut.KeepHead}, err
	}
	w := cut.NewWriter(policy.MaxBytes, policy.Spec)
	buf := make([]byte, 64<<10)
	if _, err := io.CopyBuffer(w, onlyReader{r}, buf); err != nil {
		return "", cut.Stats{}, fmt.Errorf("read: %w", err)
	}
	capped, st := w.Result()
	return capped, st, nil
}

// onlyReader hides any WriterTo of the reader it holds, so that io.CopyBuffer
// reads in pieces of its buffer's size.
type onlyReader struct{ io.Reader }
