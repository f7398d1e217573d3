package manifest_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/shape"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/manifest"
)

func writeTOML(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLongForm(t *testing.T) {
	user := writeTOML(t, "user.toml", `
[worker.tool_output]
default_keep = "head_tail"
default_tail_share = 0.4

[worker.tool_output.per_tool]
Read = 32768
Bash = { max_bytes = 32768, keep = "head_tail", tail_share = 0.3, keep_lines = ['(?i)\b(error|fail|panic)\b'] }
"mcp.fs.read" = { keep = "json", fallback = "head_tail" }
Grep = { keep = "head" }
`)
	// The project's short form sets Bash's limit only: its strategy stays.
	project := writeTOML(t, "project.toml", `
[worker.tool_output.per_tool]
Bash = 8192
`)
	r, err := manifest.Resolve(context.Background(), manifest.File(user), manifest.File(project),
		manifest.Environ([]string{
			"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Grep__KEEP=head_tail",
			"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Grep__KEEP_LINES=['^E', 'FAIL']",
			"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__mcp__github__search=4096",
			"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Glob__MAX_BYTES=2048",
		}))
	if err != nil {
		t.Fatal(err)
	}
	l := r.Manifest.Limits()
	want := &manifest.ToolOutputLimits{
		DefaultMaxBytes: 16384,
		Default:         manifest.Strategy{Keep: cut.KeepHeadTail, TailShare: 0.4},
		PerTool: map[string]manifest.ToolEntry{
			"Read":                {MaxBytes: 32768},
			"Bash":                {MaxBytes: 8192, Strategy: manifest.Strategy{Keep: cut.KeepHeadTail, TailShare: 0.3, KeepLines: []string{`(?i)\b(error|fail|panic)\b`}}},
			"mcp.fs.read":         {Strategy: manifest.Strategy{Keep: cut.KeepJSON, Fallback: cut.KeepHeadTail}},
			"Grep":                {Strategy: manifest.Strategy{Keep: cut.KeepHeadTail, KeepLines: []string{"^E", "FAIL"}}},
			"mcp__github__search": {MaxBytes: 4096},
			"Glob":                {MaxBytes: 2048},
		},
	}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Errorf("Load() mismatch (-want +got):\n%s", diff)
	}
	userSrc, envGrep := `file "`+user+`"`, "env TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Grep__KEEP"
	wantStrategy := map[string]map[string]manifest.StrategySetting{
		"":            {"keep": {`"head_tail"`, userSrc}, "tail_share": {"0.4", userSrc}},
		"Bash":        {"keep": {`"head_tail"`, userSrc}, "tail_share": {"0.3", userSrc}, "keep_lines": {`['(?i)\b(error|fail|panic)\b']`, userSrc}},
		"mcp.fs.read": {"keep": {`"json"`, userSrc}, "fallback": {`"head_tail"`, userSrc}},
		"Grep": {"keep": {`"head_tail"`, envGrep},
			"keep_lines": {`['^E', 'FAIL']`, "env TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Grep__KEEP_LINES"}},
	}
	if diff := cmp.Diff(wantStrategy, r.Strategy); diff != "" {
		t.Errorf("Resolve().Strategy mismatch (-want +got):\n%s", diff)
	}
	if got := r.PerTool["Bash"]; got.Value != 8192 || got.Source != `file "`+project+`"` {
		t.Errorf("Bash limit %+v, want 8192 from the project", got)
	}

	p, err := l.Policies()
	if err != nil {
		t.Fatal(err)
	}
	type policy struct {
		Limit     int
		Keep      cut.Keep
		TailShare float64
		Lines     []string
		Fallback  cut.Keep
	}
	of := func(tool string) policy {
		pol := p.For(tool)
		var lines []string
		for _, re := range pol.Spec.KeepLines {
			lines = append(lines, re.String())
		}
		return policy{pol.MaxBytes, pol.Spec.Keep, pol.Spec.TailShare, lines, pol.Spec.Fallback}
	}
	for tool, w := range map[string]policy{
		"Bash":        {8192, cut.KeepHeadTail, 0.3, []string{`(?i)\b(error|fail|panic)\b`}, ""},
		"Read":        {32768, cut.KeepHeadTail, 0.4, nil, ""}, // the defaults' strategy
		"mcp.fs.read": {16384, cut.KeepJSON, 0.4, nil, cut.KeepHeadTail},
		"other":       {16384, cut.KeepHeadTail, 0.4, nil, ""},
	} {
		if diff := cmp.Diff(w, of(tool)); diff != "" {
			t.Errorf("Policies().For(%q) mismatch (-want +got):\n%s", tool, diff)
		}
	}

	// What Load returns reloads, as one file, to the same.
	again, err := manifest.Load(context.Background(), manifest.Overrides("again", *l))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(l, again.Limits()); diff != "" {
		t.Errorf("reload mismatch (-want +got):\n%s", diff)
	}
}

func TestNilPolicies(t *testing.T) {
	var l *manifest.ToolOutputLimits
	p, err := l.Policies()
	if err != nil {
		t.Fatal(err)
	}
	if got := p.For("x"); got.MaxBytes != manifest.DefaultMaxBytes || got.Spec.Keep != "" {
		t.Errorf("nil limits: %+v", got)
	}
	var np *shape.Policies
	if got := np.For("x"); got.MaxBytes != manifest.DefaultMaxBytes {
		t.Errorf("nil policies: %+v", got)
	}
}

func TestStrategyErrors(t *testing.T) {
	file := func(text string) func(t *testing.T) ([]manifest.Option, string) {
		return func(t *testing.T) ([]manifest.Option, string) {
			p := writeTOML(t, "toolcap.toml", text)
			return []manifest.Option{manifest.File(p)}, `file "` + p + `"`
		}
	}
	env := func(kv string) func(t *testing.T) ([]manifest.Option, string) {
		return func(*testing.T) ([]manifest.Option, string) {
			name, _, _ := strings.Cut(kv, "=")
			return []manifest.Option{manifest.Environ([]string{kv})}, "env " + name
		}
	}
	const per = "[worker.tool_output.per_tool]\n"
	const bash = "worker.tool_output.per_tool.Bash."
	tests := []struct {
		name   string
		layers func(t *testing.T) ([]manifest.Option, string)
		key    string
		value  string
		reason string
	}{
		{"unknown strategy", file(per + `Bash = { keep = "tail" }`), bash + "keep", `"tail"`, `unknown strategy "tail"`},
		{"keep not a string", file(per + `Bash = { keep = 1 }`), bash + "keep", "1", "an integer, not a string"},
		{"tail_share too large", file(per + `Bash = { tail_share = 1.5 }`), bash + "tail_share", "1.5", "below 1"},
		{"tail_share zero", file(per + `Bash = { tail_share = 0 }`), bash + "tail_share", "0", "above 0"},
		{"tail_share a string", file(per + `Bash = { tail_share = "0.3" }`), bash + "tail_share", `"0.3"`, "not a number"},
		{"invalid regexp", file(per + `Bash = { keep_lines = ['(error'] }`), bash + "keep_lines", "(an array)", `pattern 0 "(error"`},
		{"too many patterns", file(per + `Bash = { keep_lines = ['a','b','c','d','e','f','g','h','i'] }`), bash + "keep_lines", "(an array)", "at most 8"},
		{"keep_lines a string", file(per + `Bash = { keep_lines = 'error' }`), bash + "keep_lines", `"error"`, "not an array"},
		{"empty pattern", file(per + `Bash = { keep_lines = [''] }`), bash + "keep_lines", "(an array)", "empty"},
		{"fallback json", file(per + `Bash = { fallback = "json" }`), bash + "fallback", `"json"`, "text strategy"},
		{"bad max_bytes", file(per + `Bash = { max_bytes = 10 }`), bash + "max_bytes", "10", "below the minimum"},
		{"default_keep", file("[worker.tool_output]\ndefault_keep = \"both\"\n"), "worker.tool_output.default_keep", `"both"`, "unknown strategy"},
		{"env keep", env("TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__KEEP=tail"), bash + "keep", `"tail"`, "unknown strategy"},
		{"env tail_share", env("TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_TAIL_SHARE=half"), "worker.tool_output.default_tail_share", `"half"`, "not a number"},
		{"env keep_lines", env("TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__KEEP_LINES=(x"), bash + "keep_lines", `"(x"`, "missing closing )"},
		{"env max_bytes", env("TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__MAX_BYTES=0"), bash + "max_bytes", `"0"`, "0 is not a limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, source := tt.layers(t)
			m, err := manifest.Load(context.Background(), opts...)
			if m != nil {
				t.Errorf("Load() returned a manifest with an error")
			}
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("Load() error = %v, want a *manifest.Error", err)
			}
			if diff := cmp.Diff([3]string{source, tt.key, tt.value}, [3]string{me.Source, me.Key, me.Value}); diff != "" {
				t.Errorf("error source, key, value mismatch (-want +got):\n%s", diff)
			}
			if !strings.Contains(me.Err.Error(), tt.reason) {
				t.Errorf("error %q does not say %q", err, tt.reason)
			}
		})
	}
}

func TestStrategyWarnings(t *testing.T) {
	p := writeTOML(t, "toolcap.toml", "[worker.tool_output]\ndefault_kep = \"head\"\n[worker.tool_output.per_tool]\nBash = { max_bytes = 8192, kep = \"head_tail\" }\n")
	var buf bytes.Buffer
	r, err := manifest.Resolve(context.Background(), manifest.File(p), manifest.WithLogger(hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true})))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`unknown key "default_kep" in [worker.tool_output] of file "` + p + `"; ignored (did you mean "default_keep"?)`,
		`unknown key "kep" in per_tool entry Bash of file "` + p + `"; ignored (did you mean "keep"?)`,
	}
	if diff := cmp.Diff(want, r.Warnings); diff != "" {
		t.Errorf("warnings mismatch (-want +got):\n%s", diff)
	}
}

func TestValidateStrategy(t *testing.T) {
	tests := []struct {
		name string
		l    manifest.ToolOutputLimits
		want string
	}{
		{"valid", manifest.ToolOutputLimits{Default: manifest.Strategy{Keep: cut.KeepHeadTail}}, ""},
		{"bad default", manifest.ToolOutputLimits{Default: manifest.Strategy{Keep: "tail"}},
			`manifest: WorkerManifest: worker.tool_output.default_keep = "tail": unknown strategy "tail" (want "head", "head_tail" or "json")`},
		{"bad per tool", manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"Bash": {Strategy: manifest.Strategy{KeepLines: []string{"("}}}}},
			"manifest: WorkerManifest: worker.tool_output.per_tool.Bash.keep_lines = ['(']: pattern 0 \"(\": error parsing regexp: missing closing ): `(`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := (&manifest.WorkerManifest{ToolOutput: &tt.l}).Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
