package redisrest_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The tests in this file run the toolcap users install, which has the
// Redis store (module github.com/toolcap/toolcap/cmd/toolcap), as a user
// runs it: one process cuts and keeps, others read, all through one
// redis-server.

// buildToolcap builds ../../cmd/toolcap, in the repository's workspace,
// into a temp directory.
func buildToolcap(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the binary with")
	}
	bin := filepath.Join(t.TempDir(), "toolcap")
	build := exec.Command(goTool, "build", "-o", bin, "../../cmd/toolcap")
	build.Env = append(os.Environ(), "GOFLAGS=") // as users build it, not with -race
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ../../cmd/toolcap: %v\n%s", err, out)
	}
	return bin
}

// toolcapRun runs bin with args, stdin and the environment extra adds, and
// returns its standard output and error; it fails the test unless the exit
// code is want.
func toolcapRun(t *testing.T, bin string, extra []string, stdin string, want int, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), extra...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("toolcap %q: %v", args, err)
	}
	if code != want {
		t.Fatalf("toolcap %q: exit code %d, want %d\nstdout: %.500s\nstderr: %s", args, code, want, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

var readArgs = regexp.MustCompile(`toolcap_read (\{"ref":"[a-z2-7]+","offset":\d+(?:,"length":\d+)?\})\]$`)

// A cut made by "toolcap cap --keep-rest" in one process is read back by
// "toolcap read" in others, page by page and whole, byte for byte, through
// the Redis the manifest's environment layer names; another scope cannot
// read it; toolcap config names the store without its password.
func TestToolcapBinary(t *testing.T) {
	srv := startServer(t)
	bin := buildToolcap(t)
	env := []string{
		"TOOLCAP_WORKER__TOOL_OUTPUT__REST__STORE=" + srv.URL(),
		"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=4096",
		"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__toolcap_read=8192",
		"XDG_CACHE_HOME=" + t.TempDir(), // no directory store is used
	}
	var in strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&in, "line %05d of the output é\n", i)
	}
	input := in.String()

	head, _ := toolcapRun(t, bin, env, input, 0, "cap", "--tool", "Read", "--keep-rest")
	if len(head) > 4096 {
		t.Errorf("cap wrote %d bytes, over the 4096-byte limit", len(head))
	}
	m := readArgs.FindStringSubmatch(head)
	if m == nil {
		t.Fatalf("cap's output does not end with a read of the rest:\n...%s", head[max(0, len(head)-200):])
	}

	// Page by page, as a model reads: each page's marker names the next.
	got := head[:strings.LastIndex(head, "\n[truncated: ")]
	next := m[1]
	pages := 0
	for next != "" {
		page, _ := toolcapRun(t, bin, env, "", 0, "read", next)
		pages++
		if len(page) > 8192 {
			t.Errorf("page %d is %d bytes, over the read tool's 8192", pages, len(page))
		}
		next = ""
		if m := readArgs.FindStringSubmatch(page); m != nil {
			next = m[1]
			page = page[:strings.LastIndex(page, "\n[truncated: ")]
		}
		got += page
		if pages > 100 {
			t.Fatal("over 100 pages: the reads do not end")
		}
	}
	if got != input {
		t.Errorf("the head and %d pages are not the input: %d bytes, want %d", pages, len(got), len(input))
	}
	if pages < 2 {
		t.Errorf("read %d pages, want several", pages)
	}

	// --all, in another process, gives the rest whole.
	all, _ := toolcapRun(t, bin, env, "", 0, "read", m[1], "--all")
	if want := input[len(head[:strings.LastIndex(head, "\n[truncated: ")]):]; all != want {
		t.Errorf("read --all wrote %d bytes, want the %d bytes past the head", len(all), len(want))
	}

	// A ref is bound to its scope, across processes as within one.
	_, stderr := toolcapRun(t, bin, env, "", 1, "read", m[1], "--scope", "someone-else")
	if !strings.Contains(stderr, "expired or unknown") {
		t.Errorf("read from another scope: stderr %q, want the unknown-ref error", stderr)
	}

	// config names the store, never its password.
	secret := append([]string{}, env...)
	secret[0] = "TOOLCAP_WORKER__TOOL_OUTPUT__REST__STORE=redis://toolcap:hunter2@" + srv.Addr() + "/0"
	out, _ := toolcapRun(t, bin, secret, "", 0, "config")
	if strings.Contains(out, "hunter2") || !strings.Contains(out, srv.Addr()) {
		t.Errorf("config shows the password, or not the store:\n%s", out)
	}
}

// With Redis down, cap --keep-rest still cuts, with the plain marker, and
// says why on standard error without the password; read fails (exit 1)
// with one line that says why.
func TestToolcapBinaryRedisDown(t *testing.T) {
	bin := buildToolcap(t)
	env := []string{
		"TOOLCAP_WORKER__TOOL_OUTPUT__REST__STORE=redis://toolcap:hunter2@127.0.0.1:" + fmt.Sprint(freePort(t)) + "/0",
		"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=1024",
	}
	input := strings.Repeat("x", 5000)
	out, stderr := toolcapRun(t, bin, env, input, 0, "cap", "--tool", "Read", "--keep-rest")
	var n int
	i := strings.LastIndex(out, "\n[truncated: ")
	if i < 0 || len(out) > 1024 {
		t.Fatalf("cap with Redis down wrote %d bytes without the plain marker:\n%s", len(out), out)
	}
	if _, err := fmt.Sscanf(out[i:], "\n[truncated: %d bytes dropped, refine your query]", &n); err != nil ||
		!strings.HasSuffix(out, "refine your query]") || out[:i] != input[:i] || i+n != len(input) {
		t.Errorf("cap with Redis down: want the plain marker, N exact; got ...%q (err %v)", out[max(0, i-10):], err)
	}
	if strings.Contains(stderr, "hunter2") {
		t.Errorf("stderr shows the password: %s", stderr)
	}

	// read says so in one line, with why, without the password (issue 38,
	// item 8: the keeper's "store failing" line came first).
	_, stderr = toolcapRun(t, bin, env, "", 1, "read", `{"ref":"abcdefghijklmnopqrstuvwxyz","offset":0}`)
	// CI's own TOOLCAP_ variables (TOOLCAP_REDIS_E2E) draw a warning each.
	var kept []string
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !strings.Contains(line, "unknown environment variable TOOLCAP_") {
			kept = append(kept, line)
		}
	}
	stderr = strings.Join(kept, "")
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, `toolcap read: ref "abcdefghijklmnopqrstuvwxyz": the store failed; run the tool again (`) ||
		!strings.Contains(stderr, "connection refused") || strings.Contains(stderr, "hunter2") {
		t.Errorf("read with Redis down: stderr %q, want one line saying why, without the password", stderr)
	}
}
