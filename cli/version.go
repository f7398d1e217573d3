package cli

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

const versionHelp = `Usage: toolcap version

Prints the module path and version toolcap was built from, the Go version,
and the commit when the build recorded one. A binary installed with
  go install github.com/toolcap/toolcap/cmd/toolcap@VERSION
reports VERSION; one built from a checkout, or run with 'go run', reports
"(devel)". It takes --log-format and --log-level, as every command does,
and logs nothing.
`

// readBuildInfo is debug.ReadBuildInfo, replaced in tests.
var readBuildInfo = debug.ReadBuildInfo

func runVersion(ctx context.Context, _ *options, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	fs, _ := newFlags("version")
	operands, code, ok := parse(fs, versionHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(operands) > 0 {
		fmt.Fprintf(stderr, "toolcap version: unexpected argument %q\n", operands[0])
		return exitUsage
	}
	info, ok := readBuildInfo()
	if !ok {
		fmt.Fprintln(stdout, "toolcap (unknown version: built without module support)")
		return exitOK
	}
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	fmt.Fprintf(stdout, "toolcap %s %s %s%s\n", info.Main.Path, version, info.GoVersion, vcs(info))
	return exitOK
}

// vcs describes the commit the binary was built from, when the build
// recorded it: " vcs abc123def456 (modified)", or "".
func vcs(info *debug.BuildInfo) string {
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return ""
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		return " vcs " + rev + " (modified)"
	}
	return " vcs " + rev
}
