package resultstats_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/resultstats"
)

func content(s string) chain.Result { return chain.Result{Content: &s} }

func TestClassify(t *testing.T) {
	capCut := chain.Truncation{Limit: 50, OriginalBytes: 100, KeptBytes: 40, DroppedBytes: 60}
	for _, tc := range []struct {
		name string
		res  chain.Result
		want resultstats.Tally
	}{
		{"no content", chain.Result{Summary: "nothing"}, resultstats.Tally{Outcome: resultstats.Fits}},
		{"fits", content("hello"), resultstats.Tally{Outcome: resultstats.Fits, OriginalBytes: 5, KeptBytes: 5}},
		{
			"cut by the cap",
			chain.Result{}.WithTruncation(strings.Repeat("k", 50), capCut),
			resultstats.Tally{Outcome: resultstats.Cut, OriginalBytes: 100, KeptBytes: 40},
		},
		{
			"compacted",
			chain.Result{}.WithTruncation(`{"a":1}`, chain.Truncation{Limit: 8, OriginalBytes: 12, KeptBytes: 7, Compacted: true}),
			resultstats.Tally{Outcome: resultstats.Cut, OriginalBytes: 12, KeptBytes: 7},
		},
		{"error", chain.ErrorResult("failed", "boom"), resultstats.Tally{Outcome: resultstats.Error, OriginalBytes: 4, KeptBytes: 4}},
		{
			"error the cap cut",
			chain.Result{}.WithTruncation(strings.Repeat("k", 50), capCut).AsError(),
			resultstats.Tally{Outcome: resultstats.Error, OriginalBytes: 100, KeptBytes: 40},
		},
		{
			"cut by the cap, then by the ceiling",
			chain.Result{}.WithTruncation("x", capCut).
				WithCeiling(strings.Repeat("c", 50), chain.Truncation{Limit: 50, OriginalBytes: 90, KeptBytes: 30, DroppedBytes: 60}),
			resultstats.Tally{Outcome: resultstats.Cut, OriginalBytes: 100, KeptBytes: 30},
		},
		{
			"cut by the ceiling only",
			content("fits").WithCeiling(strings.Repeat("c", 50), chain.Truncation{Limit: 50, OriginalBytes: 90, KeptBytes: 30, DroppedBytes: 60}),
			resultstats.Tally{Outcome: resultstats.Cut, OriginalBytes: 90, KeptBytes: 30},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, resultstats.Classify(tc.res)); diff != "" {
				t.Errorf("Classify() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestToolLabel(t *testing.T) {
	for _, tc := range []struct{ tool, want string }{
		{"Read", "Read"},
		{"", ""},
		{"fs.read_file", "fs.read_file"},
		{"café", "café"},
		{"bad\xffname", "bad\uFFFDname"},
		{"bad\xff\xfename", "bad\uFFFDname"},
	} {
		if got := resultstats.ToolLabel(tc.tool); got != tc.want {
			t.Errorf("ToolLabel(%q) = %q, want %q", tc.tool, got, tc.want)
		}
	}
}

func TestLabels(t *testing.T) {
	got := map[string][]string{}
	for _, m := range []resultstats.Metric{resultstats.Results, resultstats.OriginalBytes, resultstats.KeptBytes} {
		got[m.Name] = m.Labels()
	}
	want := map[string][]string{
		"toolcap_tool_results_total":               {"tool", "outcome"},
		"toolcap_tool_result_original_bytes_total": {"tool"},
		"toolcap_tool_result_kept_bytes_total":     {"tool"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

// The headers are what WriteText writes before the samples of each metric,
// and all it writes when nothing was counted.
const (
	resultsHeader = "# HELP toolcap_tool_results_total Tool results that passed the cap, by tool and outcome (fits, cut, error).\n" +
		"# TYPE toolcap_tool_results_total counter\n"
	originalHeader = "# HELP toolcap_tool_result_original_bytes_total Content bytes the tools returned, before the cap.\n" +
		"# TYPE toolcap_tool_result_original_bytes_total counter\n"
	keptHeader = "# HELP toolcap_tool_result_kept_bytes_total Content bytes that reached the history, truncation markers excluded.\n" +
		"# TYPE toolcap_tool_result_kept_bytes_total counter\n"
)

// oneTool is the text of the counters of one tool, whose label as the text
// escapes it is label.
func oneTool(label string, cut, errs, fits, original, kept int) string {
	return resultsHeader +
		fmt.Sprintf("toolcap_tool_results_total{outcome=\"cut\",tool=\"%s\"} %d\n", label, cut) +
		fmt.Sprintf("toolcap_tool_results_total{outcome=\"error\",tool=\"%s\"} %d\n", label, errs) +
		fmt.Sprintf("toolcap_tool_results_total{outcome=\"fits\",tool=\"%s\"} %d\n", label, fits) +
		originalHeader +
		fmt.Sprintf("toolcap_tool_result_original_bytes_total{tool=\"%s\"} %d\n", label, original) +
		keptHeader +
		fmt.Sprintf("toolcap_tool_result_kept_bytes_total{tool=\"%s\"} %d\n", label, kept)
}

type add struct {
	tool  string
	tally resultstats.Tally
}

func TestWriteText(t *testing.T) {
	cut := func(original, kept int64) resultstats.Tally {
		return resultstats.Tally{Outcome: resultstats.Cut, OriginalBytes: original, KeptBytes: kept}
	}
	fits := func(n int64) resultstats.Tally {
		return resultstats.Tally{Outcome: resultstats.Fits, OriginalBytes: n, KeptBytes: n}
	}
	for _, tc := range []struct {
		name string
		adds []add
		want string
	}{
		{"nothing counted", nil, resultsHeader + originalHeader + keptHeader},
		{
			"tools in sorted order, sums per tool",
			[]add{
				{"small", fits(10)},
				{"big", cut(100000, 16331)},
				{"small", fits(5)},
				{"broken", resultstats.Tally{Outcome: resultstats.Error, OriginalBytes: 7, KeptBytes: 7}},
				{"big", cut(2000000, 16331)},
			},
			resultsHeader +
				`toolcap_tool_results_total{outcome="cut",tool="big"} 2` + "\n" +
				`toolcap_tool_results_total{outcome="error",tool="big"} 0` + "\n" +
				`toolcap_tool_results_total{outcome="fits",tool="big"} 0` + "\n" +
				`toolcap_tool_results_total{outcome="cut",tool="broken"} 0` + "\n" +
				`toolcap_tool_results_total{outcome="error",tool="broken"} 1` + "\n" +
				`toolcap_tool_results_total{outcome="fits",tool="broken"} 0` + "\n" +
				`toolcap_tool_results_total{outcome="cut",tool="small"} 0` + "\n" +
				`toolcap_tool_results_total{outcome="error",tool="small"} 0` + "\n" +
				`toolcap_tool_results_total{outcome="fits",tool="small"} 2` + "\n" +
				originalHeader +
				`toolcap_tool_result_original_bytes_total{tool="big"} 2100000` + "\n" +
				`toolcap_tool_result_original_bytes_total{tool="broken"} 7` + "\n" +
				`toolcap_tool_result_original_bytes_total{tool="small"} 15` + "\n" +
				keptHeader +
				`toolcap_tool_result_kept_bytes_total{tool="big"} 32662` + "\n" +
				`toolcap_tool_result_kept_bytes_total{tool="broken"} 7` + "\n" +
				`toolcap_tool_result_kept_bytes_total{tool="small"} 15` + "\n",
		},
		{
			"label values escaped",
			[]add{{"a\\b\"c\nd", fits(1)}},
			oneTool(`a\\b\"c\nd`, 0, 0, 1, 1, 1),
		},
		{
			// Two names that differ only in bytes that are not UTF-8 get
			// one label, so they must share one series: two samples with
			// the same labels would make the whole scrape invalid.
			"invalid UTF-8 replaced, one series per label",
			[]add{{"x\xff", fits(1)}, {"x\xfe", fits(2)}, {"x\uFFFD", fits(4)}},
			oneTool("x\uFFFD", 0, 0, 3, 7, 7),
		},
		{
			"unknown outcome counts as fits",
			[]add{{"t", resultstats.Tally{}}, {"t", resultstats.Tally{Outcome: "odd", OriginalBytes: 3, KeptBytes: 3}}},
			oneTool("t", 0, 0, 2, 3, 3),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c resultstats.Counters
			for _, a := range tc.adds {
				c.Add(a.tool, a.tally)
			}
			var b strings.Builder
			if err := c.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("WriteText() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// countingWriter counts its Write calls, and fails them with err when set.
type countingWriter struct {
	writes int
	err    error
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

// The text goes out in one Write, so an HTTP response is never half
// written by a slow client, and a failed Write is returned, wrapped.
func TestWriteTextWrites(t *testing.T) {
	var c resultstats.Counters
	c.Record("a", content("x"))
	c.Record("b", content("y"))

	ok := &countingWriter{}
	if err := c.WriteText(ok); err != nil || ok.writes != 1 {
		t.Errorf("WriteText() = %v in %d writes, want nil in 1", err, ok.writes)
	}

	gone := errors.New("connection reset")
	if err := c.WriteText(&countingWriter{err: gone}); !errors.Is(err, gone) {
		t.Errorf("WriteText() to a failing writer = %v, want it to wrap %v", err, gone)
	}
}

// Results recorded from many goroutines at once are all counted (run with
// -race to check the counters' safety too).
func TestCountersConcurrent(t *testing.T) {
	const goroutines, each = 8, 500
	var c resultstats.Counters
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				tool := []string{"a", "b"}[(g+i)%2]
				c.Record(tool, content("abc"))
				if i%50 == 0 {
					_ = c.WriteText(&countingWriter{})
				}
			}
		})
	}
	wg.Wait()

	var b strings.Builder
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	const n = goroutines * each / 2
	for _, want := range []string{
		fmt.Sprintf(`toolcap_tool_results_total{outcome="fits",tool="a"} %d`, n),
		fmt.Sprintf(`toolcap_tool_results_total{outcome="fits",tool="b"} %d`, n),
		fmt.Sprintf(`toolcap_tool_result_kept_bytes_total{tool="a"} %d`, 3*n),
		fmt.Sprintf(`toolcap_tool_result_original_bytes_total{tool="b"} %d`, 3*n),
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("the text lacks %q:\n%s", want, b.String())
		}
	}
}

// Counting a result of a tool already seen allocates nothing, so the
// metrics cost an uncut call no allocation.
func TestRecordAllocs(t *testing.T) {
	var c resultstats.Counters
	res := content("hello")
	c.Record("Read", res)
	if n := testing.AllocsPerRun(100, func() { c.Record("Read", res) }); n != 0 {
		t.Errorf("Record() allocates %v times per call, want 0", n)
	}
}
