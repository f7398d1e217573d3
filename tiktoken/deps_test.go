package tiktoken_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCoreDoesNotDependOnTiktoken checks that the core module links no
// vocabulary: no package of it depends on tiktoken-go or on the regexp
// engine tiktoken-go splits text with.
func TestCoreDoesNotDependOnTiktoken(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	cmd := exec.Command(goBin, "list", "-e", "-deps", "-f", "{{.ImportPath}}", "./...")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./... in the core: %v\n%s", err, stderr.String())
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) == 0 || !strings.Contains(string(out), "github.com/toolcap/toolcap/internal/cut") {
		t.Fatalf("go list listed no core package:\n%s", out)
	}
	for _, p := range pkgs {
		if strings.Contains(p, "tiktoken-go") || strings.Contains(p, "regexp2") || strings.HasPrefix(p, "github.com/toolcap/toolcap/tiktoken") {
			t.Errorf("the core depends on %s", p)
		}
	}
}

// TestCoreGoVersion checks that the core module stays on go 1.25: only this
// module needs Go 1.26.
func TestCoreGoVersion(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var version string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "go "); ok {
			version = strings.TrimSpace(v)
			break
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if version != "1.25" && !strings.HasPrefix(version, "1.25.") {
		t.Errorf("the core's go.mod says go %q, want 1.25 or a 1.25.x", version)
	}
}
