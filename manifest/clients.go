package manifest

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/internal/shape"
)

// clientsName is the key of the table of client limits.
const clientsName = "clients"

// keyClients is the dotted key of the clients table, as errors name it.
const keyClients = keyTable + "." + clientsName

// clientKey names a client's entry in an error.
func clientKey(client string) string { return keyClients + "." + settings.TOMLKey(client) }

// ClientLimit returns the byte limit of every result for the MCP client
// that names itself client (initialize's clientInfo.name): its clients
// entry, or the built-in one (codex-mcp-client: 11776), or 0 for none.
// Every tool's limit is then at most that ([Policies.ForClient]). Safe on
// a nil l.
func (l *ToolOutputLimits) ClientLimit(client string) int {
	if l != nil {
		if n, ok := l.Clients[client]; ok {
			return n
		}
	}
	return shape.BuiltinClients[client]
}

// ClientLimits returns every client limit in force, by client name: the
// built-in ones and l's over them. Safe on a nil l.
func (l *ToolOutputLimits) ClientLimits() map[string]int {
	out := maps.Clone(shape.BuiltinClients)
	if l != nil {
		maps.Copy(out, l.Clients)
	}
	return out
}

// checkClients checks one layer's clients table, v, whose entries' flat
// keys start with prefix, and returns it with every limit an int,
// recorded in res.
func checkClients(v any, prefix, source string, srcOf func(string) string, res *Resolution) (map[string]any, error) {
	cm, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Source: source, Key: keyClients, Value: show(v), Err: errors.New("must be a table of client names to limits")}
	}
	if len(cm) > maxPerToolEntries {
		return nil, &Error{Source: source, Key: keyClients, Value: fmt.Sprintf("(a table of %d entries)", len(cm)),
			Err: fmt.Errorf("more than %d entries", maxPerToolEntries)}
	}
	out := map[string]any{}
	for _, client := range slices.Sorted(maps.Keys(cm)) {
		cv := cm[client]
		src := srcOf(prefix + client)
		if err := checkToolName(client); err != nil {
			return nil, &Error{Source: src, Key: clientKey(client), Value: show(cv), Err: err}
		}
		if _, table := cv.(map[string]any); table {
			return nil, &Error{Source: src, Key: clientKey(client), Value: show(cv), Err: errors.New("want a byte limit, such as 11776")}
		}
		val, err := shortForm.value(cv, src != source)
		if err != nil && (fmt.Sprint(cv) == "0") {
			err = errors.New("0 is not a limit; omit the key for the built-in one, if any (codex-mcp-client: 11776)")
		}
		if err != nil {
			return nil, &Error{Source: src, Key: clientKey(client), Value: shortForm.shown(cv), Err: err}
		}
		out[client] = val
		res.Clients[client] = Setting{Value: val.(int), Source: src}
	}
	return out, nil
}

// validateClients checks the client limits of a Go value.
func (l *ToolOutputLimits) validateClients() error {
	for _, client := range slices.Sorted(maps.Keys(l.Clients)) {
		n := l.Clients[client]
		if err := checkToolName(client); err != nil {
			return &Error{Source: sourceGo, Key: clientKey(client), Value: fmt.Sprint(n), Err: err}
		}
		if err := shortForm.kind.check(n); err != nil {
			return &Error{Source: sourceGo, Key: clientKey(client), Value: fmt.Sprint(n), Err: err}
		}
	}
	return nil
}
