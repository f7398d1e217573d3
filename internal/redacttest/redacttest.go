// Package redacttest holds what the tests and benchmarks of redaction
// share across modules (package redact, module redact/gitleaks, the
// toolcap command): the texts they measure and the walk of the Go tree
// their false positives are counted on.
package redacttest

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/redact"
)

// Secrets returns an AWS access key and an RSA private key block (two
// lines of base64) made as package redact's tests make theirs: a prefix
// and pseudo-random characters of the rule's alphabet, the same on every
// call. The built-in rules and gitleaks' both find them.
func Secrets() (aws, key string) {
	r := rand.New(rand.NewPCG(1, 2))
	token := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	aws = "AKIA" + token("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	key = "-----BEGIN RSA PRIVATE KEY-----\n" + token(alnum+"+/", 64) + "\n" + token(alnum+"+/", 64) + "\n-----END RSA PRIVATE KEY-----"
	return aws, key
}

// BuildLog returns n bytes of text like a CI build's log (go, npm and
// docker steps, test results, digests, URLs, the words "key", "token",
// "auth" and "api" in passing), holding no secret, the same on every
// call.
func BuildLog(n int) string {
	lines := []string{
		"go: downloading github.com/spf13/cobra v1.9.1",
		"go: downloading golang.org/x/sys v0.30.0",
		"ok  \tgithub.com/acme/widget/internal/store\t0.412s\tcoverage: 81.3% of statements",
		"--- PASS: TestTokenRefresh/expired (0.00s)",
		"npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory.",
		"added 1187 packages, and audited 1188 packages in 14s",
		"Step 7/12 : RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates",
		" ---> Using cache",
		" ---> 3f2a9c1d7e4b",
		"#12 writing image sha256:9c4f1e2b7d3a8f6e5c0b1a2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f done",
		"[INFO] Downloading from central: https://repo.maven.apache.org/maven2/org/slf4j/slf4j-api/2.0.9/slf4j-api-2.0.9.pom",
		"warning: unused variable `key` in src/cache.rs:112:9",
		"INFO  auth: refreshing session for user 4411 (provider=github)",
		"DEBUG http: GET /api/v2/items?page=3 200 12.4ms",
		"compiling 214 files with tsc --project tsconfig.build.json",
		"  at Object.<anonymous> (/home/runner/work/app/app/src/server.ts:88:13)",
	}
	var b strings.Builder
	b.Grow(n + 200)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "2025-06-01T12:%02d:%02d.%03dZ %s\n", i/60%60, i%60, i%1000, lines[i%len(lines)])
	}
	return b.String()[:n]
}

// GOROOTFalsePositives counts what d redacts in the Go tree's sources
// ($(go env GOROOT)/src, testdata left out), text that holds no live
// secret, logs the figures per MB by rule, and fails tb when there are
// more than maxPerMB: a rule made looser is noticed. It skips under
// -short, and when go env GOROOT fails.
func GOROOTFalsePositives(tb testing.TB, d redact.Detector, maxPerMB float64) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("reads the Go tree")
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skipf("go env GOROOT: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "src")
	total, files := 0, 0
	byRule := map[string]int{}
	err = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || strings.Contains(path, string(filepath.Separator)+"testdata"+string(filepath.Separator)) {
			return err
		}
		switch filepath.Ext(path) {
		case ".go", ".s", ".txt", ".md", ".json", ".html", ".bash", ".sh", ".pem", ".key":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		total += len(b)
		_, counts := redact.Text(string(b), d)
		for r, n := range counts {
			byRule[r] += n
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	mb := float64(total) / (1 << 20)
	rules := make([]string, 0, len(byRule))
	all := 0
	for r, n := range byRule {
		rules = append(rules, r)
		all += n
	}
	sort.Strings(rules)
	tb.Logf("%d files, %.1f MB: %d redactions, %.2f per MB", files, mb, all, float64(all)/mb)
	for _, r := range rules {
		tb.Logf("  %-32s %5d  %.3f per MB", r, byRule[r], float64(byRule[r])/mb)
	}
	if per := float64(all) / mb; per > maxPerMB {
		tb.Errorf("%.2f redactions per MB of the Go tree, more than %.1f: a rule got looser", per, maxPerMB)
	}
}
