package manifest_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"

	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
)

// FuzzLoad loads arbitrary TOML and an arbitrary environment value. Whatever
// the input, Load either fails with a *manifest.Error naming its layer, or
// returns limits that are all in range, validate, and survive a round trip
// through TOML unchanged: the keep_rest keys and the rest table included.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("[worker.tool_output]\ndefault_max_bytes = 16384\n[worker.tool_output.per_tool]\nRead = 32768\nGrep = 8192\n"), "4096")
	f.Add([]byte("[worker.tool_output.per_tool]\n\"mcp.fs.read\" = 200\n\"a/b\" = 300\n"), "")
	f.Add([]byte("[worker.tool_output]\ndefault_max_bytes = \"8192\"\n"), "x")
	f.Add([]byte("[worker]\ntool_output = 1\n"), "-1")
	f.Add([]byte("[worker.tool_output]\ndefault_max_bytes = 51200\nbatch_max_bytes = 65536\n"), "65536")
	f.Add([]byte("[worker.tool_output]\nbatch_max_bytes = 0\n"), "0")
	f.Add([]byte("[worker.tool_output]\nbatch_max_bytes = \"65536\"\n"), "127")
	f.Add([]byte("[worker.tool_output]\ndefault_max_tokens = 4000\nbatch_max_tokens = 16000\ntokenizer = \"o200k_base\"\n[worker.tool_output.per_tool]\nBash = { max_tokens = 8000, keep = \"head_tail\" }\n"), "4000")
	f.Add([]byte("[worker.tool_output]\ntokenizer = \"o200k\"\ndefault_max_tokens = 31\n"), "cl100k_base")
	f.Add([]byte("[worker.tool_output]\nkeep_rest = false\n[worker.tool_output.rest]\ndir = \"/var/cache/toolcap\"\nmax_bytes = 8388608\nmax_entry_bytes = 1048576\nttl = \"90m\"\ntool = \"read_more\"\nstore = \"dir\"\n[worker.tool_output.per_tool]\nBash = { keep_rest = true }\nRead = { max_bytes = 4096, keep_rest = false }\n"), "toolcap_read")
	f.Add([]byte("[worker.tool_output]\nkeep_rest = \"yes\"\n[worker.tool_output.rest]\nttl = \"forever\"\nmax_bytes = 0\nstore = \"redis://localhost:6379\"\n"), "a b")
	f.Fuzz(func(t *testing.T, data []byte, envValue string) {
		m, err := manifest.Load(context.Background(),
			manifest.Bytes("fuzz.toml", data),
			manifest.Environ([]string{
				"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=" + envValue,
				"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__KEEP_LINES=" + envValue,
				"TOOLCAP_WORKER__TOOL_OUTPUT__BATCH_MAX_BYTES=" + envValue,
				"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Grep__MAX_TOKENS=" + envValue,
				"TOOLCAP_WORKER__TOOL_OUTPUT__REST__TOOL=" + envValue,
			}),
		)
		if err != nil {
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("Load() error %v is not a *manifest.Error", err)
			}
			if me.Source != "fuzz.toml" && !strings.HasPrefix(me.Source, "env TOOLCAP_") {
				t.Fatalf("Load() error names no layer: %v", err)
			}
			if m != nil {
				t.Fatalf("Load() returned a manifest and an error")
			}
			return
		}
		l := m.Limits()
		if l == nil {
			t.Fatal("Load() returned no tool_output limits")
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("loaded manifest does not validate: %v", err)
		}
		inRange := func(n int) bool { return n >= manifest.MinMaxBytes && n <= manifest.MaxMaxBytes }
		if !inRange(l.For("any tool")) {
			t.Fatalf("default %d out of range", l.For("any tool"))
		}
		if b := l.Batch(); b != 0 && !inRange(b) {
			t.Fatalf("batch_max_bytes %d out of range", b)
		}
		tokensInRange := func(n int) bool { return n == 0 || (n >= manifest.MinMaxTokens && n <= manifest.MaxMaxTokens) }
		if !tokensInRange(l.TokensFor("any tool")) || !tokensInRange(l.BatchTokens()) {
			t.Fatalf("token limits out of range: default %d, batch %d", l.TokensFor("any tool"), l.BatchTokens())
		}
		for name, e := range l.PerTool {
			if cmp.Equal(e, manifest.ToolEntry{}) {
				t.Fatalf("per_tool %q: an entry that sets nothing", name)
			}
			if n := e.MaxBytes; n != 0 && (!inRange(n) || l.For(name) != n) {
				t.Fatalf("per_tool %q max_bytes = %d, For = %d", name, n, l.For(name))
			}
			if n := e.MaxTokens; n != 0 && (!tokensInRange(n) || l.TokensFor(name) != n) {
				t.Fatalf("per_tool %q max_tokens = %d, TokensFor = %d", name, n, l.TokensFor(name))
			}
		}
		if name := l.TokenizerName(); name != "calibrated" && name != "o200k_base" && name != "cl100k_base" {
			t.Fatalf("tokenizer %q", name)
		}
		if r := l.Rest; r != nil {
			if cmp.Equal(*r, manifest.RestConfig{}) {
				t.Fatal("a rest table that sets nothing")
			}
			sizeInRange := func(n int64) bool { return n == 0 || (n > 0 && n <= manifest.MaxRestBytes) }
			if !sizeInRange(r.MaxBytes) || !sizeInRange(r.MaxEntryBytes) || (r.MaxBytes != 0 && r.MaxEntryBytes > r.MaxBytes) {
				t.Fatalf("rest sizes out of range: max_bytes %d, max_entry_bytes %d", r.MaxBytes, r.MaxEntryBytes)
			}
			if r.TTL < 0 || r.TTL > manifest.MaxRestTTL {
				t.Fatalf("rest ttl %v out of range", r.TTL)
			}
			if r.Store != "" && r.Store != settings.RestStoreMemory && r.Store != settings.RestStoreDir && !settings.IsRedisStore(r.Store) {
				t.Fatalf("rest store %q", r.Store)
			}
		}
		if tool := l.RestTool(); tool == "" || len(tool) > 64 {
			t.Fatalf("rest tool %q", tool)
		}

		p, err := l.Policies()
		if err != nil {
			t.Fatalf("loaded strategies do not compile: %v", err)
		}
		for _, name := range append([]string{"any tool"}, slices.Collect(maps.Keys(l.PerTool))...) {
			if got, want := p.For(name).KeepRest, l.KeepRestFor(name); got != want {
				t.Fatalf("For(%q).KeepRest = %v, KeepRestFor = %v", name, got, want)
			}
		}

		// Round trip: the limits and strategies, written back as TOML (the
		// long form where an entry sets more than max_bytes), load to the
		// same.
		per := map[string]any{}
		for name, e := range l.PerTool {
			if cmp.Equal(e, manifest.ToolEntry{MaxBytes: e.MaxBytes}) {
				per[name] = e.MaxBytes
				continue
			}
			m := strategyTable(e.Strategy, "")
			if e.MaxBytes != 0 {
				m["max_bytes"] = e.MaxBytes
			}
			if e.MaxTokens != 0 {
				m["max_tokens"] = e.MaxTokens
			}
			if e.KeepRest != nil {
				m["keep_rest"] = *e.KeepRest
			}
			per[name] = m
		}
		tool := strategyTable(l.Default, "default_")
		tool["default_max_bytes"] = l.DefaultMaxBytes
		if l.BatchMaxBytes != 0 {
			tool["batch_max_bytes"] = l.BatchMaxBytes
		}
		if l.DefaultMaxTokens != 0 {
			tool["default_max_tokens"] = l.DefaultMaxTokens
		}
		if l.BatchMaxTokens != 0 {
			tool["batch_max_tokens"] = l.BatchMaxTokens
		}
		if l.Tokenizer != "" {
			tool["tokenizer"] = l.Tokenizer
		}
		if l.KeepRest != nil {
			tool["keep_rest"] = *l.KeepRest
		}
		if r := l.Rest; r != nil {
			rest := map[string]any{"dir": r.Dir, "tool": r.Tool, "store": r.Store}
			if r.MaxBytes != 0 {
				rest["max_bytes"] = r.MaxBytes
			}
			if r.MaxEntryBytes != 0 {
				rest["max_entry_bytes"] = r.MaxEntryBytes
			}
			if r.TTL != 0 {
				rest["ttl"] = r.TTL.String()
			}
			if r.Tool == "" {
				delete(rest, "tool") // "" is no tool name in a file
			}
			tool["rest"] = rest
		}
		tool["per_tool"] = per
		text, err := toml.Marshal(map[string]any{"worker": map[string]any{"tool_output": tool}})
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, err := manifest.Load(context.Background(), manifest.Bytes("again.toml", text))
		if err != nil {
			t.Fatalf("reloading %q: %v", text, err)
		}
		if diff := cmp.Diff(l, again.Limits(), cmpEmpty); diff != "" {
			t.Fatalf("round trip mismatch (-first +again):\n%s", diff)
		}
	})
}

// strategyTable is s as TOML keys, prefixed.
func strategyTable(s manifest.Strategy, prefix string) map[string]any {
	m := map[string]any{}
	if s.Keep != "" {
		m[prefix+"keep"] = string(s.Keep)
	}
	if s.TailShare != 0 {
		m[prefix+"tail_share"] = s.TailShare
	}
	if s.KeepLines != nil {
		m[prefix+"keep_lines"] = s.KeepLines
	}
	if s.Fallback != "" {
		m[prefix+"fallback"] = string(s.Fallback)
	}
	return m
}
