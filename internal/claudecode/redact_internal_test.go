package claudecode

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/redact"
)

// jsonEscaped finds in JSON text as written what the detector finds in
// its strings decoded, and each finding covers whole escapes: a secret
// after an escaped newline, one written with \u escapes, a private key
// whose lines are joined by escaped newlines, past a surrogate pair. In
// pieces of any size through a redact.Writer, the same.
func TestJSONEscapedFinds(t *testing.T) {
	const aws = "AKIA2OGYBAH6STMMNXNN"
	const m = "[redacted: aws-access-token]"
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gt\n", 3) + "-----END RSA PRIVATE KEY-----"
	enc := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct{ name, raw, want string }{
		{"after an escaped newline", `{"log":"start\n` + aws + `\nend"}`, `{"log":"start\n` + m + `\nend"}`},
		{"written with escapes", `{"k":"\u0041KIA2OGYBAH6STMMNXN\u004e"}`, `{"k":"` + m + `"}`},
		{"a private key's lines", `{"pem":` + enc(pem) + `,"n":1}`, `{"pem":"[redacted: private-key]","n":1}`},
		{"past a surrogate pair", `["\ud83d\ude00 ` + aws + `","\ud800 \t` + aws + `"]`, `["\ud83d\ude00 ` + m + `","\ud800 \t` + m + `"]`},
		{"no escape", `{"k":"` + aws + `"}`, `{"k":"` + m + `"}`},
		{"not a secret once decoded", `{"k":"x` + aws + `"}`, `{"k":"x` + aws + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := jsonEscaped{redact.Default()}
			got, _ := redact.Text(tc.raw, d)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("redact.Text() mismatch (-want +got):\n%s", diff)
			}
			if json.Valid([]byte(tc.raw)) && !json.Valid([]byte(got)) {
				t.Errorf("no longer JSON: %q", got)
			}
			for _, size := range []int{1, 3, 7, 64} {
				var b bytes.Buffer
				w := redact.NewWriter(&b, d)
				for i := 0; i < len(tc.raw); i += size {
					_, _ = w.Write([]byte(tc.raw[i:min(i+size, len(tc.raw))]))
				}
				_ = w.Close()
				if diff := cmp.Diff(tc.want, b.String()); diff != "" {
					t.Errorf("redact.Writer in pieces of %d mismatch (-want +got):\n%s", size, diff)
				}
			}
		})
	}
}

// The marker the hook writes for Read's content is redact.Text's.
func TestMarkerIsRedacts(t *testing.T) {
	for _, s := range []string{"AKIA2OGYBAH6STMMNXNN", "ghp_" + strings.Repeat("aB3dE5fG7h", 3) + "K9mN2p"} {
		want, counts := redact.Text(s, redact.Default())
		var rule string
		for r := range counts {
			rule = r
		}
		if got := marker(rule); got != want {
			t.Errorf("marker(%q) = %q, want %q", rule, got, want)
		}
	}
}
