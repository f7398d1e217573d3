package cli

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testCache is the user cache directory of the config tests: config
// resolves the store's default directory under it, and creates nothing.
const testCache = "/nonexistent/cache"

// restDefaults sets the user cache directory to testCache for t and
// returns the keep-the-rest settings config shows when no layer sets any.
func restDefaults(t *testing.T) map[string]strategySetting {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", testCache)
	return map[string]strategySetting{
		"keep_rest":            {"true", "built-in default"},
		"rest.store":           {`"dir"`, "built-in default"},
		"rest.dir":             {`"` + testCache + `/toolcap/rest"`, "built-in default (the user cache directory)"},
		"rest.max_bytes":       {"1073741824", "built-in default"},
		"rest.max_entry_bytes": {"268435456", "built-in default"},
		"rest.ttl":             {`"24h"`, "built-in default"},
		"rest.tool":            {`"toolcap_read"`, "built-in default"},
	}
}

// restDefaultText is the client-limit and keep-the-rest sections of
// config's text when no layer sets any of their keys, under testCache.
const restDefaultText = `
Client limits (toolcap mcp holds every result for the MCP client of that name to it), and the layer that set each:
  clients.codex-mcp-client  11776  built-in default

Keeping the rest (toolcap mcp; cap --keep-rest for toolcap read), and the layer that set each:
  keep_rest             true                               built-in default
  rest.store            "dir"                              built-in default
  rest.dir              "` + testCache + `/toolcap/rest"  built-in default (the user cache directory)
  rest.max_bytes        1073741824                         built-in default
  rest.max_entry_bytes  268435456                          built-in default
  rest.ttl              "24h"                              built-in default
  rest.tool             "toolcap_read"                     built-in default
`

func TestConfigJSON(t *testing.T) {
	defaults := restDefaults(t)
	dir := t.TempDir()
	user := writeFile(t, dir, "user.toml", `
[worker.tool_output]
default_max_bytes = 8192
[worker.tool_output.per_tool]
Read = 32768
Grep = 4096
"mcp.fs.read" = 2048
`)
	project := writeFile(t, dir, "project.toml", `
[worker.tool_output.per_tool]
Read = 20000
`)
	typo := writeFile(t, dir, "typo.toml", "[worker.tool_output]\nper_tol = 1\n")
	src := func(p string) string { return `file "` + p + `"` }
	const envRead = "env TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read"

	tests := []struct {
		name string
		args []string
		env  []string
		want configReport
	}{
		{
			name: "no layers",
			want: configReport{
				Layers:   []string{"built-in default", "environment"},
				Default:  setting{16384, "built-in default"},
				Batch:    setting{0, "built-in default"},
				PerTool:  map[string]setting{},
				Warnings: []string{},
			},
		},
		{
			name: "two files and the environment",
			args: []string{"--manifest", user, "--manifest", project, "--tool", "Read", "--tool", "Glob", "--tool", "Grep", "--tool", "mcp.fs.read"},
			env:  []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=4096"},
			want: configReport{
				Layers:  []string{"built-in default", src(user), src(project), "environment"},
				Default: setting{8192, src(user)},
				Batch:   setting{0, "built-in default"},
				PerTool: map[string]setting{
					"Read":        {4096, envRead},
					"Grep":        {4096, src(user)},
					"mcp.fs.read": {2048, src(user)},
				},
				Tools: []toolLimit{
					{Tool: "Read", Limit: 4096, From: "per_tool", Source: envRead, Keep: "head", KeepFrom: "default", KeepSource: "built-in default"},
					{Tool: "Glob", Limit: 8192, From: "default", Source: src(user), Keep: "head", KeepFrom: "default", KeepSource: "built-in default"},
					{Tool: "Grep", Limit: 4096, From: "per_tool", Source: src(user), Keep: "head", KeepFrom: "default", KeepSource: "built-in default"},
					{Tool: "mcp.fs.read", Limit: 2048, From: "per_tool", Source: src(user), Keep: "head", KeepFrom: "default", KeepSource: "built-in default"},
				},
				Warnings: []string{},
			},
		},
		{
			name: "later file wins",
			args: []string{"--manifest", project, "--manifest", user, "--tool", "Read"},
			want: configReport{
				Layers:   []string{"built-in default", src(project), src(user), "environment"},
				Default:  setting{8192, src(user)},
				Batch:    setting{0, "built-in default"},
				PerTool:  map[string]setting{"Read": {32768, src(user)}, "Grep": {4096, src(user)}, "mcp.fs.read": {2048, src(user)}},
				Tools:    []toolLimit{{Tool: "Read", Limit: 32768, From: "per_tool", Source: src(user), Keep: "head", KeepFrom: "default", KeepSource: "built-in default"}},
				Warnings: []string{},
			},
		},
		{
			name: "env default",
			args: []string{"--tool", "Read"},
			env:  []string{"TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES=1000"},
			want: configReport{
				Layers:   []string{"built-in default", "environment"},
				Default:  setting{1000, "env TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES"},
				Batch:    setting{0, "built-in default"},
				PerTool:  map[string]setting{},
				Tools:    []toolLimit{{Tool: "Read", Limit: 1000, From: "default", Source: "env TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES", Keep: "head", KeepFrom: "default", KeepSource: "built-in default"}},
				Warnings: []string{},
			},
		},
		{
			name: "warnings",
			args: []string{"--manifest", typo},
			want: configReport{
				Layers:   []string{"built-in default", src(typo), "environment"},
				Default:  setting{16384, "built-in default"},
				Batch:    setting{0, "built-in default"},
				PerTool:  map[string]setting{},
				Warnings: []string{`unknown key "per_tol" in [worker.tool_output] of ` + src(typo) + `; ignored (did you mean "per_tool"?)`},
			},
		},
	}
	for _, tt := range tests {
		// Every report shows the store; none of these layers sets a key of it.
		tt.want.KeepRest = defaults
		// The built-in client limit (issue 41).
		tt.want.Clients = map[string]setting{"codex-mcp-client": {11776, "built-in default"}}
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, tt.env, nil, append([]string{"config", "--json"}, tt.args...)...)
			if got.code != exitOK {
				t.Fatalf("exit code = %d; stderr:\n%s", got.code, got.stderr)
			}
			// Compared as JSON: a value is written as the JSON value it
			// stands for (strategySetting.MarshalJSON).
			var report, want any
			if err := json.Unmarshal([]byte(got.stdout), &report); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, got.stdout)
			}
			b, err := json.Marshal(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, report); diff != "" {
				t.Errorf("config --json mismatch (-want +got):\n%s", diff)
			}
			for _, w := range tt.want.Warnings {
				if !strings.Contains(got.stderr, "[WARN]  toolcap: "+w) {
					t.Errorf("stderr does not carry the warning %q:\n%s", w, got.stderr)
				}
			}
			if len(tt.want.Warnings) == 0 && got.stderr != "" {
				t.Errorf("stderr = %q, want nothing", got.stderr)
			}
		})
	}
}

// The JSON keys are part of the CLI's interface.
func TestConfigJSONKeys(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", testCache)
	got := runWith(t, nil, nil, "config", "--json", "--tool", "Read")
	var m map[string]any
	if err := json.Unmarshal([]byte(got.stdout), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"layers":            []any{"built-in default", "environment"},
		"default_max_bytes": map[string]any{"limit": 16384.0, "source": "built-in default"},
		"batch_max_bytes":   map[string]any{"limit": 0.0, "source": "built-in default"},
		"per_tool":          map[string]any{},
		"clients":           map[string]any{"codex-mcp-client": map[string]any{"limit": 11776.0, "source": "built-in default"}},
		"tools": []any{map[string]any{"tool": "Read", "limit": 16384.0, "from": "default", "source": "built-in default",
			"keep": "head", "keep_from": "default", "keep_source": "built-in default"}},
		"keep_rest": map[string]any{
			// Each value as the JSON value it stands for (issue 38, item 9:
			// they were TOML written in JSON strings, "\"dir\"", "true").
			"keep_rest":            map[string]any{"value": true, "source": "built-in default"},
			"rest.store":           map[string]any{"value": "dir", "source": "built-in default"},
			"rest.dir":             map[string]any{"value": testCache + "/toolcap/rest", "source": "built-in default (the user cache directory)"},
			"rest.max_bytes":       map[string]any{"value": 1073741824.0, "source": "built-in default"},
			"rest.max_entry_bytes": map[string]any{"value": 268435456.0, "source": "built-in default"},
			"rest.ttl":             map[string]any{"value": "24h", "source": "built-in default"},
			"rest.tool":            map[string]any{"value": "toolcap_read", "source": "built-in default"},
		},
		"warnings": []any{},
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("config --json mismatch (-want +got):\n%s", diff)
	}
}

func TestConfigText(t *testing.T) {
	restDefaults(t)
	dir := t.TempDir()
	user := writeFile(t, dir, "user.toml", `
[worker.tool_output]
default_max_bytes = 8192
[worker.tool_output.per_tool]
Read = 32768
"mcp.fs.read" = 2048
`)
	env := []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=4096"}
	got := runWith(t, env, nil, "config", "--manifest", user, "--tool", "Read", "--tool", "Glob")
	if got.code != exitOK || got.stderr != "" {
		t.Fatalf("exit code = %d, stderr:\n%s", got.code, got.stderr)
	}
	want := `Layers, lowest precedence first:
  1. built-in default
  2. file "` + user + `"
  3. environment

Limits in force (bytes), and the layer that set each:
  default_max_bytes       8192  file "` + user + `"
  batch_max_bytes         none  built-in default
  per_tool.Read           4096  env TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read
  per_tool."mcp.fs.read"  2048  file "` + user + `"
` + restDefaultText + `
Limit a worker applies to each tool asked about:
  Read  4096  per_tool.Read, set by env TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read
  Glob  8192  default_max_bytes (no max_bytes of its own), set by file "` + user + `"

Strategy a worker applies to each tool asked about:
  Read  head  built-in default
  Glob  head  built-in default
`
	if diff := cmp.Diff(want, got.stdout); diff != "" {
		t.Errorf("config mismatch (-want +got):\n%s", diff)
	}
}

// The batch budget is shown with the layer that set it.
func TestConfigBatch(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "user.toml", "[worker.tool_output]\nbatch_max_bytes = 65536\n")
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"file", nil, `  batch_max_bytes    65536  file "` + user + `"`},
		{"environment", []string{"TOOLCAP_WORKER__TOOL_OUTPUT__BATCH_MAX_BYTES=32768"},
			"  batch_max_bytes    32768  env TOOLCAP_WORKER__TOOL_OUTPUT__BATCH_MAX_BYTES"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, tt.env, nil, "config", "--manifest", user)
			if got.code != exitOK || got.stderr != "" {
				t.Fatalf("exit code = %d, stderr:\n%s", got.code, got.stderr)
			}
			var line string
			for _, l := range strings.Split(got.stdout, "\n") {
				if strings.Contains(l, "batch_max_bytes") {
					line = l
				}
			}
			if diff := cmp.Diff(tt.want, line); diff != "" {
				t.Errorf("batch_max_bytes line mismatch (-want +got):\n%s\nin:\n%s", diff, got.stdout)
			}
		})
	}
}

// keep_rest and the store are always shown: what a layer sets, with the
// layer, and the defaults the CLI's store applies to the rest.
func TestConfigKeepRest(t *testing.T) {
	defaults := restDefaults(t)
	dir := t.TempDir()
	user := writeFile(t, dir, "user.toml", `
[worker.tool_output]
keep_rest = false
[worker.tool_output.rest]
ttl = "90m"
max_bytes = 8388608
[worker.tool_output.per_tool]
Bash = { keep_rest = true }
`)
	memory := writeFile(t, dir, "memory.toml", "[worker.tool_output.rest]\nstore = \"memory\"\ntool = \"more\"\n")
	src := `file "` + user + `"`
	const envDir = "env TOOLCAP_WORKER__TOOL_OUTPUT__REST__DIR"
	env := []string{"TOOLCAP_WORKER__TOOL_OUTPUT__REST__DIR=/tmp/rest"}
	// with returns the defaults with the settings of set over them, and
	// without the keys of drop.
	with := func(set map[string]strategySetting, drop ...string) map[string]strategySetting {
		m := maps.Clone(defaults)
		maps.Copy(m, set)
		for _, k := range drop {
			delete(m, k)
		}
		return m
	}
	tests := []struct {
		name string
		args []string
		env  []string
		home bool // run with no user cache directory
		want map[string]strategySetting
	}{
		{"nothing set: the defaults", nil, nil, false, defaults},
		{"a file and the environment", []string{"--manifest", user}, env, false, with(map[string]strategySetting{
			"keep_rest":               {"false", src},
			"per_tool.Bash.keep_rest": {"true", src},
			"rest.dir":                {`"/tmp/rest"`, envDir},
			"rest.max_bytes":          {"8388608", src},
			// The default bound on an entry, held to the quota.
			"rest.max_entry_bytes": {"8388608", "built-in default (at most max_bytes)"},
			"rest.ttl":             {`"1h30m"`, src},
		})},
		{"the rest table alone", nil, env, false, with(map[string]strategySetting{
			"rest.dir": {`"/tmp/rest"`, envDir},
		})},
		{"a store in memory: its quota, no directory", []string{"--manifest", memory}, nil, false, with(map[string]strategySetting{
			"rest.store":           {`"memory"`, `file "` + memory + `"`},
			"rest.tool":            {`"more"`, `file "` + memory + `"`},
			"rest.max_bytes":       {"67108864", "built-in default"},
			"rest.max_entry_bytes": {"67108864", "built-in default (at most max_bytes)"},
		}, "rest.dir")},
		{"no user cache directory", nil, nil, true, with(map[string]strategySetting{
			"rest.dir": {"none", "built-in default: keep_rest: no directory for the store: neither $XDG_CACHE_HOME nor $HOME are defined; " +
				"set [worker.tool_output.rest] dir or TOOLCAP_WORKER__TOOL_OUTPUT__REST__DIR"},
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.home {
				t.Setenv("XDG_CACHE_HOME", "")
				t.Setenv("HOME", "")
			}
			got := runWith(t, tt.env, nil, append([]string{"config", "--json"}, tt.args...)...)
			if got.code != exitOK || got.stderr != "" {
				t.Fatalf("exit code = %d, stderr:\n%s", got.code, got.stderr)
			}
			var report configReport
			if err := json.Unmarshal([]byte(got.stdout), &report); err != nil {
				t.Fatalf("stdout is not the JSON report: %v\n%s", err, got.stdout)
			}
			if diff := cmp.Diff(asRead(t, configReport{KeepRest: tt.want}).KeepRest, report.KeepRest); diff != "" {
				t.Errorf("config --json keep_rest mismatch (-want +got):\n%s", diff)
			}
		})
	}

	got := runWith(t, env, nil, "config", "--manifest", user)
	if got.code != exitOK || got.stderr != "" {
		t.Fatalf("exit code = %d, stderr:\n%s", got.code, got.stderr)
	}
	want := `
Keeping the rest (toolcap mcp; cap --keep-rest for toolcap read), and the layer that set each:
  keep_rest                false           ` + src + `
  per_tool.Bash.keep_rest  true            ` + src + `
  rest.store               "dir"           built-in default
  rest.dir                 "/tmp/rest"     ` + envDir + `
  rest.max_bytes           8388608         ` + src + `
  rest.max_entry_bytes     8388608         built-in default (at most max_bytes)
  rest.ttl                 "1h30m"         ` + src + `
  rest.tool                "toolcap_read"  built-in default
`
	if !strings.HasSuffix(got.stdout, want) {
		t.Errorf("config text does not end with the keep-the-rest section:\n%s\nwant it to end with:%s", got.stdout, want)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tt := range configErrorCases(t) {
		for _, format := range []string{"text", "json"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				args := append([]string{"config", "--tool", "Read"}, tt.args...)
				if format == "json" {
					args = append(args, "--json")
				}
				checkConfigError(t, runWith(t, tt.env, nil, args...), tt.wantStderr)
			})
		}
	}
}

func TestConfigUsageErrors(t *testing.T) {
	got := runWith(t, nil, nil, "config", "Read")
	if got.code != exitUsage || got.stdout != "" || !strings.Contains(got.stderr, `unexpected argument "Read"`) {
		t.Errorf("got exit %d, stdout %q, stderr %q; want %d, nothing, the argument named", got.code, got.stdout, got.stderr, exitUsage)
	}
}

// A tool whose per_tool entry sets no max_bytes has the default's limit,
// and config says so without denying the entry (issue 38, item 9: it said
// "no per_tool entry").
func TestConfigEntryWithoutLimit(t *testing.T) {
	m := writeFile(t, t.TempDir(), "keep.toml", "[worker.tool_output.per_tool]\nBash = { keep = \"head_tail\" }\n")
	got := runWith(t, nil, nil, "config", "--manifest", m, "--tool", "Bash")
	if got.code != exitOK {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	checkContains(t, "stdout", got.stdout, "  Bash  16384  default_max_bytes (no max_bytes of its own), set by built-in default\n",
		`per_tool.Bash.keep  "head_tail"`)
}

// asRead returns r as config --json writes it and a program reads it
// back: each strategy value as the JSON of the value it stands for.
func asRead(t *testing.T, r configReport) configReport {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back configReport
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// A per_tool entry under another case of a tool's name does not apply to
// it, and cap, hook and config --tool say so (issue 38, item 9:
// PER_TOOL__read with --tool Read applied the default without a word).
func TestToolNameCase(t *testing.T) {
	const want = "[WARN]  toolcap: per_tool has an entry for another case of the tool's name, which does not apply to it: " +
		"tool names are case-sensitive: tool=Read entry=per_tool.read did_you_mean=per_tool.Read\n"
	env := []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__read=4096"}
	hookIn := string(payload(t, "Read", map[string]any{"type": "text", "file": map[string]any{"content": "hi"}}))
	for _, tt := range []struct {
		name  string
		stdin string
		args  []string
	}{
		{"cap", "hi", []string{"cap", "--tool", "Read"}},
		{"config", "", []string{"config", "--tool", "Read"}},
		{"hook", hookIn, []string{"hook", "claude-code"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, env, strings.NewReader(tt.stdin), tt.args...)
			if got.code != exitOK || got.stderr != want {
				t.Errorf("exit %d, stderr %q; want 0 and %q", got.code, got.stderr, want)
			}
			// The exact name: no warning.
			got = runWith(t, []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=4096"}, strings.NewReader(tt.stdin), tt.args...)
			if got.code != exitOK || got.stderr != "" {
				t.Errorf("the exact name: exit %d, stderr %q; want 0 and nothing", got.code, got.stderr)
			}
		})
	}
}

// config shows the history table's keys a layer sets, with their layers
// (issue 36), and nothing of it when none is set (the sections above).
func TestConfigHistory(t *testing.T) {
	m := writeFile(t, t.TempDir(), "h.toml", "[worker.tool_output.history]\nmax_tokens = 60000\nnever = [\"TodoWrite\"]\n")
	env := []string{"TOOLCAP_WORKER__TOOL_OUTPUT__HISTORY__KEEP_RECENT=6"}
	got := runWith(t, env, nil, "config", "--manifest", m)
	if got.code != exitOK || got.stderr != "" {
		t.Fatalf("exit code = %d, stderr:\n%s", got.code, got.stderr)
	}
	want := `
Ageing the history (package history; a program's agent loop), and the layer that set each:
  history.keep_recent  6              env TOOLCAP_WORKER__TOOL_OUTPUT__HISTORY__KEEP_RECENT
  history.max_tokens   60000          file "` + m + `"
  history.never        ['TodoWrite']  file "` + m + `"
`
	if !strings.Contains(got.stdout, want) {
		t.Errorf("config printed:\n%s\nwant the section:%s", got.stdout, want)
	}
}
