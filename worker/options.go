package worker

import (
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/shape"
	"github.com/toolcap/toolcap/tokens"
)

// DefaultConcurrency is how many calls of one batch run at once unless
// [WithConcurrency] says otherwise.
const DefaultConcurrency = 8

// Option configures a [Worker] built by [New].
type Option func(*options)

type options struct {
	policies    *shape.Policies
	middleware  []chain.Middleware
	logger      hclog.Logger
	concurrency int
	tokenizer   tokens.Tokenizer
	rest        rest.Store
}

// WithPolicies sets each tool's policy (its limits, the strategy of its
// cut, whether its rest is kept, its redaction) and the worker's batch
// budget, tokenizer and read tool, as a manifest resolves them
// ((*manifest.WorkerManifest).Policies). Without it, or with nil, every
// tool gets [shape.DefaultMaxBytes], the head rule and the built-in
// redaction, as under a manifest that sets nothing.
func WithPolicies(p *shape.Policies) Option {
	return func(o *options) { o.policies = p }
}

// WithMiddleware adds user middleware. They compose like an onion: the first
// listed is the outermost, so it sees the call first and the result last.
// Repeated options append. Whatever the order, every one of them runs after
// the byte cap (they see only capped content) and before the ceiling. Nil
// entries are skipped.
func WithMiddleware(mws ...chain.Middleware) Option {
	return func(o *options) { o.middleware = append(o.middleware, mws...) }
}

// WithLogger sets the logger for cuts, warnings and recovered panics. The
// worker names an unnamed logger "toolcap". Without it the worker is silent.
func WithLogger(l hclog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithConcurrency sets how many calls of one batch may run at once; 1 runs
// them one after another. It must be at least 1. The limit is per call of
// ExecuteTools, and tools abandoned when a context ended no longer count.
func WithConcurrency(n int) Option {
	return func(o *options) { o.concurrency = n }
}

// WithTokenizer sets the tokenizer the token limits of [WithPolicies] are
// counted with. Its Name must be the manifest's tokenizer ("calibrated"
// when the manifest names none). Without it a worker whose policies set a
// token limit counts with a new [tokens.Calibrated] of its own, and a manifest
// that names an exact tokenizer ("o200k_base", "cl100k_base") is an error
// from [New]: those live in module github.com/toolcap/toolcap/tiktoken.
// Pass a Calibrated to share what it learned among workers.
func WithTokenizer(t tokens.Tokenizer) Option {
	return func(o *options) { o.tokenizer = t }
}

// WithRest keeps the whole output of every result cut for a tool whose
// policy keeps the rest (keep_rest, on unless the manifest turns it off),
// in store, so that the model can read on: the marker names a call of the
// read tool ([rest.DefaultTool], or the manifest's [worker.tool_output.rest]
// tool), which the worker then answers itself. Advertise it to the model
// with [Worker.ReadTool]. Refs are bound to the scope of the context
// ExecuteTools is called with ([rest.WithScope]); without one, to the
// Worker. Without this option nothing is kept and the marker is the plain
// one.
func WithRest(store rest.Store) Option {
	return func(o *options) { o.rest = store }
}
