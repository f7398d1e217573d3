package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/toolcap/toolcap/worker"
)

// The session's real tools, over a source tree (the Go distribution's
// src): what a coding agent's Glob, Grep, Read and Bash return.

// globTool lists the files under path (relative to root) whose name
// matches pattern, one relative path a line.
func globTool(root string) worker.Tool {
	return worker.Func("Glob", func(ctx context.Context, args json.RawMessage) (worker.ToolOutput, error) {
		var in struct{ Pattern, Path string }
		if err := json.Unmarshal(args, &in); err != nil {
			return worker.ToolOutput{}, err
		}
		var b strings.Builder
		err := filepath.WalkDir(filepath.Join(root, in.Path), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if ok, _ := filepath.Match(in.Pattern, d.Name()); ok {
				rel, _ := filepath.Rel(root, p)
				b.WriteString(rel + "\n")
			}
			return ctx.Err()
		})
		return text(b.String()), err
	})
}

// grepTool lists the lines of the files under path that match pattern, as
// "file:line:text".
func grepTool(root string) worker.Tool {
	return worker.Func("Grep", func(ctx context.Context, args json.RawMessage) (worker.ToolOutput, error) {
		var in struct{ Pattern, Path string }
		if err := json.Unmarshal(args, &in); err != nil {
			return worker.ToolOutput{}, err
		}
		re, err := regexp.Compile(in.Pattern)
		if err != nil {
			return worker.ToolOutput{}, err
		}
		var b strings.Builder
		err = filepath.WalkDir(filepath.Join(root, in.Path), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
			for n := 1; sc.Scan(); n++ {
				if re.Match(sc.Bytes()) {
					fmt.Fprintf(&b, "%s:%d:%s\n", rel, n, sc.Bytes())
				}
			}
			return ctx.Err()
		})
		return text(b.String()), err
	})
}

// readTool returns a file's text.
func readTool(root string) worker.Tool {
	return worker.Func("Read", func(ctx context.Context, args json.RawMessage) (worker.ToolOutput, error) {
		var in struct{ Path string }
		if err := json.Unmarshal(args, &in); err != nil {
			return worker.ToolOutput{}, err
		}
		data, err := os.ReadFile(filepath.Join(root, in.Path))
		return text(string(data)), err
	})
}

// bashTool runs a shell command in root, its output and errors together.
func bashTool(root string) worker.Tool {
	return worker.Func("Bash", func(ctx context.Context, args json.RawMessage) (worker.ToolOutput, error) {
		var in struct{ Command string }
		if err := json.Unmarshal(args, &in); err != nil {
			return worker.ToolOutput{}, err
		}
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", in.Command)
		cmd.Dir = root
		out, _ := cmd.CombinedOutput() // a failing command's output is its result
		return text(string(out)), ctx.Err()
	})
}

func text(s string) worker.ToolOutput { return worker.ToolOutput{Content: &s} }
