package cli

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

// row is one line of the demo's table.
type row struct {
	Tool, Args                     string
	Limit, Raw, ToHistory, Dropped int
	Status                         string
}

// demoRows parses the demo's table from its output.
func demoRows(t *testing.T, out string) []row {
	t.Helper()
	var rows []row
	inTable := false
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "#":
			inTable = true
			continue
		case !inTable:
			continue
		case len(f) != 8:
			return rows
		}
		n := make([]int, 4)
		for i := range n {
			v, err := strconv.Atoi(f[3+i])
			if err != nil {
				t.Fatalf("bad number in table line %q: %v", line, err)
			}
			n[i] = v
		}
		rows = append(rows, row{f[1], f[2], n[0], n[1], n[2], n[3], f[7]})
	}
	return rows
}

// makeTree writes a project of files with long names in a new directory
// and returns it, with the sizes of what Glob "*" and Grep "TODO" return.
func makeTree(t *testing.T) (dir string, globBytes, grepBytes int) {
	t.Helper()
	dir = t.TempDir()
	for i := range 140 {
		name := fmt.Sprintf("internal/component_%02d/subsystem_with_a_long_descriptive_name/and_a_deeply_nested_package/file_with_a_rather_long_name_%03d.go", i%10, i)
		todo := fmt.Sprintf("// TODO(%d): something", i)
		writeFile(t, dir, name, "package component\n\n"+todo+"\n")
		globBytes += len(name) + 1
		grepBytes += len(name+":3:"+todo) + 1
	}
	writeFile(t, dir, "go.mod", "module example.com/x\n")
	writeFile(t, dir, "docs/big.md", strings.Repeat("a line of documentation\n", 2000))
	globBytes += len("go.mod\n") + len("docs/big.md\n")
	return dir, globBytes, grepBytes
}

func TestDemoOnTree(t *testing.T) {
	dir, globBytes, grepBytes := makeTree(t)
	got := runWith(t, nil, nil, "demo", dir)
	if got.code != exitOK {
		t.Fatalf("exit code = %d; stderr:\n%s\nstdout:\n%s", got.code, got.stderr, got.stdout)
	}
	if got.stderr != "" {
		t.Errorf("stderr = %q, want nothing at the default level", got.stderr)
	}
	if strings.Contains(got.stdout, "generated sample") {
		t.Errorf("demo fell back to the sample on a tree large enough:\n%s", got.stdout)
	}
	want := []row{
		{"Glob", `{"pattern":"*"}`, 16384, globBytes, 16384, globBytes - 16384 + restMarkerLen(globBytes, 16384), "cut"},
		{"Grep", `{"pattern":"TODO"}`, 16384, grepBytes, 16384, grepBytes - 16384 + restMarkerLen(grepBytes, 16384), "cut"},
		{"Read", `{"path":"docs/big.md"}`, 16384, 48000, 16384, 48000 - 16384 + restMarkerLen(48000, 16384), "cut"},
		{"Read", `{"path":"go.mod"}`, 16384, 21, 21, 0, "fits"},
	}
	if diff := cmp.Diff(want, demoRows(t, got.stdout)); diff != "" {
		t.Errorf("demo table mismatch (-want +got):\n%s\n%s", diff, got.stdout)
	}
	checkContains(t, "stdout", got.stdout,
		"One model turn over "+dir+" (142 files,",
		"Limits: default_max_bytes 16384 (built-in default)",
		"  1 Glob {\"pattern\":\"*\"}\n",
		fmt.Sprintf("    | [truncated: %d bytes dropped, refine your query or read the rest: toolcap_read {\"ref\":\"", globBytes-16384+restMarkerLen(globBytes, 16384)),
		"The next turn: the model reads on where result 1 (Glob) was cut, with the call its marker names:\n  toolcap_read {\"ref\":",
		"verdict: the cap kept ",
		"(3 of 4 results cut, each within its limit)",
		"the user middleware saw at most 16384 bytes",
		// Its refs die with it (issue 38, item 5: it offered a read that
		// toolcap read could not do).
		"The demo keeps the rest in memory, for its own run: its refs end with it, and toolcap read cannot\nread them.",
	)
}

// With a batch budget, the demo's turn shares it: go.mod keeps all of its
// 21 bytes, the three cut results share the rest, and the turn holds the
// budget.
func TestDemoBatchBudget(t *testing.T) {
	dir, globBytes, grepBytes := makeTree(t)
	env := []string{"TOOLCAP_WORKER__TOOL_OUTPUT__BATCH_MAX_BYTES=32768"}
	got := runWith(t, env, nil, "demo", dir)
	if got.code != exitOK {
		t.Fatalf("exit code = %d; stderr:\n%s\nstdout:\n%s", got.code, got.stderr, got.stdout)
	}
	// 32768 - 21 = 32747 for three: 10916, 10916, 10915.
	want := []row{
		{"Glob", `{"pattern":"*"}`, 16384, globBytes, 10916, globBytes - 10916 + restMarkerLen(globBytes, 10916), "cut"},
		{"Grep", `{"pattern":"TODO"}`, 16384, grepBytes, 10916, grepBytes - 10916 + restMarkerLen(grepBytes, 10916), "cut"},
		{"Read", `{"path":"docs/big.md"}`, 16384, 48000, 10915, 48000 - 10915 + restMarkerLen(48000, 10915), "cut"},
		{"Read", `{"path":"go.mod"}`, 16384, 21, 21, 0, "fits"},
	}
	if diff := cmp.Diff(want, demoRows(t, got.stdout)); diff != "" {
		t.Errorf("demo table mismatch (-want +got):\n%s\n%s", diff, got.stdout)
	}
	checkContains(t, "stdout", got.stdout,
		"Limits: default_max_bytes 16384 (built-in default), batch_max_bytes 32768 (env TOOLCAP_WORKER__TOOL_OUTPUT__BATCH_MAX_BYTES)")
}

// restMarkerLen is the length of the marker a cut of n bytes of content to
// limit appends when the rest is kept: the longest head k whose marker,
// naming the read from k, fits beside it.
func restMarkerLen(n, limit int) int {
	for k := limit; k >= 0; k-- {
		r := cut.Rest{Tool: "toolcap_read", Args: fmt.Sprintf(`{"ref":"%s","offset":%d}`, strings.Repeat("a", 26), k)}
		if m := cut.RestMarkerLen(n-k, cut.UnitBytes, r); k+m <= limit {
			return m
		}
	}
	return 0
}

func TestDemoFallsBackOnSmallTree(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "main.go", "package main\n")
	writeFile(t, dir, "go.mod", "module tiny\n")
	for _, tt := range []struct {
		name string
		args []string
		cwd  string
	}{
		{"DIR given", []string{"demo", dir}, ""},
		{"current directory", []string{"demo"}, dir},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cwd != "" {
				t.Chdir(tt.cwd)
			}
			got := runWith(t, nil, nil, tt.args...)
			if got.code != exitOK {
				t.Fatalf("exit code = %d; stderr:\n%s", got.code, got.stderr)
			}
			checkContains(t, "stdout", got.stdout,
				"lists only 2 files (15 bytes of paths), too few to exceed the Glob limit of 16384",
				"running on a generated sample project instead",
				"One model turn over a generated sample project (1203 files,",
				"[truncated: ",
			)
			rows := demoRows(t, got.stdout)
			if len(rows) != 4 {
				t.Fatalf("got %d rows, want 4:\n%s", len(rows), got.stdout)
			}
			for _, r := range rows {
				if r.ToHistory > r.Limit {
					t.Errorf("%s %s: %d bytes reach the history, limit %d", r.Tool, r.Args, r.ToHistory, r.Limit)
				}
			}
			if g := rows[0]; g.Tool != "Glob" || g.Status != "cut" || g.Raw <= 16384 {
				t.Errorf("Glob row = %+v, want a cut of more than 16384 bytes", g)
			}
		})
	}
}

func TestDemoManifest(t *testing.T) {
	dir, _, _ := makeTree(t)
	m := writeFile(t, t.TempDir(), "m.toml", `
[worker.tool_output]
default_max_bytes = 8192
default_max_byte = 1
[worker.tool_output.per_tool]
Read = 4096
Globb = 1024
`)
	// Flags after DIR work too.
	got := runWith(t, []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Grep=2048"}, nil, "demo", dir, "--manifest", m)
	if got.code != exitOK {
		t.Fatalf("exit code = %d; stderr:\n%s", got.code, got.stderr)
	}
	var limits []int
	for _, r := range demoRows(t, got.stdout) {
		limits = append(limits, r.Limit)
	}
	if diff := cmp.Diff([]int{8192, 2048, 4096, 4096}, limits); diff != "" {
		t.Errorf("limits of Glob, Grep, Read, Read mismatch (-want +got):\n%s", diff)
	}
	checkContains(t, "stderr", got.stderr,
		`[WARN]  toolcap: unknown key "default_max_byte"`,
		`(did you mean "default_max_bytes"?)`,
		"[WARN]  toolcap: per_tool limit for a tool that is not registered; it applies to nothing: tool=Globb limit=1024 did_you_mean=Glob",
	)
	if strings.Contains(got.stderr, "[INFO]") {
		t.Errorf("info lines at the default level:\n%s", got.stderr)
	}
}

func TestDemoVerbose(t *testing.T) {
	dir, _, _ := makeTree(t)
	got := runWith(t, nil, nil, "demo", "-v", "-v", dir)
	if got.code != exitOK {
		t.Fatalf("exit code = %d; stderr:\n%s", got.code, got.stderr)
	}
	checkContains(t, "stderr", got.stderr,
		"[INFO]  toolcap: tool result truncated: tool=Glob call_id=call_1",
		"[DEBUG] toolcap: tool call: tool=Read call_id=call_4",
	)
}

func TestDemoErrors(t *testing.T) {
	dir, _, _ := makeTree(t)
	for _, tt := range configErrorCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			checkConfigError(t, runWith(t, tt.env, nil, append([]string{"demo", dir}, tt.args...)...), tt.wantStderr)
		})
	}
	usage := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"missing DIR", []string{filepath.Join(dir, "absent")}, "no such file or directory"},
		{"DIR is a file", []string{filepath.Join(dir, "go.mod")}, "not a directory"},
		{"two DIRs", []string{dir, dir}, "one DIR at most"},
		{"--lines 0", []string{"--lines", "0", dir}, "--lines 0: must be at least 1"},
	}
	for _, tt := range usage {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, nil, nil, append([]string{"demo"}, tt.args...)...)
			if got.code != exitUsage || got.stdout != "" {
				t.Errorf("exit code = %d, stdout = %q; want %d and nothing", got.code, got.stdout, exitUsage)
			}
			checkContains(t, "stderr", got.stderr, tt.wantStderr)
		})
	}
}

// The Reads go to text files: the largest one, and a small one when there is
// no go.mod or README. Binary and non-UTF-8 files are passed over, and Grep
// skips binary files.
func TestDemoPicksTextFiles(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		writeFile(t, dir, fmt.Sprintf("src/a_long_directory_name_for_the_paths/another_long_directory_name/file_%03d.txt", i), "x\n")
	}
	writeFile(t, dir, "assets/blob.bin", "TODO\x00"+strings.Repeat("\x01\x02", 50_000))
	writeFile(t, dir, "assets/latin1.txt", strings.Repeat("caf\xe9 TODO\n", 6000))
	writeFile(t, dir, "docs/big.md", strings.Repeat("text\n", 5000))
	writeFile(t, dir, "notes/small.txt", strings.Repeat("n", 1000))

	got := runWith(t, nil, nil, "demo", dir)
	if got.code != exitOK {
		t.Fatalf("exit code = %d; stderr:\n%s", got.code, got.stderr)
	}
	var args []string
	for _, r := range demoRows(t, got.stdout) {
		args = append(args, r.Tool+" "+r.Args)
	}
	want := []string{`Glob {"pattern":"*"}`, `Grep {"pattern":"TODO"}`, `Read {"path":"docs/big.md"}`, `Read {"path":"notes/small.txt"}`}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("calls mismatch (-want +got):\n%s\n%s", diff, got.stdout)
	}
	if strings.Contains(got.stdout, "blob.bin:") {
		t.Errorf("Grep matched a binary file:\n%s", got.stdout)
	}
}

func TestDemoInterrupted(t *testing.T) {
	dir, _, _ := makeTree(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var stdout, stderr bytes.Buffer
	code := Run(ctx, []string{"demo", dir}, strings.NewReader(""), &stdout, &stderr, nil)
	if code != exitFailed || !strings.Contains(stderr.String(), "context canceled") {
		t.Errorf("got exit %d, stderr %q; want %d and the cause", code, stderr.String(), exitFailed)
	}
}
