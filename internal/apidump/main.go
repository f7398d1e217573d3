// Command apidump writes the exported API of a Go module, one line per
// exported name, sorted, as the Go project's api/go1.*.txt lists the
// standard library's:
//
//	pkg github.com/toolcap/toolcap/chain, func Chain(...Middleware) Middleware
//	pkg github.com/toolcap/toolcap/chain, method (Result) IsError() bool
//	pkg github.com/toolcap/toolcap/chain, type Call struct
//	pkg github.com/toolcap/toolcap/chain, type Call struct, ID string
//
// It reads the module in DIR (default "."): every package outside
// internal/, testdata/ and nested modules, but package main, from its
// non-test files. The last line counts the exported identifiers as issue
// 35 counts them: top-level types, funcs, consts and vars, and the
// exported methods of exported types (struct fields are listed, not
// counted). An alias of a type in an internal package of this repository
// brings that type's exported methods and fields with it, listed and counted
// as the alias's own, since a user reaches them through the alias.
// test/api/check.sh compares the output with api/MODULE.txt.
//
// Usage:
//
//	go run ./internal/apidump [-count] [DIR]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	count := flag.Bool("count", false, "print only the count of exported identifiers")
	flag.Parse()
	dir := "."
	if flag.NArg() > 0 {
		dir = flag.Arg(0)
	}
	lines, n, err := dump(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apidump:", err)
		os.Exit(1)
	}
	if *count {
		fmt.Println(n)
		return
	}
	for _, l := range lines {
		fmt.Println(l)
	}
	fmt.Printf("# %d exported identifiers (types, funcs, consts, vars, methods)\n", n)
}

// dump returns the API lines of the module in dir and the count.
func dump(dir string) ([]string, int, error) {
	modPath, err := modulePath(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, 0, err
	}
	var lines []string
	n := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		base := d.Name()
		if rel != "." {
			if base == "internal" || base == "testdata" || base == "node_modules" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own
			}
		}
		importPath := modPath
		if rel != "." {
			importPath += "/" + filepath.ToSlash(rel)
		}
		l, k, err := dumpPackage(path, importPath, dir, modPath)
		lines = append(lines, l...)
		n += k
		return err
	})
	sort.Strings(lines)
	return lines, n, err
}

// modulePath reads the module line of a go.mod.
func modulePath(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(p), `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}

// parseDir parses the non-test Go files of the package in dir that are in
// a default build, leaving out package main.
func parseDir(fset *token.FileSet, dir string) ([]*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if f.Name.Name == "main" || !buildsByDefault(f) {
			continue
		}
		files = append(files, f)
	}
	return files, nil
}

// dumpPackage returns the API lines of the package in dir, if it is one
// other than main, and its count. modDir and modPath locate the module, to
// find the internal packages that aliases point into.
func dumpPackage(dir, importPath, modDir, modPath string) ([]string, int, error) {
	fset := token.NewFileSet()
	files, err := parseDir(fset, dir)
	if err != nil {
		return nil, 0, err
	}
	prefix := "pkg " + importPath + ", "
	expr := func(e ast.Expr) string {
		var b bytes.Buffer
		_ = printer.Fprint(&b, fset, e)
		return strings.Join(strings.Fields(b.String()), " ")
	}
	var lines []string
	n := 0
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				sig := strings.TrimPrefix(expr(d.Type), "func")
				if d.Recv == nil {
					lines = append(lines, prefix+"func "+d.Name.Name+sig)
					n++
					continue
				}
				recv := expr(d.Recv.List[0].Type)
				if !ast.IsExported(strings.TrimLeft(strings.SplitN(recv, "[", 2)[0], "*")) {
					continue
				}
				lines = append(lines, prefix+"method ("+recv+") "+d.Name.Name+sig)
				n++
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						n++
						lines = append(lines, typeLines(prefix, s, expr)...)
						if s.Assign.IsValid() {
							l, k, err := aliasedLines(prefix, s, f, modDir, modPath)
							if err != nil {
								return nil, 0, err
							}
							lines = append(lines, l...)
							n += k
						}
					case *ast.ValueSpec:
						for _, name := range s.Names {
							if !name.IsExported() {
								continue
							}
							n++
							line := prefix + d.Tok.String() + " " + name.Name
							if s.Type != nil {
								line += " " + expr(s.Type)
							}
							lines = append(lines, line)
						}
					}
				}
			}
		}
	}
	return lines, n, nil
}

// typeLines returns the lines of a type: its kind, and for a struct its
// exported fields, for an interface its methods.
func typeLines(prefix string, s *ast.TypeSpec, expr func(ast.Expr) string) []string {
	head := prefix + "type " + s.Name.Name
	if s.Assign.IsValid() {
		return []string{head + " = " + expr(s.Type)}
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		lines := []string{head + " struct"}
		for _, f := range t.Fields.List {
			for _, name := range f.Names {
				if name.IsExported() {
					lines = append(lines, head+" struct, "+name.Name+" "+expr(f.Type))
				}
			}
			if len(f.Names) == 0 {
				lines = append(lines, head+" struct, embedded "+expr(f.Type))
			}
		}
		return lines
	case *ast.InterfaceType:
		lines := []string{head + " interface"}
		for _, m := range t.Methods.List {
			for _, name := range m.Names {
				lines = append(lines, head+" interface, "+name.Name+strings.TrimPrefix(expr(m.Type), "func"))
			}
			if len(m.Names) == 0 {
				lines = append(lines, head+" interface, embedded "+expr(m.Type))
			}
		}
		return lines
	}
	return []string{head + " " + expr(s.Type)}
}

// buildsByDefault reports whether f is in a default build: a file with a
// //go:build line naming a tag (toolcap_nomcp) is left out, and the
// default build's own files, constrained by !tag, kept.
func buildsByDefault(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if expr, ok := strings.CutPrefix(c.Text, "//go:build "); ok {
				return strings.HasPrefix(strings.TrimSpace(expr), "!")
			}
		}
	}
	return true
}

// aliasedLines returns the lines and count that the alias s, in file f,
// brings from an internal package of this repository: the exported methods
// of the aliased type and its exported fields, under the alias's name.
func aliasedLines(prefix string, s *ast.TypeSpec, f *ast.File, modDir, modPath string) ([]string, int, error) {
	sel, ok := s.Type.(*ast.SelectorExpr)
	if !ok {
		return nil, 0, nil
	}
	pkgName, ok := sel.X.(*ast.Ident)
	if !ok {
		return nil, 0, nil
	}
	var path string
	for _, imp := range f.Imports {
		p := strings.Trim(imp.Path.Value, `"`)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == pkgName.Name {
			path = p
		}
	}
	if !strings.Contains(path, "/internal/") {
		return nil, 0, nil
	}
	dir, ok := packageDir(path, modDir, modPath)
	if !ok {
		return nil, 0, nil
	}
	fset := token.NewFileSet()
	files, err := parseDir(fset, dir)
	if err != nil {
		return nil, 0, err
	}
	expr := func(e ast.Expr) string {
		var b bytes.Buffer
		_ = printer.Fprint(&b, fset, e)
		return strings.Join(strings.Fields(b.String()), " ")
	}
	target := sel.Sel.Name
	var lines []string
	n := 0
	for _, af := range files {
		for _, decl := range af.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || !d.Name.IsExported() {
					continue
				}
				recv := expr(d.Recv.List[0].Type)
				base := strings.TrimLeft(strings.SplitN(recv, "[", 2)[0], "*")
				if base != target {
					continue
				}
				recv = strings.Replace(recv, target, s.Name.Name, 1)
				lines = append(lines, prefix+"method ("+recv+") "+d.Name.Name+strings.TrimPrefix(expr(d.Type), "func"))
				n++
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok || ts.Name.Name != target || ts.Assign.IsValid() {
						continue
					}
					renamed := *ts
					renamed.Name = ast.NewIdent(s.Name.Name)
					lines = append(lines, typeLines(prefix, &renamed, expr)[1:]...)
				}
			}
		}
	}
	return lines, n, nil
}

// packageDir returns the directory of the package at importPath: inside the
// module at modDir, or in the repository's root module found above it.
func packageDir(importPath, modDir, modPath string) (string, bool) {
	dir, path := modDir, modPath
	for {
		if rel, ok := strings.CutPrefix(importPath, path+"/"); ok {
			return filepath.Join(dir, filepath.FromSlash(rel)), true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
		p, err := modulePath(filepath.Join(dir, "go.mod"))
		if err != nil {
			path = "\x00" // no module here; keep climbing
			continue
		}
		path = p
	}
}
