package history_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/toolcap/toolcap/history"
	"github.com/toolcap/toolcap/rest"
)

// An agent ages its history before each request: past the budget, the
// oldest tool results become stubs that name the read of the original,
// and the agent keeps the history as the pass leaves it.
func ExampleAger_Age() {
	a, _ := history.New(rest.NewMemory(rest.Config{}), history.Config{MaxTokens: 4000, KeepRecent: 1, ClearAtLeast: 1000})
	ctx := rest.WithScope(context.Background(), "conversation-42")

	results := []history.Result{
		{ID: "toolu_01", Tool: "Glob", Text: strings.Repeat("internal/a/file.go\n", 500)},
		{ID: "toolu_02", Tool: "Read", Text: strings.Repeat("func f() {}\n", 600)},
		{ID: "toolu_03", Tool: "Grep", Text: strings.Repeat("x.go:1:TODO\n", 300)},
	}
	p, _ := a.Age(ctx, results)
	for _, g := range p.Aged {
		results[g.Index].Text = g.Stub
	}
	ref := regexp.MustCompile(`"ref":"[a-z2-7]+"`)
	for _, r := range results {
		first, _, _ := strings.Cut(ref.ReplaceAllString(r.Text, `"ref":"REF"`), "\n")
		fmt.Printf("%s %s\n", r.ID, first)
	}
	fmt.Printf("aged %d, tokens %d -> %d\n", p.Freed.Results, p.Tokens, p.After)
	// Output:
	// toolu_01 [tool result cleared: 9500 bytes; read it again: toolcap_read {"ref":"REF","offset":0}]
	// toolu_02 [tool result cleared: 7200 bytes; read it again: toolcap_read {"ref":"REF","offset":0}]
	// toolu_03 x.go:1:TODO
	// aged 2, tokens 10150 -> 1910
}
