package manifest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/v2"

	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/internal/suggest"
)

// Env adds the process environment as a layer: [settings.EnvDefaultMaxBytes] and
// its siblings (DEFAULT_KEEP, DEFAULT_TAIL_SHARE, DEFAULT_KEEP_LINES,
// DEFAULT_FALLBACK), [settings.EnvBatchMaxBytes], [settings.EnvDefaultMaxTokens],
// [settings.EnvBatchMaxTokens], [settings.EnvTokenizer], [settings.EnvKeepRest], the keys of the rest
// table ([settings.EnvRestDir] and its siblings), and [settings.EnvPerToolPrefix] followed by
// a tool name and optionally a field of its entry, for example
//
//	TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES=8192
//	TOOLCAP_WORKER__TOOL_OUTPUT__KEEP_REST=false
//	TOOLCAP_WORKER__TOOL_OUTPUT__REST__TTL=90m
//	TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=4096
//	TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__MAX_BYTES=32768
//	TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__MAX_TOKENS=8000
//	TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__KEEP=head_tail
//	TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__KEEP_LINES=['(?i)error', 'FAIL']
//	TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Bash__KEEP_REST=false
//
// Everything after PER_TOOL__ is the tool name, as registered, "__"
// included, except a last "__" segment that is a field in upper case
// (MAX_BYTES, MAX_TOKENS, KEEP, TAIL_SHARE, KEEP_LINES, FALLBACK,
// KEEP_REST): a tool whose name ends in one, such as "x__KEEP", is set
// with an explicit field, PER_TOOL__x__KEEP__MAX_BYTES. KEEP_LINES is one
// pattern, or a TOML array of patterns when it starts with "[". A boolean
// (KEEP_REST) is exactly true, false, 1 or 0.
// Any other TOOLCAP_ variable draws a warning, so a typo does not go unseen.
func Env() Option {
	return Environ(os.Environ())
}

// Environ is [Env] over the given "KEY=value" list instead of the process
// environment, for tests and for programs that build an environment.
func Environ(vars []string) Option {
	vars = append([]string(nil), vars...)
	return func(c *config) {
		c.layers = append(c.layers, layer{
			source: "environment",
			load: func(_ context.Context, k *koanf.Koanf, names map[string]string, warn func(key, msg string)) error {
				warnPrefixCase(vars, warn)
				return k.Load(env.Provider(delim, env.Opt{
					Prefix:        settings.EnvPrefix,
					EnvironFunc:   func() []string { return vars },
					TransformFunc: envTransform(names, warn),
				}), nil)
			},
		})
	}
}

// envTransform maps a TOOLCAP_ variable to its flat koanf key, records the
// variable's name for error messages, and warns about variables it does not
// know.
func envTransform(names map[string]string, warn func(key, msg string)) func(k, v string) (string, any) {
	return func(name, value string) (string, any) {
		key := envKey(name)
		if key == "" {
			warn(name, fmt.Sprintf("unknown environment variable %s; ignored%s", shorten(name), envHint(name)))
			return "", nil
		}
		if prev, dup := names[key]; dup && prev != name {
			// The structural parts match without regard to case, so two
			// spellings can name one key; the later one in the environment wins.
			warn(name, fmt.Sprintf("environment variables %s and %s set the same key; %s wins", shorten(prev), shorten(name), shorten(name)))
		}
		names[key] = name
		return key, value
	}
}

// envHint is the "did you mean" of an unknown TOOLCAP_ variable, or "".
func envHint(name string) string {
	// A name with PER_TOOL and one underscore or none before the tool name,
	// after something close to the per_tool prefix, is a per_tool entry.
	const per = "PER_TOOL"
	for i := len(settings.EnvPrefix); i+len(per) <= len(name); i++ {
		if !strings.EqualFold(name[i:i+len(per)], per) {
			continue
		}
		head := name[:i]
		want := strings.TrimSuffix(settings.EnvPerToolPrefix, per+"__")
		if !strings.EqualFold(head, want) && suggest.Closest(head, []string{want}) == "" {
			break
		}
		rest := name[i+len(per):]
		if strings.Trim(rest, "_") == "" {
			return " (a tool name must follow PER_TOOL__)"
		}
		return fmt.Sprintf(" (did you mean %s?)", shorten(settings.EnvPerToolPrefix+strings.TrimPrefix(rest, "_")))
	}
	if s := suggest.Closest(name, envNames()); s != "" {
		return fmt.Sprintf(" (did you mean %s?)", s)
	}
	return ""
}

// warnPrefixCase warns about variables whose prefix is TOOLCAP_ in another
// case: the prefix is matched exactly, so they would go unseen.
func warnPrefixCase(vars []string, warn func(key, msg string)) {
	for _, kv := range vars {
		name, _, _ := strings.Cut(kv, "=")
		if len(name) < len(settings.EnvPrefix) || strings.HasPrefix(name, settings.EnvPrefix) || !strings.EqualFold(name[:len(settings.EnvPrefix)], settings.EnvPrefix) {
			continue
		}
		warn(name, fmt.Sprintf("environment variable %s ignored: the %s prefix is upper case (did you mean %s?)",
			shorten(name), settings.EnvPrefix, shorten(settings.EnvPrefix+name[len(settings.EnvPrefix):])))
	}
}

// envNames are the variables of the keys of [worker.tool_output] and its
// rest table, sorted, for "did you mean": built when a variable is not
// known, not at every start of a process.
func envNames() []string {
	names := make([]string, 0, len(keys))
	for _, k := range keys {
		names = append(names, k.envName())
	}
	slices.Sort(names)
	return names
}

// envName is the variable of k: its name in upper case after
// TOOL_OUTPUT__, or after TOOL_OUTPUT__REST__ for a key of the rest table.
func (k *key) envName() string {
	name := settings.EnvPrefix + "WORKER__TOOL_OUTPUT__"
	if k.table != "" {
		name += strings.ToUpper(k.table) + "__"
	}
	return name + strings.ToUpper(k.name)
}

// envKey returns the flat koanf key of a TOOLCAP_ variable, or "". A
// per_tool variable always names a field of the entry: PER_TOOL__Read is
// PER_TOOL__Read__MAX_BYTES, so that one variable of each kind can set the
// same tool.
func envKey(name string) string {
	parts := strings.SplitN(strings.TrimPrefix(name, settings.EnvPrefix), "__", 4)
	if len(parts) < 3 || !strings.EqualFold(parts[0], "WORKER") || !strings.EqualFold(parts[1], "TOOL_OUTPUT") {
		return ""
	}
	base := "worker" + delim + "tool_output" + delim
	switch {
	case len(parts) == 3:
		// The key's name in any case.
		name := strings.ToUpper(parts[2])
		for _, k := range keys {
			if k.table == "" && name == strings.ToUpper(k.name) {
				return base + k.name
			}
		}
	case len(parts) == 4 && (strings.EqualFold(parts[2], restName) || strings.EqualFold(parts[2], historyName)):
		table, name := strings.ToLower(parts[2]), strings.ToUpper(parts[3])
		for _, k := range keys {
			if k.table == table && name == strings.ToUpper(k.name) {
				return base + table + delim + k.name
			}
		}
	case len(parts) == 4 && strings.EqualFold(parts[2], "CLIENTS") && parts[3] != "":
		return base + clientsName + delim + parts[3]
	case len(parts) == 4 && strings.EqualFold(parts[2], "PER_TOOL") && parts[3] != "":
		tool, field := parts[3], shortForm.field
		// The field is the last segment, in upper case, after a non-empty
		// tool name; anything else is part of the name.
		if i := strings.LastIndex(tool, "__"); i > 0 {
			for _, k := range keys {
				if k.field != "" && tool[i+2:] == strings.ToUpper(k.field) {
					tool, field = tool[:i], k.field
					break
				}
			}
		}
		return base + perToolName + delim + tool + delim + field
	}
	return ""
}
