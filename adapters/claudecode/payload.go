package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// EventPostToolUse is the hook_event_name of the payload Claude Code sends
// after a tool ran, and the hookEventName of the reply to it.
const EventPostToolUse = "PostToolUse"

// Input is the part of Claude Code's PostToolUse payload (the
// PostToolUseHookInput type of @anthropic-ai/claude-agent-sdk) a hook
// needs to cap a tool's output. The other fields of the payload (cwd,
// transcript_path, ...) are ignored.
type Input struct {
	// HookEventName is "PostToolUse" ([EventPostToolUse]).
	HookEventName string `json:"hook_event_name"`
	// ToolName is the tool's name as Claude Code knows it: Bash, Read,
	// Grep, Glob, WebFetch, or mcp__SERVER__TOOL for an MCP tool. A
	// manifest's per_tool keys use these names.
	ToolName string `json:"tool_name"`
	// ToolUseID identifies the call, for logs.
	ToolUseID string `json:"tool_use_id"`
	// SessionID is Claude Code's session: the scope of what the hook
	// keeps of a cut output ([Hook]).
	SessionID string `json:"session_id"`
	// ToolInput is the tool's input as JSON, such as Read's file_path,
	// offset and limit.
	ToolInput json.RawMessage `json:"tool_input"`
	// ToolResponse is the tool's output, in the tool's own shape, as JSON.
	ToolResponse json.RawMessage `json:"tool_response"`
}

// Reply is what a PostToolUse hook prints to replace a tool's output: a
// SyncHookJSONOutput holding a PostToolUseHookSpecificOutput.
type Reply struct {
	// HookSpecificOutput holds the replacement output.
	HookSpecificOutput HookSpecificOutput `json:"hookSpecificOutput"`
}

// HookSpecificOutput is the PostToolUse part of a [Reply].
type HookSpecificOutput struct {
	// HookEventName is "PostToolUse" ([EventPostToolUse]).
	HookEventName string `json:"hookEventName"`
	// UpdatedToolOutput replaces the tool's output before the model reads
	// it. Claude Code does not check its shape; [CapToolResponse] keeps the
	// tool's own.
	UpdatedToolOutput json.RawMessage `json:"updatedToolOutput"`
}

// ReadInput reads a PostToolUse payload from r to its end. The error says
// what is wrong in words a user can act on: r could not be read, the
// payload is not a JSON object, it is another event's payload (the hook is
// registered under the wrong event), or it names no tool.
func ReadInput(r io.Reader) (Input, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Input{}, fmt.Errorf("reading the payload: %w", err)
	}
	return ParseInput(data)
}

// ParseInput is [ReadInput] for a payload already in memory. The payload's
// members are split without decoding the tool's output, which is kept as
// a slice of data (no copy) and checked by [CapToolResponse] alone: output
// nested deeper than encoding/json decodes is still a payload, whose output
// is then cut as text rather than passed on uncapped.
func ParseInput(data []byte) (Input, error) {
	members, err := splitObject(data)
	if err != nil {
		return Input{}, fmt.Errorf("the payload is not a JSON hook payload: %w", err)
	}
	var in Input
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"hook_event_name", &in.HookEventName},
		{"tool_name", &in.ToolName},
		{"tool_use_id", &in.ToolUseID},
		{"session_id", &in.SessionID},
	} {
		raw, ok := members[f.key]
		if !ok || string(raw) == "null" {
			continue
		}
		if err := json.Unmarshal(raw, f.dst); err != nil {
			// encoding/json's errors quote at most a character of the
			// input, so they stay one short line.
			return Input{}, fmt.Errorf("the payload is not a JSON hook payload: %s: %w", f.key, err)
		}
	}
	in.ToolResponse = members["tool_response"]
	in.ToolInput = members["tool_input"]
	switch {
	case in.HookEventName != EventPostToolUse:
		return Input{}, fmt.Errorf("hook_event_name is %q, not %q: register the hook under %s", in.HookEventName, EventPostToolUse, EventPostToolUse)
	case in.ToolName == "":
		return Input{}, errors.New("the payload has no tool_name")
	}
	return in, nil
}

// MarshalReply returns the reply that replaces a tool's output with
// updated, as one line of JSON without its newline.
func MarshalReply(updated json.RawMessage) ([]byte, error) {
	return marshal(Reply{HookSpecificOutput: HookSpecificOutput{
		HookEventName:     EventPostToolUse,
		UpdatedToolOutput: updated,
	}})
}

// marshal is json.Marshal without HTML escaping (a tool's output is no
// web page: "<" stays "<") and without the encoder's trailing newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// splitObject splits data, a JSON object, into its members' values, as
// slices of data, without decoding them: the one pass over a payload of
// any size or depth the hook makes before it looks at the tool's output.
// It checks the object's own syntax, and of each value only where it
// ends (strings and brackets balanced); a member named twice keeps its
// last value, as encoding/json does.
func splitObject(data []byte) (map[string][]byte, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, errors.New("not a JSON object")
	}
	members := map[string][]byte{}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return members, trailing(data, i+1)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, fmt.Errorf("offset %d: want a member name", i)
		}
		end, err := skipString(data, i)
		if err != nil {
			return nil, err
		}
		name := string(data[i+1 : end-1])
		if bytes.IndexByte(data[i:end], '\\') >= 0 {
			if err := json.Unmarshal(data[i:end], &name); err != nil {
				return nil, fmt.Errorf("offset %d: %w", i, err)
			}
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, fmt.Errorf("offset %d: want ':' after %q", i, name)
		}
		start := skipSpace(data, i+1)
		end, err = skipValue(data, start)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		members[name] = data[start:end]
		i = skipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == '}' {
			return members, trailing(data, i+1)
		}
		return nil, fmt.Errorf("offset %d: want ',' or '}'", i)
	}
}

// trailing checks that nothing but space follows the object.
func trailing(data []byte, i int) error {
	if i = skipSpace(data, i); i != len(data) {
		return fmt.Errorf("offset %d: data after the object", i)
	}
	return nil
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the string that starts at data[i], a
// quote: the index past its closing quote.
func skipString(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("offset %d: unterminated string", i)
}

// skipValue returns the end of the value that starts at data[i]: a
// string, an object or array (brackets counted, at any depth), or a
// literal or number (up to the next delimiter).
func skipValue(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, errors.New("missing value")
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, err := skipString(data, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("offset %d: unterminated value", i)
	}
	j := i
	for j < len(data) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(data[j])) {
		j++
	}
	if j == i || !json.Valid(data[i:j]) {
		return 0, fmt.Errorf("offset %d: invalid value", i)
	}
	return j, nil
}
