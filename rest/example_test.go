package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/rest"
	"github.com/toolcap/toolcap/worker"
)

// A worker given a store keeps what a cut drops, and answers the read its
// marker names from the same store, page by page.
func ExampleNewMemory() {
	out := strings.Repeat("line of a long listing\n", 40) // 920 bytes
	list := worker.Func("List", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		return worker.ToolOutput{Content: &out}, nil
	})
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{DefaultMaxBytes: 400}}
	policies, err := m.Policies()
	if err != nil {
		fmt.Println(err)
		return
	}
	w, err := worker.New([]worker.Tool{list}, worker.WithPolicies(policies), worker.WithRest(rest.NewMemory(rest.Config{})))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := rest.WithScope(context.Background(), "conversation-1")

	call := chain.Call{ID: "1", Tool: "List"}
	for page := 1; ; page++ {
		text := *w.ExecuteTools(ctx, []chain.Call{call})[0].Content
		_, next, cut := strings.Cut(text, "read the rest: ")
		if !cut {
			fmt.Printf("page %d: %d bytes, the end\n", page, len(text))
			break
		}
		tool, args, _ := strings.Cut(strings.TrimSuffix(next, "]"), " ")
		fmt.Printf("page %d: %d bytes, then %s %s\n", page, len(text), tool, args[strings.Index(args, `"offset"`):])
		call = chain.Call{ID: fmt.Sprint(page + 1), Tool: tool, Args: json.RawMessage(args)}
	}
	// Output:
	// page 1: 400 bytes, then toolcap_read "offset":269}
	// page 2: 400 bytes, then toolcap_read "offset":538}
	// page 3: 382 bytes, the end
}
