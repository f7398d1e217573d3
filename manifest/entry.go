package manifest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/internal/suggest"
)

// perToolEntry checks one per_tool entry and returns it as a table: the
// short form (a limit) becomes { max_bytes = N }, so that layers merge key
// by key and a later short form changes the limit only, leaving the
// max_tokens and strategy an earlier layer set.
//
// It also returns the layer to name for the entry as a whole (the variable
// that set it, for the environment) and its value as shown in errors.
func perToolEntry(tool string, tv any, flat, source string, srcOf func(string) string, res *Resolution, warn func(key, msg string)) (entry map[string]any, src, shown string, err error) {
	em, long := tv.(map[string]any)
	if !long {
		k := shortForm
		src := srcOf(flat)
		val, err := k.value(tv, src != source)
		if err != nil {
			return nil, "", "", &Error{Source: src, Key: perToolKey(tool), Value: show(tv), Err: err}
		}
		k.record(res, k, tool, val, src)
		return map[string]any{k.field: val}, src, show(tv), nil
	}
	entry = map[string]any{}
	src, shown = source, show(tv)
	for _, field := range slices.Sorted(maps.Keys(em)) {
		fv := em[field]
		fsrc := srcOf(flat + delim + field)
		k := fieldNamed(field)
		if k == nil {
			msg := fmt.Sprintf("unknown key %s in per_tool entry %s of %s; ignored", quoteShort(field), tomlShort(tool), fsrc)
			if s := suggest.Closest(field, entryNames); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			warn(perToolKey(tool)+"."+settings.TOMLKey(field), msg)
			continue
		}
		// The environment's variable names a field as PER_TOOL__Bash__KEEP,
		// or, for the short form's field, PER_TOOL__Read alone (envKey):
		// then the error names the entry, as for the short form in a file.
		// A variable also stands for the entry as a whole.
		short := false
		if fsrc != source {
			src, shown = fsrc, show(fv)
			short = k.short && !strings.HasSuffix(fsrc, "__"+strings.ToUpper(k.field))
		}
		val, err := k.value(fv, fsrc != source)
		if err != nil {
			return nil, "", "", &Error{Source: fsrc, Key: fieldKey(tool, k, short), Value: show(fv), Err: err}
		}
		entry[field] = val
		k.record(res, k, tool, val, fsrc)
	}
	return entry, src, shown, nil
}

// shortForm is the key whose field the short form of a per_tool entry
// sets: the one key of the table marked short (a test checks there is
// exactly one).
var shortForm = func() *key {
	for _, k := range keys {
		if k.short {
			return k
		}
	}
	return nil
}()

// StrategySetting is one key in force whose value is not a byte or token
// count — a strategy key or the tokenizer — and the layer that set it.
type StrategySetting struct {
	// Value is the value as TOML writes it: "head_tail", 0.3,
	// ["(?i)error"]; the tokenizer's name, unquoted.
	Value string
	// Source names the layer, as in [Setting].
	Source string
}

// assemble builds the limits from the merged layers, which check has
// normalized: every value of its key's kind, every per_tool entry a table.
// An entry that sets no known key is left out.
func assemble(raw map[string]any) *ToolOutputLimits {
	l := &ToolOutputLimits{}
	w, _ := raw["worker"].(map[string]any)
	t, _ := w["tool_output"].(map[string]any)
	for _, k := range keys {
		if v, ok := k.tableIn(t, false)[k.name]; ok {
			if k.table == restName && l.Rest == nil {
				l.Rest = &RestConfig{}
			}
			if k.table == historyName && l.History == nil {
				l.History = &HistoryConfig{}
			}
			put(k.top(l), v)
		}
	}
	if l.Rest != nil && *l.Rest == (RestConfig{}) {
		// dir = "" or store = "" say "the front end's default", as an
		// absent key does.
		l.Rest = nil
	}
	if clients, _ := t[clientsName].(map[string]any); len(clients) > 0 {
		l.Clients = map[string]int{}
		for client, v := range clients {
			if n, ok := v.(int); ok {
				l.Clients[client] = n
			}
		}
	}
	per, _ := t[perToolName].(map[string]any)
	for _, tool := range slices.Sorted(maps.Keys(per)) {
		m, _ := per[tool].(map[string]any)
		var e ToolEntry
		set := false
		for _, k := range keys {
			if v, ok := m[k.field]; ok && k.entry != nil {
				put(k.entry(&e), v)
				set = true
			}
		}
		if !set {
			continue
		}
		if l.PerTool == nil {
			l.PerTool = map[string]ToolEntry{}
		}
		l.PerTool[tool] = e
	}
	return l
}
