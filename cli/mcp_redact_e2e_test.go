//go:build !toolcap_nomcp

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/redacttest"
)

// TestMCPRedactsEndToEnd reads a file holding an AWS access key and an
// RSA private key with the real filesystem server from npm, through the
// toolcap binary's mcp command, with the Go SDK client the other
// end-to-end tests use: what reaches the model (the text, and
// structuredContent, which a client may show instead) has each secret's
// marker and no secret, and _meta counts what was redacted.
func TestMCPRedactsEndToEnd(t *testing.T) {
	_, fsServer := mcpNodeModules(t)
	bin := buildBinary(t)
	aws, key := redacttest.Secrets()
	lines := strings.Split(key, "\n")
	line1, line2 := lines[1], lines[2]
	root := t.TempDir()
	file := filepath.Join(root, "creds.txt")
	if err := os.WriteFile(file, []byte("[default]\naws_access_key_id = "+aws+"\n\n"+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := connectCmd(t, bin, "mcp", "--", "node", fsServer, root)
	res := callTool(t, cs, "read_text_file", map[string]any{"path": file})
	text, _ := textBytes(res)
	if res.IsError {
		t.Fatalf("read_text_file: an error: %s", text)
	}
	want := "[default]\naws_access_key_id = [redacted: aws-access-token]\n\n[redacted: private-key]\n"
	if text != want {
		t.Errorf("the model's text:\n%q\nwant\n%q", text, want)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{aws, line1, line2} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the result holds a secret: %s", raw)
		}
	}
	if sc, ok := res.StructuredContent.(map[string]any); ok {
		if content, _ := sc["content"].(string); content != want {
			t.Errorf("structuredContent's content %q, want %q", content, want)
		}
	}
	// Each secret twice: in the text, and in structuredContent's copy.
	meta, _ := json.Marshal(res.Meta["toolcap/redaction"])
	if got := string(meta); got != `{"count":4,"rules":{"aws-access-token":2,"private-key":2}}` {
		t.Errorf("_meta toolcap/redaction %s", got)
	}
}
