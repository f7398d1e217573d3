package manifest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
)

// tokenView is what a manifest says of tokens, for one comparison.
type tokenView struct {
	Default, Batch    int
	Grep, Bash, Other int // TokensFor each
	BashBytes         int // For("Bash"): the byte limit beside max_tokens
	Tokenizer         string
	HasTokens         bool
	MaxTokens         int // Policies().For("Bash").MaxTokens
}

func viewTokens(t *testing.T, m *manifest.WorkerManifest) tokenView {
	t.Helper()
	l := m.Limits()
	p, err := l.Policies()
	if err != nil {
		t.Fatalf("Policies() error: %v", err)
	}
	return tokenView{
		Default: l.TokensFor("Other"), Batch: l.BatchTokens(),
		Grep: l.TokensFor("Grep"), Bash: l.TokensFor("Bash"), Other: l.TokensFor("Other"),
		BashBytes: l.For("Bash"), Tokenizer: l.TokenizerName(), HasTokens: l.HasTokens(),
		MaxTokens: p.For("Bash").MaxTokens,
	}
}

func TestTokenLimits(t *testing.T) {
	const file = `[worker.tool_output]
default_max_tokens = 4000
batch_max_tokens = 16000
tokenizer = "o200k_base"
[worker.tool_output.per_tool]
Bash = { max_bytes = 32768, max_tokens = 8000, keep = "head_tail" }
Grep = { max_tokens = 300 }
`
	tests := []struct {
		name    string
		opts    []manifest.Option
		want    tokenView
		wantRes map[string]string // key -> source, of the Resolution
	}{
		{
			name: "none: no token limit, calibrated named",
			opts: []manifest.Option{manifest.Bytes("m.toml", []byte("[worker.tool_output]\ndefault_max_bytes = 8192\n"))},
			want: tokenView{Tokenizer: "calibrated", BashBytes: 8192},
			wantRes: map[string]string{"default": settings.SourceDefault, "batch": settings.SourceDefault,
				"tokenizer": settings.SourceDefault},
		},
		{
			name: "file",
			opts: []manifest.Option{manifest.Bytes("m.toml", []byte(file))},
			want: tokenView{Default: 4000, Batch: 16000, Grep: 300, Bash: 8000, Other: 4000, BashBytes: 32768,
				Tokenizer: "o200k_base", HasTokens: true, MaxTokens: 8000},
			wantRes: map[string]string{"default": "m.toml", "batch": "m.toml", "tokenizer": "m.toml",
				"Bash": "m.toml", "Grep": "m.toml"},
		},
		{
			name: "a per_tool max_tokens alone",
			opts: []manifest.Option{manifest.Bytes("m.toml", []byte("[worker.tool_output.per_tool]\nGrep = { max_tokens = 300 }\n"))},
			want: tokenView{Grep: 300, BashBytes: manifest.DefaultMaxBytes, Tokenizer: "calibrated", HasTokens: true},
			wantRes: map[string]string{"default": settings.SourceDefault, "batch": settings.SourceDefault,
				"tokenizer": settings.SourceDefault, "Grep": "m.toml"},
		},
		{
			name: "environment over file; a short form later keeps max_tokens",
			opts: []manifest.Option{
				manifest.Bytes("m.toml", []byte(file)),
				manifest.Environ([]string{
					settings.EnvDefaultMaxTokens + "=2000",
					settings.EnvBatchMaxTokens + "=6000",
					settings.EnvTokenizer + "=cl100k_base",
					settings.EnvPerToolPrefix + "Grep__MAX_TOKENS=500",
					settings.EnvPerToolPrefix + "Bash=16384",
				}),
			},
			want: tokenView{Default: 2000, Batch: 6000, Grep: 500, Bash: 8000, Other: 2000, BashBytes: 16384,
				Tokenizer: "cl100k_base", HasTokens: true, MaxTokens: 8000},
			wantRes: map[string]string{
				"default":   "env " + settings.EnvDefaultMaxTokens,
				"batch":     "env " + settings.EnvBatchMaxTokens,
				"tokenizer": "env " + settings.EnvTokenizer,
				"Grep":      "env " + settings.EnvPerToolPrefix + "Grep__MAX_TOKENS",
				"Bash":      "m.toml",
			},
		},
		{
			name: "overrides over the environment",
			opts: []manifest.Option{
				manifest.Environ([]string{settings.EnvDefaultMaxTokens + "=2000"}),
				manifest.Overrides("flag", manifest.ToolOutputLimits{DefaultMaxTokens: 1000, BatchMaxTokens: 3000,
					Tokenizer: "o200k_base", PerTool: map[string]manifest.ToolEntry{"Bash": {MaxBytes: 4096, MaxTokens: 700}}}),
			},
			want: tokenView{Default: 1000, Batch: 3000, Bash: 700, Grep: 1000, Other: 1000, BashBytes: 4096,
				Tokenizer: "o200k_base", HasTokens: true, MaxTokens: 700},
			wantRes: map[string]string{"default": "flag", "batch": "flag", "tokenizer": "flag", "Bash": "flag"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := manifest.Resolve(context.Background(), tt.opts...)
			if err != nil {
				t.Fatalf("Resolve() error: %v", err)
			}
			if diff := cmp.Diff(tt.want, viewTokens(t, r.Manifest)); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
			got := map[string]string{"default": r.DefaultTokens.Source, "batch": r.BatchTokens.Source,
				"tokenizer": r.Tokenizer.Source}
			for tool, s := range r.PerToolTokens {
				got[tool] = s.Source
			}
			if diff := cmp.Diff(tt.wantRes, got); diff != "" {
				t.Errorf("Resolution sources (-want +got):\n%s", diff)
			}
			if err := r.Manifest.Validate(); err != nil {
				t.Errorf("Validate() = %v", err)
			}
		})
	}
}

func TestTokenLimitErrors(t *testing.T) {
	file := func(s string) manifest.Option { return manifest.Bytes("m.toml", []byte(s)) }
	tests := []struct {
		name string
		opt  manifest.Option
		want string
	}{
		{"zero", file("[worker.tool_output]\ndefault_max_tokens = 0\n"),
			`manifest: m.toml: worker.tool_output.default_max_tokens = 0: 0 is not a token limit; omit the key for none`},
		{"negative batch", file("[worker.tool_output]\nbatch_max_tokens = -5\n"),
			`manifest: m.toml: worker.tool_output.batch_max_tokens = -5: a token limit must be positive`},
		{"below the minimum", file("[worker.tool_output.per_tool]\nGrep = { max_tokens = 31 }\n"),
			`manifest: m.toml: worker.tool_output.per_tool.Grep.max_tokens = 31: below the minimum of 32 tokens (the truncation marker alone takes about 12)`},
		{"above the maximum", file("[worker.tool_output]\ndefault_max_tokens = 16777217\n"),
			`manifest: m.toml: worker.tool_output.default_max_tokens = 16777217: above the maximum of 16777216 tokens`},
		{"a string in a file", file("[worker.tool_output.per_tool]\n\"mcp.fs.read\" = { max_tokens = \"300\" }\n"),
			`manifest: m.toml: worker.tool_output.per_tool."mcp.fs.read".max_tokens = "300": a string, not an integer (write the number without quotes)`},
		{"unknown tokenizer", file("[worker.tool_output]\ntokenizer = \"o200k\"\n"),
			`manifest: m.toml: worker.tool_output.tokenizer = "o200k": unknown tokenizer (want "calibrated", "o200k_base" or "cl100k_base"); did you mean "o200k_base"?`},
		{"tokenizer not a string", file("[worker.tool_output]\ntokenizer = 1\n"),
			`manifest: m.toml: worker.tool_output.tokenizer = 1: an integer, not a string`},
		{"not an integer in the environment", manifest.Environ([]string{settings.EnvDefaultMaxTokens + "=4k"}),
			`manifest: env TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_TOKENS: worker.tool_output.default_max_tokens = "4k": not an integer`},
		{"per_tool in the environment", manifest.Environ([]string{settings.EnvPerToolPrefix + "Bash__MAX_TOKENS=0"}),
			`manifest: env TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__MAX_TOKENS: worker.tool_output.per_tool.Bash.max_tokens = "0": 0 is not a token limit; omit the key for none`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := manifest.Load(context.Background(), tt.opt)
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("Load() error = %v, want a *manifest.Error", err)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("Load() error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateTokens(t *testing.T) {
	tests := []struct {
		name   string
		limits manifest.ToolOutputLimits
		want   string
	}{
		{"default", manifest.ToolOutputLimits{DefaultMaxTokens: 8},
			`manifest: WorkerManifest: worker.tool_output.default_max_tokens = 8: below the minimum of 32 tokens (the truncation marker alone takes about 12)`},
		{"batch", manifest.ToolOutputLimits{BatchMaxTokens: -1},
			`manifest: WorkerManifest: worker.tool_output.batch_max_tokens = -1: a token limit must be positive`},
		{"tokenizer", manifest.ToolOutputLimits{Tokenizer: "p50k_base"},
			`manifest: WorkerManifest: worker.tool_output.tokenizer = "p50k_base": unknown tokenizer (want "calibrated", "o200k_base" or "cl100k_base"); did you mean "o200k_base"?`},
		{"per tool", manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"Read": {MaxTokens: 8}}},
			`manifest: WorkerManifest: worker.tool_output.per_tool.Read.max_tokens = 8: below the minimum of 32 tokens (the truncation marker alone takes about 12)`},
		{"per tool, negative", manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"Read": {MaxBytes: 4096, MaxTokens: -1}}},
			`manifest: WorkerManifest: worker.tool_output.per_tool.Read.max_tokens = -1: a token limit must be positive`},
		{"per tool, bytes of a long entry", manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"Read": {MaxBytes: 10, MaxTokens: 100}}},
			`manifest: WorkerManifest: worker.tool_output.per_tool.Read.max_bytes = 10: below the minimum of 128 bytes (the truncation marker alone takes up to 66)`},
		{"valid", manifest.ToolOutputLimits{DefaultMaxTokens: 4000, Tokenizer: "cl100k_base", PerTool: map[string]manifest.ToolEntry{"Read": {MaxTokens: 32}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := (&manifest.WorkerManifest{ToolOutput: &tt.limits}).Validate(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTokenKeyTypoWarns(t *testing.T) {
	r, err := manifest.Resolve(context.Background(), manifest.Bytes("m.toml", []byte("[worker.tool_output]\ndefault_max_token = 4000\n[worker.tool_output.per_tool]\nBash = { max_token = 10 }\n")))
	if err != nil {
		t.Fatalf("Resolve() error: %v", err)
	}
	want := []string{
		`unknown key "default_max_token" in [worker.tool_output] of m.toml; ignored (did you mean "default_max_tokens"?)`,
		`unknown key "max_token" in per_tool entry Bash of m.toml; ignored (did you mean "max_tokens"?)`,
	}
	if diff := cmp.Diff(want, r.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
