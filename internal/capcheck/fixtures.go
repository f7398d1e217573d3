package capcheck

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// Words counts a token per run of ASCII letters and one per other byte: at
// most a token per byte, as a [tokens.Counter] must, and cheap enough for
// every test's token limit.
type Words struct{}

// Count implements [tokens.Counter].
func (Words) Count(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); i++ {
		letter := s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z'
		if !letter || !in {
			n++
		}
		in = letter
	}
	return n
}

// HeadTail is the policy of a manifest entry { max_bytes = 4096,
// max_tokens = 600, keep = "head_tail", keep_lines = ['FAIL'] }, counted by
// [Words]: the policy the front ends' tests check every setting with.
var HeadTail = shape.Policy{MaxBytes: 4096, MaxTokens: 600, Counter: Words{},
	Spec: cut.Spec{Keep: cut.KeepHeadTail, KeepLines: []*regexp.Regexp{regexp.MustCompile(`FAIL`)}}}

// TestLog returns a test run's output of n cases, a failure before case
// failAt.
func TestLog(n, failAt int) string {
	var b strings.Builder
	for i := range n {
		if i == failAt {
			b.WriteString("--- FAIL: TestParse (0.01s)\n")
		}
		fmt.Fprintf(&b, "=== RUN   TestCase%d\n--- PASS: TestCase%d (0.00s)\n", i, i)
	}
	return b.String()
}
