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
//		ai.WithMiddleware(genkitcap.Middleware(m.Limits().For)),
//	)
//
// (The package is not named genkit so that it can sit next to Genkit's own
// genkit package in one file.)
//
// # What is capped
//
// A tool response ([ai.ToolResponse]) carries its result in Output (any Go
// value the tool returned, which the model plugin encodes as JSON) and,
// optionally, in Content parts. Output is held to the limit by its JSON
// encoding ([capvalue.Cap]: strings cut by toolcap's rule, marker
// included, the value's shape kept); the text of the Content parts shares
// the limit on its own, as MCP's two copies do in toolcap's proxy; media
// parts are left alone. The request the caller built is never changed: the
// model gets a copy that shares every part that needed no cut.
//
// Responses already in the history are capped again on every turn; the cut
// is idempotent, so they stay as the model first read them. The limit holds
// per tool call: a budget across the calls of one turn waits for toolcap's
// batch budget.
//
// Limits are a func(tool string) int such as (*manifest.ToolOutputLimits).For;
// a nil one gives every tool the default limit, 16384 bytes.
//
// [capvalue.Cap]: https://pkg.go.dev/github.com/toolcap/toolcap/adapters/capvalue#Cap
package genkitcap

import (
	"context"

	"github.com/firebase/genkit/go/ai"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/adapters/capvalue"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/middleware"
)

// Option configures [Middleware].
type Option func(*options)

type options struct {
	logger hclog.Logger
}

// WithLogger sets the logger each cut is reported to, at info level, with
// tool, ref, dropped_bytes and limit. Without it nothing is logged.
func WithLogger(l hclog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// Middleware returns an [ai.ModelMiddleware] that caps every tool response
// in a model request to limits(tool name) before the model reads it.
func Middleware(limits middleware.Limits, opts ...Option) ai.ModelMiddleware {
	if limits == nil {
		limits = (*manifest.ToolOutputLimits)(nil).For // the default limit for every tool
	}
	o := options{logger: hclog.NewNullLogger()}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return func(next ai.ModelFunc) ai.ModelFunc {
		return func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			return next(ctx, o.capRequest(req, limits), cb)
		}
	}
}

// capRequest returns req with its tool responses capped, or req itself when
// none needed a cut.
func (o options) capRequest(req *ai.ModelRequest, limits middleware.Limits) *ai.ModelRequest {
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
			tr, dropped := CapToolResponse(p.ToolResponse, limits(p.ToolResponse.Name))
			if dropped == 0 {
				continue
			}
			if o.logger.IsInfo() {
				o.logger.Info("tool response truncated", "tool", tr.Name, "ref", tr.Ref,
					"dropped_bytes", dropped, "limit", limits(tr.Name))
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
// each held to limit bytes (see the package doc), and the number of bytes
// dropped. When nothing is over the limit it returns tr itself and 0;
// otherwise a copy.
func CapToolResponse(tr *ai.ToolResponse, limit int) (*ai.ToolResponse, int) {
	if tr == nil {
		return nil, 0
	}
	output, dropped := capvalue.Cap(tr.Output, limit)
	var texts []string
	for _, p := range tr.Content {
		if p != nil && p.IsText() {
			texts = append(texts, p.Text)
		}
	}
	cut, d := capvalue.Strings(texts, limit)
	if dropped+d == 0 {
		return tr, 0
	}
	out := *tr
	out.Output = output
	if d > 0 {
		out.Content = make([]*ai.Part, len(tr.Content))
		i := 0
		for j, p := range tr.Content {
			if p != nil && p.IsText() {
				cp := *p
				cp.Text = cut[i]
				i++
				p = &cp
			}
			out.Content[j] = p
		}
	}
	return &out, dropped + d
}
