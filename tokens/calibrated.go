package tokens

import (
	"math"
	"sync"
)

const (
	// defaultBytesPerToken is what a [Calibrated] assumes before its first
	// observation: 2 bytes a token. It is denser than every sample measured
	// in o200k_base and cl100k_base (Go source 3.3 bytes a token, a build
	// log 2.6, pretty-printed JSON 3.4, Japanese prose 3.7 in o200k_base
	// and 2.65 in cl100k_base; see the tiktoken module's tests), so that an
	// uncalibrated estimate over-counts, keeping less than the limit
	// allows, rather than under-counts.
	defaultBytesPerToken = 2.0

	// calibratedMargin is the share of the densest recent observation a
	// [Calibrated] counts with: a tool's output, or the part of it a cut
	// keeps, can be denser than a whole request the provider billed, so
	// the estimate takes 10% off the ratio it observed.
	calibratedMargin = 0.9

	// calibratedWindow is how many of the latest observations a
	// [Calibrated] keeps; the densest of them sets its ratio, so a single
	// dense request tightens the estimate at once, and it relaxes only
	// after calibratedWindow lighter ones.
	calibratedWindow = 32

	// minBytesPerToken and maxBytesPerToken bound a learned ratio: a
	// [Counter] counts at most a token per byte, and no tokenizer in use
	// packs 16 bytes of text in a token on average.
	minBytesPerToken = 1.0
	maxBytesPerToken = 16.0
)

// Calibrated estimates token counts from the bytes of a text, at a ratio of
// bytes per token it learns from the model's provider: Count(text) is
// ceil(len(text) / ratio). It counts fast (a division) and needs no
// vocabulary, so it is the core's tokenizer, "calibrated" in a manifest.
//
// It is conservative by design. Before its first observation the ratio is
// [defaultBytesPerToken]. Each observation (a request of b bytes billed t
// input tokens; see [Calibrated.Observe]) gives a ratio b/t, and the
// estimate counts with [calibratedMargin] times the smallest ratio of the
// last [calibratedWindow] observations, within [1, 16] bytes a token: the
// densest text the provider billed recently, less a margin. So once it has
// seen what a kind of text costs, it does not under-count that text.
//
// The zero Calibrated is ready to use; it is safe for concurrent use and
// must not be copied after first use. An Observe while a cut is counting
// changes the ratio between two of its counts: the cut still checks its
// output against the limit with its last count, but the figures of that
// one cut may mix the two ratios.
type Calibrated struct {
	mu     sync.Mutex
	ratios [calibratedWindow]float64 // the latest observations, a ring
	n      int                       // observations taken, in all
	ratio  float64                   // bytes a token counted with; 0: the default
}

// NewCalibrated returns a Calibrated that has observed nothing yet.
func NewCalibrated() *Calibrated { return &Calibrated{} }

// Name returns "calibrated".
func (*Calibrated) Name() string { return CalibratedName }

// Count returns the estimated tokens of text: its length in bytes divided
// by the ratio, rounded up. It is at most len(text).
func (c *Calibrated) Count(text string) int {
	n := len(text)
	if n == 0 {
		return 0
	}
	r := c.BytesPerToken()
	t := int(math.Ceil(float64(n) / r))
	return min(max(t, 1), n)
}

// BytesPerToken returns the ratio Count divides by.
func (c *Calibrated) BytesPerToken() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ratio == 0 {
		return defaultBytesPerToken
	}
	return c.ratio
}

// Observe learns from one request to the model: its text was bytes bytes
// long (what was sent: the system prompt, the history, the tool results)
// and the provider billed tokens input tokens for it (the usage it
// returns, such as Anthropic's usage.input_tokens or OpenAI's
// usage.prompt_tokens). An observation with bytes or tokens not positive
// is ignored.
func (c *Calibrated) Observe(bytes, tokens int) {
	if bytes <= 0 || tokens <= 0 {
		return
	}
	r := float64(bytes) / float64(tokens)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ratios[c.n%calibratedWindow] = r
	c.n++
	low := math.Inf(1)
	for _, v := range c.ratios[:min(c.n, calibratedWindow)] {
		low = min(low, v)
	}
	c.ratio = min(max(low*calibratedMargin, minBytesPerToken), maxBytesPerToken)
}

// Observations returns how many observations c has taken.
func (c *Calibrated) Observations() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
