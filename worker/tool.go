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
	Run(ctx context.Context, args json.RawMessage) (ToolOutput, error)
}

// ToolOutput is what a tool returns.
type ToolOutput struct {
	// Summary is one or two short lines for people; it is never cut.
	Summary string
	// Content is the text the model reads; nil means no content.
	Content *string
}

// ToolResult is one call's result as it goes into the history.
type ToolResult struct {
	// CallID is the ID of the call this result answers.
	CallID string
	// Tool is the name the call asked for (registered or not).
	Tool string
	// Summary is the tool's short line for people; never cut.
	Summary string
	// Content is nil when the tool returned no content.
	Content *string
	// IsError marks a failed call: a tool error, a panic, an unknown tool or
	// a call cut short by its context. A truncated result is not an error.
	IsError bool

	// Truncation holds the figures of the byte cap's cut, or nil when the
	// content fitted its limit.
	Truncation *chain.Truncation
	// Ceiling holds the figures of the ceiling's cut, made when a user
	// middleware grew the content past the limit; nil otherwise.
	Ceiling *chain.Truncation
}

// FromOutput turns a tool's output and error into a result for call. When err
// is not nil the result is an error whose content is err's text (the output's
// content, if any, is dropped: the model needs to know why the call failed),
// and whose summary is out.Summary or, when empty, "<tool> failed".
func FromOutput(call chain.Call, out ToolOutput, err error) ToolResult {
	res := ToolResult{
		CallID:  call.ID,
		Tool:    call.Tool,
		Summary: out.Summary,
		Content: out.Content,
	}
	if err != nil {
		text := err.Error()
		res.Content = &text
		res.IsError = true
		if res.Summary == "" {
			res.Summary = fmt.Sprintf("%s failed", call.Tool)
		}
	}
	return res
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

// toChain and fromChain move a result between the worker's form, which
// carries the call's identity, and the chain's form.
func (r ToolResult) toChain() chain.Result {
	return chain.Result{
		Summary:    r.Summary,
		Content:    r.Content,
		IsError:    r.IsError,
		Truncation: r.Truncation,
		Ceiling:    r.Ceiling,
	}
}

func fromChain(call chain.Call, r chain.Result) ToolResult {
	return ToolResult{
		CallID:     call.ID,
		Tool:       call.Tool,
		Summary:    r.Summary,
		Content:    r.Content,
		IsError:    r.IsError,
		Truncation: r.Truncation,
		Ceiling:    r.Ceiling,
	}
}
