package tiktoken_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolcap/toolcap/tiktoken"
)

func TestNew(t *testing.T) {
	for _, name := range []string{tiktoken.O200kBase, tiktoken.Cl100kBase} {
		tok, err := tiktoken.New(name)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		if got := tok.Name(); got != name {
			t.Errorf("New(%q).Name() = %q", name, got)
		}
	}
}

func TestNewUnknown(t *testing.T) {
	for _, name := range []string{"", "calibrated", "o200k", "p50k_base", "O200K_BASE"} {
		tok, err := tiktoken.New(name)
		if tok != nil || err == nil {
			t.Fatalf("New(%q) = %v, %v; want an error", name, tok, err)
		}
		want := fmt.Sprintf("tiktoken: unknown encoding %q (want \"o200k_base\" or \"cl100k_base\")", name)
		if diff := cmp.Diff(want, err.Error()); diff != "" {
			t.Errorf("New(%q) error (-want +got):\n%s", name, diff)
		}
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		enc, text string
		want      int
	}{
		{tiktoken.O200kBase, "", 0},
		{tiktoken.Cl100kBase, "", 0},
		{tiktoken.O200kBase, "hello world", 2},
		{tiktoken.Cl100kBase, "hello world", 2},
		// tiktoken's README: [83, 1609, 5963, 374, 2294, 0].
		{tiktoken.Cl100kBase, "tiktoken is great!", 6},
		{tiktoken.O200kBase, "tiktoken is great!", 6},
		// Special tokens count as the text they are written with.
		{tiktoken.O200kBase, "<|endoftext|>", 7},
		{tiktoken.Cl100kBase, "<|endoftext|>", 7},
		{tiktoken.O200kBase, "こんにちは世界", 2},
		{tiktoken.Cl100kBase, "こんにちは世界", 4},
		// Invalid UTF-8 counts as U+FFFD, never more than a token a byte.
		{tiktoken.O200kBase, "\xff", 1},
		{tiktoken.Cl100kBase, "\xff", 1},
		{tiktoken.O200kBase, "\xe3\x81", 1},
	}
	for _, tt := range tests {
		tok := mustNew(t, tt.enc)
		if got := tok.Count(tt.text); got != tt.want {
			t.Errorf("%s Count(%q) = %d, want %d", tt.enc, tt.text, got, tt.want)
		}
	}
}

// TestCountAtMostOnePerByte checks the cut.Counter contract on short texts,
// where a token a byte is closest.
func TestCountAtMostOnePerByte(t *testing.T) {
	texts := []string{"a", " ", "\n", "7", "12345678", "日", "\xff\xfe", "a\xffb\xfe", "\x00\x01\x02", "🙂", "\u0301\u0301"}
	for _, enc := range []string{tiktoken.O200kBase, tiktoken.Cl100kBase} {
		tok := mustNew(t, enc)
		for _, s := range texts {
			if n := tok.Count(s); n < 1 || n > len(s) {
				t.Errorf("%s Count(%q) = %d, want 1..%d", enc, s, n, len(s))
			}
		}
	}
}

// TestCountConcurrent counts from many goroutines at once with one
// tokenizer, as workers do; run it with -race.
func TestCountConcurrent(t *testing.T) {
	tok := mustNew(t, tiktoken.O200kBase)
	var texts []string
	for _, s := range samples {
		texts = append(texts, chunkOf(readSample(t, s.file), 3, 4<<10))
	}
	texts = append(texts, strings.Repeat("x", 100), "")
	want := make([]int, len(texts))
	for i, s := range texts {
		want[i] = tok.Count(s)
	}
	got := make([][]int, 8)
	var wg sync.WaitGroup
	for g := range got {
		wg.Go(func() {
			// Another tokenizer of the same encoding shares the codec.
			tk := tok
			if g%2 == 1 {
				tk = mustNew(t, tiktoken.O200kBase)
			}
			got[g] = make([]int, len(texts))
			for k := range texts {
				i := (k + g) % len(texts) // each goroutine in its own order
				got[g][i] = tk.Count(texts[i])
			}
		})
	}
	wg.Wait()
	for g := range got {
		if diff := cmp.Diff(want, got[g]); diff != "" {
			t.Errorf("goroutine %d counts (-want +got):\n%s", g, diff)
		}
	}
}
