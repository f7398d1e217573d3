package eino_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/toolcap/toolcap/adapters/eino"
	"github.com/toolcap/toolcap/manifest"
)

type tailLogs struct{}

func (tailLogs) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "tail_logs", Desc: "the service's log"}, nil
}

func (tailLogs) InvokableRun(context.Context, string, ...tool.Option) (string, error) {
	return strings.Repeat("GET /healthz 200\n", 1<<16), nil
}

// A ToolsNode with the middleware: the tool message the model reads next
// holds the tool's policy from the manifest, marker included.
func ExampleToolMiddleware() {
	ctx := context.Background()
	m, err := manifest.Load(context.Background(), manifest.Bytes("toolcap.toml", []byte(`
[worker.tool_output.per_tool]
tail_logs = 170
`)))
	if err != nil {
		fmt.Println(err)
		return
	}
	policies, err := m.Policies()
	if err != nil {
		fmt.Println(err)
		return
	}
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{
		Tools:               []tool.BaseTool{tailLogs{}},
		ToolCallMiddlewares: []compose.ToolMiddleware{eino.ToolMiddleware(policies.For)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	call := schema.AssistantMessage("", []schema.ToolCall{{ID: "call_1", Type: "function",
		Function: schema.FunctionCall{Name: "tail_logs", Arguments: "{}"}}})
	msgs, err := node.Invoke(ctx, call)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(msgs[0].Content), "bytes")
	fmt.Println(msgs[0].Content)
	// Output:
	// 170 bytes
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 200
	// GET /healthz 2
	// [truncated: 1113996 bytes dropped, refine your query]
}
