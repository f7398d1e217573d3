package manifest

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/toolcap/toolcap/internal/settings"
)

// clientsName is the key of the table of client limits.
const clientsName = "clients"

// keyClients is the dotted key of the clients table, as errors name it.
const keyClients = keyTable + "." + clientsName

// builtinClients are the client limits of the built-in default layer, by
// the name a client gives in MCP's clientInfo. Each is what that client
// keeps whole of a tool result before it cuts the result again, out of
// toolcap's sight, measured against the real client (docs/mcp.md):
//
//   - codex-mcp-client, the Codex CLI (0.171.0): with a model it does not
//     know, Codex shows the model at most 12,000 bytes of a result, "Wall
//     time: S seconds\nOutput:\n" and structuredContent serialized, and
//     keeps 6,000 from each end of a longer one; 11,776 leaves room for
//     its header and for a number it writes longer. (gpt-5.5 keeps 48,000,
//     its default model 40,000: raise the limit for those.)
//
// Claude Code (2.1.328) passes a 16,384-byte result whole, so it has none.
var builtinClients = map[string]int{"codex-mcp-client": 11776}

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
	return builtinClients[client]
}

// ClientLimits returns every client limit in force, by client name: the
// built-in ones and l's over them. Safe on a nil l.
func (l *ToolOutputLimits) ClientLimits() map[string]int {
	out := maps.Clone(builtinClients)
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
