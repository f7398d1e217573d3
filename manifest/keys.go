package manifest

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	gotoml "github.com/pelletier/go-toml/v2"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/internal/suggest"
)

// key describes one key of [worker.tool_output] or of its rest table and,
// when it has one, its field in a per_tool entry's long form. The table of them, keys, is the
// one place the keys are spelled out: parsing a layer (check,
// perToolEntry), building the limits from the merged layers (assemble),
// the environment's variable names (envKey), validating a Go value
// (validate), Overrides, the "did you mean" of an unknown key and the
// Resolution all read it.
type key struct {
	// table is the sub-table of [worker.tool_output] the key sits in: ""
	// for the table itself, restName for [worker.tool_output.rest].
	table string
	// name is the key in its table: "default_max_bytes", or "ttl" in the
	// rest table.
	name string
	// field is the key in a per_tool entry's long form, "max_bytes", or ""
	// when the key has no per-tool form (batch_max_bytes, tokenizer).
	field string
	// short marks the field the short form of an entry sets (Read = 32768):
	// max_bytes.
	short bool
	// kind is the type of the value and its bounds.
	kind kind
	// top points at the Go field of name in l. For a key of the rest
	// table it points into l.Rest, or, when l.Rest is nil, into a zero
	// RestConfig of its own (restField): reading it says "not set", and a
	// caller that stores a value allocates l.Rest first.
	top func(l *ToolOutputLimits) any
	// entry points at the Go field of field in e; nil when field is "".
	entry func(e *ToolEntry) any
	// record stores the value in force, v (of the kind's Go type), and
	// the layer that set it in r: for the table itself when tool is "",
	// for tool's per_tool entry otherwise.
	record func(r *Resolution, k *key, tool string, v any, src string)
}

// keys is every key of [worker.tool_output] but per_tool, in the order
// validation reports them and suggestions consider them.
var keys = []*key{
	{
		name: "default_max_bytes", field: "max_bytes", short: true, kind: bytesKind,
		top:    func(l *ToolOutputLimits) any { return &l.DefaultMaxBytes },
		entry:  func(e *ToolEntry) any { return &e.MaxBytes },
		record: intSetting(func(r *Resolution) *Setting { return &r.Default }, func(r *Resolution) *map[string]Setting { return &r.PerTool }),
	},
	{
		name: "batch_max_bytes", kind: batchKind,
		top:    func(l *ToolOutputLimits) any { return &l.BatchMaxBytes },
		record: intSetting(func(r *Resolution) *Setting { return &r.Batch }, nil),
	},
	{
		name: "default_max_tokens", field: "max_tokens", kind: tokensKind,
		top:    func(l *ToolOutputLimits) any { return &l.DefaultMaxTokens },
		entry:  func(e *ToolEntry) any { return &e.MaxTokens },
		record: intSetting(func(r *Resolution) *Setting { return &r.DefaultTokens }, func(r *Resolution) *map[string]Setting { return &r.PerToolTokens }),
	},
	{
		name: "batch_max_tokens", kind: tokensKind,
		top:    func(l *ToolOutputLimits) any { return &l.BatchMaxTokens },
		record: intSetting(func(r *Resolution) *Setting { return &r.BatchTokens }, nil),
	},
	{
		name: "tokenizer", kind: tokenizerKind,
		top: func(l *ToolOutputLimits) any { return &l.Tokenizer },
		// The tokenizer is recorded by name, unquoted, as config prints it.
		record: func(r *Resolution, _ *key, _ string, v any, src string) {
			r.Tokenizer = StrategySetting{Value: v.(string), Source: src}
		},
	},
	{
		name: "default_keep", field: "keep", kind: keepKind,
		top:    func(l *ToolOutputLimits) any { return &l.Default.Keep },
		entry:  func(e *ToolEntry) any { return &e.Strategy.Keep },
		record: strategySetting,
	},
	{
		name: "default_tail_share", field: "tail_share", kind: tailShareKind,
		top:    func(l *ToolOutputLimits) any { return &l.Default.TailShare },
		entry:  func(e *ToolEntry) any { return &e.Strategy.TailShare },
		record: strategySetting,
	},
	{
		name: "default_keep_lines", field: "keep_lines", kind: keepLinesKind,
		top:    func(l *ToolOutputLimits) any { return &l.Default.KeepLines },
		entry:  func(e *ToolEntry) any { return &e.Strategy.KeepLines },
		record: strategySetting,
	},
	{
		name: "default_fallback", field: "fallback", kind: fallbackKind,
		top:    func(l *ToolOutputLimits) any { return &l.Default.Fallback },
		entry:  func(e *ToolEntry) any { return &e.Strategy.Fallback },
		record: strategySetting,
	},
	{
		name: "keep_rest", field: "keep_rest", kind: boolKind,
		top:    func(l *ToolOutputLimits) any { return &l.KeepRest },
		entry:  func(e *ToolEntry) any { return &e.KeepRest },
		record: keepRestSetting,
	},
	{
		name: "redact", field: "redact", kind: boolKind,
		top:    func(l *ToolOutputLimits) any { return &l.Redaction.Redact },
		entry:  func(e *ToolEntry) any { return &e.Redaction.Redact },
		record: redactionSetting,
	},
	{
		name: "redact_patterns", field: "redact_patterns", kind: patternsKind,
		top:    func(l *ToolOutputLimits) any { return &l.Redaction.Patterns },
		entry:  func(e *ToolEntry) any { return &e.Redaction.Patterns },
		record: redactionSetting,
	},
	{
		name: "redact_allow", field: "redact_allow", kind: patternsKind,
		top:    func(l *ToolOutputLimits) any { return &l.Redaction.Allow },
		entry:  func(e *ToolEntry) any { return &e.Redaction.Allow },
		record: redactionSetting,
	},
	{
		table: restName, name: "dir", kind: dirKind,
		top:    restField(func(c *RestConfig) any { return &c.Dir }),
		record: restSetting,
	},
	{
		table: restName, name: "max_bytes", kind: restBytesKind,
		top:    restField(func(c *RestConfig) any { return &c.MaxBytes }),
		record: restSetting,
	},
	{
		table: restName, name: "max_entry_bytes", kind: restBytesKind,
		top:    restField(func(c *RestConfig) any { return &c.MaxEntryBytes }),
		record: restSetting,
	},
	{
		table: restName, name: "ttl", kind: ttlKind,
		top:    restField(func(c *RestConfig) any { return &c.TTL }),
		record: restSetting,
	},
	{
		table: restName, name: "tool", kind: restToolKind,
		top:    restField(func(c *RestConfig) any { return &c.Tool }),
		record: restSetting,
	},
	{
		table: restName, name: "store", kind: storeKind,
		top:    restField(func(c *RestConfig) any { return &c.Store }),
		record: restSetting,
	},
	{
		table: historyName, name: "max_tokens", kind: tokensKind,
		top:    historyField(func(c *HistoryConfig) any { return &c.MaxTokens }),
		record: historySetting,
	},
	{
		table: historyName, name: "keep_recent", kind: keepRecentKind,
		top:    historyField(func(c *HistoryConfig) any { return &c.KeepRecent }),
		record: historySetting,
	},
	{
		table: historyName, name: "clear_at_least", kind: tokensKind,
		top:    historyField(func(c *HistoryConfig) any { return &c.ClearAtLeast }),
		record: historySetting,
	},
	{
		table: historyName, name: "never", kind: toolListKind,
		top:    historyField(func(c *HistoryConfig) any { return &c.Never }),
		record: historySetting,
	},
}

// perToolName is the key of the table of per-tool entries, restName that
// of the table of the store of what cuts drop.
const (
	perToolName = "per_tool"
	restName    = "rest"
	historyName = "history"
)

// topNames are the keys of [worker.tool_output], restNames those of
// [worker.tool_output.rest], and entryNames those of a per_tool entry's
// long form, for "did you mean".
var topNames, restNames, entryNames = func() (top, rest, entry []string) {
	for _, k := range keys {
		if k.table == restName {
			rest = append(rest, k.name)
			continue
		}
		if k.table != "" {
			continue
		}
		top = append(top, k.name)
		if k.field != "" {
			entry = append(entry, k.field)
		}
	}
	return append(top, perToolName, restName, clientsName, historyName), rest, entry
}()

// historyNames are the keys of [worker.tool_output.history], for "did you
// mean".
var historyNames = func() (names []string) {
	for _, k := range keys {
		if k.table == historyName {
			names = append(names, k.name)
		}
	}
	return names
}()

// tableNames returns the keys of the sub-table table, for "did you mean".
func tableNames(table string) []string {
	if table == historyName {
		return historyNames
	}
	return restNames
}

// keyNamed returns the key called name in table ("" for
// [worker.tool_output], restName for its rest table), or nil.
func keyNamed(table, name string) *key {
	for _, k := range keys {
		if k.table == table && k.name == name {
			return k
		}
	}
	return nil
}

// dotted is k's full key as errors name it:
// worker.tool_output.default_max_bytes, worker.tool_output.rest.ttl.
func (k *key) dotted() string {
	if k.table == "" {
		return keyTable + "." + k.name
	}
	return keyTable + "." + k.table + "." + k.name
}

// restField points a key of the rest table at its field in l.Rest, or in
// a zero RestConfig when l.Rest is nil: a Go value without a rest table
// sets none of its keys, and reading one never allocates l.Rest (validate
// runs on the caller's value, which it must not change).
func restField(f func(c *RestConfig) any) func(l *ToolOutputLimits) any {
	return func(l *ToolOutputLimits) any {
		if l.Rest == nil {
			return f(&RestConfig{})
		}
		return f(l.Rest)
	}
}

// historyField is restField for a key of the history table.
func historyField(f func(c *HistoryConfig) any) func(l *ToolOutputLimits) any {
	return func(l *ToolOutputLimits) any {
		if l.History == nil {
			return f(&HistoryConfig{})
		}
		return f(l.History)
	}
}

// historySetting records a key of the history table, as TOML writes it.
func historySetting(r *Resolution, k *key, _ string, v any, src string) {
	if r.History == nil {
		r.History = map[string]StrategySetting{}
	}
	r.History[k.name] = StrategySetting{Value: k.kind.show(v), Source: src}
}

// tableIn returns the map of k's table inside t, the map of
// [worker.tool_output]: t itself, or its rest table, which it creates when
// create is set and returns nil for when it is absent and create is not.
func (k *key) tableIn(t map[string]any, create bool) map[string]any {
	if k.table == "" {
		return t
	}
	sub, ok := t[k.table].(map[string]any)
	if !ok && create {
		sub = map[string]any{}
		t[k.table] = sub
	}
	return sub
}

// fieldNamed returns the key whose per_tool field is called field, or nil.
func fieldNamed(field string) *key {
	for _, k := range keys {
		if k.field != "" && k.field == field {
			return k
		}
	}
	return nil
}

// intSetting records an integer key in *top (the table's) or, for a tool,
// in the map *per, which it creates on first use.
func intSetting(top func(*Resolution) *Setting, per func(*Resolution) *map[string]Setting) func(*Resolution, *key, string, any, string) {
	return func(r *Resolution, _ *key, tool string, v any, src string) {
		s := Setting{Value: v.(int), Source: src}
		if tool == "" || per == nil {
			*top(r) = s
			return
		}
		m := per(r)
		if *m == nil {
			*m = map[string]Setting{}
		}
		(*m)[tool] = s
	}
}

// keepRestSetting records keep_rest in the table's KeepRest or a tool's
// PerToolKeepRest, as TOML writes it ("true").
func keepRestSetting(r *Resolution, k *key, tool string, v any, src string) {
	s := StrategySetting{Value: k.kind.show(v), Source: src}
	if tool == "" {
		r.KeepRest = s
		return
	}
	if r.PerToolKeepRest == nil {
		r.PerToolKeepRest = map[string]StrategySetting{}
	}
	r.PerToolKeepRest[tool] = s
}

// redactionSetting records a redaction key by its field, under "" for
// the table's own, as TOML writes the value.
func redactionSetting(r *Resolution, k *key, tool string, v any, src string) {
	if r.Redaction == nil {
		r.Redaction = map[string]map[string]StrategySetting{}
	}
	if r.Redaction[tool] == nil {
		r.Redaction[tool] = map[string]StrategySetting{}
	}
	r.Redaction[tool][k.field] = StrategySetting{Value: k.kind.show(v), Source: src}
}

// restSetting records a key of the rest table by its name, as TOML writes
// the value.
func restSetting(r *Resolution, k *key, _ string, v any, src string) {
	if r.Rest == nil {
		r.Rest = map[string]StrategySetting{}
	}
	r.Rest[k.name] = StrategySetting{Value: k.kind.show(v), Source: src}
}

// strategySetting records a strategy key by its field, under "" for the
// table's default_ key, as TOML writes the value.
func strategySetting(r *Resolution, k *key, tool string, v any, src string) {
	if r.Strategy == nil {
		r.Strategy = map[string]map[string]StrategySetting{}
	}
	if r.Strategy[tool] == nil {
		r.Strategy[tool] = map[string]StrategySetting{}
	}
	r.Strategy[tool][k.field] = StrategySetting{Value: k.kind.show(v), Source: src}
}

// kind is the type of a key's value and its bounds. A value of the kind's
// Go type is an int, an int64, a float64, a bool, a time.Duration, a
// string or a []string; the Go field a key points at may be a named type
// over one of them (cut.Keep) or, for a bool that may be unset, a *bool.
type kind struct {
	// read converts a layer's value to the kind's Go type, without
	// checking its bounds. fromEnv says v is an environment variable's
	// text, to be parsed; in a file, a string where TOML has a number or
	// an array is an error.
	read func(v any, fromEnv bool) (any, error)
	// check says why a value of the Go type cannot be used, or returns
	// nil.
	check func(v any) error
	// show writes a value of the Go type as TOML does.
	show func(v any) string
}

// value reads v as k's kind and checks its bounds.
func (k *key) value(v any, fromEnv bool) (any, error) {
	x, err := k.kind.read(v, fromEnv)
	if err != nil {
		return nil, err
	}
	if err := k.kind.check(x); err != nil {
		return nil, err
	}
	return x, nil
}

var (
	bytesKind     = kind{readInt, checkInt(checkLimit), showInt}
	batchKind     = kind{readInt, checkInt(checkBatch), showInt}
	tokensKind    = kind{readInt, checkInt(checkTokens), showInt}
	tokenizerKind = kind{readString, checkString(checkTokenizer), showString}
	keepKind      = kind{readString, checkString(checkKeep), showString}
	fallbackKind  = kind{readString, checkString(func(s string) error { return checkFallback(cut.Keep(s)) }), showString}
	tailShareKind = kind{readFloat, func(v any) error { return checkTailShare(v.(float64)) }, showFloat}
	keepLinesKind = kind{readLines, checkLines, func(v any) string { return showList(v.([]string)) }}
	boolKind      = kind{readBool, func(any) error { return nil }, func(v any) string { return strconv.FormatBool(v.(bool)) }}
	dirKind       = kind{readString, checkString(checkRestDir), showString}
	restBytesKind = kind{readInt64, func(v any) error { return checkRestBytes(v.(int64)) }, func(v any) string { return strconv.FormatInt(v.(int64), 10) }}
	ttlKind       = kind{readDuration, func(v any) error { return checkTTL(v.(time.Duration)) }, func(v any) string { return strconv.Quote(settings.FormatDuration(v.(time.Duration))) }}
	restToolKind  = kind{readString, checkString(checkRestTool), showString}
	// keepRecentKind counts the most recent tool results never aged.
	keepRecentKind = kind{readInt, checkInt(checkKeepRecent), showInt}
	// toolListKind names tools: history.never.
	toolListKind = kind{readLines, checkToolList, func(v any) string { return showList(v.([]string)) }}
	storeKind    = kind{readString, checkString(checkStore), showStore}
	// patternsKind is a list of regular expressions: redact_patterns and
	// redact_allow.
	patternsKind = kind{readLines, checkPatterns, func(v any) string { return showList(v.([]string)) }}
)

func checkInt(f func(int) error) func(any) error { return func(v any) error { return f(v.(int)) } }
func checkString(f func(string) error) func(any) error {
	return func(v any) error { return f(v.(string)) }
}

func showInt(v any) string    { return strconv.Itoa(v.(int)) }
func showString(v any) string { return strconv.Quote(v.(string)) }
func showFloat(v any) string  { return strconv.FormatFloat(v.(float64), 'g', -1, 64) }

func checkKeep(s string) error {
	_, err := cut.ParseKeep(s)
	return err
}

// maxKeepRecent bounds history.keep_recent.
const maxKeepRecent = 10000

func checkKeepRecent(n int) error {
	switch {
	case n < 1:
		return errors.New("want 1 or more (omit the key for the default of 4)")
	case n > maxKeepRecent:
		return fmt.Errorf("above the maximum of %d", maxKeepRecent)
	}
	return nil
}

func checkToolList(v any) error {
	for i, name := range v.([]string) {
		if err := checkToolName(name); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	return nil
}

// checkPatterns says which of a list of regular expressions does not
// compile, and why.
func checkPatterns(v any) error {
	_, err := compilePatterns(v.([]string))
	return err
}

// compilePatterns compiles redact_patterns or redact_allow.
func compilePatterns(ps []string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, 0, len(ps))
	for i, p := range ps {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out = append(out, re)
	}
	return out, nil
}

func checkLines(v any) error {
	_, err := cut.CompileKeepLines(v.([]string))
	return err
}

func readInt(v any, fromEnv bool) (any, error) { return intValue(v, fromEnv) }

func readInt64(v any, fromEnv bool) (any, error) {
	return int64Value(v, fromEnv, fmt.Sprintf("above the maximum of %d bytes (1 TiB)", maxRestBytes))
}

// readBool reads a boolean. From the environment it is exactly true,
// false, 1 or 0: anything looser ("yes", "TRUE") is more likely a mistake
// than a choice, and a mistake here turns a store on or off unseen.
func readBool(v any, fromEnv bool) (any, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		if !fromEnv {
			return nil, errors.New("a string, not a boolean (write true or false without quotes)")
		}
		switch x {
		case "true", "1":
			return true, nil
		case "false", "0":
			return false, nil
		}
		return nil, errors.New("not a boolean (want true, false, 1 or 0)")
	}
	return nil, fmt.Errorf("%s, not a boolean (write true or false)", kindOf(v))
}

// readDuration reads a Go duration string, "24h" or "90m". A
// time.Duration is one already: what assemble and Overrides hand back.
func readDuration(v any, _ bool) (any, error) {
	const want = `want a Go duration such as "24h" or "90m"`
	switch x := v.(type) {
	case time.Duration:
		return x, nil
	case string:
		d, err := time.ParseDuration(x)
		if err != nil {
			return nil, errors.New("not a duration (" + want + ")")
		}
		return d, nil
	}
	return nil, fmt.Errorf("%s, not a duration (%s, in quotes)", kindOf(v), want)
}

// checkRestDir says why s cannot be the store's directory, or returns nil.
// Whether it exists and whom it belongs to is the store's to check when it
// opens it; a NUL byte is never part of a path.
func checkRestDir(s string) error {
	if strings.Contains(s, "\x00") {
		return errors.New("a path cannot contain a NUL byte")
	}
	return nil
}

// checkRestBytes says why n cannot be a size of the store (its quota or
// its bound on one entry), or returns nil.
func checkRestBytes(n int64) error {
	switch {
	case n == 0:
		return errors.New("0 is not a size; omit the key for the store's default")
	case n < 0:
		return errors.New("a size must be positive")
	case n > maxRestBytes:
		return fmt.Errorf("above the maximum of %d bytes (1 TiB)", maxRestBytes)
	}
	return nil
}

// checkTTL says why d cannot be the store's time to live, or returns nil.
func checkTTL(d time.Duration) error {
	switch {
	case d == 0:
		return errors.New("0 is not a time to live; omit the key for the store's default")
	case d < 0:
		return errors.New("a time to live must be positive")
	case d > maxRestTTL:
		return fmt.Errorf("above the maximum of %s (a year)", settings.FormatDuration(maxRestTTL))
	}
	return nil
}

// checkRestTool says why name cannot be the read tool's name, or returns
// nil: the marker names it, and package cut owns what a marker may hold.
func checkRestTool(name string) error {
	if cut.ValidRestTool(name) {
		return nil
	}
	return errors.New("not a tool name (want 1 to 64 characters of A-Z, a-z, 0-9, '_', '.' and '-', as MCP tool names allow)")
}

// checkStore says why s is not a store this build knows, or returns nil:
// "", "memory", "dir", or the URL of a Redis (redis://host:6379/0,
// rediss:// for TLS), of which it checks the scheme, the host and the
// database number; the store checks the rest when it opens it. No error
// shows the URL's password.
func checkStore(s string) error {
	if s == "" || slices.Contains(restStores, s) {
		return nil
	}
	if !strings.Contains(s, "://") {
		msg := fmt.Sprintf("unknown store (want %q, %q or a redis:// or rediss:// URL; omit the key to let the front end choose)", settings.RestStoreMemory, settings.RestStoreDir)
		if sug := suggest.Closest(s, restStores); sug != "" {
			msg += fmt.Sprintf("; did you mean %q?", sug)
		}
		return errors.New(msg)
	}
	u, err := url.Parse(s)
	if err != nil {
		// url.Parse's error repeats the URL, password and all.
		return errors.New("not a URL (want redis://host:6379/0)")
	}
	if u.Scheme != settings.RestStoreRedis && u.Scheme != settings.RestStoreRedisTLS {
		return fmt.Errorf("unknown store scheme %q (want redis:// or rediss://)", u.Scheme)
	}
	if u.Hostname() == "" {
		return errors.New("a Redis URL needs a host (want redis://host:6379/0)")
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		if n, err := strconv.Atoi(db); err != nil || n < 0 || strings.Contains(db, "/") {
			return fmt.Errorf("database %q: want a number, as in redis://host:6379/0", db)
		}
	}
	return nil
}

// showStore writes a store value as TOML does, with a URL's password
// replaced by "xxxxx", for errors and toolcap config.
func showStore(v any) string { return strconv.Quote(settings.RedactStore(v.(string))) }

// shown renders v, a raw value of k from a layer, for an error: as the
// user wrote it, but for a store URL's password.
func (k *key) shown(v any) string {
	if str, ok := v.(string); ok && k.table == restName && k.name == "store" {
		return showStore(str)
	}
	return show(v)
}

// readString reads a string; the environment's text is one as it is.
func readString(v any, _ bool) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("%s, not a string", kindOf(v))
	}
	return s, nil
}

// readFloat reads a number, an integer included (tail_share = 1 is a
// number TOML writes without a point, out of bounds but not of type).
func readFloat(v any, fromEnv bool) (any, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case int:
		return float64(x), nil
	case string:
		if !fromEnv {
			return nil, errors.New("a string, not a number (write it without quotes)")
		}
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return nil, errors.New("not a number")
		}
		return f, nil
	}
	return nil, fmt.Errorf("%s, not a number", kindOf(v))
}

// readLines reads an array of strings. From the environment it is one
// pattern, or a TOML array of them when the text starts with "[". The
// result is never nil: keep_lines = [] is set, to no patterns.
func readLines(v any, fromEnv bool) (any, error) {
	pats := []string{}
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("element %d is %s, not a string", i, kindOf(e))
			}
			pats = append(pats, s)
		}
	case string:
		if !fromEnv {
			return nil, errors.New("a string, not an array (write ['pattern'])")
		}
		if !strings.HasPrefix(strings.TrimSpace(x), "[") {
			return []string{x}, nil
		}
		var doc struct {
			V []string `toml:"v"`
		}
		if err := gotoml.Unmarshal([]byte("v = "+x), &doc); err != nil {
			return nil, errors.New("not a TOML array of strings")
		}
		pats = append(pats, doc.V...)
	default:
		return nil, fmt.Errorf("%s, not an array of strings", kindOf(v))
	}
	return pats, nil
}

// get returns the value the Go field p points at, in its kind's Go type,
// and whether it is set: a zero field is not, nor a nil *bool.
func get(p any) (any, bool) {
	switch p := p.(type) {
	case *int:
		return *p, *p != 0
	case *int64:
		return *p, *p != 0
	case *time.Duration:
		return *p, *p != 0
	case **bool:
		if *p == nil {
			return false, false
		}
		return **p, true
	case *float64:
		return *p, *p != 0
	case *string:
		return *p, *p != ""
	case *cut.Keep:
		return string(*p), *p != ""
	case *[]string:
		return *p, *p != nil
	}
	return nil, false
}

// put stores v, of the kind's Go type, in the Go field p points at.
func put(p, v any) {
	switch p := p.(type) {
	case *int:
		*p, _ = v.(int)
	case *int64:
		*p, _ = v.(int64)
	case *time.Duration:
		*p, _ = v.(time.Duration)
	case **bool:
		b, _ := v.(bool)
		*p = &b
	case *float64:
		*p, _ = v.(float64)
	case *string:
		*p, _ = v.(string)
	case *cut.Keep:
		s, _ := v.(string)
		*p = cut.Keep(s)
	case *[]string:
		s, _ := v.([]string)
		*p = slices.Clone(s)
	}
}

// layerValue is v, of a kind's Go type, as a TOML layer holds it: an
// array is a []any, a duration its string.
func layerValue(v any) any {
	if d, ok := v.(time.Duration); ok {
		return d.String()
	}
	if ss, ok := v.([]string); ok {
		a := make([]any, len(ss))
		for i, s := range ss {
			a[i] = s
		}
		return a
	}
	return v
}

// kindOf names the TOML type of v for an error: "a string", "an integer".
func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64, int:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case map[string]any:
		return "a table"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a %T", v)
}
