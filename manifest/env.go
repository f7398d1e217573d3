package manifest

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/v2"

	"github.com/toolcap/toolcap/internal/suggest"
)

// EnvPrefix starts every environment variable the environment layer reads.
const EnvPrefix = "TOOLCAP_"

// The environment variables the environment layer understands; levels are
// separated by "__", and the tool name after PER_TOOL__ keeps its case.
const (
	EnvDefaultMaxBytes = EnvPrefix + "WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES"
	EnvPerToolPrefix   = EnvPrefix + "WORKER__TOOL_OUTPUT__PER_TOOL__"
)

// Env adds the process environment as a layer: [EnvDefaultMaxBytes] and
// [EnvPerToolPrefix] followed by a tool name, for example
//
//	TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES=8192
//	TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=4096
//
// Everything after PER_TOOL__ is the tool name, as registered, "__" included.
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
					Prefix:        EnvPrefix,
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
	for i := len(EnvPrefix); i+len(per) <= len(name); i++ {
		if !strings.EqualFold(name[i:i+len(per)], per) {
			continue
		}
		head := name[:i]
		want := strings.TrimSuffix(EnvPerToolPrefix, per+"__")
		if !strings.EqualFold(head, want) && suggest.Closest(head, []string{want}) == "" {
			break
		}
		rest := name[i+len(per):]
		if strings.Trim(rest, "_") == "" {
			return " (a tool name must follow PER_TOOL__)"
		}
		return fmt.Sprintf(" (did you mean %s?)", shorten(EnvPerToolPrefix+strings.TrimPrefix(rest, "_")))
	}
	if s := suggest.Closest(name, []string{EnvDefaultMaxBytes}); s != "" {
		return fmt.Sprintf(" (did you mean %s?)", s)
	}
	return ""
}

// warnPrefixCase warns about variables whose prefix is TOOLCAP_ in another
// case: the prefix is matched exactly, so they would go unseen.
func warnPrefixCase(vars []string, warn func(key, msg string)) {
	for _, kv := range vars {
		name, _, _ := strings.Cut(kv, "=")
		if len(name) < len(EnvPrefix) || strings.HasPrefix(name, EnvPrefix) || !strings.EqualFold(name[:len(EnvPrefix)], EnvPrefix) {
			continue
		}
		warn(name, fmt.Sprintf("environment variable %s ignored: the %s prefix is upper case (did you mean %s?)",
			shorten(name), EnvPrefix, shorten(EnvPrefix+name[len(EnvPrefix):])))
	}
}

func envKey(name string) string {
	parts := strings.SplitN(strings.TrimPrefix(name, EnvPrefix), "__", 4)
	if len(parts) < 3 || !strings.EqualFold(parts[0], "WORKER") || !strings.EqualFold(parts[1], "TOOL_OUTPUT") {
		return ""
	}
	base := "worker" + delim + "tool_output" + delim
	switch {
	case len(parts) == 3 && strings.EqualFold(parts[2], "DEFAULT_MAX_BYTES"):
		return base + "default_max_bytes"
	case len(parts) == 4 && strings.EqualFold(parts[2], "PER_TOOL") && parts[3] != "":
		return base + "per_tool" + delim + parts[3]
	}
	return ""
}
