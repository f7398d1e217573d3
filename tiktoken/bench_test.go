package tiktoken_test

import (
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/tiktoken"
)

// BenchmarkCutTokens cuts a build log to 4,096 o200k_base tokens with the
// head strategy, bytes never cutting: 100 KB and 125 KiB (just under
// cut.TokenWindow(4096) = 128 KiB), counted whole, and 10 MiB and 100 MiB,
// over it and counted only where the cut falls. The window's size class is
// the 100 MiB case: a cut just under the window should cost within 2x of
// it (issue 23 item 5).
func BenchmarkCutTokens(b *testing.B) {
	const maxBytes, maxTokens = 1 << 30, 4096
	tok := mustNew(b, tiktoken.O200kBase)
	log := readSample(b, "build_log.txt")
	for _, in := range []struct {
		name    string
		content string
	}{
		{"input=100KB", log},
		{"input=125KiB", repeatTo(log, 125<<10)[:125<<10]},
		{"input=10MiB", repeatTo(log, 10<<20)[:10<<20]},
		{"input=100MiB", repeatTo(log, 100<<20)[:100<<20]},
	} {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in.content)))
			for b.Loop() {
				out, st := cut.CutTokens(in.content, maxBytes, maxTokens, tok, cut.Spec{Keep: cut.KeepHead})
				if !st.Changed() || len(out) == 0 {
					b.Fatal("not cut")
				}
			}
		})
	}
}

// BenchmarkCount counts 100 KB in o200k_base: a build log, and blank
// lines of spaces and tabs, the input the library's split pattern takes
// quadratic time on when counted in one piece (Count segments it).
func BenchmarkCount(b *testing.B) {
	tok := mustNew(b, tiktoken.O200kBase)
	log := readSample(b, "build_log.txt")
	for _, in := range []struct{ name, text string }{
		{"log-100KB", log},
		{"blank-lines-100KB", strings.Repeat(" \t\n", 100_000/3)},
	} {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in.text)))
			for b.Loop() {
				if tok.Count(in.text) == 0 {
					b.Fatal("no tokens")
				}
			}
		})
	}
}
