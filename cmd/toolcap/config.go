package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/toolcap/toolcap/cut"
	"github.com/toolcap/toolcap/manifest"
)

const configHelp = `Usage: toolcap config [--manifest FILE]... [--tool NAME]... [--json]

Prints the tool-output limits and cut strategies in force and, for each, the
layer that set it: the built-in default, a --manifest file (later files win)
or a TOOLCAP_ environment variable (which beats every file), and the batch
budget (batch_max_bytes: "none" unless a layer sets one). With --tool,
also prints the limit and the strategy a worker applies to that tool and
why: its per_tool entry, or the defaults when it has none. This answers "why
was my Read cut at 4096?" and "why did Bash lose its tail?".

Exit status: 0 on success; 2 on a usage or configuration error (then nothing
is written to standard output and one line on standard error names the
source, key and value). Warnings go to standard error.
`

func runConfig(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	fs := newFlags("config")
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

	res, err := layers.resolve(ctx, env, newLogger(stderr, verbosity(0).level()).Named("toolcap"))
	if err != nil {
		return configError(stderr, err)
	}
	report := newConfigReport(res, tools)
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
	// Strategies holds the strategy keys set by some layer, by their key
	// as TOML writes it (default_keep, per_tool.Bash.tail_share).
	Strategies map[string]strategySetting `json:"strategies,omitempty"`
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
}

func newConfigReport(res *manifest.Resolution, tools []string) configReport {
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
	for tool, fields := range res.Strategy {
		for field, s := range fields {
			if r.Strategies == nil {
				r.Strategies = map[string]strategySetting{}
			}
			r.Strategies[strategyKey(tool, field)] = strategySetting{s.Value, s.Source}
		}
	}
	for _, name := range tools {
		r.Tools = append(r.Tools, toolLimitOf(res, name))
	}
	return r
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
	t.Keep, t.KeepFrom, t.KeepSource = string(cut.KeepHead), "default", manifest.SourceDefault
	if st.Keep != "" {
		t.Keep = string(st.Keep)
	}
	if s, ok := res.Strategy[tool]["keep"]; ok {
		t.KeepFrom, t.KeepSource = "per_tool", s.Source
	} else if s, ok := res.Strategy[""]["keep"]; ok {
		t.KeepSource = s.Source
	}
	t.TailShare, t.KeepLines, t.Fallback = st.TailShare, st.KeepLines, string(st.Fallback)
	return t
}

// strategyKey names a strategy key as TOML writes it: default_keep for the
// defaults (tool ""), per_tool.Bash.keep for a tool's.
func strategyKey(tool, field string) string {
	if tool == "" {
		return "default_" + field
	}
	return "per_tool." + manifest.TOMLKey(tool) + "." + field
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
	case t.KeepSource == manifest.SourceDefault:
		return manifest.SourceDefault
	}
	return fmt.Sprintf("default_keep (no keep of its own), set by %s", t.KeepSource)
}

func (t toolLimit) why() string {
	if t.From == "per_tool" {
		return fmt.Sprintf("per_tool.%s, set by %s", manifest.TOMLKey(t.Tool), t.Source)
	}
	return fmt.Sprintf("default_max_bytes (no per_tool entry), set by %s", t.Source)
}

func (r configReport) writeText(out io.Writer) error {
	w := new(bytes.Buffer)
	var rows [][]string
	fmt.Fprintln(w, "Layers, lowest precedence first:")
	for i, l := range r.Layers {
		fmt.Fprintf(w, "  %d. %s\n", i+1, l)
	}
	rows = append(rows, []string{"default_max_bytes", strconv.Itoa(r.Default.Limit), r.Default.Source})
	batch := "none"
	if r.Batch.Limit > 0 {
		batch = strconv.Itoa(r.Batch.Limit)
	}
	rows = append(rows, []string{"batch_max_bytes", batch, r.Batch.Source})
	names := make([]string, 0, len(r.PerTool))
	for name := range r.PerTool {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s := r.PerTool[name]
		rows = append(rows, []string{"per_tool." + manifest.TOMLKey(name), strconv.Itoa(s.Limit), s.Source})
	}
	fmt.Fprintln(w, "\nLimits in force (bytes), and the layer that set each:")
	writeTable(w, "  ", rows, []bool{false, true})
	if len(r.Strategies) > 0 {
		rows = rows[:0]
		for _, key := range slices.Sorted(maps.Keys(r.Strategies)) {
			s := r.Strategies[key]
			rows = append(rows, []string{key, s.Value, s.Source})
		}
		fmt.Fprintln(w, "\nStrategies in force, and the layer that set each:")
		writeTable(w, "  ", rows, []bool{false, false})
	}
	if len(r.Tools) > 0 {
		rows = rows[:0]
		for _, t := range r.Tools {
			rows = append(rows, []string{t.Tool, strconv.Itoa(t.Limit), t.why()})
		}
		fmt.Fprintln(w, "\nLimit a worker applies to each tool asked about:")
		writeTable(w, "  ", rows, []bool{false, true})
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
