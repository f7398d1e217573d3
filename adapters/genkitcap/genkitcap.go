// Package genkitcap caps the tool responses a Firebase Genkit model reads
// ([github.com/firebase/genkit/go], v1.4.0).
//
// [Middleware] is an [ai.ModelMiddleware]: it runs before the model on every
// request of a generation, tool loop included, and caps every tool response
// part of the request's messages to its tool's limit, so the model never
// reads more than that of one tool call, whatever the tool returned. Pass it
// to a generation or a prompt with [ai.WithMiddleware]:
//
//	resp, err := genkit.Generate(ctx, g,
//		ai.WithModel(model),
//		ai.WithTools(readFile, grep),
//		ai.WithPrompt("why does the build fail?"),
//		ai.WithMiddleware(genkitcap.Middleware(policies.For)),
//	)
//
// (The package is not named genkit so that it can sit next to Genkit's own
// genkit package in one file.)
//
// # What is capped
//
// A tool response ([ai.ToolResponse]) carries its result in Output (any Go
// value the tool returned, which the model plugin encodes as JSON) and,
// optionally, in Content parts. Both are fitted to the tool's
// [shape.Policy] through package shape, as every toolcap front end fits a
// result: Output by its JSON encoding ([capvalue.Cap], the rule toolcap
// cuts MCP's structuredContent by: a shorter valid JSON value), the text of
// the Content parts sharing the policy on its own ([shape.Texts]: the byte
// and token limits, the strategy, the marker within the limit), as MCP's
// two copies of a result do; media parts are left alone. The request the
// caller built is never changed: the model gets a copy that shares every
// part that needed no cut.
//
// Responses already in the history are fitted again on every turn; the cut
// is idempotent, so they stay as the model first read them. The policy
// holds per tool call: a budget across the calls of one turn waits for
// toolcap's batch budget.
//
// Policies come from a manifest (policies.For, policies from
// (*manifest.WorkerManifest).Policies); a nil [shape.PolicyFunc] gives every
// tool the default limit, 16384 bytes, and the head rule.
//
// [capvalue.Cap]: https://pkg.go.dev/github.com/toolcap/toolcap/internal/capvalue#Cap
package genkitcap

import (
	"context"

	"github.com/firebase/genkit/go/ai"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/capvalue"
	"github.com/toolcap/toolcap/internal/shape"
)

// Option configures [Middleware].
type Option func(*options)

type options struct {
	logger hclog.Logger
}

// WithLogger sets the logger each cut is reported to, at info level, with
// the field set every toolcap front end logs a cut with ([shape.LogFields]),
// the response's Ref as its call_id; a response whose Output and Content
// are both cut logs two lines. Without it nothing is logged.
func WithLogger(l hclog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// Middleware returns an [ai.ModelMiddleware] that fits every tool response
// in a model request to policies(tool name) before the model reads it.
func Middleware(policies shape.PolicyFunc, opts ...Option) ai.ModelMiddleware {
	if policies == nil {
		policies = shape.Default // the default limit and the head rule for every tool
	}
	o := options{logger: hclog.NewNullLogger()}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return func(next ai.ModelFunc) ai.ModelFunc {
		return func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			return next(ctx, o.capRequest(req, policies), cb)
		}
	}
}

// capRequest returns req with its tool responses fitted, or req itself when
// none needed a cut.
func (o options) capRequest(req *ai.ModelRequest, policies shape.PolicyFunc) *ai.ModelRequest {
	if req == nil {
		return nil
	}
	var msgs []*ai.Message
	for i, m := range req.Messages {
		if m == nil {
			continue
		}
		var parts []*ai.Part
		for j, p := range m.Content {
			if p == nil || !p.IsToolResponse() || p.ToolResponse == nil {
				continue
			}
			tr, output, content := CapToolResponse(p.ToolResponse, policies(p.ToolResponse.Name))
			if tr == p.ToolResponse {
				continue
			}
			for _, t := range []chain.Truncation{output, content} {
				if t != (chain.Truncation{}) {
					shape.Log(o.logger, tr.Name, tr.Ref, t)
				}
			}
			if parts == nil {
				parts = append([]*ai.Part(nil), m.Content...)
			}
			cp := *p
			cp.ToolResponse = tr
			parts[j] = &cp
		}
		if parts == nil {
			continue
		}
		if msgs == nil {
			msgs = append([]*ai.Message(nil), req.Messages...)
		}
		cm := *m
		cm.Content = parts
		msgs[i] = &cm
	}
	if msgs == nil {
		return req
	}
	out := *req
	out.Messages = msgs
	return &out
}

// CapToolResponse returns tr with its Output and the text of its Content
// each fitted to p (see the package doc), and the figures of each cut: of
// Output in bytes of its JSON encoding, of Content in bytes of its text
// parts; a figure is the zero value when its part was not cut. When neither
// was, it returns tr itself; otherwise a copy.
func CapToolResponse(tr *ai.ToolResponse, p shape.Policy) (out *ai.ToolResponse, output, content chain.Truncation) {
	if tr == nil {
		return nil, output, content
	}
	v, output, outputCut := capvalue.Cap(tr.Output, p)
	var texts []string
	for _, part := range tr.Content {
		if part != nil && part.IsText() {
			texts = append(texts, part.Text)
		}
	}
	cut, content, contentCut := shape.Texts(texts, p)
	if !outputCut && !contentCut {
		return tr, chain.Truncation{}, chain.Truncation{}
	}
	c := *tr
	if outputCut {
		c.Output = v
	}
	if contentCut {
		c.Content = make([]*ai.Part, len(tr.Content))
		i := 0
		for j, part := range tr.Content {
			if part != nil && part.IsText() {
				cp := *part
				cp.Text = cut[i]
				i++
				part = &cp
			}
			c.Content[j] = part
		}
	} else {
		content = chain.Truncation{}
	}
	return &c, output, content
}
