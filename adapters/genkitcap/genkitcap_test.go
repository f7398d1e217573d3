package genkitcap_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/adapters/genkitcap"
	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/capvalue"
	"github.com/toolcap/toolcap/internal/shape"
)

const mib = 1 << 20

const markerEnd = " bytes dropped, refine your query]"

// policies gives "dump" 4096 bytes, "query" 8192, "log" the head_tail
// policy below, and every other tool 16384 bytes.
func policies(tool string) shape.Policy {
	switch tool {
	case "dump":
		return shape.Bytes(4096)
	case "query":
		return shape.Bytes(8192)
	case "log":
		return headTail
	}
	return shape.Bytes(16384)
}

// headTail is the policy every front end's tests check all settings with.
var headTail = capcheck.HeadTail

// testLog is a test run's output with one failure inside.
var testLog = capcheck.TestLog(300, 170)

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
	got := run(t, genkitcap.Middleware(policies)).toolResponses(t)
	for _, name := range []string{"dump", "query"} {
		tr, ok := got[name]
		if !ok {
			t.Fatalf("no tool response for %s", name)
		}
		limit := policies(name).MaxBytes
		if enc := encoded(t, tr.Output); len(enc) > limit || len(enc) < limit/2 {
			t.Errorf("%s: the model got an output of %d bytes (limit %d)", name, len(enc), limit)
		}
	}
	if !strings.HasSuffix(got["dump"].Output.(string), markerEnd) {
		t.Errorf("dump: the output ends %q, want the marker", got["dump"].Output.(string)[3900:])
	}
	// The structured output is shape.JSON's cut: every member kept, the
	// rows cut.
	q, ok := got["query"].Output.(map[string]any)
	if !ok || q["count"] != json.Number("2048") {
		t.Fatalf("query: the output lost its shape: %T %.80v", got["query"].Output, got["query"].Output)
	}
	if rows, _ := q["rows"].([]any); len(rows) == 0 || len(rows) >= 2048 {
		t.Errorf("query: %d rows of 2048, want a cut", len(rows))
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
	p := shape.Bytes(4096)
	got, output, content := genkitcap.CapToolResponse(orig, p)
	if got == orig || got.Name != "dump" || got.Ref != "1" {
		t.Fatalf("a copy %v, name %q, ref %q", got != orig, got.Name, got.Ref)
	}
	wantOut, wantOutFig, _ := capvalue.Cap(big, p)
	if diff := cmp.Diff(wantOut, got.Output); diff != "" || output != wantOutFig {
		t.Errorf("output differs from capvalue.Cap's (-want +got):\n%s\nfigures %+v, want %+v", diff, output, wantOutFig)
	}
	wantTexts, wantFig, _ := shape.Texts([]string{big, "short"}, p)
	c := got.Content
	if diff := cmp.Diff(wantTexts, []string{c[0].Text, c[2].Text}); diff != "" || c[1] != orig.Content[1] {
		t.Errorf("content differs from shape.Texts's (-want +got):\n%s\nmedia kept %v", diff, c[1] == orig.Content[1])
	}
	if diff := cmp.Diff(wantFig, content); diff != "" {
		t.Errorf("content figures (-want +got):\n%s", diff)
	}
	if orig.Output != big || orig.Content[0].Text != big {
		t.Error("CapToolResponse changed the tool's own response")
	}

	small := &ai.ToolResponse{Name: "small", Output: "hello", Content: []*ai.Part{ai.NewTextPart("hi")}}
	if same, o, c := genkitcap.CapToolResponse(small, p); same != small || o != (chain.Truncation{}) || c != (chain.Truncation{}) {
		t.Errorf("a small response: a copy %v, figures %+v and %+v", same != small, o, c)
	}
}

// A per-tool strategy and token limit hold: the text parts are
// shape.Text's cut, byte for byte, and the output string the cut of
// capvalue.Cap, which leaves room for its quotes and escapes.
func TestPolicy(t *testing.T) {
	var buf bytes.Buffer
	logger := hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, DisableTime: true, Level: hclog.Info})
	mw := genkitcap.Middleware(policies, genkitcap.WithLogger(logger))
	var seen *ai.ModelRequest
	model := mw(func(_ context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		seen = req
		return &ai.ModelResponse{}, nil
	})
	tr := &ai.ToolResponse{Name: "log", Ref: "r1", Output: testLog, Content: []*ai.Part{ai.NewTextPart(testLog)}}
	req := &ai.ModelRequest{Messages: []*ai.Message{ai.NewMessage(ai.RoleTool, nil, ai.NewToolResponsePart(tr))}}
	if _, err := model(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	got := seen.Messages[0].Content[0].ToolResponse
	want, _, _ := shape.Text(testLog, headTail)
	_, fig, _ := shape.Texts([]string{testLog}, headTail) // the figures of the parts, added up
	if diff := cmp.Diff(want, got.Content[0].Text); diff != "" {
		t.Errorf("the text part differs from shape.Text's (-want +got):\n%s", diff)
	}
	if err := capcheck.Text(testLog, got.Content[0].Text, headTail); err != nil {
		t.Error(err)
	}
	wantOut, outFig, _ := capvalue.Cap(testLog, headTail)
	if diff := cmp.Diff(wantOut, got.Output); diff != "" {
		t.Errorf("the output differs from capvalue.Cap's (-want +got):\n%s", diff)
	}
	if req.Messages[0].Content[0].ToolResponse != tr || tr.Output != testLog {
		t.Error("the caller's request changed")
	}

	// Two cuts, two log lines, each with the one field set.
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	var want2 []map[string]any
	for _, f := range []chain.Truncation{outFig, fig} {
		w := map[string]any{"@level": "info", "@message": shape.Message(f)}
		for i, kv := 0, shape.LogFields("log", "r1", f); i < len(kv); i += 2 {
			w[kv[i].(string)] = kv[i+1]
		}
		enc, _ := json.Marshal(w)
		var d map[string]any
		_ = json.Unmarshal(enc, &d) // numbers as a decoded log line has them
		want2 = append(want2, d)
	}
	if diff := cmp.Diff(want2, lines); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
}
