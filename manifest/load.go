package manifest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"
	gotoml "github.com/pelletier/go-toml/v2"

	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/internal/suggest"
)

// delim separates key levels inside koanf. Tool names are arbitrary strings
// and MCP names contain ".", "/" and "-", so the delimiter is a byte no tool
// name may contain (checkToolName rejects it).
const delim = "\x00"

// Option adds a layer to [Load] and [Resolve], or configures them. Layers
// apply in the order given, each above the ones before it.
type Option func(*config)

type config struct {
	layers []layer
	logger hclog.Logger
}

// layer is one source of values. load fills a fresh koanf instance; names,
// when set, gives the environment variable behind each flat key.
type layer struct {
	source   string
	optional string // a path that may be absent
	override bool   // a program's Overrides, such as a flag
	load     func(ctx context.Context, k *koanf.Koanf, names map[string]string, warn func(key, msg string)) error
}

// File adds the TOML manifest at path as a layer. A file that is missing,
// unreadable, not valid TOML or over a bound ([settings.MaxManifestBytes],
// [maxNestingDepth], [maxTableKeys], [maxPerToolEntries]) is an error naming
// it.
func File(path string) Option {
	return func(c *config) {
		c.layers = append(c.layers, fileLayer(path))
	}
}

// OptionalFile is [File] for a manifest that may not exist, such as a user's
// manifest in their config directory: an absent file adds nothing. A file that
// exists but cannot be read or parsed is still an error.
func OptionalFile(path string) Option {
	return func(c *config) {
		l := fileLayer(path)
		l.optional = path
		c.layers = append(c.layers, l)
	}
}

func fileLayer(path string) layer {
	return layer{
		source: fmt.Sprintf("file %q", path),
		load: func(ctx context.Context, k *koanf.Koanf, _ map[string]string, _ func(string, string)) error {
			data, err := readFile(ctx, path)
			if err != nil {
				return err
			}
			return loadTOML(k, data)
		},
	}
}

// Bytes adds TOML manifest text as a layer, named name in errors and in
// [Resolution] (for example an embedded default or a test's input). The
// bounds of [File] apply.
func Bytes(name string, data []byte) Option {
	return func(c *config) {
		c.layers = append(c.layers, layer{
			source: name,
			load: func(_ context.Context, k *koanf.Koanf, _ map[string]string, _ func(string, string)) error {
				return loadTOML(k, data)
			},
		})
	}
}

// loadTOML checks data against the bounds, then parses it into k.
func loadTOML(k *koanf.Koanf, data []byte) error {
	if err := checkBounds(data); err != nil {
		return err
	}
	return k.Load(rawBytes(data), toml.Parser())
}

// rawBytes is a koanf.Provider of bytes already in memory.
type rawBytes []byte

func (b rawBytes) ReadBytes() ([]byte, error) { return b, nil }

func (b rawBytes) Read() (map[string]any, error) {
	return nil, errors.New("rawBytes provider needs a parser")
}

// Overrides adds limits as the layer named name (for example "flag
// --max-bytes"): the place for explicit options and command-line flags, above
// the environment. As in any Go value, a zero field is "not set": a zero
// DefaultMaxBytes, a zero field of Default, of Rest or of a PerTool entry, a
// nil KeepRest. A PerTool entry that sets MaxBytes only is the short form
// (Read = 32768), one that sets nothing is Read = 0, an error.
func Overrides(name string, limits ToolOutputLimits) Option {
	return func(c *config) {
		tool := map[string]any{}
		for _, k := range keys {
			if v, ok := get(k.top(&limits)); ok {
				k.tableIn(tool, true)[k.name] = layerValue(v)
			}
		}
		per := map[string]any{}
		for name, e := range limits.PerTool {
			per[name] = e.layer()
		}
		if len(per) > 0 {
			tool[perToolName] = per
		}
		if len(limits.Clients) > 0 {
			clients := map[string]any{}
			for name, n := range limits.Clients {
				clients[name] = n
			}
			tool[clientsName] = clients
		}
		mp := map[string]any{"worker": map[string]any{"tool_output": tool}}
		c.layers = append(c.layers, layer{
			source:   name,
			override: true,
			load: func(_ context.Context, k *koanf.Koanf, _ map[string]string, _ func(string, string)) error {
				return k.Load(confmap.Provider(mp, ""), nil)
			},
		})
	}
}

// layer is e as a manifest writes it: the short form, a limit, or a table
// of the fields e sets.
func (e ToolEntry) layer() any {
	if e.short() {
		return e.MaxBytes
	}
	m := map[string]any{}
	for _, k := range keys {
		if k.entry == nil {
			continue
		}
		if v, ok := get(k.entry(&e)); ok {
			m[k.field] = layerValue(v)
		}
	}
	return m
}

// WithLogger sets the logger that warnings go to. Without it, Load is silent
// (the warnings are still in [Resolution.Warnings]).
func WithLogger(l hclog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// Setting is one effective limit and the layer that set it.
type Setting struct {
	// Value is the limit in bytes.
	Value int
	// Source names the layer that set it, as in [Error.Source], or
	// [settings.SourceDefault].
	Source string
}

// Resolution is the outcome of [Resolve]: the manifest and, for each limit in
// force, where it came from.
type Resolution struct {
	// Manifest is what [Load] returns.
	Manifest *WorkerManifest
	// Default is the effective default_max_bytes.
	Default Setting
	// Batch is the effective batch_max_bytes: Value 0 and [settings.SourceDefault]
	// when no layer sets one (no batch budget).
	Batch Setting
	// DefaultTokens is the effective default_max_tokens, Value 0 and
	// [settings.SourceDefault] when no layer sets one (no token limit).
	DefaultTokens Setting
	// BatchTokens is the effective batch_max_tokens, Value 0 and
	// [settings.SourceDefault] when no layer sets one.
	BatchTokens Setting
	// Tokenizer is the effective tokenizer: "calibrated" and
	// [settings.SourceDefault] when no layer names one.
	Tokenizer StrategySetting
	// PerToolTokens holds the effective max_tokens of per_tool entries;
	// nil when no layer sets one.
	PerToolTokens map[string]Setting
	// PerTool holds the effective per_tool limits: the short form, or the
	// max_bytes of the long form.
	PerTool map[string]Setting
	// KeepRest is the effective keep_rest, "true" or "false":
	// "true" and [settings.SourceDefault] when no layer sets it.
	KeepRest StrategySetting
	// History holds the keys of [worker.tool_output.history] that some
	// layer sets, by name, as TOML writes them; nil when none is.
	History map[string]StrategySetting
	// Clients holds the client limits in force, the built-in ones
	// ([settings.SourceDefault]) and those a layer sets, by client name.
	Clients map[string]Setting
	// Redaction holds the redaction keys a layer set (redact,
	// redact_patterns, redact_allow), by tool, "" for the table's own;
	// nil when none did: every tool is redacted with the built-in rules.
	Redaction map[string]map[string]StrategySetting
	// PerToolKeepRest holds the keep_rest of per_tool entries; nil when
	// no layer sets one.
	PerToolKeepRest map[string]StrategySetting
	// Rest holds the keys of [worker.tool_output.rest] that some layer
	// sets, by name (dir, max_bytes, max_entry_bytes, ttl, tool, store),
	// each as TOML writes it: "24h" quoted. A key no layer sets is absent:
	// the front end's store takes its own default. Nil when none is set.
	Rest map[string]StrategySetting
	// Strategy holds the strategy keys in force and the layer that set
	// each: under "" the defaults (keep, tail_share, keep_lines, fallback,
	// for default_keep and its siblings), under a tool's name its per_tool
	// entry's. Nil when no layer sets any.
	Strategy map[string]map[string]StrategySetting
	// Layers names every layer applied, in order, starting with
	// [settings.SourceDefault]. An absent OptionalFile is not listed.
	Layers []string
	// Warnings holds every warning, in the order it was logged.
	Warnings []string
}

// Load builds a [WorkerManifest] from the built-in default and the layers in
// opts, later layers overriding earlier ones key by key. The result always
// has a non-nil ToolOutput. Errors are [*Error] values.
//
// Load stops reading files once ctx is done, with an [*Error] naming the
// file and wrapping ctx's error. Opening a file can block (a FIFO that has
// no writer); such an open runs on a goroutine that Load abandons, and
// that goroutine ends when the open returns.
func Load(ctx context.Context, opts ...Option) (*WorkerManifest, error) {
	r, err := Resolve(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return r.Manifest, nil
}

// Resolve is [Load] that also reports where each limit came from.
func Resolve(ctx context.Context, opts ...Option) (*Resolution, error) {
	c := config{logger: hclog.NewNullLogger()}
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}

	res := &Resolution{
		Default: Setting{Value: DefaultMaxBytes, Source: settings.SourceDefault},
		Batch:   Setting{Source: settings.SourceDefault},
		PerTool: map[string]Setting{},

		DefaultTokens: Setting{Source: settings.SourceDefault},
		BatchTokens:   Setting{Source: settings.SourceDefault},
		Tokenizer:     StrategySetting{Value: tokenizerCalibrated, Source: settings.SourceDefault},
		KeepRest:      StrategySetting{Value: "true", Source: settings.SourceDefault},
		Layers:        []string{settings.SourceDefault},
	}
	merged := newKoanf()
	// The built-in client limits are not a layer's: a manifest holds only
	// those a layer sets, over them (ToolOutputLimits.ClientLimit).
	res.Clients = map[string]Setting{}
	for client, n := range shape.BuiltinClients {
		res.Clients[client] = Setting{Value: n, Source: settings.SourceDefault}
	}
	defaults := map[string]any{"worker": map[string]any{"tool_output": map[string]any{
		"default_max_bytes": DefaultMaxBytes,
	}}}
	if err := merged.Load(confmap.Provider(defaults, ""), nil); err != nil {
		return nil, &Error{Source: settings.SourceDefault, Err: err}
	}

	tools := map[string]bool{} // the per_tool names of every layer so far
	for _, l := range c.layers {
		if l.optional != "" {
			if _, err := os.Stat(l.optional); errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
		names := map[string]string{}
		warn := func(key, msg string) {
			res.Warnings = append(res.Warnings, msg)
			c.logger.Warn(msg, "key", shorten(key), "source", l.source)
		}
		k := newKoanf()
		if err := l.load(ctx, k, names, warn); err != nil {
			return nil, &Error{Source: l.source, Err: describeLoadError(err)}
		}
		clean, err := check(k.Raw(), l.source, names, res, tools, warn)
		if err != nil {
			return nil, err
		}
		if err := merged.Load(confmap.Provider(clean, ""), nil); err != nil {
			return nil, &Error{Source: l.source, Err: err}
		}
		res.Layers = append(res.Layers, l.source)
	}

	res.Manifest = &WorkerManifest{ToolOutput: assemble(merged.Raw())}
	if err := res.Manifest.ToolOutput.Rest.checkSizes(func(name string) string { return res.Rest[name].Source }); err != nil {
		return nil, err
	}
	overrides := map[string]bool{}
	for _, l := range c.layers {
		overrides[l.source] = l.override
	}
	for _, u := range unusedKeepLines(res.Manifest.ToolOutput) {
		if overrides[res.Strategy[u.tool]["keep"].Source] {
			// The program chose the strategy for this run (--keep): the
			// manifest's keep_lines is not wrong for that.
			continue
		}
		source := res.Strategy[u.tool]["keep_lines"].Source
		res.Warnings = append(res.Warnings, u.msg)
		c.logger.Warn(u.msg, "key", u.key, "source", source)
	}
	return res, nil
}

func newKoanf() *koanf.Koanf {
	return koanf.NewWithConf(koanf.Conf{Delim: delim})
}

// describeLoadError adds the position of a TOML syntax error to its text.
func describeLoadError(err error) error {
	var de *gotoml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return fmt.Errorf("line %d, column %d: %w", row, col, err)
	}
	return err
}

// check validates one layer's raw map and returns the part toolcap owns,
// with every limit as an int, recording the source of each value in res.
// names maps a flat koanf key to the environment variable it came from.
func check(raw map[string]any, source string, names map[string]string, res *Resolution, tools map[string]bool, warn func(key, msg string)) (map[string]any, error) {
	srcOf := func(flat string) string {
		if v, ok := names[flat]; ok {
			return "env " + v
		}
		return source
	}
	// Keys outside [worker.tool_output] belong to the rest of the manifest,
	// but one of toolcap's keys in the wrong place, or a near miss of one,
	// would silently leave the limits at their defaults.
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		v := raw[key]
		if key == "worker" {
			continue
		}
		misplaced(nil, key, v, source, warn)
		if sub, ok := v.(map[string]any); ok && (strings.EqualFold(key, "worker") || suggest.Closest(key, []string{"worker"}) != "") {
			for _, s := range slices.Sorted(maps.Keys(sub)) {
				misplaced([]string{key}, s, sub[s], source, warn)
			}
		}
	}
	w, ok := raw["worker"]
	if !ok {
		return map[string]any{}, nil
	}
	wm, ok := w.(map[string]any)
	if !ok {
		return nil, &Error{Source: source, Key: "worker", Value: show(w), Err: errors.New("must be a table")}
	}
	for _, key := range slices.Sorted(maps.Keys(wm)) {
		if key != "tool_output" {
			misplaced([]string{"worker"}, key, wm[key], source, warn)
		}
	}
	t, ok := wm["tool_output"]
	if !ok {
		return map[string]any{}, nil
	}
	tm, ok := t.(map[string]any)
	if !ok {
		return nil, &Error{Source: source, Key: "worker.tool_output", Value: show(t), Err: errors.New("must be a table")}
	}

	out := map[string]any{}
	base := "worker" + delim + "tool_output" + delim
	for _, name := range slices.Sorted(maps.Keys(tm)) {
		v := tm[name]
		switch name {
		case perToolName:
			per, err := checkPerTool(v, base+name+delim, source, srcOf, res, tools, warn)
			if err != nil {
				return nil, err
			}
			out[name] = per
			continue
		case clientsName:
			clients, err := checkClients(v, base+name+delim, source, srcOf, res)
			if err != nil {
				return nil, err
			}
			out[name] = clients
			continue
		case restName, historyName:
			sub, err := checkTable(name, v, base+name+delim, source, srcOf, res, warn)
			if err != nil {
				return nil, err
			}
			out[name] = sub
			continue
		}
		val, ok, err := checkKey("", name, v, base, source, srcOf, res, warn)
		if err != nil {
			return nil, err
		}
		if ok {
			out[name] = val
		}
	}
	return map[string]any{"worker": map[string]any{"tool_output": out}}, nil
}

// checkTable checks one layer's sub-table of [worker.tool_output] called
// table, v, whose keys' flat keys start with prefix, and returns its known
// keys with their values read.
func checkTable(table string, v any, prefix, source string, srcOf func(string) string, res *Resolution, warn func(key, msg string)) (map[string]any, error) {
	tm, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Source: source, Key: keyTable + "." + table, Value: show(v), Err: errors.New("must be a table")}
	}
	out := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(tm)) {
		val, ok, err := checkKey(table, name, tm[name], prefix, source, srcOf, res, warn)
		if err != nil {
			return nil, err
		}
		if ok {
			out[name] = val
		}
	}
	return out, nil
}

// checkKey reads the value v of the key name in table ("" for
// [worker.tool_output]) and records it in res. An unknown key is a
// warning naming it and the layer, and not ok.
func checkKey(table, name string, v any, prefix, source string, srcOf func(string) string, res *Resolution, warn func(key, msg string)) (val any, ok bool, err error) {
	src := srcOf(prefix + name)
	k := keyNamed(table, name)
	if k == nil {
		where, names := keyTable, topNames
		if table != "" {
			where, names = keyTable+"."+table, tableNames(table)
		}
		msg := fmt.Sprintf("unknown key %s in [%s] of %s; ignored", quoteShort(name), where, src)
		if s := suggest.Closest(name, names); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		warn(where+"."+settings.TOMLKey(name), msg)
		return nil, false, nil
	}
	val, err = k.value(v, src != source)
	if err != nil {
		return nil, false, &Error{Source: src, Key: k.dotted(), Value: k.shown(v), Err: err}
	}
	k.record(res, k, "", val, src)
	return val, true, nil
}

// checkPerTool checks one layer's per_tool table, v, whose entries' flat
// keys start with prefix, and returns it with every entry a table
// (perToolEntry). tools gathers the names of every layer so far, for
// maxPerToolEntries.
func checkPerTool(v any, prefix, source string, srcOf func(string) string, res *Resolution, tools map[string]bool, warn func(key, msg string)) (map[string]any, error) {
	pm, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Source: source, Key: keyPerTool, Value: show(v), Err: errors.New("must be a table of tool names to limits")}
	}
	if len(pm) > maxPerToolEntries {
		return nil, &Error{Source: source, Key: keyPerTool, Value: fmt.Sprintf("(a table of %d entries)", len(pm)),
			Err: fmt.Errorf("more than %d entries", maxPerToolEntries)}
	}
	per := map[string]any{}
	for _, tool := range slices.Sorted(maps.Keys(pm)) {
		tv := pm[tool]
		flat := prefix + tool
		if err := checkToolName(tool); err != nil {
			return nil, &Error{Source: srcOf(flat), Key: perToolKey(tool), Value: show(tv), Err: err}
		}
		entry, src, shown, err := perToolEntry(tool, tv, flat, source, srcOf, res, warn)
		if err != nil {
			return nil, err
		}
		per[tool] = entry
		// The bound holds for the manifest the layers make together,
		// not only for each layer: what Load returns can always be
		// written back as one file.
		tools[tool] = true
		if len(tools) > maxPerToolEntries {
			return nil, &Error{Source: src, Key: perToolKey(tool), Value: shown,
				Err: fmt.Errorf("more than %d per_tool entries in all layers together", maxPerToolEntries)}
		}
	}
	return per, nil
}

// misplaced warns when key, found in the table at path (nil for the top
// level), is one of toolcap's keys out of place, or a near miss of one: a
// [tool_output] table at the top level, [Worker.tool_output], or a
// default_max_bytes or per_tool outside [worker.tool_output].
func misplaced(path []string, key string, v any, source string, warn func(key, msg string)) {
	targets := []string{"tool_output", "default_max_bytes", "per_tool"}
	target := ""
	if slices.Contains(targets, key) {
		target = key
	} else {
		target = suggest.Closest(key, targets)
	}
	if target == "" {
		return
	}
	if target != "tool_output" {
		target = "tool_output." + target
	}
	target = "worker." + target
	full := ""
	for _, p := range append(slices.Clone(path), key) {
		if full != "" {
			full += "."
		}
		full += tomlShort(p)
	}
	if _, ok := v.(map[string]any); ok {
		warn(full, fmt.Sprintf("unknown table [%s] in %s; ignored (did you mean [%s]?)", full, source, target))
		return
	}
	where := "at the top level"
	if len(path) > 0 {
		where = "in [" + strings.Join(path, ".") + "]"
	}
	warn(full, fmt.Sprintf("unknown key %s %s of %s; ignored (did you mean %q?)", quoteShort(key), where, source, target))
}

// intValue returns v as an int, parsing an environment value, without
// checking its bounds.
func intValue(v any, fromEnv bool) (int, error) {
	tooLarge := fmt.Sprintf("above the maximum of %d bytes (64 MiB)", MaxMaxBytes)
	n, err := int64Value(v, fromEnv, tooLarge)
	if err != nil {
		return 0, err
	}
	if int64(int(n)) != n {
		return 0, errors.New(tooLarge)
	}
	return int(n), nil
}

// int64Value returns v as an int64, parsing an environment value, without
// checking its bounds; tooLarge is the error of a number past int64.
func int64Value(v any, fromEnv bool, tooLarge string) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case string:
		if !fromEnv {
			return 0, errors.New("a string, not an integer (write the number without quotes)")
		}
		i, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return 0, errors.New(tooLarge)
			}
			return 0, errors.New("not an integer")
		}
		return i, nil
	case float64:
		return 0, errors.New("a float, not an integer")
	case bool:
		return 0, errors.New("a boolean, not an integer")
	case map[string]any:
		return 0, errors.New("a table, not an integer")
	}
	return 0, fmt.Errorf("a %T, not an integer", v)
}

// show renders a value as the user wrote it, for error messages.
func show(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case map[string]any:
		return "(a table)"
	case []any:
		return "(an array)"
	}
	return fmt.Sprint(v)
}
