package genkitcap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/toolcap/toolcap/adapters/genkitcap"
	"github.com/toolcap/toolcap/manifest"
)

// A generation whose tool returns 1 MiB: with the middleware, the model's
// next request holds the tool's limit, marker included. The model here is a
// stand-in that asks for the tool once and prints what it then receives.
func ExampleMiddleware() {
	ctx := context.Background()
	g := genkit.Init(ctx)
	calls := 0
	model := genkit.DefineModel(g, "demo/model", &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true}},
		func(_ context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			calls++
			if calls == 1 {
				return &ai.ModelResponse{Message: ai.NewModelMessage(ai.NewToolRequestPart(&ai.ToolRequest{Name: "tail_logs", Ref: "1", Input: map[string]any{}}))}, nil
			}
			for _, m := range req.Messages {
				for _, p := range m.Content {
					if p.IsToolResponse() {
						out, _ := json.Marshal(p.ToolResponse.Output)
						fmt.Println(len(out), "bytes:", string(out))
					}
				}
			}
			return &ai.ModelResponse{Message: ai.NewModelTextMessage("the service is healthy")}, nil
		})
	tailLogs := genkit.DefineTool(g, "tail_logs", "the service's log", func(*ai.ToolContext, struct{}) (string, error) {
		return strings.Repeat("GET /healthz 200\n", 1<<16), nil
	})
	m, err := manifest.Load(context.Background(), manifest.Bytes("toolcap.toml", []byte(`
[worker.tool_output.per_tool]
tail_logs = 128
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

	resp, err := genkit.Generate(ctx, g,
		ai.WithModel(model),
		ai.WithTools(tailLogs),
		ai.WithPrompt("is the service healthy?"),
		ai.WithMiddleware(genkitcap.Middleware(policies.For)),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Text())
	// Output:
	// 127 bytes: "GET /healthz 200\nGET /healthz 200\nGET /healthz 200\nGET /healthz 200\n[truncated: 1114045 bytes dropped, refine your query]"
	// the service is healthy
}
