package manifest_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/manifest"
)

// TestToolEntryLayers merges one tool's per_tool entry across layers:
// each layer changes the fields it writes and keeps the others.
func TestToolEntryLayers(t *testing.T) {
	const long = "[worker.tool_output.per_tool]\nBash = { max_bytes = 32768, max_tokens = 8000, keep = \"head_tail\", keep_lines = ['FAIL'] }\n"
	file := func(name, text string) manifest.Option { return manifest.Bytes(name, []byte(text)) }
	tests := []struct {
		name string
		opts []manifest.Option
		want manifest.ToolEntry
	}{
		{
			name: "a later short form changes max_bytes only",
			opts: []manifest.Option{file("user.toml", long), file("project.toml", "[worker.tool_output.per_tool]\nBash = 4096\n")},
			want: manifest.ToolEntry{MaxBytes: 4096, MaxTokens: 8000,
				Strategy: manifest.Strategy{Keep: cut.KeepHeadTail, KeepLines: []string{"FAIL"}}},
		},
		{
			name: "a later long form changes the fields it names",
			opts: []manifest.Option{file("user.toml", long), file("project.toml", "[worker.tool_output.per_tool]\nBash = { keep = \"json\", max_tokens = 500 }\n")},
			want: manifest.ToolEntry{MaxBytes: 32768, MaxTokens: 500,
				Strategy: manifest.Strategy{Keep: cut.KeepJSON, KeepLines: []string{"FAIL"}}},
		},
		{
			name: "a short form, then a long form that sets no max_bytes",
			opts: []manifest.Option{file("user.toml", "[worker.tool_output.per_tool]\nBash = 4096\n"), file("project.toml", "[worker.tool_output.per_tool]\nBash = { fallback = \"head_tail\" }\n")},
			want: manifest.ToolEntry{MaxBytes: 4096, Strategy: manifest.Strategy{Fallback: cut.KeepHeadTail}},
		},
		{
			name: "the environment: the entry's variable is its short form, a field's changes that field",
			opts: []manifest.Option{file("user.toml", long), manifest.Environ([]string{
				settings.EnvPerToolPrefix + "Bash=2048",
				settings.EnvPerToolPrefix + "Bash__TAIL_SHARE=0.25",
			})},
			want: manifest.ToolEntry{MaxBytes: 2048, MaxTokens: 8000,
				Strategy: manifest.Strategy{Keep: cut.KeepHeadTail, TailShare: 0.25, KeepLines: []string{"FAIL"}}},
		},
		{
			name: "overrides: a short entry keeps the rest, a long one sets its fields",
			opts: []manifest.Option{file("user.toml", long),
				manifest.Overrides("flag --max-bytes", manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"Bash": {MaxBytes: 1024}}}),
				manifest.Overrides("flag --keep", manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"Bash": {Strategy: manifest.Strategy{KeepLines: []string{}}}}}),
			},
			want: manifest.ToolEntry{MaxBytes: 1024, MaxTokens: 8000,
				Strategy: manifest.Strategy{Keep: cut.KeepHeadTail, KeepLines: []string{}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := manifest.Load(context.Background(), tt.opts...)
			if err != nil {
				t.Fatalf("Load() error: %v", err)
			}
			got, ok := m.Limits().PerTool["Bash"]
			if !ok {
				t.Fatalf("Load() has no entry for Bash: %+v", m.Limits().PerTool)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PerTool[Bash] mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// view is a shape.Policy with its regexps as text and its counter as a
// flag, for cmp.
type view struct {
	MaxBytes, MaxTokens int
	Keep, Fallback      cut.Keep
	TailShare           float64
	KeepLines           []string
	Counter             bool
}

func viewOf(p shape.Policy) view {
	v := view{MaxBytes: p.MaxBytes, MaxTokens: p.MaxTokens, Keep: p.Spec.Keep, Fallback: p.Spec.Fallback,
		TailShare: p.Spec.TailShare, Counter: p.Counter != nil}
	for _, re := range p.Spec.KeepLines {
		v.KeepLines = append(v.KeepLines, re.String())
	}
	return v
}

// countBytes counts a token a byte.
type countBytes struct{}

func (countBytes) Count(s string) int { return len(s) }

func TestPoliciesFor(t *testing.T) {
	limits := &manifest.ToolOutputLimits{
		DefaultMaxBytes:  8192,
		DefaultMaxTokens: 2000,
		Default:          manifest.Strategy{Keep: cut.KeepHeadTail, TailShare: 0.4},
		PerTool: map[string]manifest.ToolEntry{
			"Read": {MaxBytes: 32768},
			"Bash": {MaxTokens: 500, Strategy: manifest.Strategy{KeepLines: []string{"(?i)error"}}},
			"mcp.fs.read": {MaxBytes: 4096, MaxTokens: 900,
				Strategy: manifest.Strategy{Keep: cut.KeepJSON, Fallback: cut.KeepHead}},
		},
	}
	p, err := limits.Policies()
	if err != nil {
		t.Fatalf("Policies() error: %v", err)
	}
	counted := p.WithCounter(countBytes{})
	tests := []struct {
		tool string
		want view
	}{
		{"Read", view{MaxBytes: 32768, MaxTokens: 2000, Keep: cut.KeepHeadTail, TailShare: 0.4}},
		{"Bash", view{MaxBytes: 8192, MaxTokens: 500, Keep: cut.KeepHeadTail, TailShare: 0.4, KeepLines: []string{"(?i)error"}}},
		{"mcp.fs.read", view{MaxBytes: 4096, MaxTokens: 900, Keep: cut.KeepJSON, Fallback: cut.KeepHead, TailShare: 0.4}},
		{"other", view{MaxBytes: 8192, MaxTokens: 2000, Keep: cut.KeepHeadTail, TailShare: 0.4}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, viewOf(p.For(tt.tool))); diff != "" {
				t.Errorf("For(%q) mismatch (-want +got):\n%s", tt.tool, diff)
			}
			withCounter := tt.want
			withCounter.Counter = true
			if diff := cmp.Diff(withCounter, viewOf(counted.For(tt.tool))); diff != "" {
				t.Errorf("WithCounter().For(%q) mismatch (-want +got):\n%s", tt.tool, diff)
			}
			// The figures the manifest gives one at a time agree.
			got := p.For(tt.tool)
			if got.MaxBytes != limits.For(tt.tool) || got.MaxTokens != limits.TokensFor(tt.tool) {
				t.Errorf("For(%q) = %d bytes, %d tokens; ToolOutputLimits says %d, %d",
					tt.tool, got.MaxBytes, got.MaxTokens, limits.For(tt.tool), limits.TokensFor(tt.tool))
			}
		})
	}
	if !counted.For("Bash").HoldsTokens() || p.For("Bash").HoldsTokens() {
		t.Errorf("HoldsTokens: with a counter %v, without %v; want true, false",
			counted.For("Bash").HoldsTokens(), p.For("Bash").HoldsTokens())
	}
	if got := counted.WithCounter(nil).For("Bash"); got.Counter != nil {
		t.Errorf("WithCounter(nil).For(Bash).Counter = %v, want nil", got.Counter)
	}

	// The policies are a snapshot: changing the limits afterwards does not
	// reach them.
	limits.PerTool["Read"] = manifest.ToolEntry{MaxBytes: 256}
	limits.DefaultMaxBytes = 1024
	if got := p.For("Read").MaxBytes; got != 32768 {
		t.Errorf("after a change to the limits, For(Read).MaxBytes = %d, want 32768", got)
	}
	if got := p.For("other").MaxBytes; got != 8192 {
		t.Errorf("after a change to the limits, For(other).MaxBytes = %d, want 8192", got)
	}
}

func TestPoliciesInvalid(t *testing.T) {
	tests := []struct {
		name   string
		limits *manifest.ToolOutputLimits
		want   string
	}{
		{"a limit", &manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"Read": {MaxBytes: 10}}},
			"manifest: WorkerManifest: worker.tool_output.per_tool.Read = 10: below the minimum of 128 bytes (the truncation marker alone takes up to 66)"},
		{"a strategy", &manifest.ToolOutputLimits{Default: manifest.Strategy{Fallback: cut.KeepJSON}},
			`manifest: WorkerManifest: worker.tool_output.default_fallback = "json": json's fallback must be a text strategy, "head" or "head_tail"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.limits.Policies()
			if p != nil {
				t.Errorf("Policies() = %+v with an error", p)
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Policies() error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNilSafety calls every accessor on nil values: each gives the
// built-in default.
func TestNilSafety(t *testing.T) {
	var (
		m  *manifest.WorkerManifest
		l  *manifest.ToolOutputLimits
		np *shape.Policies
	)
	mp, err := m.Policies()
	if err != nil {
		t.Fatalf("nil manifest: Policies() error: %v", err)
	}
	lp, err := l.Policies()
	if err != nil {
		t.Fatalf("nil limits: Policies() error: %v", err)
	}
	def := view{MaxBytes: manifest.DefaultMaxBytes}
	got := map[string]view{
		"nil manifest":              viewOf(mp.For("Read")),
		"empty manifest":            viewOf(mustPolicies(t, &manifest.WorkerManifest{}).For("Read")),
		"nil limits":                viewOf(lp.For("Read")),
		"nil policies":              viewOf(np.For("Read")),
		"nil policies with counter": viewOf(np.WithCounter(countBytes{}).For("Read")),
	}
	want := map[string]view{
		"nil manifest":              def,
		"empty manifest":            def,
		"nil limits":                def,
		"nil policies":              def,
		"nil policies with counter": {MaxBytes: manifest.DefaultMaxBytes, Counter: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("policies of nil values mismatch (-want +got):\n%s", diff)
	}

	type figures struct {
		For, TokensFor, Batch, BatchTokens int
		HasTokens                          bool
		Tokenizer                          string
		Strategy                           manifest.Strategy
		Validate                           error
	}
	gotFigures := figures{l.For("Read"), l.TokensFor("Read"), l.Batch(), l.BatchTokens(), l.HasTokens(),
		l.TokenizerName(), l.StrategyFor("Read"), m.Validate()}
	wantFigures := figures{For: manifest.DefaultMaxBytes, Tokenizer: manifest.TokenizerCalibrated}
	if diff := cmp.Diff(wantFigures, gotFigures); diff != "" {
		t.Errorf("nil limits mismatch (-want +got):\n%s", diff)
	}
	if m.Limits() != nil {
		t.Errorf("nil manifest: Limits() = %+v, want nil", m.Limits())
	}
}

func mustPolicies(t *testing.T, m *manifest.WorkerManifest) *shape.Policies {
	t.Helper()
	p, err := m.Policies()
	if err != nil {
		t.Fatalf("Policies() error: %v", err)
	}
	return p
}

// TestPoliciesShareRegexps checks that a tool without a strategy of its own
// shares the defaults' compiled spec rather than a copy compiled again.
func TestPoliciesShareRegexps(t *testing.T) {
	limits := &manifest.ToolOutputLimits{
		Default: manifest.Strategy{Keep: cut.KeepHeadTail, KeepLines: []string{"FAIL"}},
		PerTool: map[string]manifest.ToolEntry{"Read": {MaxBytes: 4096}},
	}
	p, err := limits.Policies()
	if err != nil {
		t.Fatalf("Policies() error: %v", err)
	}
	var read, other []*regexp.Regexp = p.For("Read").Spec.KeepLines, p.For("other").Spec.KeepLines
	if len(read) != 1 || len(other) != 1 || read[0] != other[0] {
		t.Errorf("For(Read) and For(other) hold %v and %v, want the one compiled regexp", read, other)
	}
}

func TestPoliciesFit(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want int
	}{
		{"the default", ``, 16384},
		{"the smallest byte limit", "[worker.tool_output]\ndefault_max_bytes = 8192\n[worker.tool_output.per_tool]\nRead = 4096\nGrep = 65536\n", 4096},
		{"a token limit below it", "[worker.tool_output]\ndefault_max_tokens = 1000\n[worker.tool_output.per_tool]\nRead = 4096\n", 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := manifest.Load(context.Background(), manifest.Bytes("toolcap.toml", []byte(tt.doc)))
			if err != nil {
				t.Fatal(err)
			}
			p, err := m.Policies()
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Fit(); got != tt.want {
				t.Errorf("Fit() = %d, want %d", got, tt.want)
			}
			if got := p.WithCounter(nil).Fit(); got != tt.want {
				t.Errorf("WithCounter(nil).Fit() = %d, want %d", got, tt.want)
			}
		})
	}
	if got := (*shape.Policies)(nil).Fit(); got != manifest.DefaultMaxBytes {
		t.Errorf("nil Fit() = %d", got)
	}
}
