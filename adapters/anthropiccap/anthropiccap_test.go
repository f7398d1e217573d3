package anthropiccap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/adapters/anthropiccap"
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

// turn is a model's tool call and the agent's result, as SDK messages.
func turn(id, tool, text string, isError bool) []anthropic.MessageParam {
	return []anthropic.MessageParam{
		anthropic.NewAssistantMessage(anthropic.NewToolUseBlock(id, map[string]string{"q": id}, tool)),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(id, text, isError)),
	}
}

// wire is the history as the SDK sends it.
func wire(t *testing.T, msgs []anthropic.MessageParam) string {
	t.Helper()
	b, err := json.Marshal(anthropic.MessageNewParams{Model: "m", MaxTokens: 1, Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The shape of a request the API accepts: each tool_result answers the
// tool_use of the assistant message just before it, ids intact.
func checkPairs(t *testing.T, msgs []anthropic.MessageParam) {
	t.Helper()
	for i, m := range msgs {
		if m.OfUser == nil {
			continue
		}
		for _, b := range m.OfUser.Content {
			if b.OfToolResult == nil {
				continue
			}
			found := false
			if i > 0 && msgs[i-1].OfAssistant != nil {
				for _, u := range msgs[i-1].OfAssistant.Content {
					found = found || u.OfToolUse != nil && u.OfToolUse.ID == b.OfToolResult.ToolUseID
				}
			}
			if !found {
				t.Errorf("message %d: tool_result %s answers no tool_use of the message before it", i, b.OfToolResult.ToolUseID)
			}
		}
	}
}

func TestAge(t *testing.T) {
	ctx := rest.WithScope(context.Background(), "c")
	a := newAger(t)
	var msgs []anthropic.MessageParam
	msgs = append(msgs, anthropic.NewUserMessage(anthropic.NewTextBlock("go")))
	msgs = append(msgs, turn("toolu_1", "Glob", strings.Repeat("a/b.go\n", 500), false)...)
	msgs = append(msgs, turn("toolu_2", "Bash", strings.Repeat("FAIL x\n", 500), true)...)
	msgs = append(msgs, turn("toolu_3", "Read", strings.Repeat("line\n", 500), false)...)
	// cache_control on the last result: kept as it is; on the text block
	// of an aged one: kept on its stub.
	msgs[len(msgs)-1].OfUser.Content[0].OfToolResult.CacheControl = anthropic.NewCacheControlEphemeralParam()
	msgs[2].OfUser.Content[0].OfToolResult.Content[0].OfText.CacheControl = anthropic.NewCacheControlEphemeralParam()
	before := wire(t, msgs)

	out, p, err := anthropiccap.Age(ctx, a, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if got := wire(t, msgs); got != before {
		t.Error("Age changed the history it was given")
	}
	var aged []string
	for _, g := range p.Aged {
		aged = append(aged, g.ID)
	}
	if diff := cmp.Diff([]string{"toolu_1", "toolu_2"}, aged); diff != "" {
		t.Errorf("aged (-want +got):\n%s", diff)
	}
	checkPairs(t, out)
	if len(out) != len(msgs) {
		t.Fatalf("%d messages, want %d", len(out), len(msgs))
	}
	tr := out[4].OfUser.Content[0].OfToolResult
	if tr.ToolUseID != "toolu_2" || !tr.IsError.Value || len(tr.Content) != 1 || !strings.HasPrefix(tr.Content[0].OfText.Text, "[tool result cleared: 3500 bytes;") {
		t.Errorf("the aged error result: %+v; want its id, is_error and one text block, the stub", tr)
	}
	if first := out[2].OfUser.Content[0].OfToolResult.Content[0].OfText; first.CacheControl.Type != "ephemeral" {
		t.Errorf("the aged result's stub lost its text block's cache_control: %+v", first)
	}
	last := out[6].OfUser.Content[0].OfToolResult
	if last.CacheControl.Type != "ephemeral" || last.Content[0].OfText.Text != strings.Repeat("line\n", 500) {
		t.Errorf("the recent result changed: %+v", last)
	}
	// Sent again as the pass left it, the history is the same bytes.
	again, p2, err := anthropiccap.Age(ctx, a, out)
	if err != nil || len(p2.Aged) != 0 || wire(t, again) != wire(t, out) {
		t.Errorf("the aged history, aged again: %d aged, %v, same bytes %v", len(p2.Aged), err, wire(t, again) == wire(t, out))
	}
	// Sent again as it was: the same stubs.
	orig, _, err := anthropiccap.Age(ctx, a, msgs)
	if err != nil || wire(t, orig) != wire(t, out) {
		t.Errorf("the original history, aged again, is not the same bytes as the first pass gave (%v)", err)
	}
}

// Results that are not text only, or that answer no tool_use, are never
// aged; nothing else of the history changes.
func TestAgeLeavesWhatItCannot(t *testing.T) {
	ctx := rest.WithScope(context.Background(), "c")
	a := newAger(t)
	image := anthropic.ToolResultBlockParam{ToolUseID: "toolu_img", Content: []anthropic.ToolResultBlockParamContentUnion{
		{OfText: &anthropic.TextBlockParam{Text: strings.Repeat("x", 4000)}},
		{OfImage: &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{Data: "AAAA", MediaType: "image/png"}}}},
	}}
	msgs := []anthropic.MessageParam{
		anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("toolu_img", map[string]string{}, "Screenshot")),
		anthropic.NewUserMessage(anthropic.ContentBlockParamUnion{OfToolResult: &image}),
		// An orphan: no tool_use has its id.
		anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_orphan", strings.Repeat("y", 4000), false)),
	}
	msgs = append(msgs, turn("toolu_last", "Read", strings.Repeat("z", 100), false)...)
	out, p, err := anthropiccap.Age(ctx, a, msgs)
	if err != nil || len(p.Aged) != 0 {
		t.Fatalf("aged %+v, %v; want nothing", p.Aged, err)
	}
	if wire(t, out) != wire(t, msgs) {
		t.Error("the history changed")
	}
	if p.Tokens != 8100 {
		t.Errorf("counted %d tokens, want 8100 (every result's text counts)", p.Tokens)
	}
}

func ExampleAge() {
	k, _ := rest.NewKeeper(rest.NewMemory(rest.Config{}))
	a, _ := history.New(k.Store(), history.Config{MaxTokens: 1000, KeepRecent: 1, ClearAtLeast: 500})
	ctx := rest.WithScope(context.Background(), "conversation-1")
	msgs := append(turn("toolu_1", "Glob", strings.Repeat("src/a.go\n", 300), false),
		turn("toolu_2", "Read", "package a\n", false)...)
	msgs, p, _ := anthropiccap.Age(ctx, a, msgs)
	text := msgs[1].OfUser.Content[0].OfToolResult.Content[0].OfText.Text
	fmt.Println(len(p.Aged), text[:strings.Index(text, ";")+1])
	// Output:
	// 1 [tool result cleared: 2700 bytes;
}
