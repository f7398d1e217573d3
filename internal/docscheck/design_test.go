package docscheck_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/toolcap/toolcap/"

// backticked matches a name in backticks.
var backticked = regexp.MustCompile("`([^`]+)`")

// TestDesignImports: each row of docs/design.md's package table names, in
// its imports column, the packages of this module the package imports
// (its own internal packages aside), unless it says "all above"; a package
// or an import it names that is not in the tree is an error.
func TestDesignImports(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "| package | holds | imports |\n")
	if !ok {
		t.Fatal("docs/design.md has no package table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	checked := 0
	for _, row := range strings.Split(table, "\n")[1:] {
		cols := strings.Split(strings.Trim(row, "|"), " | ")
		if len(cols) != 3 {
			continue
		}
		pkg := strings.Trim(strings.TrimSpace(cols[0]), "`")
		imports := cols[2]
		if strings.Contains(imports, "all above") || strings.ContainsAny(pkg, " .") {
			continue
		}
		if fi, err := os.Stat(filepath.Join(root, pkg, "go.mod")); err == nil && !fi.IsDir() {
			continue // a module of its own
		}
		if _, err := os.Stat(filepath.Join(root, pkg)); err != nil {
			t.Errorf("docs/design.md names package %s, which is not in the tree", pkg)
			continue
		}
		var want []string
		for _, m := range backticked.FindAllStringSubmatch(imports, -1) {
			if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
				t.Errorf("docs/design.md: %s imports %s, which is not in the tree", pkg, m[1])
				continue
			}
			want = append(want, m[1])
		}
		// A package of tests alone (bench) is known by its tests' imports.
		cmd := exec.Command("go", "list", "-f", `{{if .Imports}}{{join .Imports "\n"}}{{else}}{{join .TestImports "\n"}}
{{join .XTestImports "\n"}}{{end}}`, "./"+pkg)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list ./%s: %v", pkg, err)
		}
		var got []string
		for _, imp := range strings.Fields(string(out)) {
			if p, ok := strings.CutPrefix(imp, module); ok && !strings.HasPrefix(p, pkg+"/internal/") && p != pkg && !slices.Contains(got, p) {
				got = append(got, p)
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("docs/design.md: the imports of %s (-doc +code):\n%s", pkg, diff)
		}
		checked++
	}
	if checked < 8 {
		t.Errorf("checked %d rows of the package table, want at least 8", checked)
	}
}
