// Package openaicap ages the history of an agent built on the OpenAI Go
// SDK (github.com/openai/openai-go/v3), in either of its APIs: [AgeChat]
// for Chat Completions (tool messages) and [AgeResponses] for the
// Responses API (function_call_output items). Before each request, the
// content of the oldest tool results is replaced by the stubs of a
// [history.Ager], which name the read of the whole original that toolcap's
// store keeps. A result keeps its call id and its place, so every tool call
// stays paired with its result and the request is one the API accepts.
//
// The model reads a stub back with toolcap's read tool, which a toolcap
// worker answers (worker.Worker.ReadTool gives its definition to list
// beside the program's tools).
package openaicap

import (
	"context"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolcap/toolcap/history"
)

// AgeChat ages the tool messages of msgs, a Chat Completions history an
// agent is about to send, with a: it returns the history with each aged
// tool message's content replaced by its stub, and the pass. Keep the
// history it returns, and send it: the stubs are then the same bytes on
// every later request, and the prompt cache breaks once per batch.
//
// msgs itself is not changed. A tool message whose tool_call_id no
// earlier assistant message's tool call has is counted and never aged.
// The error is the context's.
func AgeChat(ctx context.Context, a *history.Ager, msgs []openai.ChatCompletionMessageParamUnion) ([]openai.ChatCompletionMessageParamUnion, history.Pass, error) {
	var (
		results []history.Result
		where   []int
	)
	tools := map[string]string{} // tool call id -> function name, so far
	for i, m := range msgs {
		switch {
		case m.OfAssistant != nil:
			for _, c := range m.OfAssistant.ToolCalls {
				if c.OfFunction != nil {
					tools[c.OfFunction.ID] = c.OfFunction.Function.Name
				}
			}
		case m.OfTool != nil:
			name, paired := tools[m.OfTool.ToolCallID]
			results = append(results, history.Result{ID: m.OfTool.ToolCallID, Tool: name, Text: chatText(m.OfTool.Content), Keep: !paired})
			where = append(where, i)
		}
	}
	p, err := a.Age(ctx, results)
	if err != nil || len(p.Aged) == 0 {
		return msgs, p, err
	}
	out := append([]openai.ChatCompletionMessageParamUnion(nil), msgs...)
	for _, g := range p.Aged {
		t := *out[where[g.Index]].OfTool
		t.Content = openai.ChatCompletionToolMessageParamContentUnion{OfString: param.NewOpt(g.Stub)}
		out[where[g.Index]] = openai.ChatCompletionMessageParamUnion{OfTool: &t}
	}
	return out, p, nil
}

// chatText returns a tool message's content as text: the string, or its
// text parts joined.
func chatText(c openai.ChatCompletionToolMessageParamContentUnion) string {
	if c.OfString.Valid() {
		return c.OfString.Value
	}
	var b strings.Builder
	for _, part := range c.OfArrayOfContentParts {
		b.WriteString(part.Text)
	}
	return b.String()
}

// AgeResponses ages the function_call_output items of input, a Responses
// API input an agent is about to send (the whole conversation, when it
// keeps it itself rather than through previous_response_id), as AgeChat
// does: each aged output's content becomes its stub, its call_id and place
// kept. An output holding an image or a file, or whose call_id no earlier
// function_call has, is counted and never aged.
func AgeResponses(ctx context.Context, a *history.Ager, input responses.ResponseInputParam) (responses.ResponseInputParam, history.Pass, error) {
	var (
		results []history.Result
		where   []int
	)
	tools := map[string]string{} // call id -> function name, so far
	for i, it := range input {
		switch {
		case it.OfFunctionCall != nil:
			tools[it.OfFunctionCall.CallID] = it.OfFunctionCall.Name
		case it.OfFunctionCallOutput != nil:
			o := it.OfFunctionCallOutput
			id := o.CallID.Value
			name, paired := tools[id]
			text, textOnly := responsesText(o.Output)
			results = append(results, history.Result{ID: id, Tool: name, Text: text, Keep: !paired || !textOnly})
			where = append(where, i)
		}
	}
	p, err := a.Age(ctx, results)
	if err != nil || len(p.Aged) == 0 {
		return input, p, err
	}
	out := append(responses.ResponseInputParam(nil), input...)
	for _, g := range p.Aged {
		o := *out[where[g.Index]].OfFunctionCallOutput
		o.Output = responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: param.NewOpt(g.Stub)}
		out[where[g.Index]] = responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &o}
	}
	return out, p, nil
}

// responsesText returns a function_call_output's content as text, and
// whether it holds text only.
func responsesText(o responses.ResponseInputItemFunctionCallOutputOutputUnionParam) (string, bool) {
	if o.OfString.Valid() {
		return o.OfString.Value, true
	}
	var b strings.Builder
	textOnly := true
	for _, item := range o.OfResponseFunctionCallOutputItemArray {
		if item.OfInputText == nil {
			textOnly = false
			continue
		}
		b.WriteString(item.OfInputText.Text)
	}
	return b.String(), textOnly
}
