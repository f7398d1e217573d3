package main

import (
	"context"
	"fmt"
	"io"

	"github.com/toolcap/toolcap/middleware"
)

const capHelp = `Usage: toolcap cap --tool NAME [--manifest FILE]... [-v] < input > output

Reads standard input to its end and writes it to standard output, capped at
the limit a toolcap worker applies to the results of tool NAME: its per_tool
entry, or else default_max_bytes, from the built-in default, the --manifest
files (later wins) and the TOOLCAP_ environment. Input within the limit is
copied unchanged. Longer input is cut at a UTF-8 character boundary and ends
with "\n[truncated: N bytes dropped, refine your query]"; the output, marker
included, is never longer than the limit. Bytes that are not valid UTF-8 are
treated as single bytes. Use it in a pipeline or as an agent's post-tool hook.

Memory: cap keeps the first limit+4 bytes of the input in one buffer, which
becomes the output without a copy; the rest is read once, in 64 KiB reads,
counted and discarded. Its peak memory is the limit plus about 10 MiB,
whatever the input size: 74 MiB for a 200 MB input at the maximum limit of
64 MiB. The output is written when the input ends.

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

	logger := newLogger(stderr, verbose.level()).Named("toolcap")
	res, err := layers.resolve(ctx, env, logger)
	if err != nil {
		return configError(stderr, err)
	}
	limit, source := limitFor(res, *tool)
	logger.Info("limit in force", "tool", *tool, "limit", limit, "source", source)

	capped, dropped, err := truncateReader(ctx, stdin, limit)
	if err != nil {
		fmt.Fprintf(stderr, "toolcap cap: standard input: %v\n", err)
		return exitFailed
	}
	if dropped > 0 {
		kept := int64(len(capped) - middleware.MarkerLen(int(dropped)))
		logger.Info("tool result truncated",
			"tool", *tool,
			"original_bytes", kept+dropped,
			"kept_bytes", kept,
			"dropped_bytes", dropped,
			"limit", limit)
	}
	if _, err := io.WriteString(stdout, capped); err != nil {
		fmt.Fprintf(stderr, "toolcap cap: standard output: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// truncateReader is [middleware.TruncateReader] that returns when ctx ends
// (an interrupt), even while a read is blocked. The read then goes on in the
// background until the process exits.
func truncateReader(ctx context.Context, r io.Reader, limit int) (string, int64, error) {
	type result struct {
		capped  string
		dropped int64
		err     error
	}
	done := make(chan result, 1)
	go func() {
		s, d, err := middleware.TruncateReader(r, limit)
		done <- result{s, d, err}
	}()
	select {
	case res := <-done:
		return res.capped, res.dropped, res.err
	case <-ctx.Done():
		return "", 0, context.Cause(ctx)
	}
}
