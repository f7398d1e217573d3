package gitleaks_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/redacttest"
	"github.com/toolcap/toolcap/redact"
	"github.com/toolcap/toolcap/redact/gitleaks"
)

// Samples, each from gitleaks' rule tests or of the shape they test (and
// no live credential).
const (
	awsKey = "AKIALALEMEL33243OLIB" // gitleaks:allow
	jwt    = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	ghp    = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	// jwtBase64 is a JWT, base64-encoded.
	jwtBase64 = "ZXlKcGMzTWlPaUpvZEhSd09pOHZiRzlqWVd4b2IzTjBPamd3T0RjdmNtVmhiRzF6TDJkeVlXWmhibUVpZlEuZXlKcGMzTWlPaUpxYjJVaUxBMEtJQ0psZUhBaU9qRXpNREE0TVRrek9EQXNEUW9nSW1oMGRIQTZMeTlsZUdGdGNHeGxMbU52YlM5cGMxOXliMjkwSWpwMGNuVmxmUS5kQmpmdEplWjRDVlAtbUI5MksyN3VoYlVKVTFwMXJfd1cxZ0ZXRk9Falhr"
)

// privateKey returns a PEM block of the shape of an RSA private key, of
// lines lines of base64 (pseudo-random bytes, the same on every call).
func privateKey(lines int) string {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
	for range lines {
		raw := make([]byte, 48)
		for i := range raw {
			raw[i] = byte(r.Uint32())
		}
		b.WriteString(base64.StdEncoding.EncodeToString(raw))
		b.WriteString("\n")
	}
	b.WriteString("-----END RSA PRIVATE KEY-----")
	return b.String()
}

func TestFind(t *testing.T) {
	d := mustDetector(t)
	key := privateKey(25)
	tests := []struct {
		name string
		text string
		want []string // what each finding covers, by rule: "rule: text"
	}{
		{"none", "", nil},
		{"no secret", "go build ./...\nok  \tgithub.com/acme/widget\t0.41s\n", nil},
		{"first line", "aws_key = " + awsKey + "\n", []string{"aws-access-token: " + awsKey}},
		{"at the start", awsKey, []string{"aws-access-token: " + awsKey}},
		{"third line, CRLF", "a\r\nb\r\n  token: " + ghp + " x", []string{"github-pat: " + ghp}},
		{"after UTF-8", "日本語 " + ghp, []string{"github-pat: " + ghp}},
		{"the same twice", "key1 " + awsKey + "\nkey2 " + awsKey + "\n", []string{"aws-access-token: " + awsKey, "aws-access-token: " + awsKey}},
		{
			// The secret group, not its first copy in the match (the
			// name it is assigned to).
			"secret group",
			`Xq7vB2mN9kLp4Rt8wZ_token = "Xq7vB2mN9kLp4Rt8wZ"`,
			[]string{"generic-api-key: Xq7vB2mN9kLp4Rt8wZ"},
		},
		{
			// The rule's match starts at the newline before the secret.
			"match trimmed of a newline",
			"client id\nbP88Q~rcBcYjzzOhg1Hnn76Wm3jGgakZiZ.8vMgR\n",
			[]string{"azure-ad-client-secret: bP88Q~rcBcYjzzOhg1Hnn76Wm3jGgakZiZ.8vMgR"},
		},
		{"private key", "$ cat id_rsa\n\n" + key + "\n$ ", []string{"private-key: " + key}},
		{"JWT", "Authorization: Bearer " + jwt + "\n", []string{"jwt: " + jwt}},
		{
			// Named groups: the whole match, not the first group.
			"base64 JWT",
			"token: " + jwtBase64 + "\n",
			[]string{"jwt-base64: " + jwtBase64},
		},
		{"gitleaks:allow ignored", "password=hunter2xyzQ9 # gitleaks:allow", []string{"generic-api-key: hunter2xyzQ9"}},
		{"placeholder", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range d.Find(tt.text) {
				got = append(got, f.Rule+": "+tt.text[f.Start:f.End])
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Find(%q) (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestFindOffsets(t *testing.T) {
	d := mustDetector(t)
	text := "a\r\nb\r\n  token: " + ghp + "\n" + "aws " + awsKey
	want := []redact.Finding{
		{Start: 15, End: 15 + len(ghp), Rule: "github-pat"},
		{Start: 60, End: 60 + len(awsKey), Rule: "aws-access-token"},
	}
	if diff := cmp.Diff(want, d.Find(text)); diff != "" {
		t.Errorf("Find(%q) (-want +got):\n%s", text, diff)
	}
}

func TestMaxLen(t *testing.T) {
	d := mustDetector(t)
	if got := d.MaxLen(); got != gitleaks.MaxLen {
		t.Errorf("MaxLen() = %d, want %d", got, gitleaks.MaxLen)
	}
	// The private key of an 8192-bit RSA key, about 6.5 KB in PEM.
	key := privateKey(6500 / 65)
	if got := d.Find(key); len(got) != 1 || got[0].End-got[0].Start != len(key) || len(key) > d.MaxLen() {
		t.Errorf("Find(%d-byte key) = %v, want all of it, under MaxLen %d", len(key), got, d.MaxLen())
	}
}

func TestRules(t *testing.T) {
	d := mustDetector(t)
	rules := d.Rules()
	if len(rules) < 200 {
		t.Errorf("Rules() has %d rules, want gitleaks' default set (222 in v8.30.1)", len(rules))
	}
	for _, id := range []string{"private-key", "aws-access-token", "jwt", "generic-api-key"} {
		if !strings.Contains(" "+strings.Join(rules, " ")+" ", " "+id+" ") {
			t.Errorf("Rules() has no %q", id)
		}
	}
}

// TestConcurrent finds in texts from several goroutines at once, which
// the race detector checks.
func TestConcurrent(t *testing.T) {
	d := mustDetector(t)
	texts := []string{
		"aws_key = " + awsKey + "\n",
		"x\n" + privateKey(20) + "\ny",
		"Authorization: Bearer " + jwt,
		redacttest.BuildLog(8 << 10),
	}
	want := make([][]redact.Finding, len(texts))
	for i, text := range texts {
		want[i] = d.Find(text)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 3 * len(texts) {
				k := (g + i) % len(texts)
				if diff := cmp.Diff(want[k], d.Find(texts[k])); diff != "" {
					t.Errorf("Find(texts[%d]) concurrently (-want +got):\n%s", k, diff)
				}
			}
		})
	}
	wg.Wait()
}

func TestNewConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			d := gitleaks.New()
			if got, _ := redact.Text(awsKey, d); got != "[redacted: aws-access-token]" {
				t.Errorf("redact.Text(%q) = %q", awsKey, got)
			}
		})
	}
	wg.Wait()
}

// quiet returns n bytes of log lines in which no rule's keyword is, so
// that gitleaks runs few rules on them.
func quiet(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "step %06d: compiled %d files in 0.%02d0s\n", i, i%97, i%100)
	}
	return b.String()[:n]
}

// writeSplit returns what a redact.Writer writes of text written in two
// parts, split at i.
func writeSplit(t *testing.T, d redact.Detector, text string, i int) string {
	t.Helper()
	var buf bytes.Buffer
	w := redact.NewWriter(&buf, d)
	for _, p := range []string{text[:i], text[i:]} {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestWriter streams samples through a redact.Writer, split in two at
// every offset: it writes what redact.Text returns. A short text the
// Writer scans at Close; in a long one, it scans a pass when the first
// part is written, and holds back the secret or cuts inside it.
func TestWriter(t *testing.T) {
	d := mustDetector(t)
	samples := []struct{ name, secret string }{
		// A short key: the private key rule brings in generic-api-key
		// (its keyword "key"), which scans a text at about 1 MB/s.
		{"private key", privateKey(3)},
		{"AWS", "aws " + awsKey},
		{"JWT", "Bearer " + jwt},
	}
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			text := "$ run\n" + s.secret + "\ndone\n"
			want, _ := redact.Text(text, d)
			if want == text {
				t.Fatalf("redact.Text(%q) redacts nothing", text)
			}
			for i := range len(text) + 1 {
				if got := writeSplit(t, d, text, i); got != want {
					t.Fatalf("split at %d: (-want +got):\n%s", i, cmp.Diff(want, got))
				}
			}
		})
		t.Run(s.name+", long", func(t *testing.T) {
			if testing.Short() {
				t.Skip("long text")
			}
			// The Writer holds back MaxLen bytes and scans when it has
			// 64 KiB more: the first part, when longer than head,
			// makes a pass that cuts MaxLen before its end.
			head := quiet(96 << 10)
			text := head + s.secret + "\n" + quiet(24<<10)
			want, _ := redact.Text(text, d)
			start, end := len(head), len(head)+len(s.secret)
			var splits []int
			for _, at := range []int{start, end, start + gitleaks.MaxLen, end + gitleaks.MaxLen} {
				for i := at - 1; i <= at+1; i++ {
					splits = append(splits, i)
				}
			}
			for i := start; i < end+gitleaks.MaxLen; i += 4 << 10 {
				splits = append(splits, i)
			}
			for _, i := range splits {
				if got := writeSplit(t, d, text, i); got != want {
					t.Fatalf("split at %d (secret at %d:%d): (-want +got):\n%s", i, start, end, cmp.Diff(want, got))
				}
			}
		})
	}
}
