package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/worker"
)

// The incident toolcap exists for: a Glob over a whole project returns about
// 125 KB. Through the worker, the history gets 16 KiB, marker included.
func ExampleWorker_ExecuteTools() {
	glob := worker.Func("Glob", func(ctx context.Context, args json.RawMessage) (worker.ToolOutput, error) {
		paths := strings.Repeat("internal/service/handler_test.go\n", 3800) // 125,400 bytes
		return worker.ToolOutput{Summary: "3800 files", Content: &paths}, nil
	})
	w, err := worker.New([]worker.Tool{glob})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := w.ExecuteTools(context.Background(), []chain.Call{
		{ID: "toolu_01", Tool: "Glob", Args: json.RawMessage(`{"pattern":"*"}`)},
	})
	r := res[0]
	fmt.Println(r.Summary, len(*r.Content), r.IsError())
	fmt.Println((*r.Content)[len(*r.Content)-52:])
	// Output:
	// 3800 files 16384 false
	// [truncated: 109069 bytes dropped, refine your query]
}

// User middleware compose like an onion, and all of them run after the cap:
// the first listed sees the call first and the result last, and each sees
// content already within the limit.
func ExampleWithMiddleware() {
	trace := func(name string) chain.Middleware {
		return func(next chain.Handler) chain.Handler {
			return func(ctx context.Context, call chain.Call) chain.Result {
				fmt.Println(name, "before")
				res := next(ctx, call)
				fmt.Println(name, "after: sees", len(*res.Content), "bytes")
				return res
			}
		}
	}
	read := worker.Func("Read", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		body := strings.Repeat("x", 50_000)
		return worker.ToolOutput{Content: &body}, nil
	})
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"Read": {MaxBytes: 4096}}}}
	policies, err := m.Policies()
	if err != nil {
		fmt.Println(err)
		return
	}
	w, err := worker.New([]worker.Tool{read},
		worker.WithPolicies(policies),
		worker.WithMiddleware(trace("outer"), trace("inner")),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: "Read"}})
	// Output:
	// outer before
	// inner before
	// inner after: sees 4096 bytes
	// outer after: sees 4096 bytes
}

// Every call gets exactly one result, in order, whatever its tool did.
func ExampleWorker_ExecuteTools_failures() {
	fail := worker.Func("Fail", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		return worker.ToolOutput{}, fmt.Errorf("permission denied")
	})
	boom := worker.Func("Boom", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		panic("nil map")
	})
	w, _ := worker.New([]worker.Tool{fail, boom})
	calls := []chain.Call{{ID: "1", Tool: "Fail"}, {ID: "2", Tool: "Boom"}, {ID: "3", Tool: "Bom"}}
	for i, r := range w.ExecuteTools(context.Background(), calls) {
		fmt.Println(calls[i].ID, r.IsError(), *r.Content)
	}
	// Output:
	// 1 true permission denied
	// 2 true tool "Boom" panicked: nil map
	// 3 true unknown tool "Bom"; did you mean "Boom"?
}

// With a store, what a cut drops is kept: the marker names the call of the
// read tool that reads on, and the worker answers that call itself.
func ExampleWithRest() {
	glob := worker.Func("Glob", func(ctx context.Context, args json.RawMessage) (worker.ToolOutput, error) {
		paths := strings.Repeat("internal/service/handler_test.go\n", 3800) // 125,400 bytes
		return worker.ToolOutput{Content: &paths}, nil
	})
	w, err := worker.New([]worker.Tool{glob}, worker.WithRest(rest.NewMemory(rest.Config{})))
	if err != nil {
		fmt.Println(err)
		return
	}
	// Refs are bound to the scope of the context: one per conversation.
	ctx := rest.WithScope(context.Background(), "conversation-42")
	r := w.ExecuteTools(ctx, []chain.Call{{ID: "toolu_01", Tool: "Glob"}})[0]
	t, _ := r.Truncation()
	content := strings.ReplaceAll(*r.Content, t.Ref, "REF")
	fmt.Println(len(*r.Content), content[strings.LastIndexByte(content, '\n')+1:])

	// The model calls the read tool with the marker's arguments.
	def, _ := w.ReadTool()
	args := fmt.Sprintf(`{"ref":%q,"offset":%d}`, t.Ref, t.Resume)
	page := w.ExecuteTools(ctx, []chain.Call{{ID: "toolu_02", Tool: def.Name, Args: json.RawMessage(args)}})[0]
	fmt.Printf("%s: %d bytes from %q\n", def.Name, len(*page.Content), (*page.Content)[:20])
	// Output:
	// 16384 [truncated: 109152 bytes dropped, refine your query or read the rest: toolcap_read {"ref":"REF","offset":16248}]
	// toolcap_read: 16384 bytes from "vice/handler_test.go"
}
