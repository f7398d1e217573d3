package manifest

import (
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
			load: func(k *koanf.Koanf, names map[string]string, warn func(key, msg string)) error {
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
			msg := fmt.Sprintf("unknown environment variable %s; ignored", name)
			if strings.EqualFold(name, EnvPerToolPrefix) {
				msg += " (a tool name must follow PER_TOOL__)"
			} else if s := suggest.Closest(name, []string{EnvDefaultMaxBytes}); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			warn(name, msg)
			return "", nil
		}
		if prev, dup := names[key]; dup && prev != name {
			// The structural parts match without regard to case, so two
			// spellings can name one key; the later one in the environment wins.
			warn(name, fmt.Sprintf("environment variables %s and %s set the same key; %s wins", prev, name, name))
		}
		names[key] = name
		return key, value
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
