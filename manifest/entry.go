package manifest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	gotoml "github.com/pelletier/go-toml/v2"

	"github.com/toolcap/toolcap/cut"
	"github.com/toolcap/toolcap/internal/suggest"
)

// toolOutputKeys are the keys of [worker.tool_output].
var toolOutputKeys = []string{"default_max_bytes", "batch_max_bytes", "default_max_tokens", "batch_max_tokens", "tokenizer", "default_keep", "default_tail_share", "default_keep_lines", "default_fallback", "per_tool"}

// entryKeys are the keys of a per_tool entry's long form.
var entryKeys = []string{"max_bytes", "max_tokens", "keep", "tail_share", "keep_lines", "fallback"}

// perToolEntry checks one per_tool entry and returns it as a table: the
// short form (a limit) becomes { max_bytes = N }, so that layers merge key
// by key and a later short form changes the limit only, leaving the
// strategy an earlier layer set.
//
// It also returns the layer to name for the entry as a whole (the variable
// that set it, for the environment) and its value as shown in errors.
func perToolEntry(tool string, tv any, flat, source string, srcOf func(string) string, res *Resolution, warn func(key, msg string)) (entry map[string]any, src, shown string, err error) {
	em, long := tv.(map[string]any)
	if !long {
		src := srcOf(flat)
		n, err := limitValue(tv, src != source)
		if err != nil {
			return nil, "", "", &Error{Source: src, Key: perToolKey(tool), Value: show(tv), Err: err}
		}
		res.PerTool[tool] = Setting{Value: n, Source: src}
		return map[string]any{"max_bytes": n}, src, show(tv), nil
	}
	entry = map[string]any{}
	src, shown = source, show(tv)
	for _, field := range slices.Sorted(maps.Keys(em)) {
		fv := em[field]
		fsrc := srcOf(flat + delim + field)
		key := perToolKey(tool) + "." + TOMLKey(field)
		if fsrc != source {
			// From the environment, whose entries are always tables: the
			// variable names the entry, and PER_TOOL__Read (no field) is
			// the short form, reported as such.
			src, shown = fsrc, show(fv)
			if field == "max_bytes" && !strings.HasSuffix(fsrc, "__MAX_BYTES") {
				key = perToolKey(tool)
			}
		}
		src := fsrc
		switch field {
		case "max_bytes":
			n, err := limitValue(fv, src != source)
			if err != nil {
				return nil, "", "", &Error{Source: src, Key: key, Value: show(fv), Err: err}
			}
			entry[field] = n
			res.PerTool[tool] = Setting{Value: n, Source: src}
		case "max_tokens":
			n, err := tokensValue(fv, src != source)
			if err != nil {
				return nil, "", "", &Error{Source: src, Key: perToolKey(tool) + ".max_tokens", Value: show(fv), Err: err}
			}
			entry[field] = n
			if res.PerToolTokens == nil {
				res.PerToolTokens = map[string]Setting{}
			}
			res.PerToolTokens[tool] = Setting{Value: n, Source: src}
		case "keep", "tail_share", "keep_lines", "fallback":
			val, text, err := strategyValue(field, fv, src != source)
			if err != nil {
				return nil, "", "", &Error{Source: src, Key: key, Value: show(fv), Err: err}
			}
			entry[field] = val
			res.setStrategy(tool, field, text, src)
		default:
			msg := fmt.Sprintf("unknown key %s in per_tool entry %s of %s; ignored", quoteShort(field), tomlShort(tool), src)
			if s := suggest.Closest(field, entryKeys); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			warn(perToolKey(tool)+"."+TOMLKey(field), msg)
		}
	}
	return entry, src, shown, nil
}

// setStrategy records a strategy key in force.
func (r *Resolution) setStrategy(tool, field, value, source string) {
	if r.Strategy == nil {
		r.Strategy = map[string]map[string]StrategySetting{}
	}
	if r.Strategy[tool] == nil {
		r.Strategy[tool] = map[string]StrategySetting{}
	}
	r.Strategy[tool][field] = StrategySetting{Value: value, Source: source}
}

// StrategySetting is one strategy key in force and the layer that set it.
type StrategySetting struct {
	// Value is the value as TOML writes it: "head_tail", 0.3,
	// ["(?i)error"].
	Value string
	// Source names the layer, as in [Setting].
	Source string
}

// strategyValue returns v as the value of the strategy field (keep,
// tail_share, keep_lines or fallback), normalized, and as TOML writes it.
// Environment values are strings and are parsed; keep_lines from the
// environment is one pattern, or a TOML array of them when it starts with
// "[".
func strategyValue(field string, v any, fromEnv bool) (any, string, error) {
	switch field {
	case "keep", "fallback":
		s, ok := v.(string)
		if !ok {
			return nil, "", fmt.Errorf("%s, not a string", kindOf(v))
		}
		if field == "keep" {
			if _, err := cut.ParseKeep(s); err != nil {
				return nil, "", err
			}
		} else if err := checkFallback(cut.Keep(s)); err != nil {
			return nil, "", err
		}
		return s, strconv.Quote(s), nil
	case "tail_share":
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case int64:
			f = float64(x)
		case string:
			if !fromEnv {
				return nil, "", errors.New("a string, not a number (write it without quotes)")
			}
			p, err := strconv.ParseFloat(x, 64)
			if err != nil {
				return nil, "", errors.New("not a number")
			}
			f = p
		default:
			return nil, "", fmt.Errorf("%s, not a number", kindOf(v))
		}
		if err := checkTailShare(f); err != nil {
			return nil, "", err
		}
		return f, strconv.FormatFloat(f, 'g', -1, 64), nil
	}
	// keep_lines
	var pats []string
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, "", fmt.Errorf("element %d is %s, not a string", i, kindOf(e))
			}
			pats = append(pats, s)
		}
	case string:
		if !fromEnv {
			return nil, "", errors.New("a string, not an array (write ['pattern'])")
		}
		if strings.HasPrefix(strings.TrimSpace(x), "[") {
			var doc struct {
				V []string `toml:"v"`
			}
			if err := gotoml.Unmarshal([]byte("v = "+x), &doc); err != nil {
				return nil, "", errors.New("not a TOML array of strings")
			}
			pats = doc.V
		} else {
			pats = []string{x}
		}
	default:
		return nil, "", fmt.Errorf("%s, not an array of strings", kindOf(v))
	}
	if _, err := cut.CompileKeepLines(pats); err != nil {
		return nil, "", err
	}
	if pats == nil {
		pats = []string{}
	}
	return pats, showList(pats), nil
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

// assemble builds the limits from the merged layers, which check has
// normalized: every limit an int, every per_tool entry a table.
func assemble(raw map[string]any) *ToolOutputLimits {
	l := &ToolOutputLimits{}
	w, _ := raw["worker"].(map[string]any)
	t, _ := w["tool_output"].(map[string]any)
	l.DefaultMaxBytes, _ = t["default_max_bytes"].(int)
	l.BatchMaxBytes, _ = t["batch_max_bytes"].(int)
	l.DefaultMaxTokens, _ = t["default_max_tokens"].(int)
	l.BatchMaxTokens, _ = t["batch_max_tokens"].(int)
	l.Tokenizer, _ = t["tokenizer"].(string)
	l.Default = strategyOf(t, "default_")
	per, _ := t["per_tool"].(map[string]any)
	for _, tool := range slices.Sorted(maps.Keys(per)) {
		e, _ := per[tool].(map[string]any)
		if n, ok := e["max_bytes"].(int); ok {
			if l.PerTool == nil {
				l.PerTool = map[string]int{}
			}
			l.PerTool[tool] = n
		}
		if n, ok := e["max_tokens"].(int); ok {
			if l.PerToolTokens == nil {
				l.PerToolTokens = map[string]int{}
			}
			l.PerToolTokens[tool] = n
		}
		if s := strategyOf(e, ""); !s.isZero() {
			if l.PerToolStrategy == nil {
				l.PerToolStrategy = map[string]Strategy{}
			}
			l.PerToolStrategy[tool] = s
		}
	}
	return l
}

// strategyOf reads the strategy fields of table m, their keys prefixed.
func strategyOf(m map[string]any, prefix string) Strategy {
	var s Strategy
	if v, ok := m[prefix+"keep"].(string); ok {
		s.Keep = cut.Keep(v)
	}
	if v, ok := m[prefix+"fallback"].(string); ok {
		s.Fallback = cut.Keep(v)
	}
	s.TailShare, _ = m[prefix+"tail_share"].(float64)
	if v, ok := m[prefix+"keep_lines"].([]string); ok {
		s.KeepLines = slices.Clone(v)
	}
	return s
}
