package openaicap_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolcap/toolcap/adapters/openaicap"
	"github.com/toolcap/toolcap/history"
	"github.com/toolcap/toolcap/internal/rest"
)

type byteCount struct{}

func (byteCount) Count(s string) int { return len(s) }

func newAger(t *testing.T) *history.Ager {
	t.Helper()
	k, err := rest.NewKeeper(rest.NewMemory(rest.Config{}))
	if err != nil {
		t.Fatal(err)
	}
	a, err := history.New(k.Store(), history.Config{MaxTokens: 5000, KeepRecent: 1, ClearAtLeast: 1000, Counter: byteCount{}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func chatTurn(id, tool, text string) []openai.ChatCompletionMessageParamUnion {
	call := openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
		ID: id, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tool, Arguments: "{}"}}}
	return []openai.ChatCompletionMessageParamUnion{
		{OfAssistant: &openai.ChatCompletionAssistantMessageParam{ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{call}}},
		openai.ToolMessage(text, id),
	}
}

func TestAgeChat(t *testing.T) {
	ctx := rest.WithScope(context.Background(), "c")
	a := newAger(t)
	msgs := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("go")}
	msgs = append(msgs, chatTurn("call_1", "glob", strings.Repeat("a/b.go\n", 500))...)
	msgs = append(msgs, chatTurn("call_2", "bash", strings.Repeat("FAIL x\n", 500))...)
	// An orphan: no assistant tool call has its id.
	msgs = append(msgs, openai.ToolMessage(strings.Repeat("o", 3000), "call_orphan"))
	msgs = append(msgs, chatTurn("call_3", "read", strings.Repeat("line\n", 500))...)
	before := marshal(t, msgs)
	out, p, err := openaicap.AgeChat(ctx, a, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if marshal(t, msgs) != before {
		t.Error("AgeChat changed the history it was given")
	}
	if len(p.Aged) != 2 || p.Aged[0].ID != "call_1" || p.Aged[1].ID != "call_2" {
		t.Fatalf("aged %+v; want call_1 and call_2", p.Aged)
	}
	for _, i := range []int{2, 4} {
		tm := out[i].OfTool
		if tm == nil || tm.ToolCallID != msgs[i].OfTool.ToolCallID || !strings.HasPrefix(tm.Content.OfString.Value, "[tool result cleared: 3500 bytes;") {
			t.Errorf("message %d: %+v; want its tool_call_id and the stub", i, tm)
		}
	}
	if out[5].OfTool.Content.OfString.Value != strings.Repeat("o", 3000) || out[7].OfTool.Content.OfString.Value != strings.Repeat("line\n", 500) {
		t.Error("the orphan or the recent result changed")
	}
	again, _, err := openaicap.AgeChat(ctx, a, msgs)
	if err != nil || marshal(t, again) != marshal(t, out) {
		t.Errorf("the original history, aged again, is not the same bytes as the first pass gave (%v)", err)
	}
}

func TestAgeResponses(t *testing.T) {
	ctx := rest.WithScope(context.Background(), "c")
	a := newAger(t)
	output := func(id, text string) responses.ResponseInputItemUnionParam {
		it := responses.ResponseInputItemParamOfFunctionCallOutput(text)
		it.OfFunctionCallOutput.CallID = openai.String(id)
		return it
	}
	image := responses.ResponseInputItemParamOfFunctionCallOutput(responses.ResponseFunctionCallOutputItemListParam{
		{OfInputText: &responses.ResponseInputTextContentParam{Text: strings.Repeat("t", 3000)}},
		{OfInputImage: &responses.ResponseInputImageContentParam{ImageURL: openai.String("data:image/png;base64,AAAA")}},
	})
	image.OfFunctionCallOutput.CallID = openai.String("call_img")
	input := responses.ResponseInputParam{
		responses.ResponseInputItemParamOfFunctionCall("{}", "call_img", "screenshot"), image,
		responses.ResponseInputItemParamOfFunctionCall("{}", "call_1", "glob"), output("call_1", strings.Repeat("a/b.go\n", 500)),
		responses.ResponseInputItemParamOfFunctionCall("{}", "call_2", "read"), output("call_2", strings.Repeat("line\n", 500)),
	}
	before := marshal(t, input)
	out, p, err := openaicap.AgeResponses(ctx, a, input)
	if err != nil {
		t.Fatal(err)
	}
	if marshal(t, input) != before {
		t.Error("AgeResponses changed the input it was given")
	}
	if len(p.Aged) != 1 || p.Aged[0].ID != "call_1" || p.Tokens != 3000+3500+2500 {
		t.Fatalf("aged %+v of %d tokens; want call_1 only (the image kept, the last recent), of 9000", p.Aged, p.Tokens)
	}
	o := out[3].OfFunctionCallOutput
	if o.CallID.Value != "call_1" || !strings.HasPrefix(o.Output.OfString.Value, "[tool result cleared: 3500 bytes;") {
		t.Errorf("the aged output: %+v; want its call_id and the stub", o)
	}
	if marshal(t, out[1]) != marshal(t, input[1]) {
		t.Error("the output with an image changed")
	}
}
