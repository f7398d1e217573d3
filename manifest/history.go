package manifest

import (
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/history"
	"github.com/toolcap/toolcap/tokens"
)

// HistoryConfig is the [worker.tool_output.history] table: how package
// history ages the tool results of an agent's history. A zero field is not
// set: the default applies. In a file or the environment an explicit 0 is
// an error (omit the key instead).
type HistoryConfig struct {
	// MaxTokens is max_tokens, the budget: the most tokens the tool
	// results of a history hold before the oldest become stubs. Not set:
	// no ageing.
	MaxTokens int
	// KeepRecent is keep_recent: how many of the most recent results are
	// never aged (default 4).
	KeepRecent int
	// ClearAtLeast is clear_at_least: a pass rewrites the history only
	// when it frees at least this many tokens (default: a quarter of
	// MaxTokens).
	ClearAtLeast int
	// Never is never: the tools whose results are never aged.
	Never []string
}

// HistoryConfig returns the [history.Config] of l's history table,
// counting with c (nil: the calibrated estimate) and logging to logger
// (nil: silent), its stubs naming l's read tool; MaxTokens 0, no ageing,
// when the table sets no max_tokens. Safe on a nil l.
func (l *ToolOutputLimits) HistoryConfig(c tokens.Counter, logger hclog.Logger) history.Config {
	hc := history.Config{Counter: c, Logger: logger, ReadTool: l.RestTool()}
	if l == nil || l.History == nil {
		return hc
	}
	h := l.History
	hc.MaxTokens, hc.KeepRecent, hc.ClearAtLeast = h.MaxTokens, h.KeepRecent, h.ClearAtLeast
	hc.Never = append([]string(nil), h.Never...)
	return hc
}
