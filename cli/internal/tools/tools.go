// Package tools holds the sample tools the toolcap demo runs: Glob, Read and
// Grep over a file tree, written the naive way agent tools often are. They
// return everything they are asked for, however large: keeping that out of
// the history is the byte cap's job, not theirs.
//
// They are for the CLI's demo only, not part of the library.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"github.com/toolcap/toolcap/worker"
)

// All returns the Glob, Read and Grep tools over fsys.
func All(fsys fs.FS) []worker.Tool {
	return []worker.Tool{Glob(fsys), Read(fsys), Grep(fsys)}
}

// GlobArgs are the arguments of the Glob tool.
type GlobArgs struct {
	// Pattern selects files. A pattern without a slash matches file names
	// at any depth, so "*" lists every file of the tree (the call of the
	// incident); with slashes it matches the whole path, and "**" matches
	// any number of directories: "**/*.go", "cmd/**".
	Pattern string `json:"pattern"`
	// Path is the directory to search, relative to the root; "" or "." for
	// the root.
	Path string `json:"path,omitempty"`
}

// Glob returns the Glob tool: the paths of the matching files, one a line,
// relative to the root, in lexical order. It has no count limit.
func Glob(fsys fs.FS) worker.Tool {
	return worker.Func("Glob", func(ctx context.Context, raw json.RawMessage) (worker.ToolOutput, error) {
		var a GlobArgs
		if err := decode(raw, &a); err != nil {
			return worker.ToolOutput{}, err
		}
		if a.Pattern == "" {
			return worker.ToolOutput{}, errors.New("Glob: pattern is required")
		}
		if _, err := path.Match(strings.ReplaceAll(a.Pattern, "**", "*"), ""); err != nil {
			return worker.ToolOutput{}, fmt.Errorf("Glob: pattern %q: %w", a.Pattern, err)
		}
		dir, err := cleanDir(a.Path)
		if err != nil {
			return worker.ToolOutput{}, fmt.Errorf("Glob: %w", err)
		}
		var b strings.Builder
		n := 0
		err = WalkFiles(ctx, fsys, dir, func(p string, _ fs.DirEntry) error {
			if Match(a.Pattern, rel(dir, p)) {
				b.WriteString(p)
				b.WriteByte('\n')
				n++
			}
			return nil
		})
		if err != nil {
			return worker.ToolOutput{}, fmt.Errorf("Glob: %w", err)
		}
		content := b.String()
		return worker.ToolOutput{
			Summary: fmt.Sprintf("%s match %q", plural(n, "file"), a.Pattern),
			Content: &content,
		}, nil
	})
}

// ReadArgs are the arguments of the Read tool.
type ReadArgs struct {
	// Path is the file to read, relative to the root.
	Path string `json:"path"`
}

// Read returns the Read tool: the whole content of one file.
func Read(fsys fs.FS) worker.Tool {
	return worker.Func("Read", func(ctx context.Context, raw json.RawMessage) (worker.ToolOutput, error) {
		var a ReadArgs
		if err := decode(raw, &a); err != nil {
			return worker.ToolOutput{}, err
		}
		p := path.Clean(strings.TrimPrefix(a.Path, "./"))
		if a.Path == "" || !fs.ValidPath(p) {
			return worker.ToolOutput{}, fmt.Errorf("Read: invalid path %q: want a file path relative to the root", a.Path)
		}
		if err := ctx.Err(); err != nil {
			return worker.ToolOutput{}, err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return worker.ToolOutput{}, fmt.Errorf("Read: %w", err)
		}
		content := string(data)
		return worker.ToolOutput{
			Summary: fmt.Sprintf("read %s (%d bytes)", p, len(data)),
			Content: &content,
		}, nil
	})
}

// GrepArgs are the arguments of the Grep tool.
type GrepArgs struct {
	// Pattern is a regular expression (Go syntax), matched line by line.
	Pattern string `json:"pattern"`
	// Path is the directory to search, relative to the root; "" or "." for
	// the root.
	Path string `json:"path,omitempty"`
	// Glob, when set, keeps only the files it matches, as Glob's pattern.
	Glob string `json:"glob,omitempty"`
}

// binaryProbe is how much of a file Grep looks at for a NUL byte, which
// marks it as binary and skips it (git's rule).
const binaryProbe = 8000

// Grep returns the Grep tool: every matching line of every text file, as
// "path:line:text", in lexical order of paths.
func Grep(fsys fs.FS) worker.Tool {
	return worker.Func("Grep", func(ctx context.Context, raw json.RawMessage) (worker.ToolOutput, error) {
		var a GrepArgs
		if err := decode(raw, &a); err != nil {
			return worker.ToolOutput{}, err
		}
		re, err := regexp.Compile(a.Pattern)
		if err != nil || a.Pattern == "" {
			if err == nil {
				err = errors.New("pattern is required")
			}
			return worker.ToolOutput{}, fmt.Errorf("Grep: %w", err)
		}
		dir, err := cleanDir(a.Path)
		if err != nil {
			return worker.ToolOutput{}, fmt.Errorf("Grep: %w", err)
		}
		var b strings.Builder
		matches, files := 0, 0
		err = WalkFiles(ctx, fsys, dir, func(p string, _ fs.DirEntry) error {
			if a.Glob != "" && !Match(a.Glob, rel(dir, p)) {
				return nil
			}
			data, err := readText(fsys, p)
			if err != nil || data == nil {
				return nil // unreadable or binary: skipped, as grep -I does
			}
			n := grepLines(&b, p, data, re)
			matches += n
			if n > 0 {
				files++
			}
			return nil
		})
		if err != nil {
			return worker.ToolOutput{}, fmt.Errorf("Grep: %w", err)
		}
		content := b.String()
		return worker.ToolOutput{
			Summary: fmt.Sprintf("%s of %q in %s", plural(matches, "match"), a.Pattern, plural(files, "file")),
			Content: &content,
		}, nil
	})
}

// readText returns the content of the file at p, or nil when it looks
// binary. It reads only the first binaryProbe bytes of a binary file.
func readText(fsys fs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, binaryProbe)
	n, err := io.ReadFull(f, head)
	head = head[:n]
	if bytes.IndexByte(head, 0) >= 0 {
		return nil, nil
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return head, nil
	}
	if err != nil {
		return nil, err
	}
	rest, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return append(head, rest...), nil
}

func grepLines(b *strings.Builder, p string, data []byte, re *regexp.Regexp) int {
	n := 0
	for line := 1; len(data) > 0; line++ {
		text := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			text, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if re.Match(text) {
			fmt.Fprintf(b, "%s:%d:%s\n", p, line, text)
			n++
		}
	}
	return n
}

// Match reports whether name, a slash-separated path relative to the
// searched directory, matches pattern (see [GlobArgs.Pattern]). A malformed
// pattern matches nothing.
func Match(pattern, name string) bool {
	if !strings.Contains(pattern, "/") && pattern != "**" {
		ok, _ := path.Match(pattern, path.Base(name))
		return ok
	}
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(name); i++ {
				if matchSegments(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// WalkFiles calls fn for each regular file under dir, in lexical order,
// skipping directories it cannot read and version-control metadata (.git,
// .hg, .svn), which no agent tool lists. It stops when ctx ends.
func WalkFiles(ctx context.Context, fsys fs.FS, dir string, fn func(p string, d fs.DirEntry) error) error {
	return fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // an unreadable directory below the root: skip it
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() && p != dir && vcsDirs[d.Name()] {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return fn(p, d)
	})
}

// vcsDirs are the directories WalkFiles does not enter.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true}

// rel returns p relative to dir, both as WalkFiles gives them.
func rel(dir, p string) string {
	if dir == "." {
		return p
	}
	return strings.TrimPrefix(p, dir+"/")
}

func cleanDir(p string) (string, error) {
	if p == "" {
		return ".", nil
	}
	c := path.Clean(strings.TrimPrefix(p, "./"))
	if !fs.ValidPath(c) {
		return "", fmt.Errorf("invalid path %q: want a directory relative to the root", p)
	}
	return c, nil
}

func decode(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return errors.New("missing arguments")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad arguments: %w", err)
	}
	return nil
}

// plural returns "1 file", "2 files", "2 matches".
func plural(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "ch"):
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
