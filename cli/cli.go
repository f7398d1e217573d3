// Package cli is the toolcap command: every subcommand, its flags and its
// output, as one function a main package calls. What the core module
// cannot link comes in as an [Option]: the exact tokenizers of
// github.com/toolcap/toolcap/tiktoken ([WithTokenizers]) and the Redis
// store of github.com/toolcap/toolcap/adapters/redisrest
// ([WithStoreOpener]). cmd/toolcap, a module of its own, is the main
// package users install, with both:
//
//	func main() {
//		os.Exit(cli.Main(cli.WithTokenizers(tiktoken.New), cli.WithStoreOpener(openRedis)))
//	}
//
// Every command logs through go-hclog on standard error, in text or JSON
// lines (--log-format), each with an RFC 3339 time, at --log-level.
//
// See docs/cli.md for every command and flag.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/suggest"
	"github.com/toolcap/toolcap/manifest"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1 // the command ran and failed: a read or write error
	exitUsage  = 2 // bad usage or configuration; nothing was done
)

// command is one subcommand. To add one, write its run function in its own
// file and add an entry to commands.
type command struct {
	name    string
	summary string // one line for the help listing
	run     func(ctx context.Context, o *options, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int
	// quick marks a command that is short and has nothing to stop
	// cleanly: Main leaves SIGINT and SIGTERM their default action (the
	// process ends) rather than cancelling its context. Catching signals
	// starts the runtime's signal thread, about 5% of a hook process's
	// CPU, paid on every tool call Claude Code makes; and a hook killed
	// by its caller must end at once, its output left as it was.
	quick bool
}

// commands are the subcommands, in the order the help lists them.
var commands = []command{
	{"demo", "run a model's batch of Glob, Read and Grep calls over a tree and show the cap at work", runDemo, false},
	{"cap", "cap standard input to the limit a worker applies to one tool", runCap, false},
	{"read", "page an output that cap --keep-rest kept, as the read tool pages it for a model", runRead, false},
	{"config", "print the limits in force and the layer each came from", runConfig, false},
	{"mcp", "run an MCP server behind a proxy that caps its tool results", runMCP, false},
	{"hook", "a Claude Code PostToolUse hook that caps the tool output the model reads", runHook, true},
	{"version", "print toolcap's version", runVersion, true},
}

// Main runs toolcap with the process's arguments, standard streams and
// environment, and returns the exit code for os.Exit. The first interrupt
// or SIGTERM cancels the command's context, so it can stop cleanly; a second
// one kills the process as usual. toolcap hook and toolcap version keep the
// signals' default action: the first one ends the process.
func Main(opts ...Option) int {
	args := os.Args[1:]
	ctx := context.Background()
	if c, ok := lookup(commandName(args)); !ok || !c.quick {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, shutdownSignals...)
		go func() {
			<-ctx.Done()
			stop()
		}()
		defer stop()
	}
	return Run(ctx, args, os.Stdin, os.Stdout, os.Stderr, os.Environ(), opts...)
}

// commandName returns args[0], the command's name, or "" when there is none.
func commandName(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// Run is the whole program, with its inputs and outputs passed in: args
// without the program name, env as "KEY=value" entries. It returns the exit
// code: 0 on success, 1 when the command failed, 2 for a usage or
// configuration error.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string, opts ...Option) int {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o.run(ctx, args, stdin, stdout, stderr, env)
}

func (o *options) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch name := args[0]; name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(args) > 1 {
			// "toolcap help cap" is "toolcap cap -h".
			if args[1] == "help" {
				fmt.Fprint(stdout, helpHelp)
				return exitOK
			}
			if c, ok := lookup(args[1]); ok {
				return c.run(ctx, o, []string{"-h"}, stdin, stdout, stderr, env)
			}
			return unknownCommand(stderr, args[1])
		}
		usage(stdout)
		return exitOK
	case "-version", "--version":
		return runVersion(ctx, o, nil, stdin, stdout, stderr, env)
	}
	c, ok := lookup(args[0])
	if !ok {
		return unknownCommand(stderr, args[0])
	}
	return c.run(ctx, o, args[1:], stdin, stdout, stderr, env)
}

const helpHelp = `Usage: toolcap help [COMMAND]

Prints toolcap's commands, or, with COMMAND, that command's usage and flags,
as 'toolcap COMMAND -h' does.
`

// unknownCommand reports a name that is no command, with the closest one
// when it looks like a typo, and returns the exit code for it.
func unknownCommand(stderr io.Writer, name string) int {
	names := []string{"help"}
	for _, c := range commands {
		names = append(names, c.name)
	}
	if s := suggest.Closest(name, names); s != "" {
		fmt.Fprintf(stderr, "toolcap: unknown command %q; did you mean %q?\n", name, s)
	} else {
		fmt.Fprintf(stderr, "toolcap: unknown command %q\n", name)
	}
	fmt.Fprintln(stderr, "run 'toolcap help' for the commands")
	return exitUsage
}

func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func usage(w io.Writer) {
	fmt.Fprint(w, `toolcap caps the tool results an LLM agent puts in its history.

Usage: toolcap <command> [flags] [args]

Commands:
`)
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprint(w, `
Limits come from layers, lowest precedence first: the built-in default
(16384 bytes), each --manifest FILE in the order given, then TOOLCAP_
environment variables such as TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=4096.

Exit status: 0 success, 1 failure, 2 usage or configuration error (but hook
exits 1 on a configuration error: Claude Code shows a hook's exit 2 to the
model).
Run 'toolcap <command> -h' for a command's flags.
`)
}

// newFlags returns a flag set for a subcommand. The flag package prints
// nothing: parseFailed reports parse errors, prefixed with the command, and
// prints the help on -h.
func newFlags(name string) (*flag.FlagSet, *logFlags) {
	fs := flag.NewFlagSet("toolcap "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	logs := &logFlags{format: "text"}
	logs.register(fs)
	return fs, logs
}

// parse parses args, flags and operands in any order (an argument "--" ends
// the flags). It returns the operands, and, when parsing ended the command
// (-h or an error), the exit code with ok == false.
func parse(fs *flag.FlagSet, help string, args []string, stdout, stderr io.Writer) (operands []string, code int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			return nil, parseFailed(fs, help, err, stdout, stderr), false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return operands, exitOK, true
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(operands, rest...), exitOK, true
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

// parseFailed ends a command whose flags did not parse, with err from
// fs.Parse: on -h it prints help and returns exitOK, otherwise the error,
// prefixed with the command, and a hint, and returns exitUsage.
func parseFailed(fs *flag.FlagSet, help string, err error, stdout, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, help)
		printDefaults(fs, stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "%s: %v\nrun '%s -h' for usage\n", fs.Name(), err, fs.Name())
	return exitUsage
}

// printDefaults prints the flags of fs under a heading, or nothing when it
// has none.
func printDefaults(fs *flag.FlagSet, w io.Writer) {
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if !hasFlags {
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}

// stringsFlag is a repeatable string flag.
type stringsFlag []string

func (s *stringsFlag) String() string { return strings.Join(*s, ", ") }

func (s *stringsFlag) Set(v string) error {
	if v == "" {
		return errors.New("empty value")
	}
	*s = append(*s, v)
	return nil
}

// verbosity counts -v flags: none logs warnings, -v adds info (each cut),
// -v -v adds debug (each call).
type verbosity int

func (v *verbosity) String() string   { return fmt.Sprint(int(*v)) }
func (v *verbosity) IsBoolFlag() bool { return true }

func (v *verbosity) Set(s string) error {
	switch s {
	case "true":
		*v++
	case "false":
		*v = 0
	default:
		return errors.New("takes no value; repeat it for more detail")
	}
	return nil
}

func (v verbosity) level() hclog.Level {
	switch {
	case v <= 0:
		return hclog.Warn
	case v == 1:
		return hclog.Info
	default:
		return hclog.Debug
	}
}

// logFlags are the flags of the log every command takes: --log-format and
// --log-level. Every command's flag set has them (newFlags).
type logFlags struct {
	format logFormat
	level  logLevel
	mu     sync.Mutex // the lock of every logger of the command
}

// logFormat is --log-format: text (the default) or json.
type logFormat string

func (f *logFormat) String() string { return string(*f) }

func (f *logFormat) Set(s string) error {
	switch s {
	case "text", "json":
		*f = logFormat(s)
		return nil
	}
	return fmt.Errorf("%q: want text or json", s)
}

// logLevel is --log-level; unset, the level comes from -v.
type logLevel struct {
	level hclog.Level
	set   bool
}

func (l *logLevel) String() string {
	if !l.set {
		return ""
	}
	return l.level.String()
}

func (l *logLevel) Set(s string) error {
	lv := hclog.LevelFromString(s)
	if lv == hclog.NoLevel {
		return fmt.Errorf("%q: want trace, debug, info, warn, error or off", s)
	}
	l.level, l.set = lv, true
	return nil
}

// register adds --log-format and --log-level to fs.
func (l *logFlags) register(fs *flag.FlagSet) {
	fs.Var(&l.format, "log-format", "write log lines as `text` or json (one JSON object a line); every line has an RFC 3339 timestamp")
	fs.Var(&l.level, "log-level", "the least `LEVEL` logged: trace, debug, info, warn, error or off (default warn, or what -v sets)")
}

// logTimeFormat is RFC 3339 with milliseconds, in text and JSON alike.
const logTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// logger returns the command's logger on stderr: text or JSON lines, each
// with its RFC 3339 time, at --log-level, else at the level -v (v) gives.
// It has no name, since the worker names the logger it is given "toolcap";
// name it before using it elsewhere.
func (l *logFlags) logger(stderr io.Writer, v verbosity) hclog.Logger {
	level := v.level()
	if l.level.set {
		level = l.level.level
	}
	return l.newLogger(stderr, level)
}

// status returns the logger of the lines a command shows at every level
// but off, such as where it serves (scripts wait for it) and why it
// stopped: logger itself when it logs info or --log-level is off, else a
// logger like it, named name, at info.
func (l *logFlags) status(stderr io.Writer, logger hclog.Logger, name string) hclog.Logger {
	if logger.IsInfo() || l.level.set && l.level.level == hclog.Off {
		return logger
	}
	return l.newLogger(stderr, hclog.Info).Named(name)
}

// newLogger returns a logger on w at level in the format of l, sharing
// l's lock with the command's other loggers, so that their lines never
// interleave on one writer.
func (l *logFlags) newLogger(w io.Writer, level hclog.Level) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Level:      level,
		Output:     w,
		JSONFormat: l.format == "json",
		TimeFormat: logTimeFormat,
		Mutex:      &l.mu,
	})
}

// layerFlags adds the flags every command that reads limits shares.
type layerFlags struct {
	manifests stringsFlag
}

func (l *layerFlags) register(fs *flag.FlagSet) {
	fs.Var(&l.manifests, "manifest", "a TOML manifest `FILE` with a [worker.tool_output] table; repeat it, later files win")
}

// resolve loads the layers: the built-in default, each manifest file in
// order, then the TOOLCAP_ variables of env. Warnings go to logger; reading
// a file stops when ctx is done.
// Layers in extra (flags) come last, above the environment.
func (l *layerFlags) resolve(ctx context.Context, env []string, logger hclog.Logger, extra ...manifest.Option) (*manifest.Resolution, error) {
	opts := make([]manifest.Option, 0, len(l.manifests)+2+len(extra))
	for _, f := range l.manifests {
		opts = append(opts, manifest.File(f))
	}
	opts = append(opts, manifest.Environ(withoutCLIVars(env)))
	opts = append(opts, extra...)
	opts = append(opts, manifest.WithLogger(logger))
	return manifest.Resolve(ctx, opts...)
}

// configError reports a configuration error on one line of stderr and
// returns the exit code for it.
func configError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "toolcap: %s\n", oneLine(err.Error()))
	return exitUsage
}

// oneLine folds s onto a single line.
func oneLine(s string) string {
	return lineBreaks.Replace(strings.TrimSpace(s))
}

var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")
