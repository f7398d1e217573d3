package eino_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/adapters/eino"
)

const mib = 1 << 20

var markerRE = " bytes dropped, refine your query]"

// limits: "dump" and "stream" 4096, "small" and everything else 16384.
func limits(tool string) int {
	switch tool {
	case "dump", "stream":
		return 4096
	}
	return 16384
}

// dumpTool returns 1 MiB.
type dumpTool struct{}

func (dumpTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "dump", Desc: "dumps a log"}, nil
}

func (dumpTool) InvokableRun(context.Context, string, ...tool.Option) (string, error) {
	return strings.Repeat("log line\n", mib/9), nil
}

// streamTool streams 1 MiB in 64 KiB chunks.
type streamTool struct{}

func (streamTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "stream", Desc: "streams a log"}, nil
}

func (streamTool) StreamableRun(context.Context, string, ...tool.Option) (*schema.StreamReader[string], error) {
	chunks := make([]string, 16)
	for i := range chunks {
		chunks[i] = strings.Repeat("s", 64<<10)
	}
	return schema.StreamReaderFromArray(chunks), nil
}

// smallTool returns a few bytes.
type smallTool struct{}

func (smallTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "small", Desc: "says hello"}, nil
}

func (smallTool) InvokableRun(context.Context, string, ...tool.Option) (string, error) {
	return "hello", nil
}

// fakeModel is the peer the framework calls: its first answer calls every
// tool, its second ends the run. It records what the framework handed it.
type fakeModel struct {
	tools []string
	mu    sync.Mutex
	seen  [][]*schema.Message
}

func (m *fakeModel) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen = append(m.seen, in)
	if len(m.seen) > 1 {
		return schema.AssistantMessage("done", nil), nil
	}
	var calls []schema.ToolCall
	for i, name := range m.tools {
		calls = append(calls, schema.ToolCall{ID: "call_" + name, Type: "function",
			Function: schema.FunctionCall{Name: name, Arguments: "{}"}, Index: &i})
	}
	return schema.AssistantMessage("", calls), nil
}

func (m *fakeModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *fakeModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

// toolMessages returns the tool messages of the second request, by tool call ID.
func (m *fakeModel) toolMessages(t *testing.T) map[string]string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.seen) != 2 {
		t.Fatalf("the model was called %d times, want 2", len(m.seen))
	}
	out := map[string]string{}
	for _, msg := range m.seen[1] {
		if msg.Role == schema.Tool {
			out[msg.ToolCallID] = msg.Content
		}
	}
	return out
}

func check(t *testing.T, got map[string]string) {
	t.Helper()
	for _, id := range []string{"call_dump", "call_stream"} {
		s, ok := got[id]
		if !ok {
			t.Errorf("no tool message for %s", id)
			continue
		}
		if len(s) > 4096 || len(s) < 4000 || !strings.HasSuffix(s, markerRE) {
			t.Errorf("%s: the model got %d bytes (limit 4096), ending %q", id, len(s), s[max(0, len(s)-60):])
		}
	}
	if diff := cmp.Diff("hello", got["call_small"]); diff != "" {
		t.Errorf("small result changed (-want +got):\n%s", diff)
	}
}

var tools = []tool.BaseTool{dumpTool{}, streamTool{}, smallTool{}}

// A react agent: a real compose graph whose ToolsNode has the middleware.
func TestToolMiddlewareReactAgent(t *testing.T) {
	ctx := context.Background()
	m := &fakeModel{tools: []string{"dump", "stream", "small"}}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: m,
		ToolsConfig: compose.ToolsNodeConfig{
			Tools:               tools,
			ToolCallMiddlewares: []compose.ToolMiddleware{eino.ToolMiddleware(limits)},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Generate(ctx, []*schema.Message{schema.UserMessage("show me the logs")}); err != nil {
		t.Fatal(err)
	}
	check(t, m.toolMessages(t))
}

// A ToolsNode on its own, invoked and streamed.
func TestToolMiddlewareToolsNode(t *testing.T) {
	ctx := context.Background()
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{
		Tools:               tools,
		ToolCallMiddlewares: []compose.ToolMiddleware{eino.ToolMiddleware(limits)},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeModel{tools: []string{"dump", "stream", "small"}}
	call, _ := m.Generate(ctx, nil)
	msgs, err := node.Invoke(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, msg := range msgs {
		got[msg.ToolCallID] = msg.Content
	}
	check(t, got)

	sr, err := node.Stream(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	streamed := map[string]string{}
	for {
		chunk, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range chunk {
			if msg != nil {
				streamed[msg.ToolCallID] += msg.Content
			}
		}
	}
	check(t, streamed)
}

// An adk ChatModelAgent with the middleware among its Handlers, run by a
// Runner.
func TestAgentMiddleware(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(map[bool]string{false: "generate", true: "stream"}[streaming], func(t *testing.T) {
			ctx := context.Background()
			m := &fakeModel{tools: []string{"dump", "stream", "small"}}
			agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
				Name:        "logs",
				Description: "reads logs",
				Model:       m,
				ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: tools}},
				Handlers:    []adk.ChatModelAgentMiddleware{eino.AgentMiddleware(limits)},
			})
			if err != nil {
				t.Fatal(err)
			}
			runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, EnableStreaming: streaming})
			events := runner.Query(ctx, "show me the logs")
			for {
				ev, ok := events.Next()
				if !ok {
					break
				}
				if ev.Err != nil {
					t.Fatal(ev.Err)
				}
			}
			check(t, m.toolMessages(t))
		})
	}
}

func TestEnhancedResult(t *testing.T) {
	ctx := context.Background()
	mw := eino.ToolMiddleware(limits)
	big := strings.Repeat("é", mib/2)
	img := &schema.ToolOutputImage{}
	orig := &schema.ToolResult{Parts: []schema.ToolOutputPart{
		{Type: schema.ToolPartTypeText, Text: big},
		{Type: schema.ToolPartTypeImage, Image: img},
		{Type: schema.ToolPartTypeText, Text: "short"},
	}}
	endpoint := mw.EnhancedInvokable(func(context.Context, *compose.ToolInput) (*compose.EnhancedInvokableToolOutput, error) {
		return &compose.EnhancedInvokableToolOutput{Result: orig}, nil
	})
	out, err := endpoint(ctx, &compose.ToolInput{Name: "dump", CallID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	p := out.Result.Parts
	if len(p) != 3 || len(p[0].Text)+len(p[2].Text) > 4096 || p[2].Text != "short" || p[1].Image != img || !strings.HasSuffix(p[0].Text, markerRE) {
		t.Errorf("parts: %d, text %d + %d bytes, image kept %v", len(p), len(p[0].Text), len(p[2].Text), p[1].Image == img)
	}
	if orig.Parts[0].Text != big {
		t.Error("the tool's own result changed")
	}
}
