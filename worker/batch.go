package worker

import (
	"context"
	"sync"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/shape"
)

// The batch stage: with a batch budget (batch_max_bytes, batch_max_tokens or
// both), ExecuteTools shares it among the results of its calls once all of
// them are in, after the ceiling, where no user middleware runs after it.
//
// To cut a result again from what its tool returned, so that the model sees
// one marker whose N is everything it does not see of that output, the
// stage needs the tool's content as the cap received it. A worker with a
// budget composes its chain with a cap that reports what it received (the
// original) and what it passed up ([pin.PinnedObserved]) into the
// call's custody, found through the call's context. Nothing is copied: the
// custody holds the two strings the chain made anyway, so the cost is that
// the original content of every call of the batch stays reachable until
// ExecuteTools returns, where without a budget it could be collected once
// the cap had cut it. A worker without a budget has no observer, no
// custody and no stage: its calls cost what they always did.

// custody is what the batch stage keeps of one call: the content the cap
// received and the content it passed up. A user middleware may run next on
// a goroutine of its own and return before it does, so the observer may
// write late; the stage seals the custody before reading it, and writes
// after that are dropped.
type custody struct {
	mu       sync.Mutex
	sealed   bool
	original *string
	capped   *string
}

type custodyKey struct{}

func (c *custody) set(original, capped *string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sealed {
		return
	}
	c.original, c.capped = original, capped
}

// seal stops the observer and returns what it recorded.
func (c *custody) seal() (original, capped *string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sealed = true
	return c.original, c.capped
}

// recordCap is the cap's observer in a worker with a batch budget: it
// writes what the cap received and passed up into the call's custody.
func recordCap(ctx context.Context, _ chain.Call, received, passed *string) {
	if c, ok := ctx.Value(custodyKey{}).(*custody); ok {
		c.set(received, passed)
	}
}

// withCustody returns ctx carrying c for the observer, or ctx itself when
// c is nil (no batch budget).
func withCustody(ctx context.Context, c *custody) context.Context {
	if c == nil {
		return ctx
	}
	return context.WithValue(ctx, custodyKey{}, c)
}

// batching reports whether the worker has a batch budget, in bytes or in
// tokens, and so a batch stage.
func (w *Worker) batching() bool { return w.batchMax > 0 || w.batchTokens > 0 }

// shareBatch cuts the results of one batch to their shares of the budgets.
// Each result's demand is the size of its tool's content, at most the
// tool's own limit: in bytes, the length of that content; in tokens, the
// count of the content the cap passed up (within the tool's own token
// limit). A result whose content a user middleware changed (the content
// that reached the stage is not what the cap passed up) demands the size of
// that content. The shares depend only on the results, in call order, never
// on the order in which they completed.
func (w *Worker) shareBatch(ctx context.Context, calls []chain.Call, results []ToolResult, kept []custody) {
	bytes := make([]int, len(results))
	var toks []int
	if w.batchTokens > 0 {
		toks = make([]int, len(results))
	}
	originals := make([]*string, len(results)) // nil: cut what reached the stage
	for i, res := range results {
		original, capped := kept[i].seal()
		if res.Content == nil {
			continue
		}
		if toks != nil {
			toks[i] = w.tokenizer.Count(*res.Content)
		}
		if original != nil && capped != nil && *res.Content == *capped {
			originals[i] = original
			bytes[i] = min(len(*original), w.policy(calls[i].Tool).MaxBytes)
			if w.TokenLimit(calls[i].Tool) > 0 {
				// The cap may have cut by tokens, to less than the byte
				// limit: the result cannot use more than it kept.
				bytes[i] = min(bytes[i], len(*capped))
			}
			continue
		}
		bytes[i] = len(*res.Content)
	}
	byteShares, tokShares := bytes, toks
	if w.batchMax > 0 {
		byteShares = shape.WaterFill(bytes, w.batchMax)
	}
	if toks != nil {
		tokShares = shape.WaterFill(toks, w.batchTokens)
	}
	for i, res := range results {
		if res.Content == nil {
			continue
		}
		over := len(*res.Content) > byteShares[i]
		if tokShares != nil && toks[i] > tokShares[i] {
			over = true
		}
		if !over {
			continue
		}
		byteLimit := w.policy(calls[i].Tool).MaxBytes
		if w.batchMax > 0 {
			byteLimit = min(byteShares[i], byteLimit)
		}
		tokLimit := 0
		if tokShares != nil {
			tokLimit = tokShares[i]
			if tokLimit == 0 {
				// A budget smaller than the number of results: this one's
				// share is nothing, and it is cut to nothing.
				byteLimit = 0
			}
		}
		results[i] = w.cutToShare(ctx, calls[i], res, originals[i], byteLimit, tokLimit)
	}
}

// cutToShare cuts res to its shares: share bytes and, when tokShare > 0,
// tokShare tokens (within the tool's own token limit either way). With
// original, the tool's content as the cap received it, the cut is made from
// it, so the result carries one marker counting everything of it the model
// does not see, and its figures replace the cap's
// ([chain.Result.Truncation]). Without it (a user middleware changed the
// content, or the ceiling cut it), the content as it reached the stage is
// cut again ([cut.Recut], or [cut.RecutTokens] under a token limit: a
// marker it carries stays the only one, its count adding what this cut
// drops), and the figures are the ceiling's ([chain.Result.Ceiling]).
// Either way Truncation.Batch is set.
func (w *Worker) cutToShare(ctx context.Context, call chain.Call, res ToolResult, original *string, share, tokShare int) ToolResult {
	p := w.policy(call.Tool)
	p.MaxBytes = share
	if tokShare > 0 && (p.MaxTokens == 0 || tokShare < p.MaxTokens) {
		p.MaxTokens = tokShare
	}
	var out string
	var t chain.Truncation
	var changed bool
	switch {
	case original != nil && w.keeper != nil && p.KeepRest:
		// Kept by the cap already, or kept now: the marker names the read.
		if t0, ok := res.Truncation(); ok && t0.Ref != "" {
			out, t, changed = w.keeper.TextKept(*original, p, t0.Ref)
		} else {
			out, t, changed = w.keeper.Text(ctx, *original, p)
		}
	case original != nil:
		out, t, changed = shape.Text(*original, p)
	case w.keeper != nil && p.KeepRest:
		out, t, changed = w.keeper.Recut(ctx, *res.Content, p)
	default:
		// The content may carry the cap's marker already: cut again so that
		// it still carries one, its count adding what the cap dropped.
		out, t, changed = shape.Recut(*res.Content, p)
	}
	if !changed {
		return res
	}
	t.Batch = true
	if w.logger.IsInfo() {
		args := shape.LogFields(call.Tool, call.ID, t)
		if w.batchMax > 0 {
			args = append(args, "batch_max_bytes", w.batchMax)
		}
		if w.batchTokens > 0 {
			args = append(args, "batch_max_tokens", w.batchTokens)
		}
		w.logger.Info("tool result cut to its share of the batch budget", args...)
	}
	if original != nil {
		return res.WithTruncation(out, t)
	}
	return res.WithCeiling(out, t)
}
