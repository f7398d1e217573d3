package manifest_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/logtest"
	"github.com/toolcap/toolcap/manifest"
)

// TestMisplacedWarnings covers spellings that would leave the 16384 default
// in force without a word: toolcap's keys in the wrong table or case.
func TestMisplacedWarnings(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string // warnings; the file is "m.toml"
	}{
		{"case variant of worker", "[Worker.tool_output]\ndefault_max_bytes = 100\n",
			[]string{"unknown table [Worker.tool_output] in m.toml; ignored (did you mean [worker.tool_output]?)"}},
		{"case variant of worker, dotted", "WORKER.tool_output.default_max_bytes = 100\n",
			[]string{"unknown table [WORKER.tool_output] in m.toml; ignored (did you mean [worker.tool_output]?)"}},
		{"tool_output at the top level", "[tool_output]\ndefault_max_bytes = 100\n",
			[]string{"unknown table [tool_output] in m.toml; ignored (did you mean [worker.tool_output]?)"}},
		{"default_max_bytes at the top level", "default_max_bytes = 100\n",
			[]string{`unknown key "default_max_bytes" at the top level of m.toml; ignored (did you mean "worker.tool_output.default_max_bytes"?)`}},
		{"per_tool at the top level", "[per_tool]\nRead = 200\n",
			[]string{"unknown table [per_tool] in m.toml; ignored (did you mean [worker.tool_output.per_tool]?)"}},
		{"default_max_bytes in [worker]", "[worker]\ndefault_max_bytes = 100\n",
			[]string{`unknown key "default_max_bytes" in [worker] of m.toml; ignored (did you mean "worker.tool_output.default_max_bytes"?)`}},
		{"per_tool in [worker]", "[worker.per_tool]\nRead = 200\n",
			[]string{"unknown table [worker.per_tool] in m.toml; ignored (did you mean [worker.tool_output.per_tool]?)"}},
		{"a misspelt tool_output, as before", "[worker.tool_ouput]\nRead = 200\n",
			[]string{"unknown table [worker.tool_ouput] in m.toml; ignored (did you mean [worker.tool_output]?)"}},
		{"other tables stay silent", "name = \"x\"\n[docker]\nimage = \"y\"\n[worker]\nname = \"z\"\n[agent]\ntools = [\"Read\"]\n[workers.pool]\nsize = 3\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			r, err := manifest.Resolve(context.Background(), manifest.Bytes("m.toml", []byte(tt.text)), manifest.WithLogger(logtest.New(&buf, hclog.Info)))
			if err != nil {
				t.Fatalf("Resolve() error: %v", err)
			}
			if diff := cmp.Diff(tt.want, r.Warnings); diff != "" {
				t.Errorf("Warnings mismatch (-want +got):\n%s", diff)
			}
			var logged []string
			for _, m := range logtest.Lines(t, &buf) {
				if m["@level"] != "warn" || m["source"] != "m.toml" {
					t.Errorf("logged %v", m)
				}
				logged = append(logged, m["@message"].(string))
			}
			if diff := cmp.Diff(tt.want, logged); diff != "" {
				t.Errorf("logged warnings mismatch (-want +got):\n%s", diff)
			}
			if got := r.Manifest.Limits().For("Read"); got != manifest.DefaultMaxBytes {
				t.Errorf("For(Read) = %d, want the default", got)
			}
		})
	}
}

func TestEnvWarnings(t *testing.T) {
	tests := []struct {
		name string
		want string
	}{
		{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL_Read",
			"unknown environment variable TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL_Read; ignored (did you mean TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read?)"},
		{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOLmcp.fs.read",
			"unknown environment variable TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOLmcp.fs.read; ignored (did you mean TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__mcp.fs.read?)"},
		{"TOOLCAP_WORKER_TOOL_OUTPUT_PER_TOOL_Read",
			"unknown environment variable TOOLCAP_WORKER_TOOL_OUTPUT_PER_TOOL_Read; ignored (did you mean TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read?)"},
		{"TOOLCAP_worker__tool_output__per_tool_Read",
			"unknown environment variable TOOLCAP_worker__tool_output__per_tool_Read; ignored (did you mean TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read?)"},
		{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL_",
			"unknown environment variable TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL_; ignored (a tool name must follow PER_TOOL__)"},
		{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL",
			"unknown environment variable TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL; ignored (a tool name must follow PER_TOOL__)"},
		{"TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTE",
			"unknown environment variable TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTE; ignored (did you mean TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES?)"},
		{"TOOLCAP_SOMETHING_ELSE_PER_TOOL_Read", "unknown environment variable TOOLCAP_SOMETHING_ELSE_PER_TOOL_Read; ignored"},
		{"toolcap_worker__tool_output__default_max_bytes",
			"environment variable toolcap_worker__tool_output__default_max_bytes ignored: the TOOLCAP_ prefix is upper case (did you mean TOOLCAP_worker__tool_output__default_max_bytes?)"},
		{"Toolcap_WORKER__TOOL_OUTPUT__PER_TOOL__Read",
			"environment variable Toolcap_WORKER__TOOL_OUTPUT__PER_TOOL__Read ignored: the TOOLCAP_ prefix is upper case (did you mean TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := manifest.Resolve(context.Background(), manifest.Environ([]string{tt.name + "=4096"}))
			if err != nil {
				t.Fatalf("Resolve() error: %v", err)
			}
			if diff := cmp.Diff([]string{tt.want}, r.Warnings); diff != "" {
				t.Errorf("Warnings mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestShortenedValues checks that errors and warnings echo at most 64 bytes
// of a value or an unknown name, while Error.Value keeps the value whole.
func TestShortenedValues(t *testing.T) {
	long := strings.Repeat("a", 100000)
	// "é" is 2 bytes; at bytes 63 and 64 it straddles the cut.
	straddle := strings.Repeat("a", 63) + "é" + strings.Repeat("b", 100)
	const def = "TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES"
	tests := []struct {
		name  string
		opt   manifest.Option
		value string // the whole Error.Value
		want  string // the whole error text
	}{
		{"env value", manifest.Environ([]string{def + "=" + long}), `"` + long + `"`,
			`manifest: env ` + def + `: worker.tool_output.default_max_bytes = "` + strings.Repeat("a", 64) + `…" (100000 bytes): not an integer`},
		{"a character at the cut", manifest.Environ([]string{def + "=" + straddle}), `"` + straddle + `"`,
			`manifest: env ` + def + `: worker.tool_output.default_max_bytes = "` + strings.Repeat("a", 63) + `…" (165 bytes): not an integer`},
		{"file value", manifest.Bytes("m.toml", []byte("[worker.tool_output.per_tool]\nRead = \""+long+"\"\n")), `"` + long + `"`,
			`manifest: m.toml: worker.tool_output.per_tool.Read = "` + strings.Repeat("a", 64) + `…" (100000 bytes): a string, not an integer (write the number without quotes)`},
		{"64 bytes stay whole", manifest.Environ([]string{def + "=" + long[:64]}), `"` + long[:64] + `"`,
			`manifest: env ` + def + `: worker.tool_output.default_max_bytes = "` + long[:64] + `": not an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := manifest.Load(context.Background(), tt.opt)
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("Load() error = %v, want a *manifest.Error", err)
			}
			if me.Value != tt.value {
				t.Errorf("Error.Value is %d bytes, want the whole %d", len(me.Value), len(tt.value))
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("Error() mismatch (-want +got):\n%s", diff)
			}
		})
	}

	r, err := manifest.Resolve(context.Background(),
		manifest.Bytes("m.toml", []byte("[worker.tool_output]\n"+long+" = 1\n")),
		manifest.Environ([]string{"TOOLCAP_" + long + "=1"}),
	)
	if err != nil {
		t.Fatalf("Resolve() error: %v", err)
	}
	want := []string{
		`unknown key "` + long[:64] + `…" (100000 bytes) in [worker.tool_output] of m.toml; ignored`,
		"unknown environment variable TOOLCAP_" + long[:56] + "… (100008 bytes); ignored",
	}
	if diff := cmp.Diff(want, r.Warnings); diff != "" {
		t.Errorf("Warnings mismatch (-want +got):\n%s", diff)
	}
}

// TestUnusedKeepLinesWarns: keep_lines that no cut reads (only head_tail,
// or json falling back to it, rescues lines) is a warning naming the key
// and what to set, not silence (issue 38, item 9).
func TestUnusedKeepLinesWarns(t *testing.T) {
	const perTool = "[worker.tool_output.per_tool]\n"
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"a tool's, its cut head", perTool + "Bash = { keep_lines = ['error'] }\n",
			[]string{`per_tool.Bash.keep_lines is not used: the tool's cut is head, and only head_tail (or json falling back to it) rescues lines; set keep = "head_tail" for it`}},
		{"a tool's, its cut json falling back to head", perTool + "Bash = { keep = \"json\", keep_lines = ['error'] }\n",
			[]string{`per_tool.Bash.keep_lines is not used: the tool's cut is json, and only head_tail (or json falling back to it) rescues lines; set keep = "head_tail" for it`}},
		{"a tool's, its cut head_tail", perTool + "Bash = { keep = \"head_tail\", keep_lines = ['error'] }\n", nil},
		{"a tool's, json falling back to head_tail", perTool + "Bash = { keep = \"json\", fallback = \"head_tail\", keep_lines = ['error'] }\n", nil},
		{"a tool's, head_tail by default", "[worker.tool_output]\ndefault_keep = \"head_tail\"\n" + perTool + "Bash = { keep_lines = ['error'] }\n", nil},
		{"the default's, no cut head_tail", "[worker.tool_output]\ndefault_keep_lines = ['error']\n" + perTool + "Bash = { keep = \"head_tail\", keep_lines = ['x'] }\n",
			[]string{`default_keep_lines is not used: the default cut is head and no per_tool entry without keep_lines of its own cuts with head_tail; set default_keep = "head_tail"`}},
		{"the default's, a tool's head_tail uses it", "[worker.tool_output]\ndefault_keep_lines = ['error']\n" + perTool + "Bash = { keep = \"head_tail\" }\n", nil},
		{"the default's, the default head_tail", "[worker.tool_output]\ndefault_keep = \"head_tail\"\ndefault_keep_lines = ['error']\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := manifest.Resolve(context.Background(), manifest.Bytes("m.toml", []byte(tt.text)))
			if err != nil {
				t.Fatalf("Resolve() error: %v", err)
			}
			if diff := cmp.Diff(tt.want, r.Warnings); diff != "" {
				t.Errorf("Warnings mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A strategy a program sets for the run (manifest.Overrides, such as
// toolcap cap --keep head) does not make the manifest's keep_lines a
// mistake: no warning.
func TestUnusedKeepLinesOverride(t *testing.T) {
	r, err := manifest.Resolve(context.Background(),
		manifest.Bytes("m.toml", []byte("[worker.tool_output.per_tool]\nBash = { keep = \"head_tail\", keep_lines = ['error'] }\n")),
		manifest.Overrides("flag --keep", manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"Bash": {Strategy: manifest.Strategy{Keep: cut.KeepHead}}}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("warnings %q, want none", r.Warnings)
	}
}
