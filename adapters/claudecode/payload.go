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
// needs to cap a tool's output. The other fields of the payload (session_id,
// cwd, tool_input, ...) are ignored.
type Input struct {
	// HookEventName is "PostToolUse" ([EventPostToolUse]).
	HookEventName string `json:"hook_event_name"`
	// ToolName is the tool's name as Claude Code knows it: Bash, Read,
	// Grep, Glob, WebFetch, or mcp__SERVER__TOOL for an MCP tool. A
	// manifest's per_tool keys use these names.
	ToolName string `json:"tool_name"`
	// ToolUseID identifies the call, for logs.
	ToolUseID string `json:"tool_use_id"`
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

// ParseInput is [ReadInput] for a payload already in memory.
func ParseInput(data []byte) (Input, error) {
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		// encoding/json's errors quote at most a character of the input, so
		// they stay one short line.
		return Input{}, fmt.Errorf("the payload is not a JSON hook payload: %w", err)
	}
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
