package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/pelletier/go-toml/v2"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/tokens"
)

const configHelp = `Usage: toolcap config [--manifest FILE]... [--tool NAME]... [--json]

Prints the tool-output limits and cut strategies in force and, for each, the
layer that set it: the built-in default, a --manifest file (later files win)
or a TOOLCAP_ environment variable (which beats every file), and the batch
budget (batch_max_bytes: "none" unless a layer sets one). With --tool,
also prints the limit and the strategy a worker applies to that tool and
why: its per_tool entry, or the defaults when it has none. This answers "why
was my Read cut at 4096?" and "why did Bash lose its tail?".

When a layer sets a token key (default_max_tokens, batch_max_tokens,
tokenizer, a per_tool entry's max_tokens), it also prints the token limits
("none" unless set), the tokenizer ("calibrated" unless set) and, with
--tool, the token limit a worker applies to that tool, each with the layer
that set it. Without such a key, nothing about tokens is printed.

It always prints how the rest of a cut is kept (by toolcap mcp, and by
toolcap cap --keep-rest for toolcap read): keep_rest and each per_tool
entry's, and the store of [worker.tool_output.rest]: its kind (store), the
directory it lives in (dir, resolved when defaulted: toolcap/rest under the
user cache directory), its quota (max_bytes), the most one entry keeps
(max_entry_bytes), how long an entry lives after its last use (ttl) and the
read tool's name (tool), each with the layer that set it or the built-in
default.

Exit status: 0 on success; 2 on a usage or configuration error (then nothing
is written to standard output and one line on standard error names the
source, key and value). Warnings go to standard error.
`

func runConfig(ctx context.Context, o *options, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	fs, logs := newFlags("config")
	var (
		layers layerFlags
		tools  stringsFlag
		asJSON = fs.Bool("json", false, "print JSON instead of text")
	)
	layers.register(fs)
	fs.Var(&tools, "tool", "also show the limit for the tool registered as `NAME`, and why; repeatable")
	operands, code, ok := parse(fs, configHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(operands) > 0 {
		fmt.Fprintf(stderr, "toolcap config: unexpected argument %q (use --tool NAME or --manifest FILE)\n", operands[0])
		return exitUsage
	}

	logger := logs.logger(stderr, 0).Named("toolcap")
	res, err := layers.resolve(ctx, env, logger)
	if err != nil {
		return configError(stderr, err)
	}
	for _, tool := range tools {
		warnToolCase(res, tool, logger)
	}
	report := o.newConfigReport(res, tools)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(report)
	} else {
		err = report.writeText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "toolcap config: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// configReport is what config prints; its JSON form is the --json output.
type configReport struct {
	// Layers are the layers applied, lowest precedence first.
	Layers []string `json:"layers"`
	// Default is default_max_bytes.
	Default setting `json:"default_max_bytes"`
	// Batch is batch_max_bytes: the budget the results of one
	// ExecuteTools share; limit 0 means none.
	Batch setting `json:"batch_max_bytes"`
	// PerTool holds the per_tool limits, by tool name.
	PerTool map[string]setting `json:"per_tool"`
	// History holds the keys of [worker.tool_output.history] some layer
	// sets (ageing the history, package history), by name, values as TOML
	// writes them; absent when none is.
	History map[string]strategySetting `json:"history,omitempty"`
	// Clients holds the client limits toolcap mcp holds every result of
	// an MCP client to, by the name the client gives (built-in ones
	// included).
	Clients map[string]setting `json:"clients"`
	// The token settings, only when some layer sets a token key
	// (showTokens): default_max_tokens and batch_max_tokens (limit 0:
	// none), the tokenizer, and the per_tool max_tokens by tool name (only
	// when some entry has one).
	DefaultTokens *setting           `json:"default_max_tokens,omitempty"`
	BatchTokens   *setting           `json:"batch_max_tokens,omitempty"`
	Tokenizer     *strategySetting   `json:"tokenizer,omitempty"`
	PerToolTokens map[string]setting `json:"per_tool_max_tokens,omitempty"`
	// Strategies holds the strategy keys set by some layer, by their key
	// as TOML writes it (default_keep, per_tool.Bash.tail_share).
	Strategies map[string]strategySetting `json:"strategies,omitempty"`
	// KeepRest holds keep_rest, each per_tool keep_rest and every key of
	// [worker.tool_output.rest] in force, by key as TOML writes it
	// (keep_rest, per_tool.Bash.keep_rest, rest.ttl), values as TOML
	// writes them. A key no layer sets has the default of the CLI's store
	// (a directory, package rest's bounds), with the source
	// "built-in default"; rest.dir is then the resolved directory, and is
	// absent for a store in memory.
	KeepRest map[string]strategySetting `json:"keep_rest"`
	// Tools answers each --tool, in the order asked.
	Tools []toolLimit `json:"tools,omitempty"`
	// Warnings are the warnings the layers drew, also logged.
	Warnings []string `json:"warnings"`
}

// setting is one limit and the layer it came from.
type setting struct {
	Limit  int    `json:"limit"`
	Source string `json:"source"`
}

// strategySetting is one strategy key and the layer it came from; Value is
// as TOML writes it.
type strategySetting struct {
	Value  string `json:"value"`
	Source string `json:"source"`
}

// MarshalJSON writes Value as the JSON value it stands for (0.25 a
// number, "dir" a string, ['err'] an array, true a boolean), so that
// config --json is read without a TOML parser; a word that is no TOML
// value, such as none, is a string.
func (s strategySetting) MarshalJSON() ([]byte, error) {
	var doc map[string]any
	value := any(s.Value)
	if err := toml.Unmarshal([]byte("v = "+s.Value), &doc); err == nil {
		value = doc["v"]
	}
	return json.Marshal(struct {
		Value  any    `json:"value"`
		Source string `json:"source"`
	}{value, s.Source})
}

// UnmarshalJSON reads what MarshalJSON writes, Value as its JSON text
// (not as TOML wrote it), for a program that reads the report back.
func (s *strategySetting) UnmarshalJSON(b []byte) error {
	var raw struct {
		Value  json.RawMessage `json:"value"`
		Source string          `json:"source"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	s.Value, s.Source = string(raw.Value), raw.Source
	return nil
}

// toolLimit is the limit and strategy in force for one tool, and why.
type toolLimit struct {
	Tool  string `json:"tool"`
	Limit int    `json:"limit"`
	// From is "per_tool" when the tool has its own entry, "default" when
	// default_max_bytes applies.
	From   string `json:"from"`
	Source string `json:"source"`
	// Keep is the strategy; KeepFrom and KeepSource say where it came from
	// as From and Source do for the limit (default_keep, or the built-in
	// default "head").
	Keep       string `json:"keep"`
	KeepFrom   string `json:"keep_from"`
	KeepSource string `json:"keep_source"`
	// The strategy's other fields in force, when set.
	TailShare float64  `json:"tail_share,omitempty"`
	KeepLines []string `json:"keep_lines,omitempty"`
	Fallback  string   `json:"fallback,omitempty"`
	// Tokens is the tool's token limit and why, when it has one.
	Tokens *toolTokens `json:"max_tokens,omitempty"`
}

// toolTokens is the token limit in force for one tool, and why.
type toolTokens struct {
	Limit int `json:"limit"`
	// From is "per_tool" when the tool's entry has max_tokens, "default"
	// when default_max_tokens applies.
	From   string `json:"from"`
	Source string `json:"source"`
}

func (o *options) newConfigReport(res *manifest.Resolution, tools []string) configReport {
	r := configReport{
		Layers:   slices.Clone(res.Layers),
		Default:  setting{res.Default.Value, res.Default.Source},
		Batch:    setting{res.Batch.Value, res.Batch.Source},
		PerTool:  make(map[string]setting, len(res.PerTool)),
		Warnings: append([]string{}, res.Warnings...),
	}
	for name, s := range res.PerTool {
		r.PerTool[name] = setting{s.Value, s.Source}
	}
	r.Clients = make(map[string]setting, len(res.Clients))
	for name, s := range res.Clients {
		r.Clients[name] = setting{s.Value, s.Source}
	}
	for tool, fields := range res.Strategy {
		for field, s := range fields {
			if r.Strategies == nil {
				r.Strategies = map[string]strategySetting{}
			}
			r.Strategies[strategyKey(tool, field)] = strategySetting{s.Value, s.Source}
		}
	}
	r.KeepRest = o.keepRestReport(res)
	for name, s := range res.History {
		if r.History == nil {
			r.History = map[string]strategySetting{}
		}
		r.History[name] = strategySetting{s.Value, s.Source}
	}
	if showTokens(res) {
		r.DefaultTokens = &setting{res.DefaultTokens.Value, res.DefaultTokens.Source}
		r.BatchTokens = &setting{res.BatchTokens.Value, res.BatchTokens.Source}
		r.Tokenizer = &strategySetting{res.Tokenizer.Value, res.Tokenizer.Source}
		for name, s := range res.PerToolTokens {
			if r.PerToolTokens == nil {
				r.PerToolTokens = map[string]setting{}
			}
			r.PerToolTokens[name] = setting{s.Value, s.Source}
		}
	}
	for _, name := range tools {
		r.Tools = append(r.Tools, toolLimitOf(res, name))
	}
	return r
}

// showTokens reports whether some layer sets a token key: only then does
// config print the token settings, so that its output is what it was
// before token limits existed for a manifest without them.
func showTokens(res *manifest.Resolution) bool {
	return res.DefaultTokens.Source != settings.SourceDefault ||
		res.BatchTokens.Source != settings.SourceDefault ||
		res.Tokenizer.Source != settings.SourceDefault ||
		len(res.PerToolTokens) > 0
}

// keepRestReport returns the keep-the-rest settings of res: those a layer
// sets, with the layer, and the store's defaults as the CLI applies them
// (see openRestStore) for the rest.
func (o *options) keepRestReport(res *manifest.Resolution) map[string]strategySetting {
	m := map[string]strategySetting{"keep_rest": {res.KeepRest.Value, res.KeepRest.Source}}
	for tool, s := range res.PerToolKeepRest {
		m[strategyKey(tool, "keep_rest")] = strategySetting{s.Value, s.Source}
	}
	for name, s := range res.Rest {
		m["rest."+name] = strategySetting{s.Value, s.Source}
	}
	l := res.Manifest.Limits()
	c := l.RestConfig()
	def := func(name, value string) {
		if _, ok := m["rest."+name]; !ok {
			m["rest."+name] = strategySetting{value, settings.SourceDefault}
		}
	}
	def("store", strconv.Quote(settings.RestStoreDir))
	quota := int64(rest.DefaultDirMaxBytes)
	if c.Store == settings.RestStoreMemory {
		quota = rest.DefaultMemoryMaxBytes
	} else if _, ok := m["rest.dir"]; !ok {
		// Where the store lives even when no layer says: the directory
		// cap --keep-rest, read and mcp open.
		if dir, err := o.restWhere(c); err != nil {
			m["rest.dir"] = strategySetting{"none", settings.SourceDefault + ": " + oneLine(err.Error())}
		} else {
			m["rest.dir"] = strategySetting{strconv.Quote(dir), settings.SourceDefault + " (the user cache directory)"}
		}
	}
	if c.MaxBytes > 0 {
		quota = c.MaxBytes
	}
	def("max_bytes", strconv.FormatInt(quota, 10))
	if _, ok := m["rest.max_entry_bytes"]; !ok {
		// The store keeps no entry larger than its quota.
		s := strategySetting{strconv.FormatInt(rest.DefaultMaxEntryBytes, 10), settings.SourceDefault}
		if quota < rest.DefaultMaxEntryBytes {
			s = strategySetting{strconv.FormatInt(quota, 10), settings.SourceDefault + " (at most max_bytes)"}
		}
		m["rest.max_entry_bytes"] = s
	}
	def("ttl", strconv.Quote(settings.FormatDuration(rest.DefaultTTL)))
	def("tool", strconv.Quote(l.RestTool()))
	return m
}

// restKeys orders the keep-the-rest rows of the text report: keep_rest,
// the per_tool ones by tool, then the store's keys, the store first.
func restKeys(m map[string]strategySetting) []string {
	keys := []string{"keep_rest"}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if strings.HasPrefix(k, "per_tool.") {
			keys = append(keys, k)
		}
	}
	for _, name := range []string{"store", "dir", "max_bytes", "max_entry_bytes", "ttl", "tool"} {
		if _, ok := m["rest."+name]; ok {
			keys = append(keys, "rest."+name)
		}
	}
	return keys
}

// toolLimitOf says which limit a worker built from res applies to tool. The
// value is the manifest's own answer (the one the worker uses); the
// resolution only adds where it came from.
func toolLimitOf(res *manifest.Resolution, tool string) toolLimit {
	l := res.Manifest.Limits()
	t := toolLimit{Tool: tool, Limit: l.For(tool), From: "default", Source: res.Default.Source}
	if s, ok := res.PerTool[tool]; ok && s.Value == t.Limit {
		t.From, t.Source = "per_tool", s.Source
	}
	st := l.StrategyFor(tool)
	t.Keep, t.KeepFrom, t.KeepSource = string(cut.KeepHead), "default", settings.SourceDefault
	if st.Keep != "" {
		t.Keep = string(st.Keep)
	}
	if s, ok := res.Strategy[tool]["keep"]; ok {
		t.KeepFrom, t.KeepSource = "per_tool", s.Source
	} else if s, ok := res.Strategy[""]["keep"]; ok {
		t.KeepSource = s.Source
	}
	t.TailShare, t.KeepLines, t.Fallback = st.TailShare, st.KeepLines, string(st.Fallback)
	if n := l.TokensFor(tool); n > 0 {
		t.Tokens = &toolTokens{Limit: n, From: "default", Source: res.DefaultTokens.Source}
		if s, ok := res.PerToolTokens[tool]; ok && s.Value == n {
			t.Tokens.From, t.Tokens.Source = "per_tool", s.Source
		}
	}
	return t
}

// tokensWhy says where the tool's token limit came from.
func (t toolLimit) tokensWhy() string {
	switch {
	case t.Tokens == nil:
		return "no token limit: no max_tokens of its own, no default_max_tokens"
	case t.Tokens.From == "per_tool":
		return fmt.Sprintf("%s, set by %s", strategyKey(t.Tool, "max_tokens"), t.Tokens.Source)
	}
	return fmt.Sprintf("default_max_tokens (no max_tokens of its own), set by %s", t.Tokens.Source)
}

// counterFor returns what toolcap counts the token limits of res with: nil
// when res sets none, a [tokens.Calibrated] for the tokenizer
// "calibrated" (also when none is named), and for an exact one
// ("o200k_base", "cl100k_base") what the program's [WithTokenizers]
// opens. Without that, or when it fails, the error is an
// [*manifest.Error] naming the layer that named the tokenizer.
func (o *options) counterFor(res *manifest.Resolution) (tokens.Tokenizer, error) {
	l := res.Manifest.Limits()
	if !l.HasTokens() {
		return nil, nil
	}
	name := l.TokenizerName()
	tz, err := tokens.Builtin(name)
	if err == nil {
		return tz, nil
	}
	switch {
	case (name == "o200k_base" || name == "cl100k_base") && o.tokenizer == nil:
		err = fmt.Errorf("this toolcap binary counts tokens with %q only; for %q install the full toolcap: %s",
			tokens.CalibratedName, name, installFull)
	case o.tokenizer != nil:
		tz, err = o.tokenizer(name)
		switch {
		case err == nil && tz == nil:
			err = errors.New("the program's TokenizerOpener returned no tokenizer and no error")
		case err == nil:
			return tz, nil
		}
	}
	return nil, &manifest.Error{
		Source: res.Tokenizer.Source,
		Key:    "worker.tool_output.tokenizer",
		Value:  strconv.Quote(name),
		Err:    err,
	}
}

// strategyKey names a strategy key as TOML writes it: default_keep for the
// defaults (tool ""), per_tool.Bash.keep for a tool's.
func strategyKey(tool, field string) string {
	if tool == "" {
		return "default_" + field
	}
	return "per_tool." + settings.TOMLKey(tool) + "." + field
}

// limitFor returns the limit for tool and a phrase saying where it came from.
func limitFor(res *manifest.Resolution, tool string) (int, string) {
	t := toolLimitOf(res, tool)
	return t.Limit, t.why()
}

// keepWhy says where the tool's strategy came from.
func (t toolLimit) keepWhy() string {
	switch {
	case t.KeepFrom == "per_tool":
		return fmt.Sprintf("%s, set by %s", strategyKey(t.Tool, "keep"), t.KeepSource)
	case t.KeepSource == settings.SourceDefault:
		return settings.SourceDefault
	}
	return fmt.Sprintf("default_keep (no keep of its own), set by %s", t.KeepSource)
}

func (t toolLimit) why() string {
	if t.From == "per_tool" {
		return fmt.Sprintf("per_tool.%s, set by %s", settings.TOMLKey(t.Tool), t.Source)
	}
	return fmt.Sprintf("default_max_bytes (no max_bytes of its own), set by %s", t.Source)
}

func (r configReport) writeText(out io.Writer) error {
	w := new(bytes.Buffer)
	var rows [][]string
	fmt.Fprintln(w, "Layers, lowest precedence first:")
	for i, l := range r.Layers {
		fmt.Fprintf(w, "  %d. %s\n", i+1, l)
	}
	rows = append(rows, []string{"default_max_bytes", strconv.Itoa(r.Default.Limit), r.Default.Source})
	rows = append(rows, []string{"batch_max_bytes", limitText(r.Batch.Limit), r.Batch.Source})
	names := make([]string, 0, len(r.PerTool))
	for name := range r.PerTool {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s := r.PerTool[name]
		rows = append(rows, []string{"per_tool." + settings.TOMLKey(name), strconv.Itoa(s.Limit), s.Source})
	}
	fmt.Fprintln(w, "\nLimits in force (bytes), and the layer that set each:")
	writeTable(w, "  ", rows, []bool{false, true})
	if r.Tokenizer != nil {
		rows = rows[:0]
		rows = append(rows, []string{"default_max_tokens", limitText(r.DefaultTokens.Limit), r.DefaultTokens.Source})
		rows = append(rows, []string{"batch_max_tokens", limitText(r.BatchTokens.Limit), r.BatchTokens.Source})
		for _, name := range slices.Sorted(maps.Keys(r.PerToolTokens)) {
			s := r.PerToolTokens[name]
			rows = append(rows, []string{strategyKey(name, "max_tokens"), strconv.Itoa(s.Limit), s.Source})
		}
		rows = append(rows, []string{"tokenizer", r.Tokenizer.Value, r.Tokenizer.Source})
		fmt.Fprintln(w, "\nToken limits in force, and the layer that set each:")
		writeTable(w, "  ", rows, []bool{false, true})
		if v := r.Tokenizer.Value; v != tokens.CalibratedName {
			fmt.Fprintf(w, "  (%s is exact: a program passes tiktoken.New(%q) to its worker; toolcap cap, hook, mcp and demo count with calibrated only and refuse it)\n", v, v)
		}
	}
	if len(r.Strategies) > 0 {
		rows = rows[:0]
		for _, key := range slices.Sorted(maps.Keys(r.Strategies)) {
			s := r.Strategies[key]
			rows = append(rows, []string{key, s.Value, s.Source})
		}
		fmt.Fprintln(w, "\nStrategies in force, and the layer that set each:")
		writeTable(w, "  ", rows, []bool{false, false})
	}
	if len(r.History) > 0 {
		rows = rows[:0]
		for _, name := range slices.Sorted(maps.Keys(r.History)) {
			s := r.History[name]
			rows = append(rows, []string{"history." + name, s.Value, s.Source})
		}
		fmt.Fprintln(w, "\nAgeing the history (package history; a program's agent loop), and the layer that set each:")
		writeTable(w, "  ", rows, []bool{false, false})
	}
	if len(r.Clients) > 0 {
		rows = rows[:0]
		for _, name := range slices.Sorted(maps.Keys(r.Clients)) {
			s := r.Clients[name]
			rows = append(rows, []string{"clients." + settings.TOMLKey(name), strconv.Itoa(s.Limit), s.Source})
		}
		fmt.Fprintln(w, "\nClient limits (toolcap mcp holds every result for the MCP client of that name to it), and the layer that set each:")
		writeTable(w, "  ", rows, []bool{false, true})
	}
	rows = rows[:0]
	for _, key := range restKeys(r.KeepRest) {
		s := r.KeepRest[key]
		rows = append(rows, []string{key, s.Value, s.Source})
	}
	fmt.Fprintln(w, "\nKeeping the rest (toolcap mcp; cap --keep-rest for toolcap read), and the layer that set each:")
	writeTable(w, "  ", rows, []bool{false, false})
	if len(r.Tools) > 0 {
		rows = rows[:0]
		for _, t := range r.Tools {
			rows = append(rows, []string{t.Tool, strconv.Itoa(t.Limit), t.why()})
		}
		fmt.Fprintln(w, "\nLimit a worker applies to each tool asked about:")
		writeTable(w, "  ", rows, []bool{false, true})
		if r.Tokenizer != nil {
			rows = rows[:0]
			for _, t := range r.Tools {
				n := 0
				if t.Tokens != nil {
					n = t.Tokens.Limit
				}
				rows = append(rows, []string{t.Tool, limitText(n), t.tokensWhy()})
			}
			fmt.Fprintln(w, "\nToken limit a worker applies to each tool asked about:")
			writeTable(w, "  ", rows, []bool{false, true})
		}
		rows = rows[:0]
		for _, t := range r.Tools {
			rows = append(rows, []string{t.Tool, t.Keep, t.keepWhy()})
		}
		fmt.Fprintln(w, "\nStrategy a worker applies to each tool asked about:")
		writeTable(w, "  ", rows, []bool{false, false})
	}
	_, err := w.WriteTo(out)
	return err
}

// limitText writes a limit, "none" for 0.
func limitText(n int) string {
	if n <= 0 {
		return "none"
	}
	return strconv.Itoa(n)
}

// warnToolCase warns when tool has no per_tool entry but one whose name
// differs from it only in case does: tool names are case-sensitive, so
// that entry (per_tool.read, or TOOLCAP_…__PER_TOOL__read) does not apply
// to tool (Read), and the default does, without a word otherwise.
func warnToolCase(res *manifest.Resolution, tool string, logger hclog.Logger) {
	l := res.Manifest.Limits()
	if _, ok := l.PerTool[tool]; ok {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(l.PerTool)) {
		if strings.EqualFold(name, tool) {
			logger.Warn("per_tool has an entry for another case of the tool's name, which does not apply to it: tool names are case-sensitive",
				"tool", tool, "entry", "per_tool."+settings.TOMLKey(name), "did_you_mean", "per_tool."+settings.TOMLKey(tool))
			return
		}
	}
}
