package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolcap/toolcap/manifest"
)

// BenchmarkExecuteToolsRedact is the pinned redact stage's cost on the
// worker's one-call path: the worker of BenchmarkExecuteTools with the
// built-in rules on (impl=redact, the default) and with redact = false
// (impl=off), beside the direct path, for a 1 KiB result and a 16 KiB one
// of source text with no secret (both uncut) and the 125 KiB result the
// cap cuts.
func BenchmarkExecuteToolsRedact(b *testing.B) {
	ctx := context.Background()
	calls := benchCalls(1)
	off := false
	source := text(alphabets[0].unit, 16<<10-64)
	for _, c := range []struct {
		name    string
		content *string
	}{{"1KiB", &smallContent}, {"16KiB", &source}, {"125KiB", &bigContent}} {
		impls := []struct {
			name string
			exec executor
		}{
			{"direct", newDirectPath(c.content)},
			{"redact", newBenchWorker(b, c.content)},
			{"off", newLimitsWorker(b, c.content, manifest.ToolOutputLimits{Redaction: manifest.Redaction{Redact: &off}})},
		}
		for _, impl := range impls {
			b.Run(fmt.Sprintf("%s/impl=%s", c.name, impl.name), func(b *testing.B) {
				benchBatch(b, impl.exec, ctx, calls)
			})
		}
	}
}
