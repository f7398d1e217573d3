package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/claudecode"
)

// The secrets of the hook's redaction tests, and their markers.
const (
	hookAWS = "AKIA2OGYBAH6STMMNXNN"
	hookKey = "-----BEGIN OPENSSH PRIVATE KEY-----\n" +
		"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" +
		"QyNTUxOQAAACBkZXYgb25seSwgbm90IGEgcmVhbCBrZXksIGp1c3QgYSB0ZXN0AAAAA\n" +
		"-----END OPENSSH PRIVATE KEY-----"
	hookAWSMarker = "[redacted: aws-access-token]"
	hookKeyMarker = "[redacted: private-key]"
)

// hookRedacted is s with the hook tests' secrets replaced by their
// markers.
func hookRedacted(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, hookAWS, hookAWSMarker), hookKey, hookKeyMarker)
}

// noHookSecret fails the test when s holds a part of a secret.
func noHookSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, p := range []string{hookAWS, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"} {
		if strings.Contains(s, p) {
			t.Errorf("%s holds a secret (%s...)", what, p[:8])
		}
	}
}

// keptFiles returns the contents of the text files under dir, the
// hook's store (its files of the rest; not its index).
func keptFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".txt") {
			return err
		}
		b, err := os.ReadFile(path)
		files = append(files, string(b))
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return files
}

// TestHookRedactsSecrets: toolcap hook claude-code redacts the tool's
// output with the tool's rules before it cuts or keeps it: within the
// limit, an output with a secret is replaced by the same output with the
// markers; over it, the cut and the kept file hold the redacted text (the
// file byte for byte, its length in the marker); redact = false for the
// tool leaves it as it was (no reply); -v logs one line of rules and
// counts, never a value.
func TestHookRedactsSecrets(t *testing.T) {
	small := "export AWS_ACCESS_KEY_ID=" + hookAWS + "\n" + hookKey + "\nok\n"
	big := "AWS_ACCESS_KEY_ID=" + hookAWS + "\n" + strings.Repeat("ok  \tpkg/sub\t0.012s\n", 2000) + hookKey + "\nlast " + hookAWS + "\n"
	bash := func(stdout string) map[string]any {
		return map[string]any{"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false}
	}
	const logLine = `redacted secrets: tool=Bash call_id=toolu_01 redactions=%d rules="aws-access-token=%d private-key=1"`
	for _, tc := range []struct {
		name   string
		env    []string
		stdout string
		// want is the reply's stdout, "" for no reply.
		want string
		// log is a line -v must log, "" for none of redaction.
		log string
		// kept is what the store must hold, nil for nothing.
		kept []string
	}{
		{"within the limit", nil, small, hookRedacted(small), fmt.Sprintf(logLine, 2, 1), nil},
		{"redact = false for the tool", []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__REDACT=false"}, small, "", "", nil},
		{"redact = false for another tool", []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read__REDACT=false"}, small, hookRedacted(small), fmt.Sprintf(logLine, 2, 1), nil},
		{"over the limit", []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash=4096"}, big, "CUT", fmt.Sprintf(logLine, 3, 2), []string{hookRedacted(big)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			env := append([]string{"TOOLCAP_WORKER__TOOL_OUTPUT__REST__DIR=" + dir}, tc.env...)
			got := runWith(t, env, bytes.NewReader(payload(t, "Bash", bash(tc.stdout))), "hook", "-v", "claude-code")
			if got.code != exitOK {
				t.Fatalf("exit %d: %s", got.code, got.stderr)
			}
			noHookSecret(t, "the log", got.stderr)
			if tc.log != "" {
				checkContains(t, "stderr", got.stderr, tc.log)
			} else if strings.Contains(got.stderr, "redacted") {
				t.Errorf("a redaction logged: %s", got.stderr)
			}
			kept := keptFiles(t, dir)
			if diff := cmp.Diff(tc.kept, kept); diff != "" {
				t.Errorf("the store (-want +got):\n%.2000s", diff)
			}
			if tc.want == "" {
				if got.stdout != "" {
					t.Errorf("a reply: %.300s", got.stdout)
				}
				return
			}
			noHookSecret(t, "the reply", got.stdout)
			var r claudecode.Reply
			if err := json.Unmarshal([]byte(got.stdout), &r); err != nil {
				t.Fatalf("reply %.300q: %v", got.stdout, err)
			}
			var out map[string]any
			if err := json.Unmarshal(r.HookSpecificOutput.UpdatedToolOutput, &out); err != nil {
				t.Fatal(err)
			}
			stdout := out["stdout"].(string)
			if tc.want == "CUT" {
				// The head of the redacted text, and the marker counting
				// the redacted text's bytes dropped.
				m := regexp.MustCompile(`\[truncated: ([0-9]+) bytes dropped`).FindStringSubmatchIndex(stdout)
				if m == nil {
					t.Fatalf("no marker in %.300q", stdout)
				}
				head := strings.TrimRight(stdout[:m[0]], "\n")
				var dropped int
				fmt.Sscan(stdout[m[2]:m[3]], &dropped)
				if !strings.HasPrefix(hookRedacted(tc.stdout), head) || dropped != len(hookRedacted(tc.stdout))-len(strings.TrimSuffix(stdout[:m[0]], "\n")) {
					t.Errorf("the cut %.200q (%d bytes dropped) is not of the redacted text (%d bytes)", head, dropped, len(hookRedacted(tc.stdout)))
				}
				return
			}
			want := bash(tc.want)
			if diff := cmp.Diff(want, out); diff != "" {
				t.Errorf("updatedToolOutput (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHookRedactsStreams: a payload past claudecode.StreamAbove, cut as
// it streams, is redacted as it streams: secrets at the start, across
// 64 KiB boundaries of the stream and at its end reach neither the reply
// nor the kept file, which is the redacted text byte for byte.
func TestHookRedactsStreams(t *testing.T) {
	line := "0123456789abcdef ok\n"
	var b strings.Builder
	b.WriteString("AWS_ACCESS_KEY_ID=" + hookAWS + "\n")
	for _, off := range []int{64<<10 - 40, 128<<10 - 10, 4 << 20, claudecode.StreamAbove - 7, claudecode.StreamAbove + 100<<10} {
		for b.Len() < off {
			b.WriteString(line)
		}
		b.WriteString(hookKey + "\n" + hookAWS + "\n")
	}
	for b.Len() < claudecode.StreamAbove+oneMiB {
		b.WriteString(line)
	}
	b.WriteString("last: " + hookAWS)
	text := b.String()
	p := payload(t, "Bash", map[string]any{"stdout": text, "stderr": "", "interrupted": false})
	if len(p) <= claudecode.StreamAbove {
		t.Fatalf("a payload of %d bytes is not streamed", len(p))
	}
	dir := t.TempDir()
	got := runWith(t, []string{"TOOLCAP_WORKER__TOOL_OUTPUT__REST__DIR=" + dir}, bytes.NewReader(p), "hook", "-v", "claude-code")
	if got.code != exitOK || !strings.Contains(got.stdout, hookAWSMarker) {
		t.Fatalf("exit %d, stderr %q, reply %.300q", got.code, got.stderr, got.stdout)
	}
	noHookSecret(t, "the reply", got.stdout)
	checkContains(t, "stderr", got.stderr, `redacted secrets: tool=Bash call_id=toolu_01 redactions=12 rules="aws-access-token=7 private-key=5"`)
	kept := keptFiles(t, dir)
	if len(kept) != 1 {
		t.Fatalf("%d kept files, want 1", len(kept))
	}
	if want := hookRedacted(text); kept[0] != want {
		t.Errorf("the kept file (%d bytes) is not the redacted text (%d bytes)", len(kept[0]), len(want))
	}
}

// TestHookRedactStartup times the hook's process, as Claude Code runs it
// once per tool call, with redaction on (the default) and off (redact =
// false), interleaved, on a small payload and on one of 1 MiB: the
// medians and what redaction adds are logged. The built-in rules are
// compiled once per process, at start-up, either way (manifest's default
// policy holds redact.Default()); on adds the scan of the output.
func TestHookRedactStartup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it 240 times")
	}
	bin := buildBinary(t)
	small := payload(t, "Bash", map[string]any{"stdout": "PASS\nok  \tgithub.com/x/y\t0.012s\n", "stderr": "", "interrupted": false})
	large := payload(t, "Bash", map[string]any{"stdout": strings.Repeat("0123456789abcdef ok\n", oneMiB/20), "stderr": "", "interrupted": false})
	run := func(payload []byte, env ...string) time.Duration {
		cmd := exec.Command(bin, "hook", "claude-code")
		cmd.Env = append(os.Environ(), append(env, "TOOLCAP_WORKER__TOOL_OUTPUT__REST__DIR="+t.TempDir())...)
		cmd.Stdin = bytes.NewReader(payload)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return time.Since(start)
	}
	median := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	for _, tc := range []struct {
		name    string
		payload []byte
		most    time.Duration
	}{
		{"small", small, 3 * time.Millisecond},
		{"1 MiB", large, 0},
	} {
		var on, off []time.Duration
		for range 60 {
			on = append(on, run(tc.payload))
			off = append(off, run(tc.payload, "TOOLCAP_WORKER__TOOL_OUTPUT__REDACT=false"))
		}
		mon, moff := median(on), median(off)
		t.Logf("%s payload (%d bytes): median %v with redaction, %v without: %+v added", tc.name, len(tc.payload), mon, moff, mon-moff)
		// Not a benchmark's bound: a loaded machine's noise is a few
		// milliseconds either way; this catches a gross regression.
		if tc.most > 0 && mon-moff > 3*tc.most {
			t.Errorf("%s payload: redaction adds %v to the hook's process, want about %v at most", tc.name, mon-moff, tc.most)
		}
	}
}
