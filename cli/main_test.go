package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// result is what one run of the program produced.
type result struct {
	code   int
	stdout string
	stderr string
}

// runWith runs the program with args, stdin and env (no other environment).
func runWith(t *testing.T, env []string, stdin io.Reader, args ...string) result {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, stdin, &stdout, &stderr, env)
	return result{code, stdout.String(), untimed(stderr.String())}
}

// logTime is the RFC 3339 time that begins every text log line.
var logTime = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d) `)

// untimed returns the lines of stderr without the time that begins each
// log line, which TestLogFormats checks, so that a test can compare the
// rest exactly.
func untimed(stderr string) string { return logTime.ReplaceAllString(stderr, "") }

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkContains reports each of want that text, the output called name
// ("stdout" or "stderr"), does not contain.
func checkContains(t *testing.T, name, text string, want ...string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(text, s) {
			t.Errorf("%s does not contain %q:\n%s", name, s, text)
		}
	}
}

func TestHelp(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string // a prefix of stdout
		wantStderr string // a substring of stderr
	}{
		{"--help", []string{"--help"}, exitOK, "toolcap caps the tool results", ""},
		{"-h", []string{"-h"}, exitOK, "toolcap caps the tool results", ""},
		{"help", []string{"help"}, exitOK, "toolcap caps the tool results", ""},
		{"help cap", []string{"help", "cap"}, exitOK, "Usage: toolcap cap --tool NAME", ""},
		{"help unknown", []string{"help", "nope"}, exitUsage, "", `unknown command "nope"`},
		{"no arguments", nil, exitUsage, "", "Usage: toolcap <command>"},
		{"unknown command", []string{"frobnicate"}, exitUsage, "", `unknown command "frobnicate"`},
		{"demo -h", []string{"demo", "-h"}, exitOK, "Usage: toolcap demo", ""},
		{"cap --help", []string{"cap", "--help"}, exitOK, "Usage: toolcap cap", ""},
		{"config -h", []string{"config", "-h"}, exitOK, "Usage: toolcap config", ""},
		{"version -h", []string{"version", "-h"}, exitOK, "Usage: toolcap version", ""},
		{"unknown flag", []string{"cap", "--nope"}, exitUsage, "", "flag provided but not defined: -nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, nil, nil, tt.args...)
			if got.code != tt.wantCode {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", got.code, tt.wantCode, got.stderr)
			}
			if !strings.HasPrefix(got.stdout, tt.wantStdout) || (tt.wantStdout == "" && got.stdout != "") {
				t.Errorf("stdout does not start with %q:\n%s", tt.wantStdout, got.stdout)
			}
			checkContains(t, "stderr", got.stderr, tt.wantStderr)
		})
	}
}

// The help lists every command, so a new entry in commands shows up there.
func TestHelpListsEveryCommand(t *testing.T) {
	got := runWith(t, nil, nil, "--help")
	for _, c := range commands {
		if !strings.Contains(got.stdout, "  "+c.name+" ") {
			t.Errorf("help does not list %q:\n%s", c.name, got.stdout)
		}
	}
}

func TestParseFlagsAfterOperands(t *testing.T) {
	tests := []struct {
		args     []string
		want     []string
		wantTool string
	}{
		{[]string{"a", "--tool", "X", "b"}, []string{"a", "b"}, "X"},
		{[]string{"--tool", "X", "a"}, []string{"a"}, "X"},
		{[]string{"a", "--", "--tool", "b"}, []string{"a", "--tool", "b"}, ""},
		{nil, nil, ""},
	}
	for _, tt := range tests {
		fs, _ := newFlags("test")
		tool := fs.String("tool", "", "")
		got, _, ok := parse(fs, "", tt.args, io.Discard, io.Discard)
		if !ok {
			t.Fatalf("parse(%q) failed", tt.args)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parse(%q) operands mismatch (-want +got):\n%s", tt.args, diff)
		}
		if *tool != tt.wantTool {
			t.Errorf("parse(%q): --tool = %q, want %q", tt.args, *tool, tt.wantTool)
		}
	}
}

// A mistyped command gets a short error, with the command meant when it is
// close, not the whole usage.
func TestUnknownCommand(t *testing.T) {
	const hint = "run 'toolcap help' for the commands\n"
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"typo", []string{"cpa"}, "toolcap: unknown command \"cpa\"; did you mean \"cap\"?\n" + hint},
		{"typo of config", []string{"confg", "--json"}, "toolcap: unknown command \"confg\"; did you mean \"config\"?\n" + hint},
		{"typo of help", []string{"hlep"}, "toolcap: unknown command \"hlep\"; did you mean \"help\"?\n" + hint},
		{"nothing close", []string{"frobnicate"}, "toolcap: unknown command \"frobnicate\"\n" + hint},
		{"help with a typo", []string{"help", "cpa"}, "toolcap: unknown command \"cpa\"; did you mean \"cap\"?\n" + hint},
		{"help with nothing close", []string{"help", "nope"}, "toolcap: unknown command \"nope\"\n" + hint},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, nil, nil, tt.args...)
			if got.code != exitUsage || got.stdout != "" {
				t.Errorf("exit code = %d, stdout = %q; want %d and nothing", got.code, got.stdout, exitUsage)
			}
			if diff := cmp.Diff(tt.wantStderr, got.stderr); diff != "" {
				t.Errorf("stderr mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHelpHelp(t *testing.T) {
	got := runWith(t, nil, nil, "help", "help")
	if got.code != exitOK || got.stderr != "" {
		t.Errorf("exit code = %d, stderr = %q; want 0 and nothing", got.code, got.stderr)
	}
	if !strings.HasPrefix(got.stdout, "Usage: toolcap help [COMMAND]\n") {
		t.Errorf("stdout does not start with help's usage:\n%s", got.stdout)
	}
}

// Every flag error names the command it is about, whichever command it is.
func TestFlagErrorsNameTheCommand(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // the first line of stderr
	}{
		{"mistyped flag", []string{"cap", "-tol", "Read"}, "toolcap cap: flag provided but not defined: -tol"},
		{"missing value", []string{"cap", "--tool"}, "toolcap cap: flag needs an argument: -tool"},
		{"bad boolean", []string{"config", "--json=maybe"}, `toolcap config: invalid boolean value "maybe" for -json: parse error`},
		{"bad value", []string{"mcp", "--max-message", "soon", "--", "server"}, `toolcap mcp: invalid value "soon" for flag -max-message: parse error`},
		{"value for -v", []string{"demo", "-v=2"}, `toolcap demo: invalid boolean value "2" for -v: takes no value; repeat it for more detail`},
	}
	for _, c := range commands {
		tests = append(tests, struct {
			name string
			args []string
			want string
		}{"unknown flag of " + c.name, []string{c.name, "--no-such-flag"}, "toolcap " + c.name + ": flag provided but not defined: -no-such-flag"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, nil, nil, tt.args...)
			if got.code != exitUsage || got.stdout != "" {
				t.Errorf("exit code = %d, stdout = %q; want %d and nothing", got.code, got.stdout, exitUsage)
			}
			want := tt.want + "\nrun 'toolcap " + tt.args[0] + " -h' for usage\n"
			if diff := cmp.Diff(want, got.stderr); diff != "" {
				t.Errorf("stderr mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
