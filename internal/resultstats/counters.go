package resultstats

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolcap/toolcap/chain"
)

// ContentType is the media type of the text [Counters.WriteText] writes:
// Prometheus' text exposition format, version 0.0.4.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Counters counts results per tool. The zero value is ready to use, its
// methods are safe for concurrent use, and a Counters must not be copied
// after first use.
type Counters struct {
	// tools maps a tool's label ([ToolLabel]) to its *toolCounts. A
	// sync.Map rather than a mutex: a tool's counters are created once and
	// then only read, which is the case sync.Map is made for, so counting
	// takes no lock.
	tools sync.Map
}

type toolCounts struct {
	cut, err, fits atomic.Int64
	original, kept atomic.Int64
}

// Record counts one result of tool: [Counters.Add] of [Classify] of res.
func (c *Counters) Record(tool string, res chain.Result) {
	c.Add(tool, Classify(res))
}

// Add adds t to the counters of tool. An outcome other than [Cut] and
// [Error] counts as [Fits], so the zero Tally is a result that fitted with
// no content.
func (c *Counters) Add(tool string, t Tally) {
	tc := c.counts(tool)
	switch t.Outcome {
	case Cut:
		tc.cut.Add(1)
	case Error:
		tc.err.Add(1)
	default:
		tc.fits.Add(1)
	}
	tc.original.Add(t.OriginalBytes)
	tc.kept.Add(t.KeptBytes)
}

func (c *Counters) counts(tool string) *toolCounts {
	label := ToolLabel(tool)
	if tc, ok := c.tools.Load(label); ok {
		return tc.(*toolCounts)
	}
	tc, _ := c.tools.LoadOrStore(label, &toolCounts{})
	return tc.(*toolCounts)
}

// totals is one tool's counts at one moment.
type totals struct {
	label                    string
	cut, err, fits           int64
	originalBytes, keptBytes int64
}

// WriteText writes the counters to w in Prometheus' text exposition format
// ([ContentType]), in one Write: for each metric in the order of the table
// ([Results], [OriginalBytes], [KeptBytes]) its # HELP and # TYPE lines,
// then one sample per tool (per tool and outcome for [Results]) in the
// sorted order of the tool names, so that equal counts give equal bytes.
// A metric no tool has counted yet still gets its two comment lines.
// Results counted while it writes may be missing from the text, or counted
// in some of its samples only; the next scrape has them.
func (c *Counters) WriteText(w io.Writer) error {
	var all []totals
	c.tools.Range(func(k, v any) bool {
		tc := v.(*toolCounts)
		all = append(all, totals{
			label: k.(string),
			cut:   tc.cut.Load(), err: tc.err.Load(), fits: tc.fits.Load(),
			originalBytes: tc.original.Load(), keptBytes: tc.kept.Load(),
		})
		return true
	})
	slices.SortFunc(all, func(a, b totals) int { return cmp.Compare(a.label, b.label) })

	var b []byte
	b = appendHeader(b, Results)
	for _, t := range all {
		for _, s := range [...]struct {
			outcome Outcome
			n       int64
		}{{Cut, t.cut}, {Error, t.err}, {Fits, t.fits}} {
			b = appendSample(b, Results.Name, t.label, s.outcome, s.n)
		}
	}
	b = appendHeader(b, OriginalBytes)
	for _, t := range all {
		b = appendSample(b, OriginalBytes.Name, t.label, "", t.originalBytes)
	}
	b = appendHeader(b, KeptBytes)
	for _, t := range all {
		b = appendSample(b, KeptBytes.Name, t.label, "", t.keptBytes)
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("resultstats: writing the metrics: %w", err)
	}
	return nil
}

// appendHeader appends the # HELP and # TYPE lines of m. In a help text the
// format escapes backslash and newline.
func appendHeader(b []byte, m Metric) []byte {
	b = append(b, "# HELP "...)
	b = append(b, m.Name...)
	b = append(b, ' ')
	b = append(b, helpEscaper.Replace(m.Help)...)
	b = append(b, "\n# TYPE "...)
	b = append(b, m.Name...)
	return append(b, " counter\n"...)
}

// appendSample appends one sample line, its labels in the sorted order of
// their names (outcome before tool) as client_golang writes them, and
// without outcome when outcome is empty.
func appendSample(b []byte, name, tool string, outcome Outcome, n int64) []byte {
	b = append(b, name...)
	b = append(b, '{')
	if outcome != "" {
		b = appendLabel(b, LabelOutcome, string(outcome))
		b = append(b, ',')
	}
	b = appendLabel(b, LabelTool, tool)
	b = append(b, "} "...)
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\n')
}

// appendLabel appends name="value". In a label value the format escapes
// backslash, double quote and newline.
func appendLabel(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, `="`...)
	b = append(b, labelEscaper.Replace(value)...)
	return append(b, '"')
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
)
