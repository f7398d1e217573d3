package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolcap/toolcap/adapters/anthropiccap"
	"github.com/toolcap/toolcap/adapters/openaicap"
	"github.com/toolcap/toolcap/history"
	"github.com/toolcap/toolcap/internal/fakeanthropic"
	"github.com/toolcap/toolcap/internal/fakeresponses"
)

// prompt is the session's first user message.
const prompt = "Survey these standard library packages: list their files, their exported functions, read the main file, and look for TODOs."

// playAnthropic plays the session through the Anthropic SDK's Messages
// API.
func playAnthropic(a *agent, steps []call, count func(string) int) (figures, error) {
	srv, err := fakeanthropic.New(func(req *fakeanthropic.Request) fakeanthropic.Reply {
		n := 0
		for _, m := range req.Messages {
			blocks, _ := m.Blocks()
			for _, b := range blocks {
				if b.Type == "tool_result" {
					n++
				}
			}
		}
		if n < len(steps) {
			return fakeanthropic.Reply{ToolUses: []fakeanthropic.ToolUse{{Name: steps[n].tool, Input: steps[n].args}}}
		}
		return fakeanthropic.Reply{Text: "done"}
	})
	if err != nil {
		return figures{}, err
	}
	defer srv.Close()
	client := anthropic.NewClient(aoption.WithBaseURL(srv.URL), aoption.WithAPIKey("test"), aoption.WithMaxRetries(0))
	msgs := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))}
	batches := 0
	for range len(steps) + 1 {
		if a.ager != nil {
			var p history.Pass
			if msgs, p, err = anthropiccap.Age(a.ctx, a.ager, msgs); err != nil {
				return figures{}, err
			}
			if p.Freed.Results > 0 {
				batches++
			}
		}
		resp, err := client.Messages.New(a.ctx, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024, Messages: msgs})
		if err != nil {
			return figures{}, err
		}
		msgs = append(msgs, resp.ToParam())
		var blocks []anthropic.ContentBlockParamUnion
		for _, b := range resp.Content {
			if b.Type == "tool_use" {
				content, isError := a.run(b.ID, b.Name, b.Input)
				blocks = append(blocks, anthropic.NewToolResultBlock(b.ID, content, isError))
			}
		}
		if len(blocks) == 0 {
			break
		}
		msgs = append(msgs, anthropic.NewUserMessage(blocks...))
	}
	var bodies [][]byte
	for _, r := range srv.Requests() {
		bodies = append(bodies, r.Body)
	}
	f := measure(bodies, member("messages"), count)
	f.batches = batches
	if a.ager != nil {
		for _, m := range msgs {
			if m.OfUser == nil {
				continue
			}
			for _, b := range m.OfUser.Content {
				if tr := b.OfToolResult; tr != nil && len(tr.Content) == 1 && tr.Content[0].OfText != nil {
					f.checkStub(a, tr.ToolUseID, tr.Content[0].OfText.Text)
				}
			}
		}
	}
	return f, nil
}

// playOpenAI plays the session through the OpenAI SDK's Responses API,
// the agent keeping the whole conversation in its input.
func playOpenAI(a *agent, steps []call, count func(string) int) (figures, error) {
	srv, err := fakeresponses.New(func(req *fakeresponses.Request) fakeresponses.Reply {
		outs, _ := req.Outputs()
		if n := len(outs); n < len(steps) {
			return fakeresponses.Reply{Calls: []fakeresponses.Call{fakeresponses.FunctionCall("", steps[n].tool, steps[n].args)}}
		}
		return fakeresponses.Reply{Text: "done"}
	})
	if err != nil {
		return figures{}, err
	}
	defer srv.Close()
	client := openai.NewClient(ooption.WithBaseURL(srv.BaseURL), ooption.WithAPIKey("test"), ooption.WithMaxRetries(0))
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(prompt, responses.EasyInputMessageRoleUser)}
	batches := 0
	for range len(steps) + 1 {
		if a.ager != nil {
			var p history.Pass
			if input, p, err = openaicap.AgeResponses(a.ctx, a.ager, input); err != nil {
				return figures{}, err
			}
			if p.Freed.Results > 0 {
				batches++
			}
		}
		resp, err := client.Responses.New(a.ctx, responses.ResponseNewParams{Model: "gpt-test", Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}})
		if err != nil {
			return figures{}, err
		}
		called := false
		for _, item := range resp.Output {
			if item.Type != "function_call" {
				continue
			}
			called = true
			args := item.Arguments.OfString
			input = append(input, responses.ResponseInputItemParamOfFunctionCall(args, item.CallID, item.Name))
			content, _ := a.run(item.CallID, item.Name, json.RawMessage(args))
			out := responses.ResponseInputItemParamOfFunctionCallOutput(content)
			out.OfFunctionCallOutput.CallID = openai.String(item.CallID)
			input = append(input, out)
		}
		if !called {
			break
		}
	}
	var bodies [][]byte
	for _, r := range srv.Requests() {
		bodies = append(bodies, r.Body)
	}
	f := measure(bodies, member("input"), count)
	f.batches = batches
	if a.ager != nil {
		for _, it := range input {
			if o := it.OfFunctionCallOutput; o != nil && o.Output.OfString.Valid() {
				f.checkStub(a, o.CallID.Value, o.Output.OfString.Value)
			}
		}
	}
	return f, nil
}

// checkStub counts a result of the final history that is a stub, and
// whether its read gives the tool's original output back.
func (f *figures) checkStub(a *agent, id, content string) {
	if !strings.HasPrefix(content, "[tool result cleared: ") {
		return
	}
	f.stubs++
	if a.readBack(id, content) {
		f.readBack++
	} else {
		fmt.Printf("  the stub of %s does not read back its original (%d bytes)\n", id, len(a.original[id]))
	}
}
