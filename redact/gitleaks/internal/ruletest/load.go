package ruletest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// importPath is this package's import path.
const importPath = "github.com/toolcap/toolcap/redact/gitleaks/internal/ruletest"

// Load returns the samples of gitleaks' rule functions, of the gitleaks
// release the module github.com/toolcap/toolcap/redact/gitleaks requires:
// it copies gitleaks' rules package from the module cache, rewritten to
// record its samples with this package, and runs it, the copy laid over
// the module's directory with go's -overlay so that it builds with the
// module's requirements. flags are go build flags for that run (-race,
// so that a test binary built with it shares its build cache).
func Load(flags ...string) ([]Case, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return nil, err
	}
	run := func(dir string, args ...string) ([]byte, error) {
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return out, nil
	}
	out, err := run("", "list", "-f", "{{.Dir}}", importPath)
	if err != nil {
		return nil, err
	}
	pkgDir := strings.TrimSpace(string(out))
	module := filepath.Dir(filepath.Dir(pkgDir)) // redact/gitleaks
	out, err = run(module, "list", "-m", "-f", "{{.Dir}}", "github.com/zricethezav/gitleaks/v8")
	if err != nil {
		return nil, err
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "cmd", "generate", "config", "rules")
	names, err := filepath.Glob(filepath.Join(src, "*.go"))
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("no rules in %s: %v", src, err)
	}
	tmp, err := os.MkdirTemp("", "ruletest")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	overlay := map[string]string{}
	var funcs []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		text, fs, err := rewriteRules(name)
		if err != nil {
			return nil, err
		}
		funcs = append(funcs, fs...)
		to := filepath.Join(tmp, filepath.Base(name))
		if err := os.WriteFile(to, text, 0o644); err != nil {
			return nil, err
		}
		overlay[filepath.Join(pkgDir, "rules", filepath.Base(name))] = to
	}
	slices.Sort(funcs)
	var main bytes.Buffer
	fmt.Fprintf(&main, "package main\n\nimport (\n\t\"os\"\n\n\t%q\n\t%q\n)\n\nfunc main() {\n\terr := ruletest.Main(os.Stdout, []ruletest.Func{\n",
		importPath, importPath+"/rules")
	for _, f := range funcs {
		fmt.Fprintf(&main, "\t\t{Name: %q, Fn: rules.%s},\n", f, f)
	}
	main.WriteString("\t})\n\tif err != nil {\n\t\tpanic(err)\n\t}\n}\n")
	to := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(to, main.Bytes(), 0o644); err != nil {
		return nil, err
	}
	overlay[filepath.Join(pkgDir, "main", "main.go")] = to
	ov, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		return nil, err
	}
	ovPath := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		return nil, err
	}
	out, err = run(module, slices.Concat([]string{"run"}, flags, []string{"-overlay", ovPath, "./internal/ruletest/main"})...)
	if err != nil {
		return nil, err
	}
	var cases []Case
	if err := json.Unmarshal(out, &cases); err != nil {
		return nil, err
	}
	if len(cases) < len(funcs) {
		return nil, fmt.Errorf("%d cases of %d rule functions", len(cases), len(funcs))
	}
	return cases, nil
}

// rewriteRules returns the source of the file of gitleaks' rules package
// at name with its calls of utils.Validate, utils.ValidateWithPaths and
// secrets.NewSecret made calls of this package's, and the names of its
// rule functions (exported, of no parameters, returning *config.Rule).
func rewriteRules(name string) ([]byte, []string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
	if err != nil {
		return nil, nil, err
	}
	var funcs []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || !unicode.IsUpper(rune(fn.Name.Name[0])) || fn.Type.Params.NumFields() != 0 || fn.Type.Results.NumFields() != 1 {
			continue
		}
		if star, ok := fn.Type.Results.List[0].Type.(*ast.StarExpr); ok && isSelector(star.X, "config", "Rule") {
			funcs = append(funcs, fn.Name.Name)
		}
	}
	rewritten := false
	uses := map[string]int{}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if isSelector(sel, "utils", "Validate") || isSelector(sel, "utils", "ValidateWithPaths") || isSelector(sel, "secrets", "NewSecret") {
			sel.X = ast.NewIdent("ruletest")
			rewritten = true
		}
		if x, ok := sel.X.(*ast.Ident); ok {
			uses[x.Name]++
		}
		return true
	})
	if rewritten {
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.IMPORT {
				continue
			}
			for _, spec := range g.Specs {
				imp := spec.(*ast.ImportSpec)
				base := imp.Path.Value[strings.LastIndex(imp.Path.Value, "/")+1 : len(imp.Path.Value)-1]
				if imp.Name == nil && (base == "utils" || base == "secrets") && uses[base] == 0 {
					imp.Name = ast.NewIdent("_")
				}
			}
			g.Specs = append(g.Specs, &ast.ImportSpec{Path: &ast.BasicLit{Kind: token.STRING, Value: fmt.Sprintf("%q", importPath)}})
			break
		}
	}
	var b bytes.Buffer
	if err := format.Node(&b, fset, f); err != nil {
		return nil, nil, err
	}
	return b.Bytes(), funcs, nil
}

// isSelector reports whether e is pkg.name.
func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == pkg
}
