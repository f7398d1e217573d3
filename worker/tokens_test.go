package worker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/tokens"
	"github.com/toolcap/toolcap/worker"
)

// fieldTokenizer counts a token per space-separated field and per space,
// under the name it is given: a stand-in for an exact tokenizer whose
// counts a test can work out by hand.
type fieldTokenizer struct{ name string }

func (f fieldTokenizer) Name() string { return f.name }

func (fieldTokenizer) Count(s string) int { return len(strings.Fields(s)) + strings.Count(s, " ") }

func loadManifest(t *testing.T, text string) *manifest.WorkerManifest {
	t.Helper()
	m, err := manifest.Load(context.Background(), manifest.Bytes("test.toml", []byte(text)))
	if err != nil {
		t.Fatalf("Load() error: %v", err)
	}
	return m
}

func TestNewTokenizer(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		given    tokens.Tokenizer
		want     string // the tokenizer's name, or the error
	}{
		{"no token limit, none needed", "[worker.tool_output]\ndefault_max_bytes = 4096\n", nil, "<nil>"},
		{"calibrated by default", "[worker.tool_output]\ndefault_max_tokens = 1000\n", nil, "calibrated"},
		{"the given one", "[worker.tool_output]\ndefault_max_tokens = 1000\ntokenizer = \"o200k_base\"\n",
			fieldTokenizer{"o200k_base"}, "o200k_base"},
		{"exact, not given", "[worker.tool_output]\ndefault_max_tokens = 1000\ntokenizer = \"o200k_base\"\n", nil,
			`worker: worker.tool_output.tokenizer: tokenizer "o200k_base" is not built into the core module: tiktoken.New("o200k_base") from module github.com/toolcap/toolcap/tiktoken counts with it; pass it with worker.WithTokenizer`},
		{"another one given", "[worker.tool_output]\ndefault_max_tokens = 1000\ntokenizer = \"cl100k_base\"\n",
			fieldTokenizer{"o200k_base"},
			`worker: the manifest counts tokens with "cl100k_base" (worker.tool_output.tokenizer), the tokenizer given with WithTokenizer is "o200k_base"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := worker.New(nil, worker.WithPolicies(policytest.Of(t, loadManifest(t, tt.manifest))), worker.WithTokenizer(tt.given))
			got := "<nil>"
			switch {
			case err != nil:
				got = err.Error()
			case w.Tokenizer() != nil:
				got = w.Tokenizer().Name()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestExecuteToolsTokenLimit: a result within its byte limit and over its
// token limit is cut by tokens, its marker counting tokens.
func TestExecuteToolsTokenLimit(t *testing.T) {
	text := strings.Repeat("word ", 1000) // 5,000 bytes, 2,000 tokens
	m := loadManifest(t, `[worker.tool_output]
default_max_bytes = 16384
tokenizer = "o200k_base"
[worker.tool_output.per_tool]
Grep = { max_tokens = 300 }
`)
	tz := fieldTokenizer{"o200k_base"}
	w := newWorker(t, []worker.Tool{textTool("Grep", text), textTool("Read", text)}, worker.WithPolicies(policytest.Of(t, m)), worker.WithTokenizer(tz))
	res := w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: "Grep"}, {ID: "2", Tool: "Read"}})
	want, st := cut.CutTokens(text, 16384, 300, tz, cut.Spec{})
	if diff := cmp.Diff(want, *res[0].Content); diff != "" {
		t.Errorf("Grep (-want +got):\n%s", diff)
	}
	tr, _ := res[0].Truncation()
	wantTr := chain.Truncation{Limit: 16384, OriginalBytes: 5000, KeptBytes: st.Kept, DroppedBytes: st.Dropped,
		LimitTokens: 300, Unit: "tokens", OriginalTokens: 2000, KeptTokens: st.KeptTokens, DroppedTokens: st.DroppedTokens}
	if diff := cmp.Diff(wantTr, tr); diff != "" {
		t.Errorf("Grep figures (-want +got):\n%s", diff)
	}
	if !strings.HasSuffix(*res[0].Content, cut.TokenMarker(st.DroppedTokens)) || tz.Count(*res[0].Content) > 300 {
		t.Errorf("Grep: %d tokens, ends %q", tz.Count(*res[0].Content), (*res[0].Content)[len(*res[0].Content)-60:])
	}
	if diff := cmp.Diff(text, *res[1].Content); diff != "" {
		t.Errorf("Read has no token limit (-want +got):\n%s", diff)
	}
	if got := []int{w.TokenLimit("Grep"), w.TokenLimit("Read")}; !cmp.Equal(got, []int{300, 0}) {
		t.Errorf("TokenLimit = %v, want [300 0]", got)
	}
}

// TestExecuteToolsBatchTokens: batch_max_tokens is shared by water-filling
// in tokens, as batch_max_bytes is in bytes, whatever order the calls end in.
func TestExecuteToolsBatchTokens(t *testing.T) {
	tz := fieldTokenizer{"o200k_base"}
	words := func(n int) string { return strings.Repeat("w ", n) } // 2n bytes, 2n tokens
	contents := []string{words(100), words(2000), words(150), words(3000)}
	var tools []worker.Tool
	var calls []chain.Call
	for i, c := range contents {
		name := fmt.Sprintf("t%d", i)
		tools = append(tools, textTool(name, c))
		calls = append(calls, chain.Call{ID: fmt.Sprint(i), Tool: name})
	}
	m := loadManifest(t, "[worker.tool_output]\ndefault_max_bytes = 65536\nbatch_max_tokens = 4000\ntokenizer = \"o200k_base\"\n")
	w := newWorker(t, tools, worker.WithPolicies(policytest.Of(t, m)), worker.WithTokenizer(tz))
	// Demands 200, 4000, 300 and 6000 tokens: the small two whole, the
	// others 1750 each.
	wantMost := []int{200, 1750, 300, 1750}
	var first []string
	for run := range 20 {
		res := w.ExecuteTools(context.Background(), calls)
		var got []string
		for i, r := range res {
			n := tz.Count(*r.Content)
			if n > wantMost[i] || (i%2 == 1 && n < wantMost[i]*97/100) {
				t.Fatalf("run %d, call %d: %d tokens, want %d (within 3%%)", run, i, n, wantMost[i])
			}
			if i%2 == 1 {
				tr, ok := r.Truncation()
				if !ok || !tr.Batch || tr.LimitTokens != 1750 || tr.Unit != "tokens" {
					t.Fatalf("run %d, call %d: figures %+v, %v", run, i, tr, ok)
				}
			}
			got = append(got, *r.Content)
		}
		if first == nil {
			first = got
		} else if diff := cmp.Diff(first, got); diff != "" {
			t.Fatalf("run %d differs from run 0 (-want +got):\n%s", run, diff)
		}
	}
}

// TestWorkerObserve: a calibrated worker learns from what the provider
// billed, and cuts to what it learned.
func TestWorkerObserve(t *testing.T) {
	text := strings.Repeat("x", 20000)
	m := loadManifest(t, "[worker.tool_output]\ndefault_max_bytes = 65536\ndefault_max_tokens = 1000\n")
	w := newWorker(t, []worker.Tool{textTool("Read", text)}, worker.WithPolicies(policytest.Of(t, m)))
	before := len(*w.ExecuteTools(context.Background(), []chain.Call{{Tool: "Read"}})[0].Content)
	for range 10 {
		w.Observe(80000, 10000) // 8 bytes a token
	}
	after := len(*w.ExecuteTools(context.Background(), []chain.Call{{Tool: "Read"}})[0].Content)
	if after <= before {
		t.Errorf("after observing 8 bytes a token the cut keeps %d bytes, before %d", after, before)
	}
	if n := w.Tokenizer().Count(*w.ExecuteTools(context.Background(), []chain.Call{{Tool: "Read"}})[0].Content); n > 1000 {
		t.Errorf("%d estimated tokens, over the limit of 1000", n)
	}
}

// upper rewrites "word" as "WORD", keeping every length: a user middleware
// that changes a result.
func upper(next chain.Handler) chain.Handler {
	return func(ctx context.Context, call chain.Call) chain.Result {
		res := next(ctx, call)
		s := strings.ReplaceAll(*res.Content, "word", "WORD")
		res.Content = &s
		return res
	}
}

// TestExecuteToolsBatchTokensAfterMiddleware: a result a user middleware
// changed, cut again under a token limit, keeps the cap's one marker, its
// count all the bytes of the tool's output the model does not see.
func TestExecuteToolsBatchTokensAfterMiddleware(t *testing.T) {
	text := strings.Repeat("word ", 26000) // 130,000 bytes
	for _, extra := range []string{"default_max_tokens = 3000\n", "batch_max_tokens = 1200\n"} {
		t.Run(strings.Fields(extra)[0], func(t *testing.T) {
			m := loadManifest(t, "[worker.tool_output]\ndefault_max_bytes = 4096\nbatch_max_bytes = 6000\ntokenizer = \"o200k_base\"\n"+extra)
			w := newWorker(t, []worker.Tool{textTool("A", text), textTool("B", text)},
				worker.WithPolicies(policytest.Of(t, m)), worker.WithTokenizer(fieldTokenizer{"o200k_base"}), worker.WithMiddleware(upper))
			for i, r := range w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: "A"}, {ID: "2", Tool: "B"}}) {
				head, n, ok := cut.SplitMarker(*r.Content)
				if !ok || strings.Count(*r.Content, "[truncated: ") != 1 {
					t.Fatalf("result %d: want one byte marker; ends %q", i, (*r.Content)[max(0, len(*r.Content)-80):])
				}
				if want := len(text) - len(head); n != want {
					t.Errorf("result %d: marker counts %d bytes, want %d (all the model does not see)", i, n, want)
				}
				if len(*r.Content) > 3000 {
					t.Errorf("result %d: %d bytes, over its share", i, len(*r.Content))
				}
			}
		})
	}
}

// TestExecuteToolsBatchTokensTinyShares: a token budget smaller than the
// number of results still holds: those whose share is 0 are cut to nothing.
func TestExecuteToolsBatchTokensTinyShares(t *testing.T) {
	tz := fieldTokenizer{"o200k_base"}
	var tools []worker.Tool
	var calls []chain.Call
	for i := range 40 {
		name := fmt.Sprintf("t%d", i)
		tools = append(tools, textTool(name, strings.Repeat("w ", 500)))
		calls = append(calls, chain.Call{ID: name, Tool: name})
	}
	m := loadManifest(t, "[worker.tool_output]\nbatch_max_tokens = 32\ntokenizer = \"o200k_base\"\n")
	w := newWorker(t, tools, worker.WithPolicies(policytest.Of(t, m)), worker.WithTokenizer(tz))
	total := 0
	for i, r := range w.ExecuteTools(context.Background(), calls) {
		n := tz.Count(*r.Content)
		if n > 1 || (i >= 32 && *r.Content != "") {
			t.Errorf("result %d: %d tokens (%q), want at most its share of 32 tokens among 40 (1, then 0)", i, n, *r.Content)
		}
		total += n
	}
	if total > 32 {
		t.Errorf("%d tokens in all, over the budget of 32", total)
	}
}

// TestExecuteToolsBatchBytesAfterTokenCut: a result its token limit cut
// demands only what it kept of the byte budget, and leaves the rest to the
// others.
func TestExecuteToolsBatchBytesAfterTokenCut(t *testing.T) {
	text := strings.Repeat("word ", 15400) // 77,000 bytes
	m := loadManifest(t, `[worker.tool_output]
default_max_bytes = 65536
batch_max_bytes = 20000
tokenizer = "o200k_base"
[worker.tool_output.per_tool]
A = { max_tokens = 500 }
`)
	w := newWorker(t, []worker.Tool{textTool("A", text), textTool("B", text)},
		worker.WithPolicies(policytest.Of(t, m)), worker.WithTokenizer(fieldTokenizer{"o200k_base"}))
	res := w.ExecuteTools(context.Background(), []chain.Call{{ID: "1", Tool: "A"}, {ID: "2", Tool: "B"}})
	a, b := len(*res[0].Content), len(*res[1].Content)
	if a > 1300 || b != 20000-a {
		t.Errorf("A keeps %d bytes, B %d: want B to get the %d bytes A leaves of 20000", a, b, 20000-a)
	}
}
