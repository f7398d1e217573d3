package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/manifest"
)

const readHelp = `Usage: toolcap read REF [--offset K] [--length N] [--pattern RE] [--all] [--scope S] [--manifest FILE]... [--max-bytes N]
       toolcap read '{"ref":"REF","offset":K}' [flags]

Writes to standard output a page of an output that 'toolcap cap --keep-rest'
cut and kept whole: the answer the read tool gives a model (toolcap_read,
or the manifest's [worker.tool_output.rest] tool), held to the read tool's
limits (its per_tool entry, or the defaults; --max-bytes sets the byte
limit). Unless it is the last, a page ends with the marker naming the read
of the next one:
"[truncated: N bytes dropped, refine your query or read the rest:
toolcap_read {"ref":"REF","offset":K}]". Reading from offset 0 page after
page gives back the output byte for byte; pages end on UTF-8 character
boundaries.

REF is the ref a marker names, or the marker's JSON arguments as they
stand, or its whole call ('toolcap_read {...}', its closing "]" too), so
that an agent with a shell tool can run the read a marker names;
a flag given beside the JSON overrides its member. --offset K starts at
byte K of the whole output (default 0); --length N shows at most N bytes;
--pattern RE (an RE2 expression) lists the lines from the offset on that
match, each as "OFFSET:line", like grep -b (a line over 1 KiB shows 1 KiB
around each match, from the OFFSET of its first byte shown, with "…" where the
line goes on; a match up to 64 KiB long is found anywhere in a line of any
length). --all follows the markers from
the offset to the end and writes everything kept, byte for byte, without
markers: for a human or a file, in pages of the larger of the byte limit and
1 MiB (or --max-bytes; a length in the marker's arguments, the page size of
a tool held below the read tool's limit, is not used).

The store and the scope are cap's: the manifest's [worker.tool_output.rest]
(by default toolcap/rest under the user cache directory, a directory private
to the user: mode 0700, its files 0600) and the scope "cli" unless --scope
or TOOLCAP_REST_SCOPE names another. A scope separates uses of one store: a
ref kept in one scope reads as an unknown ref in any other.

Exit status: 0 when the page was written; 1 when the read failed (an
expired, evicted or unknown ref, or one of another scope: "expired or
unknown; run the tool again"; an offset at or past the end; a store that
cannot be opened; a read or write error; an interrupt); 2 on a usage or
configuration error (no REF, malformed JSON arguments, a bad pattern, a bad
flag or manifest value): then nothing is written to standard output. Errors
are one line on standard error.
`

// Scopes of the CLI's store.
const (
	// defaultScope is the scope of the CLI's cuts and reads when none is
	// named: one for every shell of the user, who owns the directory.
	defaultScope = "cli"
	// envRestScope names the scope instead of --scope, for a whole session
	// of an agent's shell. It is the CLI's, not a manifest key: it is kept
	// out of the manifest's environment layer (withoutCLIVars).
	envRestScope = "TOOLCAP_REST_SCOPE"
)

// allPage is the least page --all reads: a human wants the output, not
// the pages a model is held to.
const allPage = 1 << 20

func runRead(ctx context.Context, o *options, args []string, _ io.Reader, stdout, stderr io.Writer, env []string) int {
	fs, logs := newFlags("read")
	var (
		layers   layerFlags
		scope    scopeFlag
		offset   = fs.Int64("offset", 0, "start at byte `K` of the whole output")
		length   = fs.Int64("length", 0, "show at most `N` bytes")
		pattern  = fs.String("pattern", "", "list the lines that match the RE2 expression `RE`, each after its byte offset")
		all      = fs.Bool("all", false, "follow the markers to the end and write everything kept, without markers")
		maxBytes = fs.Int("max-bytes", 0, "hold a page to `N` bytes instead of the read tool's byte limit")
	)
	layers.register(fs)
	scope.register(fs)
	operands, code, ok := parse(fs, readHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	switch len(operands) {
	case 0:
		fmt.Fprintln(stderr, "toolcap read: REF is required: the ref a truncation marker names, or the marker's JSON arguments")
		return exitUsage
	case 1:
	default:
		fmt.Fprintf(stderr, "toolcap read: unexpected argument %q: read takes one REF\n", operands[1])
		return exitUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	a, err := readArgsOf(operands[0], set, *offset, *length, *pattern)
	if err != nil {
		fmt.Fprintf(stderr, "toolcap read: %v\n", err)
		return exitUsage
	}
	if *all && (a.Pattern != "" || set["length"]) {
		fmt.Fprintln(stderr, "toolcap read: --all reads everything from the offset on: it takes no pattern or length")
		return exitUsage
	}
	if *all {
		// A length in a marker's arguments is the size of its pages
		// (that of the tool whose output it is); --all reads in its own.
		a.Length = 0
	}
	if set["max-bytes"] && (*maxBytes < manifest.MinMaxBytes || *maxBytes > manifest.MaxMaxBytes) {
		fmt.Fprintf(stderr, "toolcap read: --max-bytes %d: want a limit from %d to %d bytes\n", *maxBytes, manifest.MinMaxBytes, manifest.MaxMaxBytes)
		return exitUsage
	}

	logger := logs.logger(stderr, 0).Named("toolcap")
	res, err := layers.resolve(ctx, env, logger)
	if err != nil {
		return configError(stderr, err)
	}
	policies, err := res.Manifest.Limits().Policies()
	if err != nil {
		return configError(stderr, err)
	}
	policy := o.redacting(policies).For(res.Manifest.Limits().RestTool())
	if set["max-bytes"] {
		policy.MaxBytes = *maxBytes
	}
	counter, err := o.counterFor(res)
	if err != nil {
		return configError(stderr, err)
	}
	if policy.MaxTokens > 0 {
		policy.Counter = counter
	}

	// The keeper logs nothing here: a read that fails says why in its one
	// line (readFailed); the keeper's "store failing" is about cuts.
	keeper, closer, err := o.openKeeper(res, logger, hclog.NewNullLogger())
	if err != nil {
		fmt.Fprintf(stderr, "toolcap read: %v\n", oneLine(err.Error()))
		return exitFailed
	}
	defer closer.Close()
	sctx := rest.WithScope(ctx, scope.resolve(env))
	if *all {
		page := shape.Policy{MaxBytes: policy.MaxBytes}
		if !set["max-bytes"] {
			page.MaxBytes = max(page.MaxBytes, allPage)
		}
		return readEverything(sctx, keeper, a, page, stdout, stderr)
	}
	out, err := keeper.Read(sctx, marshalArgs(a), policy)
	if err != nil {
		return readFailed(stderr, keeper, err)
	}
	if _, err := io.WriteString(stdout, out); err != nil {
		fmt.Fprintf(stderr, "toolcap read: standard output: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// readArgsOf returns the arguments of the read operand asks for: a ref,
// or the JSON arguments a marker names, with the flags that set names
// (offset, length, pattern) over them. They are checked as the read tool
// checks a model's ([rest.ParseReadArgs]), and the pattern compiled, so
// that a mistake is a usage error, before the store is opened.
func readArgsOf(operand string, set map[string]bool, offset, length int64, pattern string) (rest.ReadArgs, error) {
	var a rest.ReadArgs
	operand = strings.TrimSpace(operand)
	// The marker's call pasted whole, `toolcap_read {"ref":…}`, with the
	// "]" that ends the marker if that came too, is its arguments.
	if i := strings.IndexByte(operand, '{'); i > 0 && cut.ValidRestTool(strings.TrimSpace(operand[:i])) {
		if j := strings.LastIndexByte(operand, '}'); j > i {
			operand = operand[i : j+1]
		}
	}
	if strings.HasPrefix(operand, "{") {
		var err error
		if a, err = rest.ParseReadArgs(json.RawMessage(operand)); err != nil {
			return rest.ReadArgs{}, fmt.Errorf("the marker's arguments: %w", err)
		}
	} else {
		a.Ref = operand
	}
	if set["offset"] {
		a.Offset = offset
	}
	if set["length"] {
		if length < 1 {
			return rest.ReadArgs{}, fmt.Errorf("--length %d: want a whole number >= 1", length)
		}
		a.Length = length
	}
	if set["pattern"] {
		a.Pattern = pattern
	}
	// Once more through the read tool's own check: --offset -1, a pattern
	// too long.
	a, err := rest.ParseReadArgs(marshalArgs(a))
	if err != nil {
		return rest.ReadArgs{}, err
	}
	if a.Pattern != "" {
		if _, err := regexp.Compile(a.Pattern); err != nil {
			return rest.ReadArgs{}, fmt.Errorf("pattern: %w", err)
		}
	}
	return a, nil
}

// marshalArgs returns a as the read tool's JSON arguments.
func marshalArgs(a rest.ReadArgs) json.RawMessage {
	b, _ := json.Marshal(a) // strings and numbers always marshal
	return b
}

// readEverything writes the output a names from its offset to the end, following
// the markers page after page (each a page of policy), without them: the
// bytes the store kept, as they were given to cap. When the store kept
// only the first max_entry_bytes of the output, it writes those and says
// so on stderr.
func readEverything(ctx context.Context, keeper *rest.Keeper, a rest.ReadArgs, policy shape.Policy, stdout, stderr io.Writer) int {
	// The entry's size tells the last page of a cut entry (its plain
	// marker counts the bytes that were not kept) from the last of a whole
	// one. An entry that does not open is left to the first read, which
	// says why in the read tool's words.
	var info rest.Info
	if scope, ok := rest.ScopeFrom(ctx); ok {
		if r, err := keeper.Store().Open(ctx, scope, a.Ref); err == nil {
			info = r.Info()
			_ = r.Close()
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			fmt.Fprintf(stderr, "toolcap read: %v\n", context.Cause(ctx))
			return exitFailed
		}
		page, err := keeper.Read(ctx, marshalArgs(a), policy)
		if err != nil {
			return readFailed(stderr, keeper, err)
		}
		f, more := nextRead(page, keeper.Tool())
		body := page
		switch {
		case more:
			body = page[:f.Start]
		case info.Size < info.Original && a.Offset+int64(len(page)) > info.Size:
			// The last bytes kept, then the marker of those that were not.
			body = page[:max(0, info.Size-a.Offset)]
		}
		if _, err := io.WriteString(stdout, body); err != nil {
			fmt.Fprintf(stderr, "toolcap read: standard output: %v\n", err)
			return exitFailed
		}
		if !more {
			break
		}
		next, err := rest.ParseReadArgs(json.RawMessage(f.Rest.Args))
		if err != nil || next.Ref != a.Ref || next.Offset <= a.Offset {
			fmt.Fprintf(stderr, "toolcap read: the page at offset %d names no further read of ref %q: %s\n", a.Offset, a.Ref, f.Rest.Args)
			return exitFailed
		}
		next.Length = 0 // --all's own pages, as above
		a = next
	}
	if info.Size < info.Original {
		fmt.Fprintf(stderr, "toolcap read: the store kept the first %d bytes of %d (max_entry_bytes): the last %d are gone\n",
			info.Size, info.Original, info.Original-info.Size)
	}
	return exitOK
}

// nextRead returns the marker that ends page when it names a read of tool:
// the page goes on there.
func nextRead(page, tool string) (cut.Found, bool) {
	ms := cut.FindMarkers(page)
	if len(ms) == 0 {
		return cut.Found{}, false
	}
	f := ms[len(ms)-1]
	return f, f.End == len(page) && f.Rest != nil && f.Rest.Tool == tool
}

// readFailed reports a read the keeper refused, in the CLI's words (its
// message names the read tool, for a model), and returns the exit code.
func readFailed(stderr io.Writer, keeper *rest.Keeper, err error) int {
	msg := strings.TrimPrefix(err.Error(), keeper.Tool()+": ")
	// The model's words leave out why a store failed; a person is told.
	if cause := errors.Unwrap(err); cause != nil && !strings.Contains(msg, cause.Error()) {
		msg += " (" + cause.Error() + ")"
	}
	fmt.Fprintf(stderr, "toolcap read: %s\n", oneLine(msg))
	return exitFailed
}

// openKeeper opens the store the manifest of res configures, as every
// front end of the CLI keeps the rest: a directory store (store = "memory"
// would die with the process, before anyone reads it), and a Keeper whose
// markers name the manifest's read tool.
//
// The store logs to logger, the keeper to keeperLogger.
func (o *options) openKeeper(res *manifest.Resolution, logger, keeperLogger hclog.Logger) (*rest.Keeper, io.Closer, error) {
	l := res.Manifest.Limits()
	if l.RestConfig().Store == settings.RestStoreMemory {
		return nil, nil, errors.New(`keep_rest: store = "memory" ends with the process that keeps it: the toolcap command reads and keeps the rest in a directory (store = "dir", or omit the key)`)
	}
	st, err := o.openRestStore(l, logger) // the store names its logger "rest"
	if err != nil {
		return nil, nil, err
	}
	k, err := rest.NewKeeper(st.store, rest.WithTool(l.RestTool()), rest.WithLogger(keeperLogger))
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return k, st, nil
}

// scopeFlag is --scope: the scope of the CLI's store, which refs are bound
// to.
type scopeFlag struct {
	value string
}

func (f *scopeFlag) register(fs *flag.FlagSet) {
	fs.Var(f, "scope", "keep and read refs in scope `S` (default \""+defaultScope+"\", or "+envRestScope+")")
}

func (f *scopeFlag) String() string { return f.value }

func (f *scopeFlag) Set(v string) error {
	if v == "" {
		return errors.New("empty scope")
	}
	f.value = v
	return nil
}

// resolve returns the scope in force: --scope, else TOOLCAP_REST_SCOPE of
// env when set and not empty, else "cli".
func (f *scopeFlag) resolve(env []string) string {
	if f.value != "" {
		return f.value
	}
	if v := lookupEnv(env, envRestScope); v != "" {
		return v
	}
	return defaultScope
}

// lookupEnv returns the value of name in env ("KEY=value" entries, the
// last one winning, as the process environment does), or "".
func lookupEnv(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if val, ok := strings.CutPrefix(kv, name+"="); ok {
			v = val
		}
	}
	return v
}

// withoutCLIVars returns env without the TOOLCAP_ variables that are the
// command's own rather than manifest keys, so that the manifest's
// environment layer does not warn about them.
func withoutCLIVars(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, envRestScope+"=") {
			out = append(out, kv)
		}
	}
	return out
}
