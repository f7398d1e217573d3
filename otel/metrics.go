package otel

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/toolcap/toolcap/internal/resultstats"
)

// The metrics. The three counters of toolcap's Prometheus endpoint keep
// their names (a counter's _total is the exporter's to add, as
// OpenTelemetry's Prometheus exporter and OTLP receivers do), and the
// others follow them.
var (
	metricResults       = strings.TrimSuffix(resultstats.Results.Name, "_total")
	metricOriginalBytes = strings.TrimSuffix(resultstats.OriginalBytes.Name, "_total")
	metricKeptBytes     = strings.TrimSuffix(resultstats.KeptBytes.Name, "_total")
)

const (
	metricDroppedBytes  = "toolcap_tool_result_dropped_bytes"
	metricDroppedTokens = "toolcap_tool_result_dropped_tokens"
	metricReadPages     = "toolcap_read_pages"
	metricToolDuration  = "toolcap_tool_duration"
	// metricRelayDuration is MCP's semantic convention for the time a
	// server takes to answer a request.
	metricRelayDuration = "mcp.server.operation.duration"
)

// unlistedTool is the tool label of a call of a name the server did not
// list (or the program did not name): such names come from clients or
// models, and a label each would grow the metrics without bound.
const unlistedTool = "(unlisted)"

// instruments are the metrics' instruments and the attribute sets they
// are recorded with, made once per tool and outcome.
type instruments struct {
	results, original, kept, droppedBytes, droppedTokens, pages metric.Int64Counter
	toolDuration, relayDuration                                 metric.Float64Histogram

	// sets holds the attribute sets by their key (see set), so that
	// recording allocates nothing once a tool has been seen.
	sets sync.Map
}

func newInstruments(m metric.Meter) (*instruments, error) {
	var in instruments
	var errs [8]error
	in.results, errs[0] = m.Int64Counter(metricResults, metric.WithUnit("{result}"), metric.WithDescription(resultstats.Results.Help))
	in.original, errs[1] = m.Int64Counter(metricOriginalBytes, metric.WithUnit("By"), metric.WithDescription(resultstats.OriginalBytes.Help))
	in.kept, errs[2] = m.Int64Counter(metricKeptBytes, metric.WithUnit("By"), metric.WithDescription(resultstats.KeptBytes.Help))
	in.droppedBytes, errs[3] = m.Int64Counter(metricDroppedBytes, metric.WithUnit("By"),
		metric.WithDescription("Content bytes the cap kept out of the history: original minus kept."))
	in.droppedTokens, errs[4] = m.Int64Counter(metricDroppedTokens, metric.WithUnit("{token}"),
		metric.WithDescription("Tokens a token limit kept out of the history, by tool."))
	in.pages, errs[5] = m.Int64Counter(metricReadPages, metric.WithUnit("{page}"),
		metric.WithDescription("Pages of kept results the read tool returned, by tool."))
	in.toolDuration, errs[6] = m.Float64Histogram(metricToolDuration, metric.WithUnit("s"),
		metric.WithDescription("Time a tool call took, the cap and the middleware included, by tool and outcome."))
	in.relayDuration, errs[7] = m.Float64Histogram(metricRelayDuration, metric.WithUnit("s"),
		metric.WithDescription("Time toolcap mcp took to answer a client's request, the server's time included."),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return &in, nil
}

// setKey identifies an attribute set.
type setKey struct {
	tool, outcome, method, errorType string
	kind                             uint8
}

// The kinds of attribute set.
const (
	setTool        uint8 = iota // tool
	setToolOutcome              // tool, outcome
	setRelay                    // mcp.method.name, gen_ai.tool.name, error.type
)

// set returns the attribute set of k, made the first time.
func (in *instruments) set(k setKey) metric.MeasurementOption {
	if o, ok := in.sets.Load(k); ok {
		return o.(metric.MeasurementOption)
	}
	var kvs []attribute.KeyValue
	switch k.kind {
	case setTool:
		kvs = []attribute.KeyValue{attribute.String(resultstats.LabelTool, k.tool)}
	case setToolOutcome:
		kvs = []attribute.KeyValue{attribute.String(resultstats.LabelTool, k.tool), attribute.String(resultstats.LabelOutcome, k.outcome)}
	case setRelay:
		kvs = []attribute.KeyValue{attribute.String(attrMethod, k.method)}
		if k.tool != "" {
			kvs = append(kvs, attribute.String(attrToolName, k.tool))
		}
		if k.errorType != "" {
			kvs = append(kvs, attribute.String(attrErrorType, k.errorType))
		}
	}
	o, _ := in.sets.LoadOrStore(k, metric.WithAttributeSet(attribute.NewSet(kvs...)))
	return o.(metric.MeasurementOption)
}

// record counts one result of tool (a label already bounded): its
// outcome, its bytes, and the tokens a token limit dropped.
func (in *instruments) record(ctx context.Context, tool string, t resultstats.Tally, droppedTokens int) {
	byTool := in.set(setKey{kind: setTool, tool: tool})
	in.results.Add(ctx, 1, in.set(setKey{kind: setToolOutcome, tool: tool, outcome: string(t.Outcome)}))
	in.original.Add(ctx, t.OriginalBytes, byTool)
	in.kept.Add(ctx, t.KeptBytes, byTool)
	if d := t.OriginalBytes - t.KeptBytes; d > 0 {
		in.droppedBytes.Add(ctx, d, byTool)
	}
	if droppedTokens > 0 {
		in.droppedTokens.Add(ctx, int64(droppedTokens), byTool)
	}
}

// seconds returns the time since start, in seconds.
func seconds(start time.Time) float64 { return time.Since(start).Seconds() }
