package openaicap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolcap/toolcap/adapters/openaicap"
	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/history"
	"github.com/toolcap/toolcap/internal/fakeresponses"
	"github.com/toolcap/toolcap/rest"
	"github.com/toolcap/toolcap/worker"
)

// A tool loop on the OpenAI SDK's Responses API, against a fake API on
// 127.0.0.1 whose model reads eight files: the worker caps each result as
// it enters the input, and AgeResponses turns the oldest into stubs before
// a request once the tool outputs pass 12,000 tokens, at least 10,000 at
// a time. The worker answers the stubs' reads (toolcap_read) from the same
// store.
func Example() {
	store := rest.NewMemory(rest.Config{})
	read := worker.Func("read", func(ctx context.Context, args json.RawMessage) (worker.ToolOutput, error) {
		var in struct{ Path string }
		_ = json.Unmarshal(args, &in)
		text := strings.Repeat(in.Path+": some source line\n", 400) // about 10 KB
		return worker.ToolOutput{Content: &text}, nil
	})
	w, _ := worker.New([]worker.Tool{read}, worker.WithRest(store))
	ager, _ := history.New(store, history.Config{MaxTokens: 12000, KeepRecent: 1, ClearAtLeast: 10000})

	// The model: one read a turn, then an answer.
	srv, _ := fakeresponses.New(func(req *fakeresponses.Request) fakeresponses.Reply {
		outs, _ := req.Outputs()
		if n := len(outs); n < 8 {
			return fakeresponses.Reply{Calls: []fakeresponses.Call{fakeresponses.FunctionCall("", "read", map[string]string{"path": fmt.Sprintf("file%d.go", n+1)})}}
		}
		return fakeresponses.Reply{Text: "done"}
	})
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.BaseURL), option.WithAPIKey("test"), option.WithMaxRetries(0))

	ctx := rest.WithScope(context.Background(), "conversation-1")
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("Read file1.go to file8.go.", responses.EasyInputMessageRoleUser)}
	for turn := 1; ; turn++ {
		aged, pass, err := openaicap.AgeResponses(ctx, ager, input)
		if err != nil {
			fmt.Println(err)
			return
		}
		input = aged // keep the input as aged: the stubs stay the same bytes
		resp, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-test", Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("turn %d: %d aged now, %d tokens -> %d\n", turn, pass.Freed.Results, pass.Tokens, pass.After)
		var calls []chain.Call
		for _, item := range resp.Output {
			if item.Type == "function_call" {
				input = append(input, responses.ResponseInputItemParamOfFunctionCall(item.Arguments.OfString, item.CallID, item.Name))
				calls = append(calls, chain.Call{ID: item.CallID, Tool: item.Name, Args: json.RawMessage(item.Arguments.OfString)})
			}
		}
		if len(calls) == 0 {
			break
		}
		for i, r := range w.ExecuteTools(ctx, calls) {
			input = append(input, responses.ResponseInputItemParamOfFunctionCallOutput(*r.Content))
			input[len(input)-1].OfFunctionCallOutput.CallID = openai.String(calls[i].ID)
		}
	}

	// What the model got of file1.go in the last request, and the read
	// its stub names.
	reqs := srv.Requests()
	outs, _ := reqs[len(reqs)-1].Outputs()
	stub := outs[0].Text()
	page := w.ExecuteTools(ctx, []chain.Call{{ID: "r", Tool: "toolcap_read", Args: json.RawMessage(stub[strings.Index(stub, "{") : len(stub)-1])}})[0]
	fmt.Printf("%s\nthe read: %q\n", stub[:strings.Index(stub, ";")+1], (*page.Content)[:27])
	// Output:
	// turn 1: 0 aged now, 0 tokens -> 0
	// turn 2: 0 aged now, 5400 tokens -> 5400
	// turn 3: 0 aged now, 10800 tokens -> 10800
	// turn 4: 2 aged now, 16200 tokens -> 5512
	// turn 5: 0 aged now, 10912 tokens -> 10912
	// turn 6: 2 aged now, 16312 tokens -> 5624
	// turn 7: 0 aged now, 11024 tokens -> 11024
	// turn 8: 2 aged now, 16424 tokens -> 5736
	// turn 9: 0 aged now, 11136 tokens -> 11136
	// [tool result cleared: 10800 bytes;
	// the read: "file1.go: some source line\n"
}
