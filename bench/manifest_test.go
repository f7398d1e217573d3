package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolcap/toolcap/manifest"
)

// The three layers BenchmarkLoad merges above the built-in default: a user
// manifest, a project manifest that overrides one of its tools, and an
// environment that overrides the default and adds a tool.
const (
	userManifest = `
[worker.tool_output]
default_max_bytes = 32768

[worker.tool_output.per_tool]
Read = 65536
Grep = 8192
"mcp.fs.read" = 4096
`
	projectManifest = `
[agent]
model = "some-model"

[worker.tool_output.per_tool]
Read = 24576
"github/search" = 12288
`
)

var benchEnviron = []string{
	"HOME=/home/bench",
	"PATH=/usr/bin:/bin",
	"TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES=20000",
	"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__mcp.fs.write=2048",
}

// writeManifests writes the two files of BenchmarkLoad and returns the
// options that load all three layers, lowest precedence first.
func writeManifests(tb testing.TB) []manifest.Option {
	dir := tb.TempDir()
	user := filepath.Join(dir, "user.toml")
	project := filepath.Join(dir, "toolcap.toml")
	for path, text := range map[string]string{user: userManifest, project: projectManifest} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return []manifest.Option{
		manifest.File(user),
		manifest.File(project),
		manifest.Environ(benchEnviron),
	}
}

var sinkManifest *manifest.WorkerManifest

func BenchmarkLoad(b *testing.B) {
	opts := writeManifests(b)
	b.Run("layers=3/impl=load", func(b *testing.B) {
		b.ReportAllocs()
		var m *manifest.WorkerManifest
		for b.Loop() {
			var err error
			if m, err = manifest.Load(context.Background(), opts...); err != nil {
				b.Fatal(err)
			}
		}
		sinkManifest = m
	})
}

// TestLoadLayers checks that BenchmarkLoad's layers load and merge as
// intended, so the benchmark times a real three-layer merge.
func TestLoadLayers(t *testing.T) {
	m, err := manifest.Load(context.Background(), writeManifests(t)...)
	if err != nil {
		t.Fatal(err)
	}
	l := m.Limits()
	for tool, want := range map[string]int{
		"Read":          24576, // project over user
		"Grep":          8192,  // user, kept through the project layer
		"mcp.fs.read":   4096,  // a dotted name from a file
		"mcp.fs.write":  2048,  // a dotted name from the environment
		"github/search": 12288,
		"Other":         20000, // the environment's default
	} {
		if got := l.For(tool); got != want {
			t.Errorf("For(%q) = %d, want %d", tool, got, want)
		}
	}
}
