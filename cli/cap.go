package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/redact"
)

const capHelp = `Usage: toolcap cap --tool NAME [--keep STRATEGY] [--keep-rest [--scope S]] [--manifest FILE]... [-v] < input > output

Reads standard input to its end and writes it to standard output, capped at
the limits a toolcap worker applies to the results of tool NAME, and cut with
that tool's strategy: its per_tool entry, or else the defaults, from the
built-in default, the --manifest files (later wins) and the TOOLCAP_
environment. Input within the limit is copied unchanged. Longer input is cut
at UTF-8 character boundaries and carries the marker
"[truncated: N bytes dropped, refine your query]"; the output, marker
included, is never longer than the limit. Bytes that are not valid UTF-8
count as the client decodes them, each a U+FFFD of 3 bytes: input that may
pass the limit so is written decoded, and cut when over it, as a worker
does. Use it in a pipeline or as an agent's post-tool hook.

Strategies (keep in the manifest, or --keep, which overrides the tool's):
head keeps the start, the marker last; head_tail keeps the start and the
end, the marker on its own line between them, and rescues keep_lines from
the middle; json compacts a JSON document or cuts it into a shorter valid
one, the marker on a line after it, and cuts other input as text.

Token limits (default_max_tokens, a per_tool entry's max_tokens): both
limits hold, and the marker names the unit that cut:
"[truncated: N tokens dropped, refine your query]". toolcap counts tokens
with the tokenizer the manifest names: "calibrated" (the default), an
estimate that never learns here (cap sees no provider's counts) and so
keeps its conservative default, 2 bytes a token, or exactly with
"o200k_base" or "cl100k_base" (a build without them, such as the
hook-only one, refuses those as a configuration error). Input of at most
32 bytes per token of the limit (and at most 8 MiB or 4 times the byte
limit) is held whole, counted and cut as a worker cuts
it; longer input is cut as it streams, then to the token limit from what
was kept, as a worker cuts it held whole (but for input over 8 MiB or 4
times the byte limit and within the token window, which a worker would
count whole), and its marker counts bytes.

Keeping the rest (--keep-rest): a cut input is also kept whole, as it
streams, in toolcap's store of what cuts drop (a private directory, mode
0700, its files 0600: by default toolcap/rest under the user cache
directory, or the manifest's [worker.tool_output.rest] dir), and the marker
names the read of the rest, within the same limit:
"[truncated: N bytes dropped, refine your query or read the rest:
toolcap_read {"ref":"...","offset":K}]". 'toolcap read' pages it from a
shell; an agent with a shell tool runs 'toolcap read' with the marker's
JSON. Entries live in a scope, "cli" unless --scope or TOOLCAP_REST_SCOPE
names another: a ref is readable only in the scope it was kept in. The
store's bounds (quota, max_entry_bytes, ttl) are the manifest's, or package
rest's defaults; 'toolcap config' shows them. keep_rest = false for the tool
(or the default) turns --keep-rest off, silently. A store that cannot be
opened (a directory group or others can read, owned by another user, a
store = "memory", which would die with cap) or that fails is a warning on
standard error: the output is then cut with the plain marker, exit 0.

Memory: with head, cap keeps the first limit+4 bytes of the input in one
buffer, which becomes the output without a copy; the rest is read once, in
64 KiB reads, counted and discarded. Its peak memory is the limit plus about
10 MiB, whatever the input size: 74 MiB for a 200 MB input at the maximum
limit of 64 MiB. head_tail keeps the first and the last limit+4 bytes (and
the lines it may rescue), about twice the limit: 140 MiB for that input. json
holds the document compacted as far as the limit, with the whitespace it
had, and cuts it there: about the limit; input longer than 8 MiB or 4
times the limit is cut as text. With a token limit,
cap also holds the input while it is short enough to be held whole (above).
With --keep-rest, the input also goes to the store as it is read, from
the moment it passes the limit; the output is built once more to put the
read in its marker, so the peak is about three times the limit: 206 MiB
for that input at the 64 MiB limit (docs/cli.md). The output is written
when the input ends.

Exit status: 0 when the input was copied or capped; 1 on a read or write
error or an interrupt; 2 on a usage error (nothing is written to standard
output) or a configuration error (a bad value, a broken or missing
manifest, a bad TOOLCAP_ variable): one line on standard error names the
source, key and value, and, so that a pipe loses nothing, the input is
still written, cut at the built-in default of 16384 bytes.
Warnings (an unknown key or variable) go to standard error and do not change
the exit status. -v logs the limit in force and the cut.
`

func runCap(ctx context.Context, o *options, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	fs, logs := newFlags("cap")
	var (
		layers  layerFlags
		tool    = fs.String("tool", "", "the registered `NAME` of the tool whose output this is (required)")
		keep    = fs.String("keep", "", "cut with `STRATEGY` (head, head_tail or json) instead of the tool's")
		keepOn  = fs.Bool("keep-rest", false, "keep a cut input whole in the store, the marker naming the read of the rest (toolcap read)")
		scope   scopeFlag
		verbose verbosity
	)
	layers.register(fs)
	scope.register(fs)
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

	logger := logs.logger(stderr, verbose).Named("toolcap")
	res, err := layers.resolve(ctx, env, logger, extra...)
	if err != nil {
		return o.capAtDefault(ctx, stdin, stdout, stderr, *tool, err)
	}
	policies, err := res.Manifest.Limits().Policies()
	if err != nil {
		return o.capAtDefault(ctx, stdin, stdout, stderr, *tool, err)
	}
	policy := o.redacting(policies).For(*tool)
	warnToolCase(res, *tool, logger)
	limit, source := limitFor(res, *tool)
	fields := []any{"tool", *tool, "limit", limit, "source", source}
	if k := policy.Spec.Keep; k != "" && k != cut.KeepHead {
		fields = append(fields, "strategy", string(k))
	}
	counter, err := o.counterFor(res)
	if err != nil {
		return o.capAtDefault(ctx, stdin, stdout, stderr, *tool, err)
	}
	if policy.MaxTokens > 0 {
		fields = append(fields, "limit_tokens", policy.MaxTokens, "tokenizer", res.Manifest.Limits().TokenizerName())
		policy.Counter = counter
	}
	// keep_rest = false for the tool (or for every tool) turns the flag
	// off: the manifest says this tool's output is not to be kept.
	policy.KeepRest = *keepOn && policy.KeepRest
	if policy.KeepRest {
		fields = append(fields, "keep_rest", true)
	}
	logger.Info("limit in force", fields...)
	var keeper *rest.Keeper
	if policy.KeepRest {
		var closer io.Closer
		if keeper, closer, err = o.openKeeper(res, logger, logger); err != nil {
			// Never a failure of the cut: the plain marker, as without a store.
			logger.Warn("the rest is not kept: the output is cut with the plain marker", "error", err)
			policy.KeepRest = false
		} else {
			defer closer.Close()
		}
	}

	fit := func(r io.Reader) (string, chain.Truncation, error) {
		out, t, _, err := shape.Read(r, policy)
		return out, t, err
	}
	if keeper != nil {
		sctx := rest.WithScope(ctx, scope.resolve(env))
		fit = func(r io.Reader) (string, chain.Truncation, error) {
			return keepReader(sctx, r, keeper, policy)
		}
	}
	// Redacted as it is read, before the cut and the store see it (issue
	// 37): the pinned order of every front end.
	in := redact.NewReader(stdin, policy.Redact)
	capped, t, err := capReader(ctx, in, fit)
	if err != nil {
		fmt.Fprintf(stderr, "toolcap cap: standard input: %v\n", err)
		return exitFailed
	}
	pin.LogRedactions(logger, *tool, "", in.Counts())
	if t != (chain.Truncation{}) && logger.IsInfo() {
		logger.Info(shape.Message(t), shape.LogFields(*tool, "", t)...)
	}
	if _, err := io.WriteString(stdout, capped); err != nil {
		fmt.Fprintf(stderr, "toolcap cap: standard output: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// capAtDefault reports the configuration error err as every command does
// and returns its exit code, 2; but cap sits in a pipe, so that the tool's
// output is not lost with it, it still writes its input cut at the
// built-in default (16384 bytes, the head kept) and says so.
func (o *options) capAtDefault(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, tool string, err error) int {
	code := configError(stderr, err)
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return code // a terminal: no pipe to keep, and no input to wait for
		}
	}
	policy := shape.Default(tool) // the built-in default: 16384 bytes, the head rule, the built-in redaction
	policy.Redact = o.defaultRedactor()
	capped, _, err := capReader(ctx, redact.NewReader(stdin, policy.Redact), func(r io.Reader) (string, chain.Truncation, error) {
		out, t, _, err := shape.Read(r, policy)
		return out, t, err
	})
	if err != nil {
		fmt.Fprintf(stderr, "toolcap cap: standard input: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stderr, "toolcap cap: the input follows, cut at the built-in default of %d bytes\n", policy.MaxBytes)
	if _, err := io.WriteString(stdout, capped); err != nil {
		fmt.Fprintf(stderr, "toolcap cap: standard output: %v\n", err)
		return exitFailed
	}
	return code
}

// capReader reads r to its end and fits it with fit, which holds memory
// bounded by the policy whatever the input's length ([shape.Read], or
// keepReader), returning when ctx ends (an interrupt), even while a read is
// blocked; the read then goes on in the background until the process
// exits. (An entry of the store left half-written then is a temp file that
// the next toolcap to open the store removes once it is an hour old.)
func capReader(ctx context.Context, r io.Reader, fit func(io.Reader) (string, chain.Truncation, error)) (string, chain.Truncation, error) {
	type result struct {
		capped string
		t      chain.Truncation
		err    error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		res.capped, res.t, res.err = fit(r)
		done <- res
	}()
	select {
	case res := <-done:
		return res.capped, res.t, res.err
	case <-ctx.Done():
		return "", chain.Truncation{}, context.Cause(ctx)
	}
}

// keepReader reads r to its end through a [rest.Stream] of keeper: the cut
// of [shape.Read], with the whole input written to the store as it is read
// (under the scope of ctx), and a marker naming the read of the rest when
// the store kept it. A read error, or ctx ending (an interrupt, after
// which nobody reads the marker), discards what was kept.
func keepReader(ctx context.Context, r io.Reader, keeper *rest.Keeper, policy shape.Policy) (string, chain.Truncation, error) {
	s := keeper.NewStream(ctx, policy)
	// 64 KiB reads, as shape.Read reads (the reader's own WriteTo would
	// pick its buffer); a Stream's Write never fails.
	if _, err := io.CopyBuffer(s, struct{ io.Reader }{r}, make([]byte, 64<<10)); err != nil {
		s.Abort()
		return "", chain.Truncation{}, err
	}
	if ctx.Err() != nil {
		s.Abort()
		return "", chain.Truncation{}, context.Cause(ctx)
	}
	out, t, _ := s.Result()
	return out, t, nil
}
