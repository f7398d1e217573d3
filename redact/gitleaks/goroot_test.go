package gitleaks_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/redact"
	"github.com/toolcap/toolcap/redact/gitleaks"
)

// maxPerMB bounds TestGOROOTFalsePositives: about twice what gitleaks'
// v8.30.1 rules redact (0.51 per MB).
const maxPerMB = 1.0

// TestGOROOTFalsePositives counts what gitleaks' rules redact in the Go
// tree's sources ($(go env GOROOT)/src, testdata left out), text that
// holds no live secret: the figures per MB, by rule, are
// docs/redaction.md's, beside the built-in rules' (package redact's test
// of the same name). It fails when they grow past a bound, so that a rule
// made looser (or a new gitleaks release) is noticed.
func TestGOROOTFalsePositives(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the Go tree")
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "src")
	d := gitleaks.New()
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
		t.Fatal(err)
	}
	mb := float64(total) / (1 << 20)
	rules := make([]string, 0, len(byRule))
	all := 0
	for r, n := range byRule {
		rules = append(rules, r)
		all += n
	}
	sort.Strings(rules)
	t.Logf("%d files, %.1f MB: %d redactions, %.2f per MB", files, mb, all, float64(all)/mb)
	for _, r := range rules {
		t.Logf("  %-32s %5d  %.3f per MB", r, byRule[r], float64(byRule[r])/mb)
	}
	if per := float64(all) / mb; per > maxPerMB {
		t.Errorf("%.2f redactions per MB of the Go tree, more than %.1f: a rule got looser", per, maxPerMB)
	}
}
