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
			LogRedactions(ctxLogger(ctx, logger), call.Tool, call.ID, counts)
			return res.WithRedactions(out, counts)
		}
	}
}

// AddRedactions adds counts, redactions by rule, to into and returns it
// (a new map when into is nil and counts are not empty): how a front end
// that redacts a result in parts adds up the parts' counts.
func AddRedactions(into, counts map[string]int) map[string]int {
	if len(counts) == 0 {
		return into
	}
	if into == nil {
		into = make(map[string]int, len(counts))
	}
	for r, n := range counts {
		into[r] += n
	}
	return into
}

// LogRedactions logs the one line of a call whose result was redacted, at
// info level: the tool, the call's id ("" for none), the number of
// secrets and the rules with their counts, sorted ("aws-access-token=1
// jwt=2"), never a value. Every front end logs a redaction with it.
func LogRedactions(l hclog.Logger, tool, callID string, counts map[string]int) {
	if len(counts) == 0 || !l.IsInfo() {
		return
	}
	total := 0
	rules := make([]string, 0, len(counts))
	for r, n := range counts {
		rules = append(rules, r)
		total += n
	}
	sort.Strings(rules)
	var b strings.Builder
	for i, r := range rules {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r + "=" + strconv.Itoa(counts[r]))
	}
	fields := []any{"tool", tool}
	if callID != "" {
		fields = append(fields, "call_id", callID)
	}
	l.Info("redacted secrets", append(fields, "redactions", total, "rules", b.String())...)
}
