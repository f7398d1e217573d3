package tiktoken_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/tiktoken"
	"github.com/toolcap/toolcap/tokens"
)

// TestCalibratedWithinExact checks the estimate of package tokens against
// exact o200k_base counts: a tokens.Calibrated that observed ten requests
// (ten chunks of 2 KB to 40 KB, billed their exact count) must cut every
// sample so that its exact count is within the limit, for each limit and
// strategy. The observations come from the sample cut, or from all four
// samples mixed.
func TestCalibratedWithinExact(t *testing.T) {
	exact := mustNew(t, tiktoken.O200kBase)
	texts := map[string]string{}
	for _, s := range samples {
		texts[s.name] = readSample(t, s.file)
	}
	// The mixed observations: chunk i from sample i%4.
	var mixed []string
	for i, size := range chunkSizes {
		mixed = append(mixed, chunkOf(texts[samples[i%len(samples)].name], i, size))
	}
	observed := []struct {
		name   string
		chunks func(s sample) []string
	}{
		{"same", func(s sample) []string { return chunks(texts[s.name]) }},
		{"mixed", func(sample) []string { return mixed }},
	}
	for _, obs := range observed {
		for _, s := range samples {
			t.Run(obs.name+"/"+s.name, func(t *testing.T) {
				t.Parallel()
				c := tokens.NewCalibrated()
				for _, ch := range obs.chunks(s) {
					c.Observe(len(ch), exact.Count(ch))
				}
				keeps := []cut.Keep{cut.KeepHead, cut.KeepHeadTail}
				if s.json {
					keeps = append(keeps, cut.KeepJSON)
				}
				worst, worstAt := 0.0, ""
				for _, limit := range []int{500, 1000, 4000} {
					for _, keep := range keeps {
						out, st := cut.CutTokens(texts[s.name], 1<<20, limit, c, cut.Spec{Keep: keep})
						if !st.Changed() {
							t.Fatalf("limit %d %s: the sample was not cut", limit, keep)
						}
						n := exact.Count(out)
						if fill := float64(n) / float64(limit); fill > worst {
							worst, worstAt = fill, fmt.Sprintf("limit %d %s: %d exact tokens", limit, keep, n)
						}
						if n > limit {
							t.Errorf("limit %d %s: output of %d bytes counts %d exact tokens (%.3f bytes a token), estimated %d at %.3f bytes a token",
								limit, keep, len(out), n, float64(len(out))/float64(n), c.Count(out), c.BytesPerToken())
						}
					}
				}
				t.Logf("at %.3f bytes a token, the fullest cut fills %.1f%% of its limit (%s)", c.BytesPerToken(), 100*worst, worstAt)
			})
		}
	}
}

// TestBytesPerToken measures the bytes a token of each sample in both
// encodings, for the documentation, and reports whether the estimate's
// default, tokens.DefaultBytesPerToken, under-counts a sample (a sample
// denser than the default). Run it with -v to see the table.
func TestBytesPerToken(t *testing.T) {
	o200k, cl100k := mustNew(t, tiktoken.O200kBase), mustNew(t, tiktoken.Cl100kBase)
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s %8s %10s %10s %12s %12s  %s\n", "sample", "bytes", "o200k", "cl100k", "o200k B/tok", "cl100k B/tok", "default 2.0")
	for _, s := range samples {
		text := readSample(t, s.file)
		no, nc := o200k.Count(text), cl100k.Count(text)
		ro, rc := float64(len(text))/float64(no), float64(len(text))/float64(nc)
		verdict := "over-counts (safe)"
		if est := tokens.NewCalibrated().Count(text); est < max(no, nc) {
			verdict = fmt.Sprintf("UNDER-counts: estimates %d", est)
		}
		fmt.Fprintf(&b, "%-6s %8d %10d %10d %12.3f %12.3f  %s\n", s.name, len(text), no, nc, ro, rc, verdict)
		// The densest tenth of the sample, what a small cut may keep.
		minO := 1e9
		for i := range 10 {
			ch := chunkOf(text, i, len(text)/10)
			minO = min(minO, float64(len(ch))/float64(o200k.Count(ch)))
		}
		fmt.Fprintf(&b, "%-6s densest tenth in o200k: %.3f bytes a token\n", "", minO)
	}
	t.Logf("bytes a token:\n%s", b.String())
}
