package genkitcap_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/adapters/genkitcap"
)

const mib = 1 << 20

const markerEnd = " bytes dropped, refine your query]"

func limits(tool string) int {
	switch tool {
	case "dump":
		return 4096
	case "query":
		return 8192
	}
	return 16384
}

type rows struct {
	Rows  []string `json:"rows"`
	Count int      `json:"count"`
}

// fakeModel is the model Genkit calls: its first answer asks for every
// tool, its second ends the generation. It records each request.
type fakeModel struct {
	tools []string
	mu    sync.Mutex
	seen  []*ai.ModelRequest
}

func (m *fakeModel) generate(_ context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen = append(m.seen, req)
	if len(m.seen) > 1 {
		return &ai.ModelResponse{Message: ai.NewModelTextMessage("done"), FinishReason: ai.FinishReasonStop}, nil
	}
	var parts []*ai.Part
	for _, name := range m.tools {
		parts = append(parts, ai.NewToolRequestPart(&ai.ToolRequest{Name: name, Ref: "ref_" + name, Input: map[string]any{}}))
	}
	return &ai.ModelResponse{Message: ai.NewModelMessage(parts...), FinishReason: ai.FinishReasonStop}, nil
}

// toolResponses returns the tool responses of the last request, by name.
func (m *fakeModel) toolResponses(t *testing.T) map[string]*ai.ToolResponse {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.seen) != 2 {
		t.Fatalf("the model was called %d times, want 2", len(m.seen))
	}
	out := map[string]*ai.ToolResponse{}
	for _, msg := range m.seen[1].Messages {
		for _, p := range msg.Content {
			if p.IsToolResponse() {
				out[p.ToolResponse.Name] = p.ToolResponse
			}
		}
	}
	return out
}

// run runs a real generation with three tools, one returning a 1 MiB
// string, one 1 MiB of records, one a few bytes, and returns the model.
func run(t *testing.T, mws ...ai.ModelMiddleware) *fakeModel {
	t.Helper()
	ctx := context.Background()
	g := genkit.Init(ctx)
	m := &fakeModel{tools: []string{"dump", "query", "small"}}
	model := genkit.DefineModel(g, "test/fake", &ai.ModelOptions{
		Supports: &ai.ModelSupports{Tools: true, Multiturn: true},
	}, m.generate)
	dump := genkit.DefineTool(g, "dump", "dumps a log", func(*ai.ToolContext, struct{}) (string, error) {
		return strings.Repeat("log line\n", mib/9), nil
	})
	query := genkit.DefineTool(g, "query", "runs a query", func(*ai.ToolContext, struct{}) (rows, error) {
		out := rows{Count: 2048}
		for range 2048 {
			out.Rows = append(out.Rows, strings.Repeat("x", 512))
		}
		return out, nil
	})
	small := genkit.DefineTool(g, "small", "says hello", func(*ai.ToolContext, struct{}) (string, error) {
		return "hello", nil
	})
	_, err := genkit.Generate(ctx, g,
		ai.WithModel(model),
		ai.WithTools(dump, query, small),
		ai.WithPrompt("show me the logs"),
		ai.WithMiddleware(mws...),
	)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func encoded(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMiddleware(t *testing.T) {
	got := run(t, genkitcap.Middleware(limits)).toolResponses(t)
	for _, name := range []string{"dump", "query"} {
		tr, ok := got[name]
		if !ok {
			t.Fatalf("no tool response for %s", name)
		}
		if enc := encoded(t, tr.Output); len(enc) > limits(name) || len(enc) < limits(name)/2 || !strings.Contains(enc, markerEnd) {
			t.Errorf("%s: the model got an output of %d bytes (limit %d)", name, len(enc), limits(name))
		}
	}
	if q, ok := got["query"].Output.(map[string]any); !ok || q["count"] != json.Number("2048") {
		t.Errorf("query: the output lost its shape: %T %.80v", got["query"].Output, got["query"].Output)
	}
	if diff := cmp.Diff("hello", got["small"].Output); diff != "" {
		t.Errorf("small output changed (-want +got):\n%s", diff)
	}
}

// Without the middleware the model gets the whole 1 MiB: the test above
// measures the middleware, not Genkit.
func TestWithoutMiddleware(t *testing.T) {
	got := run(t).toolResponses(t)
	if n := len(encoded(t, got["dump"].Output)); n < mib {
		t.Errorf("without the middleware the model got %d bytes of dump; the test setup is wrong", n)
	}
}

func TestCapToolResponse(t *testing.T) {
	big := strings.Repeat("é", mib/2)
	orig := &ai.ToolResponse{Name: "dump", Ref: "1", Output: big, Content: []*ai.Part{
		ai.NewTextPart(big), ai.NewMediaPart("image/png", "data:image/png;base64,iVBO"), ai.NewTextPart("short"),
	}}
	got, dropped := genkitcap.CapToolResponse(orig, 4096)
	if dropped == 0 || got.Name != "dump" || got.Ref != "1" {
		t.Fatalf("dropped %d, name %q, ref %q", dropped, got.Name, got.Ref)
	}
	if n := len(encoded(t, got.Output)); n > 4096 {
		t.Errorf("output encodes to %d bytes, over 4096", n)
	}
	c := got.Content
	if len(c[0].Text)+len(c[2].Text) > 4096 || c[2].Text != "short" || c[1] != orig.Content[1] || !strings.HasSuffix(c[0].Text, markerEnd) {
		t.Errorf("content: %d + %d text bytes, media kept %v", len(c[0].Text), len(c[2].Text), c[1] == orig.Content[1])
	}
	if orig.Output != big || orig.Content[0].Text != big {
		t.Error("CapToolResponse changed the tool's own response")
	}
}
