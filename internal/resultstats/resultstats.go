// Package resultstats counts what toolcap's cap did to tool results, per
// tool, and writes the counts in Prometheus' text exposition format. It is
// the one home of the metrics' names, help texts and meaning, and of the
// rule that turns a [chain.Result] into what it counts for ([Classify]).
//
// Two front ends export these metrics: `toolcap mcp --metrics ADDR`, which
// counts with [Counters] and serves [Counters.WriteText] so that the core
// module needs no metrics library, and the module adapters/metrics, which
// registers the same names and help texts with client_golang and counts by
// [Classify]. A scraper cannot tell the two apart.
//
// # The metrics
//
//	toolcap_tool_results_total{tool, outcome}        results, outcome "fits", "cut" or "error"
//	toolcap_tool_result_original_bytes_total{tool}   content bytes the tools returned
//	toolcap_tool_result_kept_bytes_total{tool}       content bytes kept, markers excluded
//
// The dropped bytes are original minus kept.
package resultstats

import (
	"strings"

	"github.com/toolcap/toolcap/chain"
)

// Label names.
const (
	LabelTool    = "tool"
	LabelOutcome = "outcome"
)

// Metric is the name and help text of one counter. Every counter has the
// [LabelTool] label; [Results] has [LabelOutcome] too.
type Metric struct {
	Name string
	Help string
	// byOutcome is set for the one metric labelled by outcome. It is
	// unexported so that the table below stays the only place that says
	// which metric that is.
	byOutcome bool
}

// Labels returns the label names of m, in the order client_golang's
// WithLabelValues takes their values: tool, then outcome if m has it.
func (m Metric) Labels() []string {
	if m.byOutcome {
		return []string{LabelTool, LabelOutcome}
	}
	return []string{LabelTool}
}

// The metrics, in the order [Counters.WriteText] writes them.
var (
	Results = Metric{
		Name:      "toolcap_tool_results_total",
		Help:      "Tool results that passed the cap, by tool and outcome (fits, cut, error).",
		byOutcome: true,
	}
	OriginalBytes = Metric{
		Name: "toolcap_tool_result_original_bytes_total",
		Help: "Content bytes the tools returned, before the cap.",
	}
	KeptBytes = Metric{
		Name: "toolcap_tool_result_kept_bytes_total",
		Help: "Content bytes that reached the history, truncation markers excluded.",
	}
)

// Outcome is the value of the outcome label: what the cap did to a result.
type Outcome string

// The outcomes, in the sorted order of their label values, which is the
// order the text lists them in.
const (
	Cut   Outcome = "cut"
	Error Outcome = "error"
	Fits  Outcome = "fits"
)

// Tally is what one result adds to its tool's counters.
type Tally struct {
	Outcome Outcome
	// OriginalBytes is the size of the content the tool returned;
	// KeptBytes is how much of it reached the history, marker excluded.
	OriginalBytes, KeptBytes int64
}

// Classify returns what res counts for. An error result is [Error] whether
// or not it was cut, and its bytes count too. A result the cap cut or
// compacted is [Cut], with the cap's figures ([chain.Result.Truncation]).
// A result the ceiling cut again, because a middleware grew it past the
// limit, is [Cut] too, and keeps only what the ceiling kept; its original
// is the tool's when the cap cut it, else what the ceiling was given, so
// that original minus kept is what the model does not see. Any other
// result [Fits], with its content's size as both figures; a result without
// content counts as one with no bytes.
//
// Classify reads res only and allocates nothing, so a middleware may call
// it on every result.
func Classify(res chain.Result) Tally {
	size := 0
	if res.Content != nil {
		size = len(*res.Content)
	}
	original, kept := size, size
	t, cut := res.Truncation()
	if cut {
		original, kept = t.OriginalBytes, t.KeptBytes
	}
	if ct, again := res.Ceiling(); again {
		if !cut {
			original = ct.OriginalBytes
		}
		kept, cut = ct.KeptBytes, true
	}
	outcome := Fits
	switch {
	case res.IsError():
		outcome = Error
	case cut:
		outcome = Cut
	}
	return Tally{Outcome: outcome, OriginalBytes: int64(original), KeptBytes: int64(kept)}
}

// ToolLabel returns the value of the tool label for a tool name: the name,
// with each run of bytes that are not UTF-8 replaced by U+FFFD. The text
// format is UTF-8, and client_golang panics on a label value that is not;
// a valid name (every name an MCP server can send) is returned as is,
// without allocating.
func ToolLabel(tool string) string {
	return strings.ToValidUTF8(tool, "\uFFFD")
}
