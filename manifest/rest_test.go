package manifest_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolcap/toolcap/shape"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/logtest"
	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
)

// yes and no are keep_rest values as a Go value holds them.
var (
	yes = ptr(true)
	no  = ptr(false)
)

func ptr[T any](v T) *T { return &v }

// TestLoadRest reads keep_rest and the [worker.tool_output.rest] table from
// files, the environment and overrides, each key into its Go field.
func TestLoadRest(t *testing.T) {
	const all = `
[worker.tool_output]
keep_rest = false
[worker.tool_output.rest]
dir = "/var/cache/toolcap"
max_bytes = 8_388_608
max_entry_bytes = 1_048_576
ttl = "90m"
tool = "read_more"
store = "dir"
[worker.tool_output.per_tool]
Bash = { keep_rest = true }
Read = { max_bytes = 4096, keep_rest = false }
`
	file := func(text string) manifest.Option { return manifest.Bytes("toolcap.toml", []byte(text)) }
	env := func(vars ...string) manifest.Option { return manifest.Environ(vars) }
	tests := []struct {
		name string
		opts []manifest.Option
		want manifest.ToolOutputLimits
	}{
		{
			name: "nothing set: KeepRest and Rest nil",
			opts: nil,
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 16384},
		},
		{
			name: "every key in a file",
			opts: []manifest.Option{file(all)},
			want: manifest.ToolOutputLimits{
				DefaultMaxBytes: 16384,
				KeepRest:        no,
				Rest: &manifest.RestConfig{Dir: "/var/cache/toolcap", MaxBytes: 8 << 20, MaxEntryBytes: 1 << 20,
					TTL: 90 * time.Minute, Tool: "read_more", Store: "dir"},
				PerTool: map[string]manifest.ToolEntry{"Bash": {KeepRest: yes}, "Read": {MaxBytes: 4096, KeepRest: no}},
			},
		},
		{
			name: "every key in the environment",
			opts: []manifest.Option{env(
				settings.EnvKeepRest+"=true",
				settings.EnvRestDir+"=/tmp/rest",
				settings.EnvRestMaxBytes+"=1099511627776",
				settings.EnvRestMaxEntryBytes+"=65536",
				settings.EnvRestTTL+"=1h30m",
				settings.EnvRestTool+"=mcp.read-2",
				settings.EnvRestStore+"=memory",
				settings.EnvPerToolPrefix+"Bash__KEEP_REST=0",
				settings.EnvPerToolPrefix+"mcp.fs.read__KEEP_REST=1",
			)},
			want: manifest.ToolOutputLimits{
				DefaultMaxBytes: 16384,
				KeepRest:        yes,
				Rest: &manifest.RestConfig{Dir: "/tmp/rest", MaxBytes: 1 << 40, MaxEntryBytes: 65536,
					TTL: 90 * time.Minute, Tool: "mcp.read-2", Store: "memory"},
				PerTool: map[string]manifest.ToolEntry{"Bash": {KeepRest: no}, "mcp.fs.read": {KeepRest: yes}},
			},
		},
		{
			name: "the environment's false and 1",
			opts: []manifest.Option{env(settings.EnvKeepRest+"=false", settings.EnvPerToolPrefix+"Bash__KEEP_REST=1")},
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 16384, KeepRest: no,
				PerTool: map[string]manifest.ToolEntry{"Bash": {KeepRest: yes}}},
		},
		{
			name: "the environment's variable names in another case",
			opts: []manifest.Option{env("TOOLCAP_worker__tool_output__rest__ttl=2h", "TOOLCAP_WORKER__TOOL_OUTPUT__keep_rest=0")},
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 16384, KeepRest: no, Rest: &manifest.RestConfig{TTL: 2 * time.Hour}},
		},
		{
			name: "empty dir and store are the defaults: no rest table",
			opts: []manifest.Option{file("[worker.tool_output.rest]\ndir = \"\"\nstore = \"\"\n"), env(settings.EnvRestDir + "=")},
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 16384},
		},
		{
			name: "layers merge the rest table key by key",
			opts: []manifest.Option{
				file("[worker.tool_output.rest]\nmax_bytes = 4096\nttl = \"24h\"\ndir = \"/a\"\n"),
				manifest.Bytes("project.toml", []byte("[worker.tool_output.rest]\nttl = \"10m\"\n")),
				env(settings.EnvRestDir + "=/b"),
			},
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 16384,
				Rest: &manifest.RestConfig{Dir: "/b", MaxBytes: 4096, TTL: 10 * time.Minute}},
		},
		{
			name: "overrides set the keys they name, over the environment",
			opts: []manifest.Option{
				env(settings.EnvKeepRest+"=true", settings.EnvRestTTL+"=1h", settings.EnvRestMaxBytes+"=4096"),
				manifest.Overrides("flag --keep-rest", manifest.ToolOutputLimits{
					KeepRest: no,
					Rest:     &manifest.RestConfig{TTL: 45 * time.Second, Tool: "more", Store: "memory"},
					PerTool:  map[string]manifest.ToolEntry{"Bash": {KeepRest: yes}},
				}),
			},
			want: manifest.ToolOutputLimits{DefaultMaxBytes: 16384, KeepRest: no,
				Rest:    &manifest.RestConfig{MaxBytes: 4096, TTL: 45 * time.Second, Tool: "more", Store: "memory"},
				PerTool: map[string]manifest.ToolEntry{"Bash": {KeepRest: yes}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := manifest.Load(context.Background(), tt.opts...)
			if err != nil {
				t.Fatalf("Load() error: %v", err)
			}
			if diff := cmp.Diff(&tt.want, m.Limits(), cmpEmpty); diff != "" {
				t.Errorf("Load() mismatch (-want +got):\n%s", diff)
			}
			if err := m.Validate(); err != nil {
				t.Errorf("a loaded manifest does not validate: %v", err)
			}
			// What Load returns, passed back as overrides, loads to the
			// same: Overrides round-trips every new field.
			again, err := manifest.Load(context.Background(), manifest.Overrides("again", *m.Limits()))
			if err != nil {
				t.Fatalf("Load(Overrides(loaded)) error: %v", err)
			}
			if diff := cmp.Diff(m.Limits(), again.Limits(), cmpEmpty); diff != "" {
				t.Errorf("Overrides round trip mismatch (-first +again):\n%s", diff)
			}
		})
	}
}

// TestLoadRestErrors checks that every bad value of the new keys is an
// error naming the layer, the key and the value, as for the other keys.
func TestLoadRestErrors(t *testing.T) {
	const section = "[worker.tool_output]\n"
	const rest = "[worker.tool_output.rest]\n"
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
	overrides := func(l manifest.ToolOutputLimits) func(t *testing.T) ([]manifest.Option, string) {
		return func(*testing.T) ([]manifest.Option, string) {
			return []manifest.Option{manifest.Overrides("flags", l)}, "flags"
		}
	}
	const (
		keepRest = "worker.tool_output.keep_rest"
		maxBytes = "worker.tool_output.rest.max_bytes"
		maxEntry = "worker.tool_output.rest.max_entry_bytes"
		ttl      = "worker.tool_output.rest.ttl"
		tool     = "worker.tool_output.rest.tool"
		store    = "worker.tool_output.rest.store"
	)
	long := strings.Repeat("a", 65)
	tests := []struct {
		name   string
		layers func(t *testing.T) ([]manifest.Option, string)
		key    string
		value  string
		reason string
	}{
		{"keep_rest a string", file(section + `keep_rest = "yes"`), keepRest, `"yes"`, "a string, not a boolean (write true or false without quotes)"},
		{"keep_rest an integer", file(section + `keep_rest = 1`), keepRest, "1", "an integer, not a boolean"},
		{"per_tool keep_rest", file("[worker.tool_output.per_tool]\nBash = { keep_rest = \"no\" }\n"),
			"worker.tool_output.per_tool.Bash.keep_rest", `"no"`, "a string, not a boolean"},
		{"rest not a table", file(section + `rest = 5`), "worker.tool_output.rest", "5", "must be a table"},
		{"dir not a string", file(rest + `dir = 5`), "worker.tool_output.rest.dir", "5", "an integer, not a string"},
		{"dir with a NUL", file(rest + `dir = "/tmp/a\u0000b"`), "worker.tool_output.rest.dir", `"/tmp/a\x00b"`, "NUL"},
		{"max_bytes zero", file(rest + `max_bytes = 0`), maxBytes, "0", "0 is not a size; omit the key for the store's default"},
		{"max_bytes negative", file(rest + `max_bytes = -1`), maxBytes, "-1", "must be positive"},
		{"max_bytes over 1 TiB", file(rest + `max_bytes = 1_099_511_627_777`), maxBytes, "1099511627777", "above the maximum of 1099511627776 bytes (1 TiB)"},
		{"max_bytes a string", file(rest + `max_bytes = "8MiB"`), maxBytes, `"8MiB"`, "a string, not an integer"},
		{"max_bytes a float", file(rest + `max_bytes = 1e9`), maxBytes, "1e+09", "a float, not an integer"},
		{"max_entry_bytes zero", file(rest + `max_entry_bytes = 0`), maxEntry, "0", "0 is not a size"},
		{"max_entry_bytes above max_bytes", file(rest + "max_bytes = 4096\nmax_entry_bytes = 8192\n"), maxEntry, "8192", "above max_bytes (4096, set by file"},
		{"ttl not a duration", file(rest + `ttl = "forever"`), ttl, `"forever"`, `not a duration (want a Go duration such as "24h" or "90m")`},
		{"ttl without a unit", file(rest + `ttl = "24"`), ttl, `"24"`, "not a duration"},
		{"ttl an integer", file(rest + `ttl = 86400`), ttl, "86400", `an integer, not a duration (want a Go duration such as "24h" or "90m", in quotes)`},
		{"ttl zero", file(rest + `ttl = "0s"`), ttl, `"0s"`, "0 is not a time to live"},
		{"ttl negative", file(rest + `ttl = "-1h"`), ttl, `"-1h"`, "must be positive"},
		{"ttl over a year", file(rest + `ttl = "8761h"`), ttl, `"8761h"`, "above the maximum of 8760h (a year)"},
		{"tool empty", file(rest + `tool = ""`), tool, `""`, "not a tool name (want 1 to 64 characters"},
		{"tool with a space", file(rest + `tool = "read more"`), tool, `"read more"`, "not a tool name"},
		{"tool too long", file(rest + `tool = "` + long + `"`), tool, `"` + long + `"`, "not a tool name"},
		{"store unknown", file(rest + `store = "s3"`), store, `"s3"`,
			`unknown store (want "memory", "dir" or a redis:// or rediss:// URL; omit the key to let the front end choose)`},
		{"store misspelt", file(rest + `store = "memroy"`), store, `"memroy"`, `did you mean "memory"?`},
		{"store URL of another scheme", file(rest + `store = "memcached://cache:11211"`), store, `"memcached://cache:11211"`,
			`unknown store scheme "memcached" (want redis:// or rediss://)`},
		{"store URL without a host", file(rest + `store = "redis:///0"`), store, `"redis:///0"`, "a Redis URL needs a host"},
		{"store URL without a host, password hidden", file(rest + `store = "redis://:hunter2@/0"`), store, `"redis://:xxxxx@/0"`, "a Redis URL needs a host"},
		{"store URL with a database not a number", file(rest + `store = "redis://app:hunter2@cache:6379/zero"`), store,
			`"redis://app:xxxxx@cache:6379/zero"`, `database "zero": want a number`},
		{"store URL with a path", file(rest + `store = "redis://cache/0/1"`), store, `"redis://cache/0/1"`, `database "0/1": want a number`},
		{"store not a URL, password hidden", file(rest + `store = "redis://app:hunter2@cache:port/0"`), store,
			`"redis://xxxxx@cache:port/0"`, "not a URL (want redis://host:6379/0)"},
		{"env keep_rest yes", env(settings.EnvKeepRest + "=yes"), keepRest, `"yes"`, "not a boolean (want true, false, 1 or 0)"},
		{"env keep_rest TRUE", env(settings.EnvKeepRest + "=TRUE"), keepRest, `"TRUE"`, "not a boolean"},
		{"env keep_rest empty", env(settings.EnvKeepRest + "="), keepRest, `""`, "not a boolean"},
		{"env per_tool keep_rest", env(settings.EnvPerToolPrefix + "Bash__KEEP_REST=on"),
			"worker.tool_output.per_tool.Bash.keep_rest", `"on"`, "not a boolean"},
		{"env max_bytes with a unit", env(settings.EnvRestMaxBytes + "=8M"), maxBytes, `"8M"`, "not an integer"},
		{"env max_bytes overflow", env(settings.EnvRestMaxBytes + "=99999999999999999999"), maxBytes, `"99999999999999999999"`, "above the maximum of 1099511627776 bytes (1 TiB)"},
		{"env max_entry_bytes zero", env(settings.EnvRestMaxEntryBytes + "=0"), maxEntry, `"0"`, "0 is not a size"},
		{"env ttl", env(settings.EnvRestTTL + "=forever"), ttl, `"forever"`, "not a duration"},
		{"env tool", env(settings.EnvRestTool + "=a/b"), tool, `"a/b"`, "not a tool name"},
		{"env store", env(settings.EnvRestStore + "=redis://:hunter2@"), store, `"redis://:xxxxx@"`, "a Redis URL needs a host"},
		{"overrides ttl", overrides(manifest.ToolOutputLimits{Rest: &manifest.RestConfig{TTL: -time.Second}}), ttl, `"-1s"`, "must be positive"},
		{"overrides store", overrides(manifest.ToolOutputLimits{Rest: &manifest.RestConfig{Store: "s3"}}), store, `"s3"`, "unknown store"},
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
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q shows a password", err)
			}
		})
	}
}

// TestRestSizesAcrossLayers checks the one check of two keys together on
// the value the layers make: the error names the layer that set
// max_entry_bytes, and the one that set max_bytes.
func TestRestSizesAcrossLayers(t *testing.T) {
	_, err := manifest.Load(context.Background(),
		manifest.Bytes("user.toml", []byte("[worker.tool_output.rest]\nmax_bytes = 1048576\nmax_entry_bytes = 4096\n")),
		manifest.Environ([]string{settings.EnvRestMaxEntryBytes + "=2097152"}),
	)
	want := "manifest: env " + settings.EnvRestMaxEntryBytes + ": worker.tool_output.rest.max_entry_bytes = 2097152: " +
		"above max_bytes (1048576, set by user.toml): an entry must fit the quota"
	got := ""
	if err != nil {
		got = err.Error()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load() error mismatch (-want +got):\n%s", diff)
	}

	// A later layer that raises the quota makes the pair valid again.
	m, err := manifest.Load(context.Background(),
		manifest.Bytes("user.toml", []byte("[worker.tool_output.rest]\nmax_bytes = 1048576\n")),
		manifest.Environ([]string{settings.EnvRestMaxEntryBytes + "=2097152", settings.EnvRestMaxBytes + "=4194304"}),
	)
	if err != nil {
		t.Fatalf("Load() error: %v", err)
	}
	if diff := cmp.Diff(manifest.RestConfig{MaxBytes: 4 << 20, MaxEntryBytes: 2 << 20}, m.Limits().RestConfig()); diff != "" {
		t.Errorf("RestConfig() mismatch (-want +got):\n%s", diff)
	}
}

func TestValidateRest(t *testing.T) {
	limits := func(l manifest.ToolOutputLimits) *manifest.WorkerManifest {
		return &manifest.WorkerManifest{ToolOutput: &l}
	}
	tests := []struct {
		name string
		m    *manifest.WorkerManifest
		want string // "" for valid
	}{
		{"zero rest", limits(manifest.ToolOutputLimits{Rest: &manifest.RestConfig{}}), ""},
		{"keep_rest alone", limits(manifest.ToolOutputLimits{KeepRest: no, PerTool: map[string]manifest.ToolEntry{"Bash": {KeepRest: yes}}}), ""},
		{"every key", limits(manifest.ToolOutputLimits{Rest: &manifest.RestConfig{Dir: "d", MaxBytes: 1 << 40, MaxEntryBytes: 1 << 40,
			TTL: manifest.MaxRestTTL, Tool: "toolcap_read", Store: settings.RestStoreDir}}), ""},
		{"negative quota", limits(manifest.ToolOutputLimits{Rest: &manifest.RestConfig{MaxBytes: -1}}),
			"manifest: WorkerManifest: worker.tool_output.rest.max_bytes = -1: a size must be positive"},
		{"entry over the quota", limits(manifest.ToolOutputLimits{Rest: &manifest.RestConfig{MaxBytes: 4096, MaxEntryBytes: 4097}}),
			"manifest: WorkerManifest: worker.tool_output.rest.max_entry_bytes = 4097: above max_bytes (4096, set by WorkerManifest): an entry must fit the quota"},
		{"a ttl too long", limits(manifest.ToolOutputLimits{Rest: &manifest.RestConfig{TTL: manifest.MaxRestTTL + time.Minute}}),
			`manifest: WorkerManifest: worker.tool_output.rest.ttl = "8760h1m": above the maximum of 8760h (a year)`},
		{"a tool name with a slash", limits(manifest.ToolOutputLimits{Rest: &manifest.RestConfig{Tool: "a/b"}}),
			`manifest: WorkerManifest: worker.tool_output.rest.tool = "a/b": not a tool name (want 1 to 64 characters of A-Z, a-z, 0-9, '_', '.' and '-', as MCP tool names allow)`},
		{"a per_tool entry of keep_rest alone is valid", limits(manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"Read": {KeepRest: no}}}), ""},
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

// TestPoliciesKeepRest resolves KeepRest for each tool: its own keep_rest,
// else the default keep_rest, else true.
func TestPoliciesKeepRest(t *testing.T) {
	file := func(name, text string) manifest.Option { return manifest.Bytes(name, []byte(text)) }
	tests := []struct {
		name string
		opts []manifest.Option
		want map[string]bool // tool -> KeepRest; "other" has no entry
	}{
		{"unset: true", nil, map[string]bool{"other": true}},
		{"default true", []manifest.Option{file("a.toml", "[worker.tool_output]\nkeep_rest = true\n")}, map[string]bool{"other": true}},
		{"default false", []manifest.Option{file("a.toml", "[worker.tool_output]\nkeep_rest = false\n")}, map[string]bool{"other": false}},
		{
			name: "a tool off under the default",
			opts: []manifest.Option{file("a.toml", "[worker.tool_output.per_tool]\nBash = { keep_rest = false }\nRead = 4096\n")},
			want: map[string]bool{"Bash": false, "Read": true, "other": true},
		},
		{
			name: "a tool on under a default of false",
			opts: []manifest.Option{file("a.toml", "[worker.tool_output]\nkeep_rest = false\n[worker.tool_output.per_tool]\nBash = { keep_rest = true }\nRead = 4096\n")},
			want: map[string]bool{"Bash": true, "Read": false, "other": false},
		},
		{
			name: "a later short form keeps an earlier keep_rest",
			opts: []manifest.Option{
				file("user.toml", "[worker.tool_output.per_tool]\nRead = { keep_rest = false }\n"),
				file("project.toml", "[worker.tool_output.per_tool]\nRead = 4096\n"),
			},
			want: map[string]bool{"Read": false, "other": true},
		},
		{
			name: "the environment's short form keeps a file's keep_rest; its field changes it",
			opts: []manifest.Option{
				file("user.toml", "[worker.tool_output.per_tool]\nRead = { max_bytes = 8192, keep_rest = false }\nBash = { keep_rest = false }\n"),
				manifest.Environ([]string{settings.EnvPerToolPrefix + "Read=4096", settings.EnvPerToolPrefix + "Bash__KEEP_REST=true"}),
			},
			want: map[string]bool{"Read": false, "Bash": true, "other": true},
		},
		{
			name: "a later default does not reach a tool's own",
			opts: []manifest.Option{
				file("user.toml", "[worker.tool_output.per_tool]\nBash = { keep_rest = true }\n"),
				manifest.Environ([]string{settings.EnvKeepRest + "=0"}),
			},
			want: map[string]bool{"Bash": true, "other": false},
		},
		{
			name: "overrides: a short entry keeps keep_rest",
			opts: []manifest.Option{
				file("user.toml", "[worker.tool_output.per_tool]\nRead = { keep_rest = false }\n"),
				manifest.Overrides("flag --max-bytes", manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"Read": {MaxBytes: 2048}}}),
			},
			want: map[string]bool{"Read": false, "other": true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := manifest.Load(context.Background(), tt.opts...)
			if err != nil {
				t.Fatalf("Load() error: %v", err)
			}
			p, err := m.Policies()
			if err != nil {
				t.Fatalf("Policies() error: %v", err)
			}
			got := map[string]bool{}
			fromLimits := map[string]bool{}
			for tool := range tt.want {
				got[tool] = p.For(tool).KeepRest
				fromLimits[tool] = m.Limits().KeepRestFor(tool)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("For().KeepRest mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, fromLimits); diff != "" {
				t.Errorf("KeepRestFor() mismatch (-want +got):\n%s", diff)
			}
		})
	}

	// The short form a later layer writes leaves the earlier entry's
	// keep_rest and changes its limit.
	m, err := manifest.Load(context.Background(),
		file("user.toml", "[worker.tool_output.per_tool]\nRead = { keep_rest = false }\n"),
		file("project.toml", "[worker.tool_output.per_tool]\nRead = 4096\n"),
	)
	if err != nil {
		t.Fatalf("Load() error: %v", err)
	}
	if diff := cmp.Diff(manifest.ToolEntry{MaxBytes: 4096, KeepRest: no}, m.Limits().PerTool["Read"]); diff != "" {
		t.Errorf("PerTool[Read] mismatch (-want +got):\n%s", diff)
	}
}

// TestRestAccessors calls the accessors of the new keys, on nil values
// too: nil gives the defaults.
func TestRestAccessors(t *testing.T) {
	type figures struct {
		KeepRest bool
		Tool     string
		Rest     manifest.RestConfig
		Policy   bool
	}
	var nilPolicies *shape.Policies
	tests := []struct {
		name   string
		limits *manifest.ToolOutputLimits
		want   figures
	}{
		{"nil", nil, figures{KeepRest: true, Tool: "toolcap_read", Policy: true}},
		{"zero", &manifest.ToolOutputLimits{}, figures{KeepRest: true, Tool: "toolcap_read", Policy: true}},
		{"a rest table without a tool", &manifest.ToolOutputLimits{Rest: &manifest.RestConfig{TTL: time.Hour}},
			figures{KeepRest: true, Tool: "toolcap_read", Rest: manifest.RestConfig{TTL: time.Hour}, Policy: true}},
		{"every key", &manifest.ToolOutputLimits{KeepRest: no, Rest: &manifest.RestConfig{Dir: "/d", MaxBytes: 10, MaxEntryBytes: 5, TTL: time.Minute, Tool: "more", Store: "dir"}},
			figures{Tool: "more", Rest: manifest.RestConfig{Dir: "/d", MaxBytes: 10, MaxEntryBytes: 5, TTL: time.Minute, Tool: "more", Store: "dir"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.limits.Policies()
			if err != nil {
				t.Fatalf("Policies() error: %v", err)
			}
			got := figures{tt.limits.KeepRestFor("Read"), tt.limits.RestTool(), tt.limits.RestConfig(), p.For("Read").KeepRest}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("accessors mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if !nilPolicies.For("Read").KeepRest || !nilPolicies.WithCounter(nil).For("Read").KeepRest {
		t.Errorf("nil Policies: For().KeepRest = false, want true (keep_rest unset)")
	}
	// RestConfig returns a copy: changing it does not reach the limits.
	l := &manifest.ToolOutputLimits{Rest: &manifest.RestConfig{Tool: "more"}}
	c := l.RestConfig()
	c.Tool = "other"
	if got := l.RestTool(); got != "more" {
		t.Errorf("after a change to RestConfig()'s copy, RestTool() = %q, want %q", got, "more")
	}
}

// TestResolveRest reports where keep_rest and each key of the rest table
// came from.
func TestResolveRest(t *testing.T) {
	r, err := manifest.Resolve(context.Background(),
		manifest.Bytes("user.toml", []byte("[worker.tool_output]\nkeep_rest = false\n[worker.tool_output.rest]\nttl = \"24h\"\nmax_bytes = 8388608\n[worker.tool_output.per_tool]\nBash = { keep_rest = true }\n")),
		manifest.Environ([]string{settings.EnvRestTTL + "=90m", settings.EnvRestStore + "=dir"}),
		manifest.Overrides("flags", manifest.ToolOutputLimits{Rest: &manifest.RestConfig{Tool: "more"}, PerTool: map[string]manifest.ToolEntry{"Read": {KeepRest: no}}}),
	)
	if err != nil {
		t.Fatalf("Resolve() error: %v", err)
	}
	type sources struct {
		KeepRest        manifest.StrategySetting
		PerToolKeepRest map[string]manifest.StrategySetting
		Rest            map[string]manifest.StrategySetting
	}
	want := sources{
		KeepRest: manifest.StrategySetting{Value: "false", Source: "user.toml"},
		PerToolKeepRest: map[string]manifest.StrategySetting{
			"Bash": {Value: "true", Source: "user.toml"},
			"Read": {Value: "false", Source: "flags"},
		},
		Rest: map[string]manifest.StrategySetting{
			"ttl":       {Value: `"1h30m"`, Source: "env " + settings.EnvRestTTL},
			"max_bytes": {Value: "8388608", Source: "user.toml"},
			"store":     {Value: `"dir"`, Source: "env " + settings.EnvRestStore},
			"tool":      {Value: `"more"`, Source: "flags"},
		},
	}
	if diff := cmp.Diff(want, sources{r.KeepRest, r.PerToolKeepRest, r.Rest}); diff != "" {
		t.Errorf("Resolve() mismatch (-want +got):\n%s", diff)
	}

	none, err := manifest.Resolve(context.Background())
	if err != nil {
		t.Fatalf("Resolve() error: %v", err)
	}
	wantNone := sources{KeepRest: manifest.StrategySetting{Value: "true", Source: settings.SourceDefault}}
	if diff := cmp.Diff(wantNone, sources{none.KeepRest, none.PerToolKeepRest, none.Rest}); diff != "" {
		t.Errorf("Resolve() without layers mismatch (-want +got):\n%s", diff)
	}
}

// TestRestWarnings covers unknown keys in the rest table and near misses
// of the new keys and variables: warnings naming the key and the layer.
func TestRestWarnings(t *testing.T) {
	var buf bytes.Buffer
	r, err := manifest.Resolve(context.Background(),
		manifest.Bytes("m.toml", []byte("[worker.tool_output]\nkeep_rests = false\n[worker.tool_output.rest]\nmax_byte = 100\ncolour = \"blue\"\n[worker.tool_output.per_tool]\nBash = { keep_res = false }\n")),
		manifest.Environ([]string{"TOOLCAP_WORKER__TOOL_OUTPUT__REST__MAXBYTES=5", "TOOLCAP_WORKER__TOOL_OUTPUT__KEEPREST=1"}),
		manifest.WithLogger(logtest.New(&buf, hclog.Info)),
	)
	if err != nil {
		t.Fatalf("Resolve() error: %v", err)
	}
	want := []string{
		`unknown key "keep_rests" in [worker.tool_output] of m.toml; ignored (did you mean "keep_rest"?)`,
		`unknown key "keep_res" in per_tool entry Bash of m.toml; ignored (did you mean "keep_rest"?)`,
		`unknown key "colour" in [worker.tool_output.rest] of m.toml; ignored`,
		`unknown key "max_byte" in [worker.tool_output.rest] of m.toml; ignored (did you mean "max_bytes"?)`,
		"unknown environment variable TOOLCAP_WORKER__TOOL_OUTPUT__REST__MAXBYTES; ignored (did you mean TOOLCAP_WORKER__TOOL_OUTPUT__REST__MAX_BYTES?)",
		"unknown environment variable TOOLCAP_WORKER__TOOL_OUTPUT__KEEPREST; ignored (did you mean TOOLCAP_WORKER__TOOL_OUTPUT__KEEP_REST?)",
	}
	if diff := cmp.Diff(want, r.Warnings); diff != "" {
		t.Errorf("Warnings mismatch (-want +got):\n%s", diff)
	}
	var logged []string
	for _, m := range logtest.Lines(t, &buf) {
		logged = append(logged, m["@message"].(string))
	}
	if diff := cmp.Diff(want, logged); diff != "" {
		t.Errorf("logged warnings mismatch (-want +got):\n%s", diff)
	}
	if l := r.Manifest.Limits(); l.KeepRest != nil || l.Rest != nil {
		t.Errorf("unknown keys set KeepRest %v, Rest %+v; want neither", l.KeepRest, l.Rest)
	}
}

// TestLoadRestRedisStore: store takes the URL of a Redis from any layer,
// kept as written in the limits (the store needs its password) and shown
// without its password where the resolution reports it.
func TestLoadRestRedisStore(t *testing.T) {
	tests := []struct {
		name  string
		opt   manifest.Option
		url   string
		shown string
	}{
		{"file", manifest.Bytes("m.toml", []byte("[worker.tool_output.rest]\nstore = \"redis://cache.internal:6379/0\"\n")),
			"redis://cache.internal:6379/0", `"redis://cache.internal:6379/0"`},
		{"file, TLS, a password, options", manifest.Bytes("m.toml", []byte("[worker.tool_output.rest]\nstore = \"rediss://app:hunter2@cache.internal:6380/3?dial_timeout=1s\"\n")),
			"rediss://app:hunter2@cache.internal:6380/3?dial_timeout=1s", `"rediss://app:xxxxx@cache.internal:6380/3?dial_timeout=1s"`},
		{"environment, no database", manifest.Environ([]string{settings.EnvRestStore + "=redis://:hunter2@10.0.0.7"}),
			"redis://:hunter2@10.0.0.7", `"redis://:xxxxx@10.0.0.7"`},
		{"environment, IPv6, trailing slash", manifest.Environ([]string{settings.EnvRestStore + "=redis://[::1]:6379/"}),
			"redis://[::1]:6379/", `"redis://[::1]:6379/"`},
		{"overrides, scheme in capitals", manifest.Overrides("flags", manifest.ToolOutputLimits{Rest: &manifest.RestConfig{Store: "REDIS://cache"}}),
			"REDIS://cache", `"redis://cache"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := manifest.Load(context.Background(), tt.opt)
			if err != nil {
				t.Fatalf("Load() error: %v", err)
			}
			r, err := manifest.Resolve(context.Background(), tt.opt)
			if err != nil {
				t.Fatalf("Resolve() error: %v", err)
			}
			type got struct {
				Store, Shown string
				Redis        bool
			}
			want := got{tt.url, tt.shown, true}
			g := got{m.ToolOutput.RestConfig().Store, r.Rest["store"].Value, settings.IsRedisStore(m.ToolOutput.RestConfig().Store)}
			if diff := cmp.Diff(want, g); diff != "" {
				t.Errorf("store mismatch (-want +got):\n%s", diff)
			}
		})
	}
	for _, s := range []string{"", "memory", "dir", "redis", "http://cache"} {
		if settings.IsRedisStore(s) {
			t.Errorf("IsRedisStore(%q) = true", s)
		}
	}
}

func TestRedactStore(t *testing.T) {
	cases := map[string]string{
		"":                                         "",
		"dir":                                      "dir",
		"redis://localhost:6379/0":                 "redis://localhost:6379/0",
		"redis://:hunter2@localhost:6379/0":        "redis://:xxxxx@localhost:6379/0",
		"rediss://app:hunter2@cache.internal/3":    "rediss://app:xxxxx@cache.internal/3",
		"redis://app@cache.internal/3":             "redis://app@cache.internal/3",
		"redis://app:hunter2@local host/%zz":       "redis://xxxxx@local host/%zz",
		"redis://app:hunt@r2@local host:1/x?a=%zz": "redis://xxxxx@local host:1/x?a=%zz",
	}
	got := map[string]string{}
	for in := range cases {
		got[in] = settings.RedactStore(in)
	}
	if diff := cmp.Diff(cases, got); diff != "" {
		t.Errorf("RedactStore mismatch (-want +got):\n%s", diff)
	}
}

func TestKeepsRest(t *testing.T) {
	on, off := true, false
	tests := []struct {
		name string
		l    *manifest.ToolOutputLimits
		want bool
	}{
		{"nil", nil, true},
		{"unset", &manifest.ToolOutputLimits{}, true},
		{"on", &manifest.ToolOutputLimits{KeepRest: &on}, true},
		{"off", &manifest.ToolOutputLimits{KeepRest: &off}, false},
		{"off, one tool off too", &manifest.ToolOutputLimits{KeepRest: &off, PerTool: map[string]manifest.ToolEntry{"Bash": {KeepRest: &off}}}, false},
		{"off, one tool on", &manifest.ToolOutputLimits{KeepRest: &off, PerTool: map[string]manifest.ToolEntry{"Bash": {KeepRest: &on}}}, true},
	}
	for _, tt := range tests {
		if got := tt.l.KeepsRest(); got != tt.want {
			t.Errorf("%s: KeepsRest() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestPoliciesPageBytes: a tool held below the read tool's limit has its
// pages held to its own limit (issue 38, item 4), unless the read tool has
// a per_tool limit of its own.
func TestPoliciesPageBytes(t *testing.T) {
	file := func(name, text string) manifest.Option { return manifest.Bytes(name, []byte(text)) }
	tests := []struct {
		name string
		opts []manifest.Option
		want map[string]int // tool -> PageBytes; "other" has no entry
	}{
		{"no entries", nil, map[string]int{"other": 0, manifest.DefaultRestTool: 0}},
		{"a tool below the default", []manifest.Option{file("a.toml", "[worker.tool_output.per_tool]\nsmall = 2048\nbig = 65536\n")},
			map[string]int{"small": 2048, "big": 0, "other": 0, manifest.DefaultRestTool: 0}},
		{"a tool below a lowered default", []manifest.Option{file("a.toml", "[worker.tool_output]\ndefault_max_bytes = 4096\n[worker.tool_output.per_tool]\nsmall = 2048\nbig = 8192\n")},
			map[string]int{"small": 2048, "big": 0, "other": 0}},
		{"the read tool's own limit wins", []manifest.Option{file("a.toml", "[worker.tool_output.per_tool]\nsmall = 2048\ntoolcap_read = 32768\n")},
			map[string]int{"small": 0, "other": 0, "toolcap_read": 0}},
		{"an entry of the read tool without a limit", []manifest.Option{file("a.toml", "[worker.tool_output.per_tool]\nsmall = 2048\ntoolcap_read = { keep_rest = false }\n")},
			map[string]int{"small": 2048, "other": 0}},
		{"a renamed read tool", []manifest.Option{file("a.toml", "[worker.tool_output.rest]\ntool = \"more\"\n[worker.tool_output.per_tool]\nsmall = 2048\nmore = 4096\n")},
			map[string]int{"small": 0, "more": 0}},
		{"from the environment", []manifest.Option{manifest.Environ([]string{settings.EnvPerToolPrefix + "small=1000"})},
			map[string]int{"small": 1000, "other": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := manifest.Load(context.Background(), tt.opts...)
			if err != nil {
				t.Fatalf("Load() error: %v", err)
			}
			p, err := m.Policies()
			if err != nil {
				t.Fatalf("Policies() error: %v", err)
			}
			got := map[string]int{}
			for tool := range tt.want {
				got[tool] = p.For(tool).PageBytes
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("For().PageBytes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
