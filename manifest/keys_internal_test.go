package manifest

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolcap/toolcap/internal/settings"
)

// TestKeyTable checks the table every other spelling of a key comes from:
// one key is the short form's, every key has a Go field of a type get and
// put know, and the exported variable names are the table's.
func TestKeyTable(t *testing.T) {
	var short []string
	for _, k := range keys {
		if k.short {
			short = append(short, k.name)
		}
		var l ToolOutputLimits
		if _, ok := get(k.top(&l)); ok {
			t.Errorf("key %s: a zero ToolOutputLimits sets it", k.name)
		}
		if k.top(&l) == nil || (k.field != "") != (k.entry != nil) {
			t.Errorf("key %s: its Go fields do not match its field %q", k.name, k.field)
		}
		if k.entry != nil {
			if _, ok := get(k.entry(&ToolEntry{})); ok {
				t.Errorf("key %s: a zero ToolEntry sets it", k.name)
			}
		}
	}
	if diff := cmp.Diff([]string{"default_max_bytes"}, short); diff != "" {
		t.Errorf("keys of the short form mismatch (-want +got):\n%s", diff)
	}

	base := "worker" + delim + "tool_output" + delim
	vars := map[string]*key{
		settings.EnvDefaultMaxBytes:   keyNamed("", "default_max_bytes"),
		settings.EnvDefaultKeep:       keyNamed("", "default_keep"),
		settings.EnvBatchMaxBytes:     keyNamed("", "batch_max_bytes"),
		settings.EnvDefaultMaxTokens:  keyNamed("", "default_max_tokens"),
		settings.EnvBatchMaxTokens:    keyNamed("", "batch_max_tokens"),
		settings.EnvTokenizer:         keyNamed("", "tokenizer"),
		settings.EnvKeepRest:          keyNamed("", "keep_rest"),
		settings.EnvRestDir:           keyNamed(restName, "dir"),
		settings.EnvRestMaxBytes:      keyNamed(restName, "max_bytes"),
		settings.EnvRestMaxEntryBytes: keyNamed(restName, "max_entry_bytes"),
		settings.EnvRestTTL:           keyNamed(restName, "ttl"),
		settings.EnvRestTool:          keyNamed(restName, "tool"),
		settings.EnvRestStore:         keyNamed(restName, "store"),
	}
	for name, k := range vars {
		if k == nil {
			t.Errorf("%s: the table has no key for it", name)
			continue
		}
		want := base + k.name
		if k.table != "" {
			want = base + k.table + delim + k.name
		}
		if got := envKey(name); got != want || k.envName() != name {
			t.Errorf("envKey(%s) = %q, want the table's %q (its variable %s)", name, got, want, k.envName())
		}
	}
	for _, k := range keys {
		if envKey(k.envName()) == "" {
			t.Errorf("key %s: its variable %s is not read", k.dotted(), k.envName())
		}
	}
	for _, k := range keys {
		if k.field == "" {
			continue
		}
		name := settings.EnvPerToolPrefix + "Bash__" + strings.ToUpper(k.field)
		want := base + perToolName + delim + "Bash" + delim + k.field
		if got := envKey(name); got != want {
			t.Errorf("envKey(%s) = %q, want %q", name, got, want)
		}
	}
}

// TestKindsRoundTrip puts a valid value of each key into a Go value, gets
// it back, and writes it as a layer holds it: what Overrides and assemble
// rely on.
func TestKindsRoundTrip(t *testing.T) {
	values := map[string]any{
		"default_max_bytes": 4096, "batch_max_bytes": 65536, "default_max_tokens": 4000, "batch_max_tokens": 16000,
		"tokenizer": "o200k_base", "default_keep": "head_tail", "default_tail_share": 0.3,
		"default_keep_lines": []string{"FAIL"}, "default_fallback": "head_tail", "keep_rest": false,
		"redact": false, "redact_patterns": []string{`token=(\w+)`}, "redact_allow": []string{"AKIAIOSFODNN7EXAMPLE"},
		"rest.dir": "/var/cache/toolcap", "rest.max_bytes": int64(8 << 20), "rest.max_entry_bytes": int64(1 << 20),
		"rest.ttl": 90 * time.Minute, "rest.tool": "read_more", "rest.store": "memory",
		"history.max_tokens": 60000, "history.keep_recent": 6, "history.clear_at_least": 20000, "history.never": []string{"TodoWrite"},
	}
	for _, k := range keys {
		name := k.name
		if k.table != "" {
			name = k.table + "." + k.name
		}
		v, ok := values[name]
		if !ok {
			t.Errorf("key %s: no test value", name)
			continue
		}
		l := ToolOutputLimits{Rest: &RestConfig{}, History: &HistoryConfig{}}
		put(k.top(&l), v)
		got, set := get(k.top(&l))
		if !set || !cmp.Equal(v, got) {
			t.Errorf("key %s: put %v, get %v (set %v)", k.name, v, got, set)
		}
		back, err := k.value(layerValue(got), false)
		if err != nil || !cmp.Equal(v, back) {
			t.Errorf("key %s: the layer form %v reads back as %v, %v", k.name, layerValue(got), back, err)
		}
	}
}
