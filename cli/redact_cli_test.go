package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCapRedacts: toolcap cap replaces the secrets of its input before it
// cuts and keeps it, so neither its output nor any file of the store
// holds one, and the log names the rules and counts only (issue 37).
func TestCapRedacts(t *testing.T) {
	dir := restCache(t)
	const aws = "AKIA2OGYBAH6STMMNXNN"
	const key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBkZXYgb25seSwgbm90IGEgcmVhbCBrZXksIGp1c3QgYSB0ZXN0AAAAA\n-----END OPENSSH PRIVATE KEY-----"
	in := "AWS_ACCESS_KEY_ID=" + aws + "\n" + restInput(40000) + key + "\n" + restInput(1000)
	out, a := keptCut(t, []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=4096"}, in)
	if strings.Contains(out, aws) || !strings.Contains(out, "[redacted: aws-access-token]") {
		t.Errorf("the output holds the key, or no marker for it:\n%s", out[:200])
	}
	// The whole kept input, as toolcap read --all gives it back.
	back := runWith(t, nil, strings.NewReader(""), "read", "--all", a.Ref)
	if back.code != exitOK {
		t.Fatalf("read --all: exit %d: %s", back.code, back.stderr)
	}
	want := strings.Replace(strings.Replace(in, aws, "[redacted: aws-access-token]", 1), key, "[redacted: private-key]", 1)
	if back.stdout != want {
		t.Errorf("the kept input read back is not the redacted input (%d bytes, want %d)", len(back.stdout), len(want))
	}
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, secret := range []string{aws, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds a secret", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Off for a tool: its input comes through as it was.
	got := runWith(t, []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__REDACT=false"}, strings.NewReader("AWS_ACCESS_KEY_ID="+aws+"\n"), "cap", "--tool", "Bash")
	if got.stdout != "AWS_ACCESS_KEY_ID="+aws+"\n" {
		t.Errorf("redact = false for Bash: %q", got.stdout)
	}
}
