package tiktoken_test

import (
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/tiktoken"
)

// A tokenizer counts exactly; cut.CutTokens cuts with it to a token limit,
// and the marker says how many tokens it dropped.
func ExampleNew() {
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		panic(err)
	}
	fmt.Println(tok.Name(), tok.Count("hello world"))

	var lines []string
	for i := range 30 {
		lines = append(lines, fmt.Sprintf("--- PASS: TestCut/case_%02d (0.01s)", i))
	}
	log := strings.Join(lines, "\n") // 1,019 bytes, within cut.TokenWindow(60): counted whole
	out, st := cut.CutTokens(log, 1<<20, 60, tok, cut.Spec{Keep: cut.KeepHeadTail})
	fmt.Println(tok.Count(log), "tokens cut to", tok.Count(out), "in", st.Unit)
	fmt.Println(out)
	// Output:
	// o200k_base 2
	// 450 tokens cut to 60 in tokens
	// --- PASS: TestCut/case_00 (0.01s)
	// --- PASS: TestCut/
	// [truncated: 403 tokens dropped, refine your query]
	// t/case_28 (0.01s)
	// --- PASS: TestCut/case_29 (0.01s)
}

// An unknown encoding is an error that names the known ones.
func ExampleNew_unknown() {
	_, err := tiktoken.New("o200k")
	fmt.Println(err)
	// Output:
	// tiktoken: unknown encoding "o200k" (want "o200k_base" or "cl100k_base")
}
