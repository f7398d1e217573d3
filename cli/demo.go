package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"unicode/utf8"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/cli/internal/tools"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/middleware"
	"github.com/toolcap/toolcap/tokens"
	"github.com/toolcap/toolcap/worker"
)

const demoHelp = `Usage: toolcap demo [--manifest FILE]... [--lines N] [-v] [DIR]

Reproduces the incident toolcap was written for: an agent's Glob with pattern
"*" listed a whole project, and the 125 KB result sank every later request.
demo builds a worker with real Glob, Read and Grep tools over DIR (default:
the current directory) and runs one model turn through it: Glob "*" over the
whole tree, Grep "TODO", a Read of the largest text file and a Read of a small
one. For each call it prints the tool, the limit, the bytes the tool returned,
the bytes that reach the history and the bytes dropped; then the last lines of
each cut result, marker included, and a one-line verdict.

When DIR is too small for its Glob to exceed the limit, demo says so and runs
on a generated sample project instead, so there is always a cut to see.

Limits come from the built-in default (16384 bytes), the --manifest files
(later wins) and the TOOLCAP_ environment; manifest warnings (an unknown key,
a per_tool name no tool has) go to standard error.

Exit status: 0 when every result fitted its limit; 1 when one did not, the
tree could not be read or the demo was interrupted; 2 on a usage or
configuration error.
`

func runDemo(ctx context.Context, o *options, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	fs, logs := newFlags("demo")
	var (
		layers  layerFlags
		lines   = fs.Int("lines", 3, "show the last `N` lines of each cut result")
		verbose verbosity
	)
	layers.register(fs)
	fs.Var(&verbose, "v", "log each cut (info); twice, each call too (debug)")
	operands, code, ok := parse(fs, demoHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(operands) > 1 {
		fmt.Fprintf(stderr, "toolcap demo: one DIR at most, got %d arguments\n", len(operands))
		return exitUsage
	}
	if *lines < 1 {
		fmt.Fprintf(stderr, "toolcap demo: --lines %d: must be at least 1\n", *lines)
		return exitUsage
	}
	dir := "."
	if len(operands) == 1 {
		dir = operands[0]
	}

	base := logs.logger(stderr, verbose)
	res, err := layers.resolve(ctx, env, base.Named("toolcap"))
	var exact []worker.Option // the manifest's exact tokenizer, when it names one
	if err == nil {
		// The worker counts "calibrated" with one of its own.
		var tz tokens.Tokenizer
		if tz, err = o.counterFor(res); tz != nil && tz.Name() != tokens.CalibratedName {
			exact = append(exact, worker.WithTokenizer(tz))
		}
	}
	if err != nil {
		return configError(stderr, err)
	}
	limits := res.Manifest.Limits()

	root, err := os.OpenRoot(dir)
	if err != nil {
		fmt.Fprintf(stderr, "toolcap demo: %v\n", err)
		return exitUsage
	}
	defer root.Close()
	fsys, label := root.FS(), dir
	t, err := survey(ctx, fsys, limits.For("Read"))
	if err != nil {
		fmt.Fprintf(stderr, "toolcap demo: %s: %v\n", dir, err)
		return exitFailed
	}
	var note string // printed once nothing can fail on a usage error
	if globLimit := limits.For("Glob"); t.globBytes <= int64(globLimit) {
		note = fmt.Sprintf("%s lists only %s (%d bytes of paths), too few to exceed the Glob limit of %d;\n"+
			"running on a generated sample project instead.\n\n", dir, plural(t.files, "file"), t.globBytes, globLimit)
		fsys, label = tools.Sample(), "a generated sample project"
		if t, err = survey(ctx, fsys, limits.For("Read")); err != nil {
			fmt.Fprintf(stderr, "toolcap demo: sample: %v\n", err)
			return exitFailed
		}
	}

	policies, err := res.Manifest.Policies()
	if err != nil {
		return configError(stderr, err)
	}
	var seen observer
	w, err := worker.New(tools.All(fsys), append(exact,
		worker.WithPolicies(o.redacting(policies)),
		worker.WithLogger(base),
		worker.WithMiddleware(middleware.Logging(base.Named("toolcap")), seen.middleware),
		// What a cut drops is kept for the demo's own run, so that the
		// model can read on (docs/rest.md).
		worker.WithRest(rest.NewMemory(rest.Config{})),
	)...)
	if err != nil {
		return configError(stderr, err)
	}
	calls := batch(t)
	ctx = rest.WithScope(ctx, "demo")
	results := w.ExecuteTools(ctx, calls)
	if err := ctx.Err(); err != nil {
		fmt.Fprintf(stderr, "toolcap demo: %v\n", context.Cause(ctx))
		return exitFailed
	}

	fmt.Fprint(stdout, note)
	fmt.Fprintf(stdout, "One model turn over %s (%s, %s), through a toolcap worker.\n", label, plural(t.files, "file"), size(t.bytes))
	fmt.Fprintf(stdout, "Limits: %s\n\n", describeLimits(res))
	exit := report(stdout, w, calls, results, seen.max.Load(), *lines)
	if exit == exitOK {
		readOn(ctx, stdout, w, calls, results, *lines)
	}
	return exit
}

// readOn shows the next turn of a model that reads on: the call of the
// read tool the first kept cut's marker names, and the page it gets.
func readOn(ctx context.Context, w io.Writer, wk *worker.Worker, calls []chain.Call, results []worker.ToolResult, lines int) {
	def, ok := wk.ReadTool()
	if !ok {
		return
	}
	for i, r := range results {
		t, ok := r.Truncation()
		if !ok || t.Ref == "" {
			continue
		}
		args := fmt.Sprintf(`{"ref":%q,"offset":%d}`, t.Ref, t.Resume)
		page := wk.ExecuteTools(ctx, []chain.Call{{ID: "call_read", Tool: def.Name, Args: json.RawMessage(args)}})[0]
		if page.Content == nil {
			return
		}
		fmt.Fprintf(w, "\nThe next turn: the model reads on where result %d (%s) was cut, with the call its marker names:\n", i+1, calls[i].Tool)
		fmt.Fprintf(w, "  %s %s -> %d bytes (limit %d)\n", def.Name, args, len(*page.Content), wk.Limit(def.Name))
		for _, l := range lastLines(*page.Content, lines) {
			fmt.Fprintf(w, "    | %s\n", printable(l, 140))
		}
		// The refs above die with this process: say so, and how to make
		// one that toolcap read can read (issue 38, item 5).
		fmt.Fprintf(w, "\nThe demo keeps the rest in memory, for its own run: its refs end with it, and toolcap read cannot\n"+
			"read them. To read on from a shell, keep a cut on disk: toolcap cap --tool Read --keep-rest < FILE,\n"+
			"then run the %s call its marker names: toolcap read '%s {\"ref\":…,\"offset\":…}'.\n", def.Name, def.Name)
		return
	}
}

// tree is what demo learns of a tree before choosing its calls.
type tree struct {
	files     int
	bytes     int64
	globBytes int64  // the size of Glob "*"'s output
	large     string // the largest text file
	small     string // a small text file, preferably go.mod or a README
}

// survey walks fsys once. readLimit is the Read tool's limit: the small file
// is chosen to fit well within it.
func survey(ctx context.Context, fsys fs.FS, readLimit int) (tree, error) {
	var t tree
	type file struct {
		path string
		size int64
	}
	var all []file
	// The same walk as the tools', so the survey sees the files they list.
	err := tools.WalkFiles(ctx, fsys, ".", func(p string, d fs.DirEntry) error {
		info, err := d.Info()
		if err != nil {
			return nil
		}
		t.files++
		t.bytes += info.Size()
		t.globBytes += int64(len(p)) + 1
		all = append(all, file{p, info.Size()})
		return nil
	})
	if err != nil {
		return t, err
	}

	// The largest text file, for a Read the cap has to cut.
	slices.SortStableFunc(all, func(a, b file) int { return -cmpInt(a.size, b.size) })
	for i, f := range all {
		if i == 200 || f.size == 0 {
			break
		}
		if isText(fsys, f.path) {
			t.large = f.path
			break
		}
	}
	// A small one, for a Read that fits: a usual name at the top, or else
	// the largest text file within an eighth of the limit.
	for _, name := range []string{"go.mod", "README.md", "README"} {
		if info, err := fs.Stat(fsys, name); err == nil && info.Mode().IsRegular() && info.Size() <= int64(readLimit/8) {
			t.small = name
			return t, nil
		}
	}
	for _, f := range all {
		if f.size > 0 && f.size <= int64(readLimit/8) && f.path != t.large && isText(fsys, f.path) {
			t.small = f.path
			break
		}
	}
	return t, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// isText reports whether the start of the file at p is valid UTF-8 without
// NUL bytes.
func isText(fsys fs.FS, p string) bool {
	f, err := fsys.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, _ := io.ReadFull(f, buf)
	buf = buf[:n]
	if bytes.IndexByte(buf, 0) >= 0 {
		return false
	}
	// The probe may end inside a character.
	for i := 0; i < utf8.UTFMax && len(buf) > 0; i++ {
		if utf8.Valid(buf) {
			return true
		}
		if n < cap(buf) {
			return false // the whole file, and not valid
		}
		buf = buf[:len(buf)-1]
	}
	return false
}

// batch is the model's turn: what an agent asks for when it explores a tree.
func batch(t tree) []chain.Call {
	calls := []chain.Call{
		{Tool: "Glob", Args: mustJSON(tools.GlobArgs{Pattern: "*"})},
		{Tool: "Grep", Args: mustJSON(tools.GrepArgs{Pattern: "TODO"})},
	}
	if t.large != "" {
		calls = append(calls, chain.Call{Tool: "Read", Args: mustJSON(tools.ReadArgs{Path: t.large})})
	}
	if t.small != "" {
		calls = append(calls, chain.Call{Tool: "Read", Args: mustJSON(tools.ReadArgs{Path: t.small})})
	}
	for i := range calls {
		calls[i].ID = "call_" + strconv.Itoa(i+1)
	}
	return calls
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// observer is a user middleware that records the largest content it sees.
// The worker places every user middleware after the cap, so it never sees
// more than the limit.
type observer struct{ max atomic.Int64 }

func (o *observer) middleware(next chain.Handler) chain.Handler {
	return func(ctx context.Context, call chain.Call) chain.Result {
		res := next(ctx, call)
		if res.Content != nil {
			n := int64(len(*res.Content))
			for {
				cur := o.max.Load()
				if n <= cur || o.max.CompareAndSwap(cur, n) {
					break
				}
			}
		}
		return res
	}
}

// describeLimits names the limits in force and the layer of each: the byte
// limits, and the token limits and tokenizer when a layer sets a token
// limit.
func describeLimits(res *manifest.Resolution) string {
	s := fmt.Sprintf("default_max_bytes %d (%s)", res.Default.Value, res.Default.Source)
	if b := res.Batch; b.Value > 0 {
		s += fmt.Sprintf(", batch_max_bytes %d (%s)", b.Value, b.Source)
	}
	if d := res.DefaultTokens; d.Value > 0 {
		s += fmt.Sprintf(", default_max_tokens %d (%s)", d.Value, d.Source)
	}
	if b := res.BatchTokens; b.Value > 0 {
		s += fmt.Sprintf(", batch_max_tokens %d (%s)", b.Value, b.Source)
	}
	for _, name := range slices.Sorted(maps.Keys(res.PerTool)) {
		s += fmt.Sprintf(", per_tool.%s %d (%s)", settings.TOMLKey(name), res.PerTool[name].Value, res.PerTool[name].Source)
	}
	for _, name := range slices.Sorted(maps.Keys(res.PerToolTokens)) {
		t := res.PerToolTokens[name]
		s += fmt.Sprintf(", per_tool.%s.max_tokens %d (%s)", settings.TOMLKey(name), t.Value, t.Source)
	}
	if res.Manifest.Limits().HasTokens() {
		s += fmt.Sprintf(", tokenizer %s (%s)", res.Tokenizer.Value, res.Tokenizer.Source)
	}
	return s
}

// report prints the table, the tails of the cut results and the verdict,
// and returns the exit code: 1 if any content exceeds its limit.
func report(w io.Writer, wk *worker.Worker, calls []chain.Call, results []worker.ToolResult, seenMax int64, lines int) int {
	rows := [][]string{{"#", "tool", "args", "limit", "raw bytes", "to history", "dropped", ""}}
	var raw, kept, cut int64
	over := 0
	for i, r := range results {
		tool := calls[i].Tool
		limit := wk.Limit(tool)
		got, dropped := int64(0), int64(0)
		if r.Content != nil {
			got = int64(len(*r.Content))
		}
		orig := got
		if t, ok := r.Truncation(); ok {
			orig, dropped = int64(t.OriginalBytes), int64(t.DroppedBytes)
		}
		if t, ok := r.Ceiling(); ok {
			dropped += int64(t.DroppedBytes)
		}
		status := "fits"
		switch {
		case got > int64(limit):
			status, over = "OVER THE LIMIT", over+1
		case r.IsError():
			status = "error"
		case dropped > 0:
			status, cut = "cut", cut+1
		}
		raw += orig
		kept += got
		rows = append(rows, []string{strconv.Itoa(i + 1), tool, printable(string(calls[i].Args), 50),
			strconv.Itoa(limit), strconv.FormatInt(orig, 10), strconv.FormatInt(got, 10), strconv.FormatInt(dropped, 10), status})
	}
	writeTable(w, "", rows, []bool{true, false, false, true, true, true, true, false})

	fmt.Fprintf(w, "\nWhat the model reads at the end of each cut or failed result:\n")
	for i, r := range results {
		_, wasCut := r.Truncation()
		if r.Content == nil || (!wasCut && !r.IsError()) {
			continue
		}
		fmt.Fprintf(w, "  %d %s %s\n", i+1, calls[i].Tool, printable(string(calls[i].Args), 60))
		for _, l := range lastLines(*r.Content, lines) {
			fmt.Fprintf(w, "    | %s\n", printable(l, 100))
		}
	}

	fmt.Fprintln(w)
	if over > 0 {
		fmt.Fprintf(w, "verdict: FAILED: %d of %d results are longer than their limit.\n", over, len(results))
		return exitFailed
	}
	if cut == 0 {
		fmt.Fprintf(w, "verdict: nothing to cut: all %d results fitted their limits (%s in all).\n", len(results), size(kept))
		return exitOK
	}
	fmt.Fprintf(w, "verdict: the cap kept %s of %s out of the history (%d of %d results cut, each within its limit); "+
		"the model reads %s, and the user middleware saw at most %d bytes of any result.\n",
		size(raw-kept), size(raw), cut, len(results), size(kept), seenMax)
	return exitOK
}
