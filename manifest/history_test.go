package manifest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolcap/toolcap/history"
	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
)

// TestHistoryTable: [worker.tool_output.history] through every layer, key
// by key, its sources, and the history.Config it gives (issue 36).
func TestHistoryTable(t *testing.T) {
	file := manifest.Bytes("a.toml", []byte("[worker.tool_output.history]\nmax_tokens = 60000\nkeep_recent = 6\nnever = [\"TodoWrite\"]\n"))
	env := manifest.Environ([]string{settings.EnvPrefix + "WORKER__TOOL_OUTPUT__HISTORY__CLEAR_AT_LEAST=20000",
		settings.EnvPrefix + "WORKER__TOOL_OUTPUT__HISTORY__NEVER=['TodoWrite', 'mcp__fs__read_text_file']"})
	over := manifest.Overrides("flag", manifest.ToolOutputLimits{History: &manifest.HistoryConfig{KeepRecent: 2}})
	r, err := manifest.Resolve(context.Background(), file, env, over)
	if err != nil {
		t.Fatalf("Resolve() error: %v", err)
	}
	want := map[string]manifest.StrategySetting{
		"max_tokens":     {Value: "60000", Source: "a.toml"},
		"keep_recent":    {Value: "2", Source: "flag"},
		"clear_at_least": {Value: "20000", Source: "env TOOLCAP_WORKER__TOOL_OUTPUT__HISTORY__CLEAR_AT_LEAST"},
		"never":          {Value: `['TodoWrite', 'mcp__fs__read_text_file']`, Source: "env TOOLCAP_WORKER__TOOL_OUTPUT__HISTORY__NEVER"},
	}
	if diff := cmp.Diff(want, r.History); diff != "" {
		t.Errorf("Resolution.History (-want +got):\n%s", diff)
	}
	got := r.Manifest.Limits().HistoryConfig(nil, nil)
	wantConfig := history.Config{MaxTokens: 60000, KeepRecent: 2, ClearAtLeast: 20000, Never: []string{"TodoWrite", "mcp__fs__read_text_file"}, ReadTool: "toolcap_read"}
	if diff := cmp.Diff(wantConfig, got, cmpopts.IgnoreFields(history.Config{}, "Counter", "Logger")); diff != "" {
		t.Errorf("HistoryConfig (-want +got):\n%s", diff)
	}
	// No table: no ageing.
	if c := (*manifest.ToolOutputLimits)(nil).HistoryConfig(nil, nil); c.MaxTokens != 0 {
		t.Errorf("a nil manifest's HistoryConfig: %+v, want MaxTokens 0", c)
	}
}

// TestHistoryTableInvalid: a bad value is an error naming the layer, the
// key and the value; an unknown key is a warning with a suggestion.
func TestHistoryTableInvalid(t *testing.T) {
	for _, tc := range []struct {
		toml, want string
	}{
		{"max_tokens = 0", "worker.tool_output.history.max_tokens = 0"},
		{"keep_recent = 0", "worker.tool_output.history.keep_recent = 0: want 1 or more (omit the key for the default of 4)"},
		{"keep_recent = 20000", "worker.tool_output.history.keep_recent = 20000: above the maximum of 10000"},
		{`never = "Read"`, `worker.tool_output.history.never = "Read": a string, not an array`},
		{`never = [""]`, `worker.tool_output.history.never = (an array): element 0: empty tool name`},
	} {
		_, err := manifest.Load(context.Background(), manifest.Bytes("h.toml", []byte("[worker.tool_output.history]\n"+tc.toml+"\n")))
		if err == nil || !strings.Contains(err.Error(), "h.toml: "+tc.want) {
			t.Errorf("%s: %v; want an error with %q", tc.toml, err, tc.want)
		}
	}
	r, err := manifest.Resolve(context.Background(), manifest.Bytes("h.toml", []byte("[worker.tool_output.history]\nmax_token = 5000\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], `unknown key "max_token" in [worker.tool_output.history]`) || !strings.Contains(r.Warnings[0], `did you mean "max_tokens"?`) {
		t.Errorf("warnings %q; want one naming max_token and suggesting max_tokens", r.Warnings)
	}
}
