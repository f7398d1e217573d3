package pin

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/redact"
)

// Redact returns the redact stage, pinned below the cap: it replaces each
// secret policy(call.Tool).Redact finds in a result's content by its
// marker and records the counts ([chain.Result.Redactions]), so that the
// cap measures, cuts and keeps redacted text only, and nothing after it
// (user middleware, the store, the history, the logs) sees a secret. It
// logs one line per redacting call at info level, naming the rules and
// their counts, never a value. A result without content, or whose policy
// has no detector, passes unchanged; one with no secret costs the
// detector's scan and no allocation.
func Redact(policy shape.PolicyFunc, logger hclog.Logger) chain.Middleware {
	if policy == nil {
		policy = shape.Default
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			res := next(ctx, call)
			if res.Content == nil {
				return res
			}
			d := policy(call.Tool).Redact
			if d == nil {
				return res
			}
			out, counts := redact.Text(*res.Content, d)
			if counts == nil {
				return res
			}
			logger.Info("redacted secrets", "tool", call.Tool, "call_id", call.ID, "redactions", counts.Total(), "rules", RuleCounts(counts))
			return res.WithRedactions(out, counts)
		}
	}
}

// RuleCounts writes counts as a log field shows them, sorted by rule:
// "aws-access-token=1 jwt=2".
func RuleCounts(counts map[string]int) string {
	rules := make([]string, 0, len(counts))
	for r := range counts {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	var b strings.Builder
	for i, r := range rules {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r + "=" + strconv.Itoa(counts[r]))
	}
	return b.String()
}
