package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/tokens"
	"github.com/toolcap/toolcap/worker"
)

var tokenMarkerRE = regexp.MustCompile(`\n\[truncated: (\d+) tokens dropped, refine your query\]`)

// countTokens counts s as toolcap does: tokens.Calibrated at its default.
func countTokens(s string) int { return tokens.NewCalibrated().Count(s) }

// numbered returns the lines 1 to n, each ending in a newline, as seq prints
// them.
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// cap holds a token limit as the help says: input within the byte limit
// but over the token limit is cut, its marker counting tokens; input over
// cut.TokenWindow(limit) keeps a marker that counts bytes; both stay within
// the token limit.
func TestCapTokens(t *testing.T) {
	dir := t.TempDir()
	dflt := writeFile(t, dir, "default.toml", `
[worker.tool_output]
default_max_tokens = 100
tokenizer = "calibrated"
`)
	perTool := writeFile(t, dir, "per_tool.toml", `
[worker.tool_output]
tokenizer = "calibrated"
[worker.tool_output.per_tool]
Read = { max_bytes = 16384, max_tokens = 200 }
Bash = { max_tokens = 100, keep = "head_tail" }
`)
	// Within 16384 bytes and cut.TokenWindow(100), over 300 tokens.
	small := numbered(500)
	// Within 16384 bytes and cut.TokenWindow(200), over 200 tokens.
	medium := numbered(1000)
	// Over the byte limit and cut.TokenWindow(200).
	large := numbered(10000)
	if len(small) > cut.TokenWindow(100) || countTokens(small) <= 300 ||
		len(medium) > 16384 || len(medium) > cut.TokenWindow(200) || countTokens(medium) <= 200 ||
		len(medium) <= cut.TokenWindow(100) || len(large) <= 16384 {
		t.Fatalf("the inputs do not test what they should: %d, %d and %d bytes", len(small), len(medium), len(large))
	}

	tests := []struct {
		name   string
		args   []string
		env    []string
		input  string
		tokens int      // the token limit in force, 0 for none
		unit   cut.Unit // the unit of the marker; ignored when want is unchanged
		keep   cut.Keep
		same   bool // the input within the limits comes out unchanged
	}{
		{name: "default_max_tokens, input within the bytes", args: []string{"--tool", "Grep", "--manifest", dflt},
			input: small, tokens: 100, unit: cut.UnitTokens},
		{name: "per_tool max_tokens", args: []string{"--tool", "Read", "--manifest", perTool},
			input: medium, tokens: 200, unit: cut.UnitTokens},
		{name: "per_tool max_tokens, head_tail", args: []string{"--tool", "Bash", "--manifest", perTool},
			input: small, tokens: 100, unit: cut.UnitTokens, keep: cut.KeepHeadTail},
		{name: "another tool's max_tokens leaves this one to bytes", args: []string{"--tool", "Grep", "--manifest", perTool},
			input: small, same: true},
		{name: "input within the token limit", args: []string{"--tool", "Grep", "--manifest", dflt},
			input: numbered(20), tokens: 100, same: true},
		{name: "environment", args: []string{"--tool", "Grep"},
			env:   []string{"TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_TOKENS=100"},
			input: small, tokens: 100, unit: cut.UnitTokens},
		{name: "environment over the file", args: []string{"--tool", "Grep", "--manifest", dflt},
			env:   []string{"TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_TOKENS=300"},
			input: small, tokens: 300, unit: cut.UnitTokens},
		{name: "environment tokenizer", args: []string{"--tool", "Grep"},
			env:   []string{"TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_TOKENS=100", "TOOLCAP_WORKER__TOOL_OUTPUT__TOKENIZER=calibrated"},
			input: small, tokens: 100, unit: cut.UnitTokens},
		{name: "over the token window, within the bytes: a byte marker", args: []string{"--tool", "Grep", "--manifest", dflt},
			input: medium, tokens: 100, unit: cut.UnitBytes},
		{name: "over the token window and the byte limit: a byte marker", args: []string{"--tool", "Read", "--manifest", perTool},
			input: large, tokens: 200, unit: cut.UnitBytes},
		{name: "far over the token window", args: []string{"--tool", "Grep", "--manifest", dflt},
			input: numbered(100000), tokens: 100, unit: cut.UnitBytes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, tt.env, strings.NewReader(tt.input), append([]string{"cap"}, tt.args...)...)
			if got.code != exitOK || got.stderr != "" {
				t.Fatalf("exit code = %d, stderr = %q; want 0 and nothing", got.code, got.stderr)
			}
			out := got.stdout
			if tt.same {
				if diff := cmp.Diff(tt.input, out); diff != "" {
					t.Errorf("input within the limits changed (-want +got):\n%s", diff)
				}
				return
			}
			if len(out) > 16384 {
				t.Errorf("len(stdout) = %d, over the byte limit 16384", len(out))
			}
			if n := countTokens(out); n > tt.tokens {
				t.Errorf("stdout counts %d tokens, over the limit %d", n, tt.tokens)
			}
			switch tt.unit {
			case cut.UnitTokens:
				// Exactly what the worker's cut gives, its marker counting
				// the tokens it drops.
				want, st := cut.CutTokens(tt.input, 16384, tt.tokens, tokens.NewCalibrated(), cut.Spec{Keep: tt.keep})
				if diff := cmp.Diff(want, out); diff != "" {
					t.Errorf("stdout differs from cut.CutTokens (-want +got):\n%s", diff)
				}
				if st.Unit != cut.UnitTokens || st.DroppedTokens <= 0 {
					t.Fatalf("cut.CutTokens did not cut by tokens: %+v", st)
				}
				marker := cut.TokenMarker(st.DroppedTokens)
				if tt.keep == cut.KeepHeadTail {
					if !strings.Contains(out, marker+"\n") {
						t.Errorf("stdout has no line %q", marker)
					}
				} else if !strings.HasSuffix(out, marker) {
					t.Errorf("stdout ends %q, want %q", out[max(0, len(out)-60):], marker)
				}
			case cut.UnitBytes:
				if tokenMarkerRE.MatchString(out) {
					t.Errorf("a token marker in stdout, want a byte marker")
				}
				dropped := droppedOf(out)
				if dropped < 0 {
					t.Fatalf("no byte marker at the end of stdout: %q", out[max(0, len(out)-60):])
				}
				kept := len(out) - cut.MarkerLen(dropped)
				if kept+dropped != len(tt.input) || out[:kept] != tt.input[:kept] {
					t.Errorf("marker says %d dropped with %d kept of %d: want the exact count of a prefix", dropped, kept, len(tt.input))
				}
			}
		})
	}
}

// cap writes what a worker counting with tokens.Calibrated puts in the
// history, under a token limit too.
func TestCapTokensMatchWorker(t *testing.T) {
	m := writeFile(t, t.TempDir(), "m.toml", `
[worker.tool_output]
default_max_tokens = 300
[worker.tool_output.per_tool]
Read = { max_bytes = 3000, max_tokens = 2000 }
Bash = { max_tokens = 150, keep = "head_tail", keep_lines = ['ERROR'] }
`)
	output := strings.Repeat("ünïcödé output line\n", 100) + "ERROR here\n" + strings.Repeat("more output\n", 100)
	loaded, err := manifest.Load(context.Background(), manifest.File(m))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"Read", "Grep", "Bash"}
	var ts []worker.Tool
	var calls []chain.Call
	for _, name := range names {
		ts = append(ts, worker.Func(name, func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
			s := output
			return worker.ToolOutput{Content: &s}, nil
		}))
		calls = append(calls, chain.Call{ID: name, Tool: name})
	}
	w, err := worker.New(ts, worker.WithPolicies(policytest.Of(t, loaded)))
	if err != nil {
		t.Fatal(err)
	}
	results := w.ExecuteTools(t.Context(), calls)
	for i, name := range names {
		got := runWith(t, nil, strings.NewReader(output), "cap", "--tool", name, "--manifest", m)
		if got.code != exitOK {
			t.Fatalf("cap --tool %s: exit %d; stderr:\n%s", name, got.code, got.stderr)
		}
		if diff := cmp.Diff(*results[i].Content, got.stdout); diff != "" {
			t.Errorf("cap --tool %s differs from the worker's result (-worker +cap):\n%s", name, diff)
		}
	}
}

// An exact tokenizer named with a token limit is a configuration error for
// every command that cuts, naming the layer, the key and the value, when
// the program gave no WithTokenizers: the commands alone link only
// "calibrated". Without a token limit it is never used,
// so it is no error, as for a worker.
func TestTokenizerErrors(t *testing.T) {
	dir := t.TempDir()
	o200k := writeFile(t, dir, "o200k.toml", "[worker.tool_output]\ndefault_max_tokens = 1000\ntokenizer = \"o200k_base\"\n")
	other := writeFile(t, dir, "other.toml", "[worker.tool_output]\ntokenizer = \"o200k_base\"\n[worker.tool_output.per_tool]\nBash = { max_tokens = 500 }\n")
	unused := writeFile(t, dir, "unused.toml", "[worker.tool_output]\ntokenizer = \"o200k_base\"\n")
	limits := writeFile(t, dir, "limits.toml", "[worker.tool_output]\ndefault_max_tokens = 1000\n")
	why := func(source, name string) string {
		return "toolcap: manifest: " + source + `: worker.tool_output.tokenizer = "` + name + `": ` +
			`this toolcap binary counts tokens with "calibrated" only; for "` + name + `" install the full toolcap: ` +
			`go install github.com/toolcap/toolcap/cmd/toolcap@latest`
	}
	hookIn := string(payload(t, "Read", map[string]any{"type": "text", "file": map[string]any{"content": "hi"}}))

	tests := []struct {
		name  string
		args  []string
		env   []string
		stdin string
		want  result
	}{
		{"cap", []string{"cap", "--tool", "Read", "--manifest", o200k}, nil, "hi\n",
			result{exitUsage, "hi\n", why(`file "`+o200k+`"`, "o200k_base") + "\n" + capAtDefaultNote}},
		{"cap, another tool's limit", []string{"cap", "--tool", "Read", "--manifest", other}, nil, "hi\n",
			result{exitUsage, "hi\n", why(`file "`+other+`"`, "o200k_base") + "\n" + capAtDefaultNote}},
		{"cap, tokenizer from the environment", []string{"cap", "--tool", "Read", "--manifest", limits},
			[]string{"TOOLCAP_WORKER__TOOL_OUTPUT__TOKENIZER=cl100k_base"}, "hi\n",
			result{exitUsage, "hi\n", why("env TOOLCAP_WORKER__TOOL_OUTPUT__TOKENIZER", "cl100k_base") + "\n" + capAtDefaultNote}},
		{"cap, no token limit", []string{"cap", "--tool", "Read", "--manifest", unused}, nil, "hi\n",
			result{exitOK, "hi\n", ""}},
		{"hook", []string{"hook", "--manifest", o200k, "claude-code"}, nil, hookIn,
			result{exitFailed, "", why(`file "`+o200k+`"`, "o200k_base") + " (tool output left as it is)\n"}},
		{"mcp", []string{"mcp", "--manifest", o200k, "--", "no-such-server"}, nil, "",
			result{exitUsage, "", why(`file "`+o200k+`"`, "o200k_base") + "\n"}},
		{"demo", []string{"demo", "--manifest", o200k, dir}, nil, "",
			result{exitUsage, "", why(`file "`+o200k+`"`, "o200k_base") + "\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, tt.env, strings.NewReader(tt.stdin), tt.args...)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(result{})); diff != "" {
				t.Errorf("toolcap %s mismatch (-want +got):\n%s", strings.Join(tt.args, " "), diff)
			}
		})
	}
}

// config shows the token settings with the layer that set each, in text
// and JSON, only when some layer sets a token key.
func TestConfigTokens(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, dir, "m.toml", `
[worker.tool_output]
default_max_tokens = 4000
[worker.tool_output.per_tool]
Bash = { max_bytes = 32768, max_tokens = 8000 }
`)
	tok := writeFile(t, dir, "tok.toml", "[worker.tool_output]\ntokenizer = \"calibrated\"\n")
	src := func(p string) string { return `file "` + p + `"` }
	const envBatch = "env TOOLCAP_WORKER__TOOL_OUTPUT__BATCH_MAX_TOKENS"
	const envTokenizer = "env TOOLCAP_WORKER__TOOL_OUTPUT__TOKENIZER"
	headDefault := toolLimit{Keep: "head", KeepFrom: "default", KeepSource: "built-in default"}
	tool := func(name string, limit int, from, source string, tokens *toolTokens) toolLimit {
		t := headDefault
		t.Tool, t.Limit, t.From, t.Source, t.Tokens = name, limit, from, source, tokens
		return t
	}

	tests := []struct {
		name string
		args []string
		env  []string
		want configReport
	}{
		{
			name: "no token key: no token settings",
			args: []string{"--tool", "Read"},
			want: configReport{
				Layers:   []string{"built-in default", "environment"},
				Default:  setting{16384, "built-in default"},
				Batch:    setting{0, "built-in default"},
				PerTool:  map[string]setting{},
				Tools:    []toolLimit{tool("Read", 16384, "default", "built-in default", nil)},
				Warnings: []string{},
			},
		},
		{
			name: "file and environment",
			args: []string{"--manifest", m, "--tool", "Bash", "--tool", "Read"},
			env:  []string{"TOOLCAP_WORKER__TOOL_OUTPUT__BATCH_MAX_TOKENS=20000", "TOOLCAP_WORKER__TOOL_OUTPUT__TOKENIZER=calibrated"},
			want: configReport{
				Layers:        []string{"built-in default", src(m), "environment"},
				Default:       setting{16384, "built-in default"},
				Batch:         setting{0, "built-in default"},
				PerTool:       map[string]setting{"Bash": {32768, src(m)}},
				DefaultTokens: &setting{4000, src(m)},
				BatchTokens:   &setting{20000, envBatch},
				Tokenizer:     &strategySetting{"calibrated", envTokenizer},
				PerToolTokens: map[string]setting{"Bash": {8000, src(m)}},
				Tools: []toolLimit{
					tool("Bash", 32768, "per_tool", src(m), &toolTokens{8000, "per_tool", src(m)}),
					tool("Read", 16384, "default", "built-in default", &toolTokens{4000, "default", src(m)}),
				},
				Warnings: []string{},
			},
		},
		{
			name: "environment per_tool max_tokens",
			args: []string{"--tool", "Bash"},
			env:  []string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__MAX_TOKENS=500"},
			want: configReport{
				Layers:        []string{"built-in default", "environment"},
				Default:       setting{16384, "built-in default"},
				Batch:         setting{0, "built-in default"},
				PerTool:       map[string]setting{},
				DefaultTokens: &setting{0, "built-in default"},
				BatchTokens:   &setting{0, "built-in default"},
				Tokenizer:     &strategySetting{"calibrated", "built-in default"},
				PerToolTokens: map[string]setting{"Bash": {500, "env TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__MAX_TOKENS"}},
				Tools: []toolLimit{tool("Bash", 16384, "default", "built-in default",
					&toolTokens{500, "per_tool", "env TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__MAX_TOKENS"})},
				Warnings: []string{},
			},
		},
		{
			name: "only the tokenizer",
			args: []string{"--manifest", tok, "--tool", "Read"},
			want: configReport{
				Layers:        []string{"built-in default", src(tok), "environment"},
				Default:       setting{16384, "built-in default"},
				Batch:         setting{0, "built-in default"},
				PerTool:       map[string]setting{},
				DefaultTokens: &setting{0, "built-in default"},
				BatchTokens:   &setting{0, "built-in default"},
				Tokenizer:     &strategySetting{"calibrated", src(tok)},
				Tools:         []toolLimit{tool("Read", 16384, "default", "built-in default", nil)},
				Warnings:      []string{},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWith(t, tt.env, nil, append([]string{"config", "--json"}, tt.args...)...)
			if got.code != exitOK || got.stderr != "" {
				t.Fatalf("exit code = %d; stderr:\n%s", got.code, got.stderr)
			}
			var report configReport
			dec := json.NewDecoder(strings.NewReader(got.stdout))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&report); err != nil {
				t.Fatalf("stdout is not the JSON report: %v\n%s", err, got.stdout)
			}
			// The store's settings are TestConfigKeepRest's.
			if diff := cmp.Diff(asRead(t, tt.want), report, cmpopts.IgnoreFields(configReport{}, "KeepRest", "Clients")); diff != "" {
				t.Errorf("config --json mismatch (-want +got):\n%s", diff)
			}
			if tt.want.Tokenizer == nil && strings.Contains(got.stdout, "token") {
				t.Errorf("token keys in the JSON of a manifest without any:\n%s", got.stdout)
			}
		})
	}
}

func TestConfigTokensText(t *testing.T) {
	restDefaults(t)
	dir := t.TempDir()
	m := writeFile(t, dir, "m.toml", `
[worker.tool_output]
default_max_tokens = 4000
[worker.tool_output.per_tool]
Bash = { max_bytes = 32768, max_tokens = 8000 }
`)
	env := []string{"TOOLCAP_WORKER__TOOL_OUTPUT__BATCH_MAX_TOKENS=20000"}
	got := runWith(t, env, nil, "config", "--manifest", m, "--tool", "Bash", "--tool", "Read")
	if got.code != exitOK || got.stderr != "" {
		t.Fatalf("exit code = %d, stderr:\n%s", got.code, got.stderr)
	}
	f := `file "` + m + `"`
	want := `Layers, lowest precedence first:
  1. built-in default
  2. ` + f + `
  3. environment

Limits in force (bytes), and the layer that set each:
  default_max_bytes  16384  built-in default
  batch_max_bytes     none  built-in default
  per_tool.Bash      32768  ` + f + `

Token limits in force, and the layer that set each:
  default_max_tokens              4000  ` + f + `
  batch_max_tokens               20000  env TOOLCAP_WORKER__TOOL_OUTPUT__BATCH_MAX_TOKENS
  per_tool.Bash.max_tokens        8000  ` + f + `
  tokenizer                 calibrated  built-in default
` + restDefaultText + `
Limit a worker applies to each tool asked about:
  Bash  32768  per_tool.Bash, set by ` + f + `
  Read  16384  default_max_bytes (no max_bytes of its own), set by built-in default

Token limit a worker applies to each tool asked about:
  Bash  8000  per_tool.Bash.max_tokens, set by ` + f + `
  Read  4000  default_max_tokens (no max_tokens of its own), set by ` + f + `

Strategy a worker applies to each tool asked about:
  Bash  head  built-in default
  Read  head  built-in default
`
	if diff := cmp.Diff(want, got.stdout); diff != "" {
		t.Errorf("config mismatch (-want +got):\n%s", diff)
	}

	// A tool without a token limit, when another has one.
	m2 := writeFile(t, dir, "m2.toml", "[worker.tool_output.per_tool]\nBash = { max_tokens = 500 }\n")
	got = runWith(t, nil, nil, "config", "--manifest", m2, "--tool", "Read")
	checkContains(t, "stdout", got.stdout,
		"\n  default_max_tokens              none  built-in default\n",
		"\n  per_tool.Bash.max_tokens         500  file \""+m2+"\"\n",
		"\n  tokenizer                 calibrated  built-in default\n",
		"\nToken limit a worker applies to each tool asked about:\n  Read  none  no token limit: no max_tokens of its own, no default_max_tokens\n")
}

// The hook holds a tool's texts to its token limit too, also when the
// output is well within the byte limit, the texts sharing the token limit
// as they share the bytes.
func TestHookTokens(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, dir, "m.toml", "[worker.tool_output]\ndefault_max_tokens = 100\ntokenizer = \"calibrated\"\n")
	lines := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%s %04d\n", prefix, i)
		}
		return b.String()
	}
	names := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = fmt.Sprintf("src/pkg%03d/file.go", i)
		}
		return out
	}
	field := func(keys ...string) func(map[string]any) []string {
		return func(out map[string]any) []string {
			var texts []string
			for _, k := range keys {
				v := any(out)
				for _, part := range strings.Split(k, ".") {
					v = v.(map[string]any)[part]
				}
				switch x := v.(type) {
				case string:
					texts = append(texts, x)
				case []any:
					var s []string
					for _, e := range x {
						s = append(s, e.(string))
					}
					texts = append(texts, strings.Join(s, "\n"))
				}
			}
			return texts
		}
	}

	tests := []struct {
		name     string
		tool     string
		env      []string
		response any
		texts    func(map[string]any) []string
		limit    int
		// tokenMarkers is how many markers count tokens; the others count
		// bytes.
		tokenMarkers int
	}{
		{name: "Bash stdout", tool: "Bash", limit: 100, tokenMarkers: 1,
			response: map[string]any{"stdout": lines("ok", 60), "stderr": "", "interrupted": false},
			texts:    field("stdout", "stderr")},
		{name: "Bash stdout and stderr share it", tool: "Bash", limit: 100, tokenMarkers: 2,
			response: map[string]any{"stdout": lines("out", 30), "stderr": lines("err", 30), "interrupted": false},
			texts:    field("stdout", "stderr")},
		{name: "Bash, environment limit", tool: "Bash", limit: 200, tokenMarkers: 1,
			env:      []string{"TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_TOKENS=200"},
			response: map[string]any{"stdout": lines("ok", 100), "stderr": "", "interrupted": false},
			texts:    field("stdout", "stderr")},
		// Read is cut between lines, its marker naming the Read of the
		// next line: it counts bytes.
		{name: "Read text", tool: "Read", limit: 100, tokenMarkers: 0,
			response: map[string]any{"type": "text", "file": map[string]any{"filePath": "/p/a.go", "content": lines("// line", 60), "numLines": 60}},
			texts:    field("file.content")},
		{name: "Grep content", tool: "Grep", limit: 100, tokenMarkers: 1,
			response: map[string]any{"mode": "content", "numFiles": 0, "filenames": []any{}, "content": lines("a.go:1:TODO", 60)},
			texts:    field("content", "filenames")},
		{name: "Glob file names", tool: "Glob", limit: 100,
			response: map[string]any{"durationMs": 3, "numFiles": 60, "filenames": names(60), "truncated": false},
			texts:    field("filenames")},
		// The text blocks are joined and cut as one text (shape.Content):
		// one marker.
		{name: "MCP text blocks", tool: "mcp__fs__read_file", limit: 100, tokenMarkers: 1,
			response: []any{
				map[string]any{"type": "text", "text": lines("row", 40)},
				map[string]any{"type": "text", "text": lines("col", 40)},
			},
			texts: func(out map[string]any) []string {
				var texts []string
				for _, b := range out["$"].([]any) {
					texts = append(texts, b.(map[string]any)["text"].(string))
				}
				return texts
			}},
		{name: "MCP text", tool: "mcp__github__search_code", limit: 100, tokenMarkers: 1,
			response: lines("match", 60),
			texts:    func(out map[string]any) []string { return []string{out["$"].(string)} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := payload(t, tt.tool, tt.response)
			if len(in) > 16384 {
				t.Fatalf("the payload is %d bytes: over the byte limit, it does not test the token limit alone", len(in))
			}
			got := runWith(t, append(tt.env, keepRestOff), bytes.NewReader(in), "hook", "--manifest", m, "claude-code")
			if got.code != exitOK || got.stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing", got.code, got.stderr)
			}
			var r struct {
				HookSpecificOutput struct{ UpdatedToolOutput any }
			}
			if err := json.Unmarshal([]byte(got.stdout), &r); err != nil {
				t.Fatalf("reply %q: %v", got.stdout, err)
			}
			out, ok := r.HookSpecificOutput.UpdatedToolOutput.(map[string]any)
			if !ok {
				out = map[string]any{"$": r.HookSpecificOutput.UpdatedToolOutput}
			}
			total, byTokens, byBytes := 0, 0, 0
			for _, s := range tt.texts(out) {
				total += countTokens(s)
				byTokens += len(tokenMarkerRE.FindAllString(s, -1))
				byBytes += strings.Count(s, " bytes dropped, refine your query")
			}
			if total > tt.limit {
				t.Errorf("the model reads %d tokens, over the limit %d", total, tt.limit)
			}
			if total < tt.limit*3/4 {
				t.Errorf("the model reads %d tokens of %d: the cut wastes the limit", total, tt.limit)
			}
			if byTokens != tt.tokenMarkers || byTokens+byBytes == 0 {
				t.Errorf("%d token markers and %d byte markers, want %d token markers", byTokens, byBytes, tt.tokenMarkers)
			}
		})
	}

	// The 1 MiB payloads of hookCases: every text the model reads is
	// within the token limit too (their marker counts bytes: they are
	// longer than 32 bytes a token).
	env := []string{"TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_TOKENS=1000"}
	for _, tc := range hookCases() {
		if tc.tool == "mcp__db__query" {
			continue // held as JSON: bytes only
		}
		t.Run("large/"+tc.name, func(t *testing.T) {
			_, out := replacement(t, env, tc)
			total := 0
			for _, s := range tc.text(t, out) {
				total += countTokens(s)
			}
			if total > 1000 {
				t.Errorf("the model reads %d tokens, over the limit 1000", total)
			}
		})
	}
}

// The limit in force and the cut are logged with the token limit.
func TestCapTokensVerbose(t *testing.T) {
	env := []string{"TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_TOKENS=100"}
	input := numbered(500)
	want, st := cut.CutTokens(input, 16384, 100, tokens.NewCalibrated(), cut.Spec{})
	got := runWith(t, env, strings.NewReader(input), "cap", "--tool", "Read", "-v")
	if got.code != exitOK || got.stdout != want {
		t.Fatalf("exit code = %d, %d bytes out; stderr:\n%s", got.code, len(got.stdout), got.stderr)
	}
	checkContains(t, "stderr", got.stderr,
		"limit in force: tool=Read limit=16384",
		"limit_tokens=100 tokenizer=calibrated",
		"tool result truncated: tool=Read original_bytes="+strconv.Itoa(len(input)),
		fmt.Sprintf("unit=tokens original_tokens=%d kept_tokens=%d dropped_tokens=%d", st.OriginalTokens, st.KeptTokens, st.DroppedTokens),
	)
}

// TestHookTokensMoreBlocksThanTokens: 60 text blocks under a token limit of
// 40 are cut as one text (shape.Content): the blocks the cut text no
// longer reaches are dropped, and the model reads at most 40 tokens in all.
func TestHookTokensMoreBlocksThanTokens(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, dir, "m.toml", "[worker.tool_output]\ndefault_max_tokens = 40\n")
	var blocks []any
	for i := range 60 {
		blocks = append(blocks, map[string]any{"type": "text", "text": strings.Repeat(fmt.Sprintf("block %02d\n", i), 10)})
	}
	got := runWith(t, nil, bytes.NewReader(payload(t, "mcp__fs__read_file", blocks)), "hook", "--manifest", m, "claude-code")
	if got.code != exitOK || got.stderr != "" {
		t.Fatalf("exit %d, stderr %q; want 0 and nothing", got.code, got.stderr)
	}
	var r struct {
		HookSpecificOutput struct{ UpdatedToolOutput []map[string]any }
	}
	if err := json.Unmarshal([]byte(got.stdout), &r); err != nil {
		t.Fatalf("reply %q: %v", got.stdout, err)
	}
	total := 0
	for _, b := range r.HookSpecificOutput.UpdatedToolOutput {
		text, _ := b["text"].(string)
		total += countTokens(text)
	}
	if n := len(r.HookSpecificOutput.UpdatedToolOutput); n == 0 || n >= 60 || total > 40 {
		t.Errorf("%d blocks, %d tokens in all; want fewer than 60 blocks and at most 40 tokens", n, total)
	}
}
