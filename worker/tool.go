package worker

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolcap/toolcap/chain"
)

// Tool is one tool an agent can call.
type Tool interface {
	// Name is the name the tool is registered and called under, and the key
	// of its per_tool limit.
	Name() string
	// Run executes one call. It should return when ctx ends; a tool that
	// does not is abandoned by ExecuteTools and its late result discarded.
	//
	// A non-nil error makes the call an error result whose content is the
	// error's text (see [FromOutput]); a tool may also return an error
	// result itself, with [chain.ErrorResult] or [chain.Result.AsError].
	Run(ctx context.Context, args json.RawMessage) (ToolOutput, error)
}

// ToolOutput is what a tool returns: a [chain.Result], the one result type
// from the tool to the history.
type ToolOutput = chain.Result

// ToolResult is one call's result as it goes into the history: a
// [chain.Result]. [Worker.ExecuteTools] returns them in call order, so the
// result at index i answers calls[i].
type ToolResult = chain.Result

// FromOutput turns a tool's output and error into a result for call. When err
// is not nil the result is an error whose content is err's text (the output's
// content, if any, is dropped: the model needs to know why the call failed),
// and whose summary is out.Summary or, when empty, "<tool> failed".
func FromOutput(call chain.Call, out ToolOutput, err error) ToolResult {
	if err == nil {
		return out
	}
	summary := out.Summary
	if summary == "" {
		summary = fmt.Sprintf("%s failed", shortName(call.Tool))
	}
	return chain.ErrorResult(summary, err.Error())
}

// Func returns a Tool named name that runs run: the shortest way to register
// a tool written as a function.
func Func(name string, run func(ctx context.Context, args json.RawMessage) (ToolOutput, error)) Tool {
	return funcTool{name: name, run: run}
}

type funcTool struct {
	name string
	run  func(ctx context.Context, args json.RawMessage) (ToolOutput, error)
}

func (t funcTool) Name() string { return t.name }

func (t funcTool) Run(ctx context.Context, args json.RawMessage) (ToolOutput, error) {
	return t.run(ctx, args)
}
