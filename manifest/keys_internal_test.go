package manifest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	vars := map[string]string{
		EnvDefaultMaxBytes:  "default_max_bytes",
		EnvDefaultKeep:      "default_keep",
		EnvBatchMaxBytes:    "batch_max_bytes",
		EnvDefaultMaxTokens: "default_max_tokens",
		EnvBatchMaxTokens:   "batch_max_tokens",
		EnvTokenizer:        "tokenizer",
	}
	for name, want := range vars {
		if got := strings.TrimPrefix(envKey(name), base); got != want || keyNamed(got) == nil {
			t.Errorf("envKey(%s) = %q, want the table's %q", name, got, want)
		}
	}
	for _, k := range keys {
		if k.field == "" {
			continue
		}
		name := EnvPerToolPrefix + "Bash__" + strings.ToUpper(k.field)
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
		"default_keep_lines": []string{"FAIL"}, "default_fallback": "head_tail",
	}
	for _, k := range keys {
		v, ok := values[k.name]
		if !ok {
			t.Errorf("key %s: no test value", k.name)
			continue
		}
		var l ToolOutputLimits
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
