package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
)

// restInput returns about n bytes of lines, numbered, with multi-byte
// characters, so that pages end inside lines and next to characters that
// must not be split.
func restInput(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %d: naïve café – ünïcödé %s\n", i, strings.Repeat("é", i%7))
	}
	return b.String()
}

// restCache points the user cache directory at a fresh directory for t, so
// that the CLI's store lives there, and returns the store's directory.
func restCache(t *testing.T) string {
	t.Helper()
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	return filepath.Join(cache, "toolcap", "rest")
}

// keptCut runs cap --keep-rest on in and returns its output and the read
// its marker names, failing t unless it names one.
func keptCut(t *testing.T, env []string, in string, args ...string) (string, rest.ReadArgs) {
	t.Helper()
	got := runWith(t, env, strings.NewReader(in), append([]string{"cap", "--tool", "Read", "--keep-rest"}, args...)...)
	if got.code != exitOK || got.stderr != "" {
		t.Fatalf("cap --keep-rest: exit code = %d, stderr:\n%s", got.code, got.stderr)
	}
	f, ok := nextRead(got.stdout, rest.DefaultTool)
	if !ok {
		t.Fatalf("cap --keep-rest: the output does not end with a marker naming a read:\n...%s", endOf(got.stdout))
	}
	a, err := rest.ParseReadArgs(json.RawMessage(f.Rest.Args))
	if err != nil {
		t.Fatalf("the marker's arguments %s: %v", f.Rest.Args, err)
	}
	return got.stdout, a
}

// endOf returns the end of s, for messages.
func endOf(s string) string { return s[max(0, len(s)-300):] }

// cap --keep-rest holds the limit, names the read of the rest, and the
// pages toolcap read gives from offset 0 on are the input, byte for byte.
func TestRestCapAndReadPages(t *testing.T) {
	restCache(t)
	in := restInput(1 << 20)
	out, a := keptCut(t, nil, in)
	if len(out) > 16384 {
		t.Errorf("cap --keep-rest wrote %d bytes, over the limit of 16384", len(out))
	}
	f, _ := nextRead(out, rest.DefaultTool)
	if f.N != len(in)-f.Start || f.Unit != cut.UnitBytes {
		t.Errorf("marker counts %d %s dropped; want %d bytes (the input less the %d shown)", f.N, f.Unit, len(in)-f.Start, f.Start)
	}
	if out[:f.Start] != in[:f.Start] || a.Offset != int64(f.Start) {
		t.Errorf("cap --keep-rest shows %d bytes of the input's start and names the read from %d; want the input's start, read on from where it ends", f.Start, a.Offset)
	}
	if !rest.ValidRef(a.Ref) {
		t.Errorf("ref %q is not a ref", a.Ref)
	}

	// From offset 0, page after page, as a model or a shell reads on.
	var got strings.Builder
	next := rest.ReadArgs{Ref: a.Ref}
	for pages := 0; ; pages++ {
		if pages > 200 {
			t.Fatalf("more than 200 pages for %d bytes", len(in))
		}
		r := runWith(t, nil, nil, "read", next.Ref, "--offset", strconv.FormatInt(next.Offset, 10))
		if r.code != exitOK || r.stderr != "" {
			t.Fatalf("read from %d: exit code = %d, stderr:\n%s", next.Offset, r.code, r.stderr)
		}
		if len(r.stdout) > 16384 {
			t.Errorf("page from %d is %d bytes, over the read tool's limit of 16384", next.Offset, len(r.stdout))
		}
		f, more := nextRead(r.stdout, rest.DefaultTool)
		if !more {
			got.WriteString(r.stdout)
			break
		}
		got.WriteString(r.stdout[:f.Start])
		if next, _ = rest.ParseReadArgs(json.RawMessage(f.Rest.Args)); next.Offset != int64(got.Len()) {
			t.Fatalf("page names the read from %d, after %d bytes read", next.Offset, got.Len())
		}
	}
	if got.String() != in {
		t.Errorf("the pages read from offset 0 are not the input: %d bytes, want %d", got.Len(), len(in))
	}
}

// --all follows the markers to the end: the input, byte for byte, at the
// read tool's pages or at --max-bytes ones; and from an offset, the rest.
func TestRestReadAll(t *testing.T) {
	restCache(t)
	in := restInput(1 << 20)
	_, a := keptCut(t, nil, in)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"from the start", []string{"read", a.Ref, "--all"}, in},
		{"small pages", []string{"read", "--all", "--max-bytes", "4096", a.Ref}, in},
		{"from the marker's offset", []string{"read", "--all", fmt.Sprintf(`{"ref":%q,"offset":%d}`, a.Ref, a.Offset)}, in[a.Offset:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, nil, nil, tt.args...)
			if got.code != exitOK || got.stderr != "" {
				t.Fatalf("exit code = %d, stderr:\n%s", got.code, got.stderr)
			}
			if got.stdout != tt.want {
				t.Errorf("read --all wrote %d bytes, not the %d bytes kept", len(got.stdout), len(tt.want))
			}
		})
	}
}

// The marker's JSON is an argument as it stands; flags beside it override
// its members.
func TestRestReadMarkerJSON(t *testing.T) {
	restCache(t)
	in := restInput(200_000)
	_, a := keptCut(t, nil, in)
	byFlags := runWith(t, nil, nil, "read", a.Ref, "--offset", strconv.FormatInt(a.Offset, 10))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"the marker's arguments", []string{"read", fmt.Sprintf(`{"ref":%q,"offset":%d}`, a.Ref, a.Offset)}, byFlags.stdout},
		{"with spaces, as a model may write them", []string{"read", fmt.Sprintf(`{ "ref": %q, "offset": %d }`, a.Ref, a.Offset)}, byFlags.stdout},
		// Issue 38, item 9: the call as the marker names it, pasted whole,
		// was taken for a ref.
		{"the marker's call", []string{"read", fmt.Sprintf(`toolcap_read {"ref":%q,"offset":%d}`, a.Ref, a.Offset)}, byFlags.stdout},
		{"the marker's call and its end", []string{"read", fmt.Sprintf(`toolcap_read {"ref":%q,"offset":%d}]`, a.Ref, a.Offset)}, byFlags.stdout},
		// 103 and 153 are character boundaries: an offset inside a
		// character is refused (issue 39, item 11).
		{"a flag over a member", []string{"read", fmt.Sprintf(`{"ref":%q,"offset":5}`, a.Ref), "--offset", "103", "--length", "50"}, in[103:153] + cut.RestMarker(len(in)-153, cut.UnitBytes, cut.Rest{Tool: rest.DefaultTool, Args: fmt.Sprintf(`{"ref":%q,"offset":153,"length":50}`, a.Ref)})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, nil, nil, tt.args...)
			if got.code != exitOK || got.stderr != "" {
				t.Fatalf("exit code = %d, stderr:\n%s", got.code, got.stderr)
			}
			if diff := cmp.Diff(tt.want, got.stdout); diff != "" {
				t.Errorf("read mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// --pattern lists the matching lines of the whole output with their
// offsets, like grep -b.
func TestRestReadPattern(t *testing.T) {
	restCache(t)
	in := restInput(1 << 20)
	_, a := keptCut(t, nil, in)
	var want []string
	for _, n := range []int{4242, 14242} {
		line := fmt.Sprintf("line %d: ", n)
		at := strings.Index(in, line)
		end := at + strings.IndexByte(in[at:], '\n')
		want = append(want, strconv.Itoa(at)+":"+in[at:end])
	}
	got := runWith(t, nil, nil, "read", a.Ref, "--pattern", `^line 1?4242:`)
	if got.code != exitOK || got.stderr != "" {
		t.Fatalf("exit code = %d, stderr:\n%s", got.code, got.stderr)
	}
	if diff := cmp.Diff(strings.Join(want, "\n")+"\n", got.stdout); diff != "" {
		t.Errorf("read --pattern mismatch (-want +got):\n%s", diff)
	}
}

// A ref reads only in the scope it was kept in: --scope, or
// TOOLCAP_REST_SCOPE, which is no manifest variable to warn about.
func TestRestScope(t *testing.T) {
	restCache(t)
	in := restInput(100_000)
	_, cliRef := keptCut(t, nil, in)
	agent := []string{envRestScope + "=agent-7"}
	_, agentRef := keptCut(t, agent, in)
	_, flagRef := keptCut(t, nil, in, "--scope", "agent-7")
	unknown := "expired or unknown; run the tool again"
	tests := []struct {
		name       string
		env        []string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"the default scope", nil, []string{cliRef.Ref}, exitOK, ""},
		{"the scope of the environment", agent, []string{agentRef.Ref}, exitOK, ""},
		{"--scope names the environment's scope", nil, []string{agentRef.Ref, "--scope", "agent-7"}, exitOK, ""},
		{"--scope at the cut, the environment at the read", agent, []string{flagRef.Ref}, exitOK, ""},
		{"a foreign scope", nil, []string{cliRef.Ref, "--scope", "other"}, exitFailed, unknown},
		{"the default scope for another's ref", nil, []string{agentRef.Ref}, exitFailed, unknown},
		{"--scope over the environment", agent, []string{agentRef.Ref, "--scope", "cli"}, exitFailed, unknown},
		{"a ref never made", nil, []string{rest.NewRef()}, exitFailed, unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, tt.env, nil, append([]string{"read"}, tt.args...)...)
			if got.code != tt.wantCode {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", got.code, tt.wantCode, got.stderr)
			}
			if tt.wantStderr == "" && got.stderr != "" {
				t.Errorf("stderr = %q, want nothing", got.stderr)
			}
			if tt.wantCode != exitOK {
				if got.stdout != "" {
					t.Errorf("stdout = %q, want nothing", got.stdout)
				}
				want := fmt.Sprintf("toolcap read: ref %q: %s\n", tt.args[0], tt.wantStderr)
				if diff := cmp.Diff(want, got.stderr); diff != "" {
					t.Errorf("stderr mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// Without a store, or told not to keep the rest, cap cuts as before: the
// plain marker, exit 0, and a warning only when a store was asked for and
// failed.
func TestRestCapPlainMarker(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("directory modes are unix's")
	}
	storeDir := restCache(t)
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	off := writeFile(t, dir, "off.toml", "[worker.tool_output.per_tool]\nRead = { keep_rest = false }\n")
	memory := writeFile(t, dir, "memory.toml", "[worker.tool_output.rest]\nstore = \"memory\"\n")
	in := restInput(100_000)
	plain := runWith(t, nil, strings.NewReader(in), "cap", "--tool", "Read").stdout
	tests := []struct {
		name        string
		args        []string
		env         []string
		wantWarning string // in stderr; "" for none
	}{
		{"no --keep-rest", nil, nil, ""},
		{"keep_rest = false for the tool", []string{"--keep-rest", "--manifest", off}, nil, ""},
		{"keep_rest = false for every tool", []string{"--keep-rest"}, []string{"TOOLCAP_WORKER__TOOL_OUTPUT__KEEP_REST=false"}, ""},
		{"a store directory open to others", []string{"--keep-rest"}, []string{"TOOLCAP_WORKER__TOOL_OUTPUT__REST__DIR=" + open},
			"[WARN]  toolcap: the rest is not kept: the output is cut with the plain marker: error=\"keep_rest: rest: directory " + open + " is mode 0755: want 0700 (no access for group or others)\""},
		{"a store in memory", []string{"--keep-rest", "--manifest", memory}, nil,
			"[WARN]  toolcap: the rest is not kept: the output is cut with the plain marker: error=\"keep_rest: store = \\\"memory\\\" ends with the process that keeps it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, tt.env, strings.NewReader(in), append([]string{"cap", "--tool", "Read"}, tt.args...)...)
			if got.code != exitOK {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", got.code, exitOK, got.stderr)
			}
			if diff := cmp.Diff(plain, got.stdout); diff != "" {
				t.Errorf("output mismatch with cap's plain cut (-want +got):\n%s", diff)
			}
			if tt.wantWarning == "" && got.stderr != "" {
				t.Errorf("stderr = %q, want nothing", got.stderr)
			}
			checkContains(t, "stderr", got.stderr, tt.wantWarning)
		})
	}
	if _, err := os.Lstat(storeDir); err == nil {
		t.Errorf("the store directory %s exists: nothing asked for it", storeDir)
	}
	fi, err := os.Lstat(open)
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the directory open to others was changed: %v, %v", fi.Mode(), err)
	}
}

// The store is private: its directories 0700, its files 0600.
func TestRestStoreFilesPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes are unix's")
	}
	storeDir := restCache(t)
	in := restInput(100_000)
	keptCut(t, nil, in)
	keptCut(t, nil, in)
	files := 0
	err := filepath.WalkDir(filepath.Dir(storeDir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		switch {
		case d.IsDir():
			want = fs.ModeDir | 0o700
		case d.Name() != "lock": // the directory's lock, private too
			files++
		}
		if fi.Mode() != want {
			t.Errorf("%s is %v, want %v", p, fi.Mode(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files != 2 {
		t.Errorf("the store holds %d files, want one for each of the 2 cuts", files)
	}
}

// The store keeps the first max_entry_bytes of an output: the marker of
// the last page counts the bytes that are gone, and --all writes what was
// kept and says so.
func TestRestReadEntryBound(t *testing.T) {
	restCache(t)
	const bound = 100_000
	env := []string{"TOOLCAP_WORKER__TOOL_OUTPUT__REST__MAX_ENTRY_BYTES=" + strconv.Itoa(bound)}
	in := restInput(300_000)
	_, a := keptCut(t, env, in)
	got := runWith(t, env, nil, "read", a.Ref, "--all")
	if got.code != exitOK {
		t.Fatalf("exit code = %d, stderr:\n%s", got.code, got.stderr)
	}
	if got.stdout != in[:bound] {
		t.Errorf("read --all wrote %d bytes, want the first %d of the input", len(got.stdout), bound)
	}
	want := fmt.Sprintf("toolcap read: the store kept the first %d bytes of %d (max_entry_bytes): the last %d are gone\n", bound, len(in), len(in)-bound)
	if diff := cmp.Diff(want, got.stderr); diff != "" {
		t.Errorf("stderr mismatch (-want +got):\n%s", diff)
	}
	last := runWith(t, env, nil, "read", a.Ref, "--offset", strconv.Itoa(bound-10))
	if want := in[bound-10:bound] + cut.Marker(len(in)-bound); last.stdout != want {
		t.Errorf("the last page kept = %q, want %q", last.stdout, want)
	}
}

// Usage errors exit 2 with nothing on stdout; a read that fails exits 1.
func TestRestReadErrors(t *testing.T) {
	restCache(t)
	in := restInput(50_000)
	_, a := keptCut(t, nil, in)
	dir := t.TempDir()
	memory := writeFile(t, dir, "memory.toml", "[worker.tool_output.rest]\nstore = \"memory\"\n")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"no ref", []string{"read"}, exitUsage, "toolcap read: REF is required"},
		{"two refs", []string{"read", a.Ref, a.Ref}, exitUsage, "toolcap read: unexpected argument"},
		{"malformed JSON", []string{"read", `{"ref":`}, exitUsage, "toolcap read: the marker's arguments: arguments: want a JSON object"},
		{"an unknown member", []string{"read", `{"ref":"x","page":2}`}, exitUsage, `toolcap read: the marker's arguments: unknown argument "page"`},
		{"a negative offset", []string{"read", a.Ref, "--offset", "-1"}, exitUsage, "toolcap read: offset -1: want a whole number >= 0"},
		{"a zero length", []string{"read", a.Ref, "--length", "0"}, exitUsage, "toolcap read: --length 0: want a whole number >= 1"},
		{"a bad pattern", []string{"read", a.Ref, "--pattern", "("}, exitUsage, "toolcap read: pattern: error parsing regexp"},
		{"--all with a pattern", []string{"read", a.Ref, "--all", "--pattern", "x"}, exitUsage, "toolcap read: --all reads everything"},
		{"--max-bytes too small", []string{"read", a.Ref, "--max-bytes", "10"}, exitUsage, "toolcap read: --max-bytes 10: want a limit from 128 to 67108864 bytes"},
		{"an empty scope", []string{"read", a.Ref, "--scope", ""}, exitUsage, `toolcap read: invalid value "" for flag -scope: empty scope`},
		{"an offset at the end", []string{"read", a.Ref, "--offset", strconv.Itoa(len(in))}, exitFailed,
			fmt.Sprintf("toolcap read: offset %d is the end of the output (%d bytes): nothing left to read\n", len(in), len(in))},
		{"an offset past the end", []string{"read", a.Ref, "--offset", strconv.Itoa(len(in) + 1)}, exitFailed,
			fmt.Sprintf("toolcap read: offset %d is past the end of the output (%d bytes)\n", len(in)+1, len(in))},
		{"a store in memory", []string{"read", a.Ref, "--manifest", memory}, exitFailed, `toolcap read: keep_rest: store = "memory" ends with the process`},
		// "line 0: naïve": the ï is bytes 10 and 11 (issue 39, item 11).
		{"an offset inside a character", []string{"read", a.Ref, "--offset", "11"}, exitFailed,
			"toolcap read: offset 11 is inside a UTF-8 character of 2 bytes, which starts at offset 10: read from offset 10, or 12 for the character after it\n"},
		{"a length shorter than a character", []string{"read", a.Ref, "--offset", "10", "--length", "1"}, exitFailed,
			"toolcap read: length 1 is shorter than the UTF-8 character at offset 10, of 2 bytes: ask for a length of at least 2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, nil, nil, tt.args...)
			if got.code != tt.wantCode || got.stdout != "" {
				t.Errorf("exit code = %d, stdout = %q; want %d and nothing", got.code, got.stdout, tt.wantCode)
			}
			checkContains(t, "stderr", got.stderr, tt.wantStderr)
			if n := strings.Count(got.stderr, "\n"); n != 1 && !strings.HasPrefix(tt.name, "an empty scope") {
				t.Errorf("stderr has %d lines, want 1:\n%s", n, got.stderr)
			}
		})
	}
}

// read -h prints its usage and flags; help read is the same.
func TestRestReadHelp(t *testing.T) {
	for _, args := range [][]string{{"read", "-h"}, {"help", "read"}} {
		got := runWith(t, nil, nil, args...)
		if got.code != exitOK || got.stderr != "" {
			t.Errorf("%q: exit code = %d, stderr = %q; want 0 and nothing", args, got.code, got.stderr)
		}
		if !strings.HasPrefix(got.stdout, "Usage: toolcap read REF") || !strings.Contains(got.stdout, "\nFlags:\n") {
			t.Errorf("%q: stdout is not read's usage and flags:\n%s", args, got.stdout)
		}
	}
}

// An interrupt stops cap --keep-rest while it waits for input, and a read
// error discards what was kept: neither leaves an entry to read.
func TestRestCapStops(t *testing.T) {
	t.Run("interrupt", func(t *testing.T) {
		storeDir := restCache(t)
		ctx, cancel := context.WithCancel(t.Context())
		pr, pw := io.Pipe() // input that stops coming
		var stdout, stderr bytes.Buffer
		done := make(chan int)
		go func() { done <- Run(ctx, []string{"cap", "--tool", "Read", "--keep-rest"}, pr, &stdout, &stderr, nil) }()
		if _, err := io.WriteString(pw, restInput(100_000)); err != nil {
			t.Fatal(err)
		}
		cancel()
		if code := <-done; code != exitFailed || stdout.Len() != 0 || !strings.Contains(stderr.String(), "context canceled") {
			t.Errorf("got exit %d, stdout %q, stderr %q; want %d, nothing, the cause", code, stdout.String(), stderr.String(), exitFailed)
		}
		// The read left behind ends when the input does; in a process it
		// would end with it. It gives up the entry rather than commit it.
		pw.Close()
		deadline := time.Now().Add(5 * time.Second)
		for storeEntries(t, storeDir) != 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := storeEntries(t, storeDir); n != 0 {
			t.Errorf("the store holds %d files after an interrupt: want none", n)
		}
	})
	t.Run("read error", func(t *testing.T) {
		storeDir := restCache(t)
		in := io.MultiReader(strings.NewReader(restInput(100_000)), iotest.ErrReader(errors.New("disk on fire")))
		got := runWith(t, nil, in, "cap", "--tool", "Read", "--keep-rest")
		if got.code != exitFailed || got.stdout != "" || !strings.Contains(got.stderr, "disk on fire") {
			t.Errorf("got exit %d, stdout %q, stderr %q; want %d, nothing, the error", got.code, got.stdout, got.stderr, exitFailed)
		}
		if n := storeEntries(t, storeDir); n != 0 {
			t.Errorf("the store holds %d files after a failed read: want none", n)
		}
	})
}

// storeEntries returns the number of files in the store's directory and
// its tmp/, committed or being written.
func storeEntries(t *testing.T, storeDir string) int {
	t.Helper()
	n := 0
	for _, d := range []string{storeDir, filepath.Join(storeDir, "tmp")} {
		des, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, de := range des {
			// The lock file is the directory's own, not an entry's.
			if !de.IsDir() && de.Name() != "lock" {
				n++
			}
		}
	}
	return n
}

// A tool held below the read tool's limit is read back in pages within its
// own limit: toolcap read of the call each marker names, marker after
// marker (issue 38, item 4).
func TestRestPagesHoldTheToolLimit(t *testing.T) {
	restCache(t)
	in := restInput(40000)
	env := []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=2000"}
	out, a := keptCut(t, env, in)
	if len(out) > 2000 {
		t.Fatalf("cap --keep-rest wrote %d bytes, over the tool's limit of 2000", len(out))
	}
	got := out[:strings.LastIndex(out, "\n[truncated: ")]
	call := fmt.Sprintf(`{"ref":%q,"offset":%d,"length":%d}`, a.Ref, a.Offset, a.Length)
	for pages := 0; ; pages++ {
		if pages > 40 {
			t.Fatalf("more than 40 pages for %d bytes", len(in))
		}
		r := runWith(t, env, nil, "read", call)
		if r.code != exitOK || r.stderr != "" {
			t.Fatalf("read %s: exit code = %d, stderr:\n%s", call, r.code, r.stderr)
		}
		if len(r.stdout) > 2000 {
			t.Errorf("read %s: a page of %d bytes, over the tool's limit of 2000", call, len(r.stdout))
		}
		f, more := nextRead(r.stdout, rest.DefaultTool)
		if !more {
			got += r.stdout
			break
		}
		got += r.stdout[:f.Start]
		call = f.Rest.Args
	}
	if got != in {
		t.Errorf("the cut and its pages give back %d bytes; want the input's %d, byte for byte", len(got), len(in))
	}
}
