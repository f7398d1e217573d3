package tools_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/cli/internal/tools"
	"github.com/toolcap/toolcap/worker"
)

func testFS() fstest.MapFS {
	f := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	return fstest.MapFS{
		"go.mod":             f("module x\n"),
		"README.md":          f("# x\nTODO: write\n"),
		"cmd/x/main.go":      f("package main\n\n// TODO: flags\nfunc main() {}\n"),
		"cmd/x/main_test.go": f("package main\n"),
		"internal/a/a.go":    f("package a\n// todo lower case\n// TODO: upper\n"),
		"internal/a/b/c.go":  f("package b\n"),
		"bin/tool":           f("ELF\x00\x01TODO binary\n"),
		"docs/notes.txt":     f("no newline at the end: TODO"),
		// Version-control metadata is never listed or searched.
		".git/HEAD":          f("ref: refs/heads/main TODO\n"),
		"internal/.hg/store": f("TODO\n"),
		"docs/.svn/entries":  f("TODO\n"),
	}
}

func call(t *testing.T, tool worker.Tool, args string) (worker.ToolOutput, error) {
	t.Helper()
	return tool.Run(context.Background(), json.RawMessage(args))
}

// outputCase is a call of a tool and the output it must give.
type outputCase struct {
	args        string
	want        string // the content
	wantSummary string
}

// checkOutputs runs each case through tool.
func checkOutputs(t *testing.T, tool worker.Tool, tests []outputCase) {
	t.Helper()
	name := tool.Name()
	for _, tt := range tests {
		out, err := call(t, tool, tt.args)
		if err != nil {
			t.Errorf("%s %s: %v", name, tt.args, err)
			continue
		}
		if diff := cmp.Diff(tt.want, *out.Content); diff != "" {
			t.Errorf("%s %s content mismatch (-want +got):\n%s", name, tt.args, diff)
		}
		if out.Summary != tt.wantSummary {
			t.Errorf("%s %s summary = %q, want %q", name, tt.args, out.Summary, tt.wantSummary)
		}
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*", "go.mod", true},
		{"*", "internal/a/b/c.go", true}, // no slash: the base name, at any depth
		{"*.go", "internal/a/b/c.go", true},
		{"*.go", "go.mod", false},
		{"**", "internal/a/b/c.go", true},
		{"**/*.go", "main.go", true},
		{"**/*.go", "cmd/x/main.go", true},
		{"cmd/**", "cmd/x/main.go", true},
		{"cmd/**", "internal/a/a.go", false},
		{"cmd/*/main.go", "cmd/x/main.go", true},
		{"cmd/*.go", "cmd/x/main.go", false},
		{"internal/**/c.go", "internal/a/b/c.go", true},
		{"internal/**/a.go", "internal/a/a.go", true},
		{"internal/**/b/*.go", "internal/a/a.go", false},
		{"[", "x", false}, // malformed: matches nothing
	}
	for _, tt := range tests {
		if got := tools.Match(tt.pattern, tt.name); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestGlob(t *testing.T) {
	tests := []outputCase{
		{`{"pattern":"*"}`, "README.md\nbin/tool\ncmd/x/main.go\ncmd/x/main_test.go\ndocs/notes.txt\ngo.mod\ninternal/a/a.go\ninternal/a/b/c.go\n", `8 files match "*"`},
		{`{"pattern":"**/*_test.go"}`, "cmd/x/main_test.go\n", `1 file match "**/*_test.go"`},
		{`{"pattern":"*.go","path":"internal"}`, "internal/a/a.go\ninternal/a/b/c.go\n", `2 files match "*.go"`},
		{`{"pattern":"a/*.go","path":"./internal/"}`, "internal/a/a.go\n", `1 file match "a/*.go"`},
		{`{"pattern":"*.rs"}`, "", `0 files match "*.rs"`},
	}
	checkOutputs(t, tools.Glob(testFS()), tests)
}

func TestRead(t *testing.T) {
	read := tools.Read(testFS())
	for _, args := range []string{`{"path":"cmd/x/main.go"}`, `{"path":"./cmd/x/main.go"}`} {
		out, err := call(t, read, args)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff("package main\n\n// TODO: flags\nfunc main() {}\n", *out.Content); diff != "" {
			t.Errorf("Read %s mismatch (-want +got):\n%s", args, diff)
		}
		if want := "read cmd/x/main.go (44 bytes)"; out.Summary != want {
			t.Errorf("Read %s summary = %q, want %q", args, out.Summary, want)
		}
	}
}

func TestGrep(t *testing.T) {
	tests := []outputCase{
		{`{"pattern":"TODO"}`,
			"README.md:2:TODO: write\ncmd/x/main.go:3:// TODO: flags\ndocs/notes.txt:1:no newline at the end: TODO\ninternal/a/a.go:3:// TODO: upper\n",
			`4 matches of "TODO" in 4 files`},
		{`{"pattern":"(?i)todo","path":"internal"}`,
			"internal/a/a.go:2:// todo lower case\ninternal/a/a.go:3:// TODO: upper\n",
			`2 matches of "(?i)todo" in 1 file`},
		{`{"pattern":"^package","glob":"*_test.go"}`, "cmd/x/main_test.go:1:package main\n", `1 match of "^package" in 1 file`},
		{`{"pattern":"nothing matches this"}`, "", `0 matches of "nothing matches this" in 0 files`},
	}
	checkOutputs(t, tools.Grep(testFS()), tests)
}

func TestErrors(t *testing.T) {
	fsys := testFS()
	tests := []struct {
		tool    worker.Tool
		args    string
		wantErr string
	}{
		{tools.Glob(fsys), ``, "missing arguments"},
		{tools.Glob(fsys), `{"pattern":`, "bad arguments"},
		{tools.Glob(fsys), `{"pattern":"*","depth":3}`, `unknown field "depth"`},
		{tools.Glob(fsys), `{}`, "pattern is required"},
		{tools.Glob(fsys), `{"pattern":"[a-"}`, "syntax error in pattern"},
		{tools.Glob(fsys), `{"pattern":"*","path":"../etc"}`, `invalid path "../etc"`},
		{tools.Glob(fsys), `{"pattern":"*","path":"absent"}`, "file does not exist"},
		{tools.Read(fsys), `{}`, `invalid path ""`},
		{tools.Read(fsys), `{"path":"/etc/passwd"}`, `invalid path "/etc/passwd"`},
		{tools.Read(fsys), `{"path":"absent.txt"}`, "file does not exist"},
		{tools.Grep(fsys), `{"pattern":""}`, "pattern is required"},
		{tools.Grep(fsys), `{"pattern":"("}`, "missing closing )"},
	}
	for _, tt := range tests {
		out, err := call(t, tt.tool, tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s %s: error %v, want one containing %q", tt.tool.Name(), tt.args, err, tt.wantErr)
		}
		if out.Content != nil {
			t.Errorf("%s %s: content %q with an error", tt.tool.Name(), tt.args, *out.Content)
		}
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tool := range tools.All(testFS()) {
		args := map[string]string{"Glob": `{"pattern":"*"}`, "Read": `{"path":"go.mod"}`, "Grep": `{"pattern":"x"}`}[tool.Name()]
		if _, err := tool.Run(ctx, json.RawMessage(args)); err == nil {
			t.Errorf("%s ran with a cancelled context", tool.Name())
		}
	}
}

// The sample is large enough that the demo always shows a cut at the
// default limit, and stable from call to call.
func TestSample(t *testing.T) {
	s := tools.Sample()
	if err := fstest.TestFS(s, "go.mod", "CHANGELOG.md", "internal/api/handler/api_handler_00.go"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ tool, args string }{
		{"Glob", `{"pattern":"*"}`},
		{"Grep", `{"pattern":"TODO"}`},
		{"Read", `{"path":"CHANGELOG.md"}`},
	} {
		var tool worker.Tool
		for _, x := range tools.All(s) {
			if x.Name() == tt.tool {
				tool = x
			}
		}
		out, err := call(t, tool, tt.args)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(*out.Content); n < 3*16384 {
			t.Errorf("%s %s on the sample: %d bytes, want at least three times the default limit", tt.tool, tt.args, n)
		}
	}
	var a, b []string
	fs.WalkDir(tools.Sample(), ".", func(p string, _ fs.DirEntry, _ error) error { a = append(a, p); return nil })
	fs.WalkDir(tools.Sample(), ".", func(p string, _ fs.DirEntry, _ error) error { b = append(b, p); return nil })
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two samples differ (-first +second):\n%s", diff)
	}
}
