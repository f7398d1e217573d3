package eino_test

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/adapters/eino"
	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/shape"
)

const mib = 1 << 20

var markerRE = " bytes dropped, refine your query]"

// policies: "dump" and "stream" 4096 bytes, "log" and "logstream" the
// head_tail policy below, "small" and everything else 16384 bytes.
func policies(tool string) shape.Policy {
	switch tool {
	case "dump", "stream":
		return shape.Bytes(4096)
	case "log", "logstream":
		return headTail
	}
	return shape.Bytes(16384)
}

// headTail is the policy every front end's tests check all settings with.
var headTail = capcheck.HeadTail

// testLog is a test run's output with one failure inside.
var testLog = capcheck.TestLog(300, 170)

// logTool returns the test log.
type logTool struct{}

func (logTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "log", Desc: "runs the tests"}, nil
}

func (logTool) InvokableRun(context.Context, string, ...tool.Option) (string, error) {
	return testLog, nil
}

// logStreamTool streams the test log in pieces of 1000 bytes.
type logStreamTool struct{}

func (logStreamTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "logstream", Desc: "streams the tests"}, nil
}

func (logStreamTool) StreamableRun(context.Context, string, ...tool.Option) (*schema.StreamReader[string], error) {
	var chunks []string
	for rest := testLog; rest != ""; {
		n := min(1000, len(rest))
		chunks = append(chunks, rest[:n])
		rest = rest[n:]
	}
	return schema.StreamReaderFromArray(chunks), nil
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
			ToolCallMiddlewares: []compose.ToolMiddleware{eino.ToolMiddleware(policies)},
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
		ToolCallMiddlewares: []compose.ToolMiddleware{eino.ToolMiddleware(policies)},
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
				Handlers:    []adk.ChatModelAgentMiddleware{eino.AgentMiddleware(policies)},
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
	mw := eino.ToolMiddleware(policies)
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

// A per-tool strategy and token limit hold for every kind of tool: the
// text the model reads is shape.Text's cut of the tool's, byte for byte.
func TestPolicy(t *testing.T) {
	want, fig, _ := shape.Text(testLog, headTail)
	if err := capcheck.Text(testLog, want, headTail); err != nil || fig.Unit != "tokens" {
		t.Fatalf("the setup: %v; unit %q, want a cut by tokens", err, fig.Unit)
	}
	ctx := context.Background()
	var buf bytes.Buffer
	logger := hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, DisableTime: true, Level: hclog.Info})
	mw := eino.ToolMiddleware(policies, eino.WithLogger(logger))
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{
		Tools:               []tool.BaseTool{logTool{}, logStreamTool{}},
		ToolCallMiddlewares: []compose.ToolMiddleware{mw},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeModel{tools: []string{"log", "logstream"}}
	call, _ := m.Generate(ctx, nil)
	msgs, err := node.Invoke(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range msgs {
		if diff := cmp.Diff(want, msg.Content); diff != "" {
			t.Errorf("%s: the model's text differs from shape.Text's (-want +got):\n%s", msg.ToolCallID, diff)
		}
	}

	// Each call logged its cut once, with the one field set.
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2:\n%s", len(lines), buf.String())
	}
	for _, l := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatal(err)
		}
		tool, _ := got["tool"].(string)
		wantLine := map[string]any{"@level": "info", "@message": shape.Message(fig)}
		for i, f := 0, shape.LogFields(tool, "call_"+tool, fig); i < len(f); i += 2 {
			wantLine[f[i].(string)] = f[i+1]
		}
		enc, _ := json.Marshal(wantLine)
		var decoded map[string]any
		_ = json.Unmarshal(enc, &decoded) // numbers as a decoded log line has them
		if diff := cmp.Diff(decoded, got); diff != "" {
			t.Errorf("log line (-want +got):\n%s", diff)
		}
	}

	// An enhanced tool's text part too.
	endpoint := mw.EnhancedInvokable(func(context.Context, *compose.ToolInput) (*compose.EnhancedInvokableToolOutput, error) {
		return &compose.EnhancedInvokableToolOutput{Result: &schema.ToolResult{Parts: []schema.ToolOutputPart{
			{Type: schema.ToolPartTypeText, Text: testLog},
		}}}, nil
	})
	out, err := endpoint(ctx, &compose.ToolInput{Name: "log", CallID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, out.Result.Parts[0].Text); diff != "" {
		t.Errorf("enhanced: the text differs from shape.Text's (-want +got):\n%s", diff)
	}
}

// A stream's read error ends the call with an error that names the tool.
func TestStreamError(t *testing.T) {
	broken := errors.New("connection reset")
	mw := eino.ToolMiddleware(policies)
	endpoint := mw.Streamable(func(context.Context, *compose.ToolInput) (*compose.StreamToolOutput, error) {
		sr, sw := schema.Pipe[string](1)
		go func() {
			sw.Send("partial", nil)
			sw.Send("", broken)
			sw.Close()
		}()
		return &compose.StreamToolOutput{Result: sr}, nil
	})
	_, err := endpoint(context.Background(), &compose.ToolInput{Name: "stream", CallID: "c1"})
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "stream") {
		t.Errorf("err = %v, want the stream's error, naming the tool", err)
	}
}
