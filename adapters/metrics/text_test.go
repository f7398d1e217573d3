package metrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/toolcap/toolcap/adapters/metrics"
	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/resultstats"
)

type record struct {
	tool string
	res  chain.Result
}

// The same results counted by this package and by the text `toolcap mcp
// --metrics` serves (package resultstats) parse to the same metric
// families: names, help texts, types, labels and values. A scraper cannot
// tell the two front ends apart.
func TestSameAsCLIText(t *testing.T) {
	text := func(s string) chain.Result { return chain.Result{Content: &s} }
	capCut := chain.Truncation{Limit: 4096, OriginalBytes: 1 << 20, KeptBytes: 4040, DroppedBytes: 1<<20 - 4040}
	for _, tc := range []struct {
		name    string
		records []record
	}{
		{"nothing recorded", nil},
		{
			"every outcome",
			[]record{
				{"small", text("hello")},
				{"small", text("hello again")},
				{"dump", chain.Result{}.WithTruncation(strings.Repeat("x", 4096), capCut)},
				{"broken", chain.ErrorResult("failed", "permission denied")},
				{"empty", chain.Result{Summary: "nothing"}},
				{"grown", text("ok").WithCeiling("y", chain.Truncation{Limit: 10, OriginalBytes: 90, KeptBytes: 5, DroppedBytes: 85})},
			},
		},
		{
			"names that need escaping or are not UTF-8",
			[]record{
				{"a\\b\"c\nd", text("1")},
				{"bad\xffname", text("22")},
				{"bad\xfe\xfdname", text("333")},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			m, err := metrics.New(reg)
			if err != nil {
				t.Fatal(err)
			}
			var cli resultstats.Counters
			for _, r := range tc.records {
				m.Record(r.tool, r.res)
				cli.Record(r.tool, r.res)
			}
			var b strings.Builder
			if err := cli.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(b.String())); err != nil {
				t.Errorf("client_golang and the CLI's text differ: %v\nthe CLI's text:\n%s", err, b.String())
			}
		})
	}
}
