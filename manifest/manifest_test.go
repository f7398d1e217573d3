package manifest_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/pelletier/go-toml/v2"

	"github.com/toolcap/toolcap/internal/logtest"
	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
)

// writeFile writes a manifest into a temporary directory and returns its path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestForDefaults(t *testing.T) {
	tests := []struct {
		name   string
		limits *manifest.ToolOutputLimits
		tool   string
		want   int
	}{
		{"nil limits", nil, "Glob", 16384},
		{"zero value", &manifest.ToolOutputLimits{}, "Glob", 16384},
		{"only per_tool, other tool", &manifest.ToolOutputLimits{PerTool: short(map[string]int{"Read": 4096})}, "Glob", 16384},
		{"only per_tool, that tool", &manifest.ToolOutputLimits{PerTool: short(map[string]int{"Read": 4096})}, "Read", 4096},
		{"default set", &manifest.ToolOutputLimits{DefaultMaxBytes: 8192}, "Glob", 8192},
		{"per_tool beats default", &manifest.ToolOutputLimits{DefaultMaxBytes: 8192, PerTool: short(map[string]int{"Read": 32768})}, "Read", 32768},
		{"names are exact", &manifest.ToolOutputLimits{PerTool: short(map[string]int{"Read": 4096})}, "read", 16384},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.limits.For(tt.tool); got != tt.want {
				t.Errorf("For(%q) = %d, want %d", tt.tool, got, tt.want)
			}
		})
	}
	var m *manifest.WorkerManifest
	if got := m.Limits().For("Glob"); got != manifest.DefaultMaxBytes {
		t.Errorf("nil manifest: For = %d, want %d", got, manifest.DefaultMaxBytes)
	}
}

func TestLoad(t *testing.T) {
	user := `
[worker.tool_output]
default_max_bytes = 20000
[worker.tool_output.per_tool]
Grep = 8192
Read = 32768
`
	project := `
[worker.tool_output.per_tool]
Read = 4096
"mcp.fs.read_file" = 2048
"github/search" = 1024
"my-tool" = 512
`
	tests := []struct {
		name string
		opts func(t *testing.T) []manifest.Option
		want manifest.ToolOutputLimits
	}{
		{
			name: "no layers: the built-in default",
			opts: func(*testing.T) []manifest.Option { return nil },
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 16384},
		},
		{
			name: "the ticket's manifest",
			opts: func(*testing.T) []manifest.Option { return []manifest.Option{manifest.File("testdata/ticket.toml")} },
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 16384, PerTool: short(map[string]int{"Read": 32768, "Grep": 8192})},
		},
		{
			name: "section omitted",
			opts: func(t *testing.T) []manifest.Option {
				return []manifest.Option{manifest.File(writeFile(t, "m.toml", "[worker]\nname = \"x\"\n[agent]\nmodel = \"y\"\n"))}
			},
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 16384},
		},
		{
			name: "only per_tool",
			opts: func(t *testing.T) []manifest.Option {
				return []manifest.Option{manifest.File(writeFile(t, "m.toml", "[worker.tool_output.per_tool]\nRead = 4096\n"))}
			},
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 16384, PerTool: short(map[string]int{"Read": 4096})},
		},
		{
			name: "project over user, key by key; names with dots, slashes, dashes",
			opts: func(t *testing.T) []manifest.Option {
				return []manifest.Option{
					manifest.File(writeFile(t, "user.toml", user)),
					manifest.File(writeFile(t, "project.toml", project)),
				}
			},
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 20000, PerTool: short(map[string]int{
				"Grep": 8192, "Read": 4096, "mcp.fs.read_file": 2048, "github/search": 1024, "my-tool": 512,
			})},
		},
		{
			name: "environment over files, tool names as registered",
			opts: func(t *testing.T) []manifest.Option {
				return []manifest.Option{
					manifest.File(writeFile(t, "user.toml", user)),
					manifest.Environ([]string{
						"TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES=8192",
						"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=2000",
						"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__mcp.fs.read_file=3000",
						"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__mcp__github__search=4000",
						"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__a/b-c=5000",
						"HOME=/root",
					}),
				}
			},
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 8192, PerTool: short(map[string]int{
				"Grep": 8192, "Read": 2000, "mcp.fs.read_file": 3000, "mcp__github__search": 4000, "a/b-c": 5000,
			})},
		},
		{
			name: "overrides over the environment",
			opts: func(*testing.T) []manifest.Option {
				return []manifest.Option{
					manifest.Environ([]string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=2000"}),
					manifest.Overrides("flags", manifest.ToolOutputLimits{DefaultMaxBytes: 1000, PerTool: short(map[string]int{"Read": 3000, "x.y/z": 4000})}),
				}
			},
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 1000, PerTool: short(map[string]int{"Read": 3000, "x.y/z": 4000})},
		},
		{
			name: "zero default in overrides means not set",
			opts: func(*testing.T) []manifest.Option {
				return []manifest.Option{
					manifest.Bytes("b.toml", []byte("[worker.tool_output]\ndefault_max_bytes = 9000\n")),
					manifest.Overrides("flags", manifest.ToolOutputLimits{PerTool: short(map[string]int{"Read": 3000})}),
				}
			},
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 9000, PerTool: short(map[string]int{"Read": 3000})},
		},
		{
			name: "optional file absent",
			opts: func(t *testing.T) []manifest.Option {
				return []manifest.Option{manifest.OptionalFile(filepath.Join(t.TempDir(), "absent.toml"))}
			},
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 16384},
		},
		{
			name: "optional file present",
			opts: func(t *testing.T) []manifest.Option {
				return []manifest.Option{manifest.OptionalFile(writeFile(t, "user.toml", "[worker.tool_output]\ndefault_max_bytes = 4096\n"))}
			},
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 4096},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := manifest.Load(context.Background(), tt.opts(t)...)
			if err != nil {
				t.Fatalf("Load() error: %v", err)
			}
			if diff := cmp.Diff(&tt.want, m.ToolOutput, cmpEmpty); diff != "" {
				t.Errorf("Load() mismatch (-want +got):\n%s", diff)
			}
			if err := m.Validate(); err != nil {
				t.Errorf("a loaded manifest does not validate: %v", err)
			}
		})
	}
}

// cmpEmpty treats nil and empty PerTool maps alike.
var cmpEmpty = cmp.Transformer("perTool", func(m map[string]manifest.ToolEntry) map[string]manifest.ToolEntry {
	if len(m) == 0 {
		return nil
	}
	return m
})

// short returns per_tool entries in the short form, Read = 32768: a byte
// limit each.
func short(limits map[string]int) map[string]manifest.ToolEntry {
	per := make(map[string]manifest.ToolEntry, len(limits))
	for tool, n := range limits {
		per[tool] = manifest.ToolEntry{MaxBytes: n}
	}
	return per
}

func TestLoadErrors(t *testing.T) {
	const section = "[worker.tool_output]\n"
	const perTool = "[worker.tool_output.per_tool]\n"
	file := func(text string) func(t *testing.T) ([]manifest.Option, string) {
		return func(t *testing.T) ([]manifest.Option, string) {
			p := writeFile(t, "bad.toml", text)
			return []manifest.Option{manifest.File(p)}, `file "` + p + `"`
		}
	}
	env := func(kv string) func(t *testing.T) ([]manifest.Option, string) {
		return func(*testing.T) ([]manifest.Option, string) {
			name, _, _ := strings.Cut(kv, "=")
			return []manifest.Option{manifest.Environ([]string{kv})}, "env " + name
		}
	}
	const def = "worker.tool_output.default_max_bytes"
	tests := []struct {
		name   string
		layers func(t *testing.T) ([]manifest.Option, string)
		key    string
		value  string
		reason string
	}{
		{"string", file(section + `default_max_bytes = "8192"`), def, `"8192"`, "a string, not an integer"},
		{"float", file(section + `default_max_bytes = 8192.5`), def, "8192.5", "a float, not an integer"},
		{"bool", file(section + `default_max_bytes = true`), def, "true", "a boolean, not an integer"},
		{"array", file(section + `default_max_bytes = [1]`), def, "(an array)", "not an integer"},
		{"zero", file(section + `default_max_bytes = 0`), def, "0", "0 is not a limit"},
		{"negative", file(section + `default_max_bytes = -1`), def, "-1", "must be positive"},
		{"below the minimum", file(section + `default_max_bytes = 127`), def, "127", "below the minimum of 128"},
		{"absurdly large", file(section + `default_max_bytes = 1_000_000_000_000`), def, "1000000000000", "above the maximum"},
		{"per_tool value", file(perTool + `Read = "big"`), "worker.tool_output.per_tool.Read", `"big"`, "a string, not an integer"},
		{"per_tool dotted name", file(perTool + `"mcp.fs.read" = 0`), `worker.tool_output.per_tool."mcp.fs.read"`, "0", "0 is not a limit"},
		{"per_tool not a table", file(section + `per_tool = 5`), "worker.tool_output.per_tool", "5", "must be a table"},
		{"tool_output not a table", file("[worker]\ntool_output = 5\n"), "worker.tool_output", "5", "must be a table"},
		{"worker not a table", file("worker = 5\n"), "worker", "5", "must be a table"},
		{"env not an integer", env("TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES=16k"), def, `"16k"`, "not an integer"},
		{"env empty", env("TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES="), def, `""`, "not an integer"},
		{"env negative", env("TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=-5"), "worker.tool_output.per_tool.Read", `"-5"`, "must be positive"},
		{"env overflow", env("TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=99999999999999999999"), "worker.tool_output.per_tool.Read", `"99999999999999999999"`, "above the maximum"},
		{"overrides below minimum", func(*testing.T) ([]manifest.Option, string) {
			return []manifest.Option{manifest.Overrides("flag --max-bytes", manifest.ToolOutputLimits{DefaultMaxBytes: 5})}, "flag --max-bytes"
		}, def, "5", "below the minimum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, source := tt.layers(t)
			m, err := manifest.Load(context.Background(), opts...)
			if m != nil {
				t.Errorf("Load() returned a manifest with an error: %+v", m.ToolOutput)
			}
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("Load() error = %v, want a *manifest.Error", err)
			}
			got := [3]string{me.Source, me.Key, me.Value}
			if diff := cmp.Diff([3]string{source, tt.key, tt.value}, got); diff != "" {
				t.Errorf("error source, key, value mismatch (-want +got):\n%s", diff)
			}
			if !strings.Contains(me.Err.Error(), tt.reason) {
				t.Errorf("error %q does not say %q", err, tt.reason)
			}
			for _, part := range []string{source, tt.key, tt.value} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error text %q does not name %q", err, part)
				}
			}
		})
	}
}

func TestLoadFileErrors(t *testing.T) {
	broken := writeFile(t, "broken.toml", "[worker.tool_output]\ndefault_max_bytes = \n")
	missing := filepath.Join(t.TempDir(), "missing.toml")
	tests := []struct {
		name string
		opt  manifest.Option
		want []string // parts of the error text
	}{
		{"broken TOML", manifest.File(broken), []string{`file "` + broken + `"`, "line 2"}},
		{"broken optional TOML", manifest.OptionalFile(broken), []string{`file "` + broken + `"`, "line 2"}},
		{"missing file", manifest.File(missing), []string{`file "` + missing + `"`, "no such file"}},
		{"broken bytes", manifest.Bytes("embedded.toml", []byte("[worker")), []string{"embedded.toml", "line 1"}},
		{"NUL in a tool name", manifest.Bytes("nul.toml", []byte("[worker.tool_output.per_tool]\n\"a\\u0000b\" = 200\n")), []string{"nul.toml", "NUL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := manifest.Load(context.Background(), tt.opt)
			if err == nil {
				t.Fatal("Load() succeeded, want an error")
			}
			for _, part := range tt.want {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not contain %q", err, part)
				}
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	typo := writeFile(t, "typo.toml", `
[worker.tool_output]
default_max_byte = 8192
[worker.other]
anything = "ignored silently"
[worker.tool_ouput]
default_max_bytes = 100
[agent]
model = "x"
`)
	var buf bytes.Buffer
	logger := logtest.New(&buf, hclog.Info)
	r, err := manifest.Resolve(context.Background(),
		manifest.File(typo),
		manifest.Environ([]string{
			"TOOLCAP_WORKER_TOOL_OUTPUT_DEFAULT_MAX_BYTES=1",
			"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__=5",
			"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=300",
			"TOOLCAP_worker__tool_output__per_tool__Read=8192",
		}),
		manifest.WithLogger(logger),
	)
	if err != nil {
		t.Fatalf("Resolve() error: %v", err)
	}
	want := []string{
		`unknown table [worker.tool_ouput] in file "` + typo + `"; ignored (did you mean [worker.tool_output]?)`,
		`unknown key "default_max_byte" in [worker.tool_output] of file "` + typo + `"; ignored (did you mean "default_max_bytes"?)`,
		"unknown environment variable TOOLCAP_WORKER_TOOL_OUTPUT_DEFAULT_MAX_BYTES; ignored (did you mean TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES?)",
		"unknown environment variable TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__; ignored (a tool name must follow PER_TOOL__)",
		"environment variables TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read and TOOLCAP_worker__tool_output__per_tool__Read set the same key; TOOLCAP_worker__tool_output__per_tool__Read wins",
	}
	if diff := cmp.Diff(want, r.Warnings); diff != "" {
		t.Errorf("Warnings mismatch (-want +got):\n%s", diff)
	}
	var logged []string
	for _, m := range logtest.Lines(t, &buf) {
		if m["@level"] != "warn" {
			t.Errorf("warning logged at %v", m["@level"])
		}
		logged = append(logged, m["@message"].(string))
	}
	if diff := cmp.Diff(want, logged); diff != "" {
		t.Errorf("logged warnings mismatch (-want +got):\n%s", diff)
	}
	if got := r.Manifest.Limits().For("Glob"); got != manifest.DefaultMaxBytes {
		t.Errorf("a typo key changed the default: For = %d", got)
	}
	if got := r.Manifest.Limits().For("Read"); got != 8192 {
		t.Errorf("For(Read) = %d, want the later variable's 8192", got)
	}
}

func TestResolveSources(t *testing.T) {
	user := writeFile(t, "user.toml", "[worker.tool_output]\ndefault_max_bytes = 20000\n[worker.tool_output.per_tool]\nGrep = 8192\nRead = 32768\n")
	project := writeFile(t, "project.toml", "[worker.tool_output.per_tool]\nRead = 4096\n")
	r, err := manifest.Resolve(context.Background(),
		manifest.File(user),
		manifest.OptionalFile(filepath.Join(t.TempDir(), "absent.toml")),
		manifest.File(project),
		manifest.Environ([]string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__mcp.fs.read=1000"}),
		manifest.Overrides("flag --limit", manifest.ToolOutputLimits{PerTool: short(map[string]int{"Glob": 2000})}),
	)
	if err != nil {
		t.Fatalf("Resolve() error: %v", err)
	}
	want := &manifest.Resolution{
		Manifest: r.Manifest,
		Default:  manifest.Setting{Value: 20000, Source: `file "` + user + `"`},
		Batch:    manifest.Setting{Source: settings.SourceDefault},

		DefaultTokens: manifest.Setting{Source: settings.SourceDefault},
		BatchTokens:   manifest.Setting{Source: settings.SourceDefault},
		Tokenizer:     manifest.StrategySetting{Value: "calibrated", Source: settings.SourceDefault},
		KeepRest:      manifest.StrategySetting{Value: "true", Source: settings.SourceDefault},
		Clients:       map[string]manifest.Setting{"codex-mcp-client": {Value: 11776, Source: settings.SourceDefault}},
		PerTool: map[string]manifest.Setting{
			"Grep":        {Value: 8192, Source: `file "` + user + `"`},
			"Read":        {Value: 4096, Source: `file "` + project + `"`},
			"mcp.fs.read": {Value: 1000, Source: "env TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__mcp.fs.read"},
			"Glob":        {Value: 2000, Source: "flag --limit"},
		},
		Layers: []string{settings.SourceDefault, `file "` + user + `"`, `file "` + project + `"`, "environment", "flag --limit"},
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Resolve() mismatch (-want +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		m    *manifest.WorkerManifest
		want string // "" for valid
	}{
		{"nil", nil, ""},
		{"no section", &manifest.WorkerManifest{}, ""},
		{"zero default", &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{}}, ""},
		{"valid", &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{DefaultMaxBytes: 4096, PerTool: short(map[string]int{"Read": 128})}}, ""},
		{"negative default", &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{DefaultMaxBytes: -1}},
			"manifest: WorkerManifest: worker.tool_output.default_max_bytes = -1: a limit must be positive"},
		{"small per_tool", &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{PerTool: short(map[string]int{"mcp.x": 10})}},
			`manifest: WorkerManifest: worker.tool_output.per_tool."mcp.x" = 10: below the minimum of 128 bytes (the truncation marker alone takes up to 66)`},
		{"zero per_tool", &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{PerTool: short(map[string]int{"Read": 0})}},
			"manifest: WorkerManifest: worker.tool_output.per_tool.Read = 0: 0 is not a limit; omit the key for the default (16384)"},
		{"empty tool name", &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{PerTool: short(map[string]int{"": 4096})}},
			`manifest: WorkerManifest: worker.tool_output.per_tool."" = 4096: empty tool name`},
		{"huge", &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{DefaultMaxBytes: 1 << 40}},
			"manifest: WorkerManifest: worker.tool_output.default_max_bytes = 1099511627776: above the maximum of 67108864 bytes (64 MiB)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := tt.m.Validate(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTOMLKey(t *testing.T) {
	tests := []struct{ name, want string }{
		{"Read", "Read"},
		{"my-tool_2", "my-tool_2"},
		{"mcp.fs.read", `"mcp.fs.read"`},
		{"github/search", `"github/search"`},
		{"", `""`},
		{`say "hi"\now`, `"say \"hi\"\\now"`},
		{"tab\there\x00\x7f", `"tab\there\u0000\u007F"`},
		{"日本語", `"日本語"`},
	}
	for _, tt := range tests {
		got := settings.TOMLKey(tt.name)
		if got != tt.want {
			t.Errorf("TOMLKey(%q) = %s, want %s", tt.name, got, tt.want)
		}
		// What it writes, TOML reads back as the same key.
		var m map[string]int
		if err := toml.Unmarshal([]byte(got+" = 1\n"), &m); err != nil {
			t.Errorf("TOMLKey(%q) = %s is not a TOML key: %v", tt.name, got, err)
			continue
		}
		if diff := cmp.Diff(map[string]int{tt.name: 1}, m); diff != "" {
			t.Errorf("TOMLKey(%q) round trip mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}
