package eino_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/filesystem"
	"github.com/cloudwego/eino/adk/middlewares/reduction"
	"github.com/cloudwego/eino/schema"

	"github.com/toolcap/toolcap/adapters/eino"
	"github.com/toolcap/toolcap/history"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/tokens"
)

func toolTurn(id, tool, text string) []*schema.Message {
	return []*schema.Message{
		{Role: schema.Assistant, ToolCalls: []schema.ToolCall{{ID: id, Function: schema.FunctionCall{Name: tool, Arguments: "{}"}}}},
		{Role: schema.Tool, ToolCallID: id, ToolName: tool, Content: text},
	}
}

type byteCount struct{}

func (byteCount) Count(s string) int { return len(s) }

// HistoryMiddleware ages the oldest tool messages of the agent's state,
// ids and places kept, the state given untouched; multimodal results and
// orphans are left alone.
func TestHistoryMiddleware(t *testing.T) {
	ctx := rest.WithScope(context.Background(), "c")
	k, _ := rest.NewKeeper(rest.NewMemory(rest.Config{}))
	a, err := history.New(k.Store(), history.Config{MaxTokens: 5000, KeepRecent: 1, ClearAtLeast: 1000, Counter: byteCount{}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []*schema.Message{schema.UserMessage("go")}
	msgs = append(msgs, toolTurn("call_1", "glob", strings.Repeat("a/b.go\n", 500))...)
	msgs = append(msgs, &schema.Message{Role: schema.Tool, ToolCallID: "call_orphan", Content: strings.Repeat("o", 3000)})
	img := toolTurn("call_img", "shot", strings.Repeat("i", 3000))
	img[1].UserInputMultiContent = []schema.MessageInputPart{{Type: schema.ChatMessagePartTypeText, Text: "x"}}
	msgs = append(msgs, img...)
	msgs = append(msgs, toolTurn("call_2", "read", strings.Repeat("line\n", 500))...)
	before, _ := json.Marshal(msgs)

	_, state, err := eino.HistoryMiddleware(a).BeforeModelRewriteState(ctx, &adk.ChatModelAgentState{Messages: msgs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(msgs); string(after) != string(before) {
		t.Error("the state's messages were changed in place")
	}
	got := state.Messages
	if len(got) != len(msgs) || got[2].ToolCallID != "call_1" || !strings.HasPrefix(got[2].Content, "[tool result cleared: 3500 bytes;") {
		t.Fatalf("the aged message: %+v; want call_1's stub in its place", got[2])
	}
	for _, i := range []int{3, 5, 7} {
		if got[i] != msgs[i] {
			t.Errorf("message %d (%s) changed", i, msgs[i].ToolCallID)
		}
	}
}

// memBackend is the store Eino's reduction middleware offloads to.
type memBackend struct {
	mu    sync.Mutex
	files map[string]string
}

func (b *memBackend) Write(_ context.Context, r *filesystem.WriteRequest) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.files[r.FilePath] = r.Content
	return nil
}

// TestHistoryBesideReduction plays one session of 44 tool results (net/http's
// files, each capped at 16 KiB as a toolcap worker caps them) through
// HistoryMiddleware and, beside it, Eino's own reduction middleware (its
// clear phase, on the same budget and batch size), and compares the input
// tokens every model call is sent, the prompt-cache breaks, and whether
// what each cleared can be read back (issue 36).
func TestHistoryBesideReduction(t *testing.T) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(goroot)), "src", "net", "http")
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	slices.Sort(names)
	ctx := rest.WithScope(context.Background(), "session")
	store := rest.NewMemory(rest.Config{MaxBytes: 1 << 30})
	k, _ := rest.NewKeeper(store)
	var outputs []string // each result as it enters the history, capped
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil || len(data) < 4000 {
			continue
		}
		capped, _, _ := k.Text(ctx, string(data), shape.Policy{MaxBytes: 16384, KeepRest: true})
		outputs = append(outputs, capped)
		if len(outputs) == 44 {
			break
		}
	}
	if len(outputs) < 40 {
		t.Skipf("only %d files in %s", len(outputs), dir)
	}
	counter := tokens.NewCalibrated()
	const budget, atLeast = 30000, 10000
	ager, err := history.New(k.Store(), history.Config{MaxTokens: budget, KeepRecent: 4, ClearAtLeast: atLeast, Counter: counter})
	if err != nil {
		t.Fatal(err)
	}
	backend := &memBackend{files: map[string]string{}}
	countMsgs := func(_ context.Context, msgs []*schema.Message, _ []*schema.ToolInfo) (int64, error) {
		n := 0
		for _, m := range msgs {
			n += counter.Count(m.Content)
		}
		return int64(n), nil
	}
	red, err := reduction.New(ctx, &reduction.Config{SkipTruncation: true, Backend: backend, RootDir: "/offload",
		TokenCounter: countMsgs, MaxTokensForClear: budget, ClearAtLeastTokens: atLeast, ClearRetentionSuffixLimit: 8})
	if err != nil {
		t.Fatal(err)
	}
	type run struct {
		name           string
		mw             adk.ChatModelAgentMiddleware
		msgs           []*schema.Message
		tokens, breaks int
		prev           string
	}
	runs := []*run{{name: "toolcap history", mw: eino.HistoryMiddleware(ager)}, {name: "eino reduction", mw: red}}
	for _, r := range runs {
		r.msgs = []*schema.Message{schema.UserMessage("Read net/http.")}
	}
	for i := 0; i <= len(outputs); i++ {
		for _, r := range runs {
			if i > 0 {
				r.msgs = append(r.msgs, toolTurn(fmt.Sprintf("call_%02d", i), "Read", outputs[i-1])...)
			}
			_, state, err := r.mw.BeforeModelRewriteState(ctx, &adk.ChatModelAgentState{Messages: r.msgs}, &adk.ModelContext{})
			if err != nil {
				t.Fatalf("%s, turn %d: %v", r.name, i, err)
			}
			r.msgs = state.Messages
			n, _ := countMsgs(ctx, r.msgs, nil)
			r.tokens += int(n)
			b, _ := json.Marshal(r.msgs)
			if r.prev != "" && !strings.HasPrefix(string(b), strings.TrimSuffix(r.prev, "]")) {
				r.breaks++
			}
			r.prev = string(b)
		}
	}
	// What each cleared, and whether it reads back: toolcap's stubs through
	// the read tool, Eino's through the files its backend holds.
	readBack := func(m *schema.Message, original string) (cleared, back bool) {
		switch {
		case strings.HasPrefix(m.Content, "[tool result cleared: "):
			args := m.Content[strings.Index(m.Content, "{") : len(m.Content)-1]
			var got strings.Builder
			for range 1000 {
				page, err := k.Read(ctx, json.RawMessage(args), shape.Policy{MaxBytes: 16384})
				if err != nil {
					return true, false
				}
				ms := cut.FindMarkers(page)
				if len(ms) == 0 || ms[len(ms)-1].Rest == nil || ms[len(ms)-1].End != len(page) {
					got.WriteString(page)
					break
				}
				got.WriteString(page[:ms[len(ms)-1].Start])
				args = ms[len(ms)-1].Rest.Args
			}
			// A capped result's stub reads the tool's whole output, which
			// begins with what the capped result showed.
			shown := original
			if ms := cut.FindMarkers(original); len(ms) > 0 {
				shown = original[:ms[0].Start]
			}
			return true, strings.HasPrefix(got.String(), shown)
		case strings.Contains(m.Content, "<persisted-output>") || m.Content == "[Old tool result content cleared]":
			for _, c := range backend.files {
				if c == original {
					return true, true
				}
			}
			return true, false
		}
		return false, false
	}
	for _, r := range runs {
		cleared, back := 0, 0
		i := 0
		for _, m := range r.msgs {
			if m.Role != schema.Tool {
				continue
			}
			c, b := readBack(m, outputs[i])
			i++
			if c {
				cleared++
			}
			if b {
				back++
			}
		}
		t.Logf("%-16s input tokens %8d over %d calls, prefix breaks %d, results cleared %d, read back %d", r.name, r.tokens, len(outputs)+1, r.breaks, cleared, back)
		if r.name == "toolcap history" && (cleared == 0 || back != cleared) {
			t.Errorf("toolcap: %d results cleared, %d read back; want every one", cleared, back)
		}
	}
}
