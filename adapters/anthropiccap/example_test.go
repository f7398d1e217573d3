package anthropiccap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/toolcap/toolcap/adapters/anthropiccap"
	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/history"
	"github.com/toolcap/toolcap/internal/fakeanthropic"
	"github.com/toolcap/toolcap/rest"
	"github.com/toolcap/toolcap/worker"
)

// A tool loop on the Anthropic SDK, against a fake Messages API on
// 127.0.0.1 whose model reads eight files: the worker caps each result as
// it enters the history, and Age turns the oldest into stubs before a
// request once the tool results pass 12,000 tokens, at least 10,000 at a
// time, so that the requests between two batches extend each other. The
// worker answers the stubs' reads (toolcap_read) from the same store.
func Example() {
	store := rest.NewMemory(rest.Config{})
	read := worker.Func("Read", func(ctx context.Context, args json.RawMessage) (worker.ToolOutput, error) {
		var in struct{ Path string }
		_ = json.Unmarshal(args, &in)
		text := strings.Repeat(in.Path+": some source line\n", 400) // about 10 KB
		return worker.ToolOutput{Content: &text}, nil
	})
	w, _ := worker.New([]worker.Tool{read}, worker.WithRest(store))
	ager, _ := history.New(store, history.Config{MaxTokens: 12000, KeepRecent: 1, ClearAtLeast: 10000})

	// The model: one Read a turn, then an answer.
	srv, _ := fakeanthropic.New(func(req *fakeanthropic.Request) fakeanthropic.Reply {
		n := 0
		for _, m := range req.Messages {
			blocks, _ := m.Blocks()
			for _, b := range blocks {
				if b.Type == "tool_result" {
					n++
				}
			}
		}
		if n < 8 {
			return fakeanthropic.Reply{ToolUses: []fakeanthropic.ToolUse{{Name: "Read", Input: map[string]string{"path": fmt.Sprintf("file%d.go", n+1)}}}}
		}
		return fakeanthropic.Reply{Text: "done"}
	})
	defer srv.Close()
	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))

	ctx := rest.WithScope(context.Background(), "conversation-1")
	msgs := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Read file1.go to file8.go."))}
	for turn := 1; ; turn++ {
		aged, pass, err := anthropiccap.Age(ctx, ager, msgs)
		if err != nil {
			fmt.Println(err)
			return
		}
		msgs = aged // keep the history as aged: the stubs stay the same bytes
		resp, err := client.Messages.New(ctx, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024, Messages: msgs})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("turn %d: %d tool results sent, %d aged now, %d tokens -> %d\n", turn, len(msgs)/2, pass.Freed.Results, pass.Tokens, pass.After)
		msgs = append(msgs, resp.ToParam())
		if resp.StopReason != anthropic.StopReasonToolUse {
			break
		}
		var calls []chain.Call
		for _, b := range resp.Content {
			if b.Type == "tool_use" {
				calls = append(calls, chain.Call{ID: b.ID, Tool: b.Name, Args: b.Input})
			}
		}
		var blocks []anthropic.ContentBlockParamUnion
		for i, r := range w.ExecuteTools(ctx, calls) {
			blocks = append(blocks, anthropic.NewToolResultBlock(calls[i].ID, *r.Content, r.IsError()))
		}
		msgs = append(msgs, anthropic.NewUserMessage(blocks...))
	}

	// What the model got of file1.go in the last request, and the read
	// its stub names.
	reqs := srv.Requests()
	blocks, _ := reqs[len(reqs)-1].Messages[2].Blocks()
	var content []struct{ Text string }
	_ = json.Unmarshal(blocks[0].Content, &content)
	stub := content[0].Text
	args := stub[strings.Index(stub, "{") : len(stub)-1]
	page := w.ExecuteTools(ctx, []chain.Call{{ID: "r", Tool: "toolcap_read", Args: json.RawMessage(args)}})[0]
	fmt.Printf("%s\nthe read: %q\n", stub[:strings.Index(stub, ";")+1], (*page.Content)[:27])
	// Output:
	// turn 1: 0 tool results sent, 0 aged now, 0 tokens -> 0
	// turn 2: 1 tool results sent, 0 aged now, 5400 tokens -> 5400
	// turn 3: 2 tool results sent, 0 aged now, 10800 tokens -> 10800
	// turn 4: 3 tool results sent, 2 aged now, 16200 tokens -> 5512
	// turn 5: 4 tool results sent, 0 aged now, 10912 tokens -> 10912
	// turn 6: 5 tool results sent, 2 aged now, 16312 tokens -> 5624
	// turn 7: 6 tool results sent, 0 aged now, 11024 tokens -> 11024
	// turn 8: 7 tool results sent, 2 aged now, 16424 tokens -> 5736
	// turn 9: 8 tool results sent, 0 aged now, 11136 tokens -> 11136
	// [tool result cleared: 10800 bytes;
	// the read: "file1.go: some source line\n"
}
