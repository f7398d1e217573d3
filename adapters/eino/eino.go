// Package eino caps tool results in agents built on CloudWeGo's Eino
// ([github.com/cloudwego/eino], v0.9), before the model reads them.
//
// Two places take it, one per Eino API:
//
//   - [ToolMiddleware] is a [compose.ToolMiddleware] for a
//     [compose.ToolsNode] (and so for every graph, chain and react agent
//     built on one): list it in [compose.ToolsNodeConfig].ToolCallMiddlewares.
//   - [AgentMiddleware] is an [adk.ChatModelAgentMiddleware] for an
//     [adk.ChatModelAgent]: list it in its config's Handlers.
//
// Both fit every tool call's result to its tool's [shape.Policy], as every
// toolcap front end does, through package shape: the byte limit, the token
// limit and the strategy (head, head_tail with its keep_lines, json) that
// the manifest gives the tool, the marker
// "\n[truncated: N bytes dropped, refine your query]" (or "N tokens")
// within the limit. (Eino's own tool-output truncation puts its notice and
// a file path on top of its limit; this one stays within it.) Policies
// come from a manifest:
//
//	policies, err := m.Policies()
//	// ...
//	eino.ToolMiddleware(policies.For)
//
// What is cut, per kind of tool:
//
//   - an invokable tool's string result, by [shape.Text];
//   - a streamable tool's stream: it is read to its end by [shape.Read],
//     which holds about what the strategy keeps (the limit for head, twice
//     it for head_tail), and handed on as one chunk, so the model's next
//     request holds at most the limit;
//   - an enhanced tool's [schema.ToolResult]: its text parts share the
//     policy ([shape.Texts]); images, audio, video and files are left
//     alone. An enhanced stream is concatenated first
//     ([schema.ConcatToolResults]).
//
// Errors pass through untouched: Eino turns a tool error into an error of
// the run, not into content for the model.
//
// A nil [shape.PolicyFunc] gives every tool the default limit, 16384 bytes,
// and the head rule.
package eino

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/shape"
)

// Option configures [ToolMiddleware] and [AgentMiddleware].
type Option func(*capper)

// WithLogger sets the logger each cut is reported to, at info level, with
// the field set every toolcap front end logs a cut with ([shape.LogFields]:
// tool, call_id, original_bytes, kept_bytes, dropped_bytes, limit, and the
// strategy and token figures when they apply). Without it nothing is
// logged.
func WithLogger(l hclog.Logger) Option {
	return func(c *capper) {
		if l != nil {
			c.logger = l
		}
	}
}

// capper fits results to their tool's policy.
type capper struct {
	policies shape.PolicyFunc
	logger   hclog.Logger
}

func newCapper(policies shape.PolicyFunc, opts []Option) *capper {
	if policies == nil {
		policies = shape.Default // the default limit and the head rule for every tool
	}
	c := &capper{policies: policies, logger: hclog.NewNullLogger()}
	for _, opt := range opts {
		if opt != nil {
			opt(c)
		}
	}
	return c
}

func (c *capper) text(tool, callID, s string) string {
	out, t, changed := shape.Text(s, c.policies(tool))
	if changed {
		shape.Log(c.logger, tool, callID, t)
	}
	return out
}

// stream reads sr to its end and returns its text, fitted to the tool's
// policy, as a one-chunk stream.
func (c *capper) stream(tool, callID string, sr *schema.StreamReader[string]) (*schema.StreamReader[string], error) {
	defer sr.Close()
	out, t, changed, err := shape.Read(&streamReader{sr: sr}, c.policies(tool))
	if err != nil {
		return nil, fmt.Errorf("eino: tool %s, call %s: %w", tool, callID, err)
	}
	if changed {
		shape.Log(c.logger, tool, callID, t)
	}
	return schema.StreamReaderFromArray([]string{out}), nil
}

// result fits the text parts of an enhanced tool's result, which share the
// tool's policy; a cut result is a copy.
func (c *capper) result(tool, callID string, res *schema.ToolResult) *schema.ToolResult {
	if res == nil {
		return nil
	}
	var texts []string
	for _, p := range res.Parts {
		if p.Type == schema.ToolPartTypeText {
			texts = append(texts, p.Text)
		}
	}
	cut, t, changed := shape.Texts(texts, c.policies(tool))
	if !changed {
		return res
	}
	shape.Log(c.logger, tool, callID, t)
	out := &schema.ToolResult{Parts: make([]schema.ToolOutputPart, len(res.Parts))}
	i := 0
	for j, p := range res.Parts {
		if p.Type == schema.ToolPartTypeText {
			p.Text = cut[i]
			i++
		}
		out.Parts[j] = p
	}
	return out
}

func (c *capper) resultStream(tool, callID string, sr *schema.StreamReader[*schema.ToolResult]) (*schema.StreamReader[*schema.ToolResult], error) {
	defer sr.Close()
	var chunks []*schema.ToolResult
	for {
		chunk, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, chunk)
	}
	whole, err := schema.ConcatToolResults(chunks)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.ToolResult{c.result(tool, callID, whole)}), nil
}

// streamReader reads a string stream as bytes.
type streamReader struct {
	sr   *schema.StreamReader[string]
	rest string
}

func (r *streamReader) Read(p []byte) (int, error) {
	for r.rest == "" {
		chunk, err := r.sr.Recv()
		if err != nil {
			return 0, err // io.EOF at the end, as io.Reader wants
		}
		r.rest = chunk
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// ToolMiddleware returns a [compose.ToolMiddleware] that fits the result of
// every tool call a [compose.ToolsNode] runs to policies(tool name), for
// invokable, streamable and enhanced tools alike:
//
//	compose.NewToolNode(ctx, &compose.ToolsNodeConfig{
//		Tools:               tools,
//		ToolCallMiddlewares: []compose.ToolMiddleware{eino.ToolMiddleware(policies.For)},
//	})
//
// A ToolsNode applies its middleware in the order listed, the first
// outermost: list this one first, so that it sees what the others made of
// the result. The policy holds per call: a ToolsNode runs a message's calls
// in parallel, and each gets its own tool's policy.
func ToolMiddleware(policies shape.PolicyFunc, opts ...Option) compose.ToolMiddleware {
	c := newCapper(policies, opts)
	return compose.ToolMiddleware{
		Invokable: func(next compose.InvokableToolEndpoint) compose.InvokableToolEndpoint {
			return func(ctx context.Context, in *compose.ToolInput) (*compose.ToolOutput, error) {
				out, err := next(ctx, in)
				if err != nil || out == nil {
					return out, err
				}
				return &compose.ToolOutput{Result: c.text(in.Name, in.CallID, out.Result)}, nil
			}
		},
		Streamable: func(next compose.StreamableToolEndpoint) compose.StreamableToolEndpoint {
			return func(ctx context.Context, in *compose.ToolInput) (*compose.StreamToolOutput, error) {
				out, err := next(ctx, in)
				if err != nil || out == nil || out.Result == nil {
					return out, err
				}
				sr, err := c.stream(in.Name, in.CallID, out.Result)
				if err != nil {
					return nil, err
				}
				return &compose.StreamToolOutput{Result: sr}, nil
			}
		},
		EnhancedInvokable: func(next compose.EnhancedInvokableToolEndpoint) compose.EnhancedInvokableToolEndpoint {
			return func(ctx context.Context, in *compose.ToolInput) (*compose.EnhancedInvokableToolOutput, error) {
				out, err := next(ctx, in)
				if err != nil || out == nil {
					return out, err
				}
				return &compose.EnhancedInvokableToolOutput{Result: c.result(in.Name, in.CallID, out.Result)}, nil
			}
		},
		EnhancedStreamable: func(next compose.EnhancedStreamableToolEndpoint) compose.EnhancedStreamableToolEndpoint {
			return func(ctx context.Context, in *compose.ToolInput) (*compose.EnhancedStreamableToolOutput, error) {
				out, err := next(ctx, in)
				if err != nil || out == nil || out.Result == nil {
					return out, err
				}
				sr, err := c.resultStream(in.Name, in.CallID, out.Result)
				if err != nil {
					return nil, err
				}
				return &compose.EnhancedStreamableToolOutput{Result: sr}, nil
			}
		},
	}
}

// AgentMiddleware returns an [adk.ChatModelAgentMiddleware] that fits the
// result of every tool call of an [adk.ChatModelAgent] to policies(tool
// name), through its WrapInvokableToolCall, WrapStreamableToolCall and
// enhanced counterparts; its other hooks do nothing:
//
//	adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
//		// ...
//		Handlers: []adk.ChatModelAgentMiddleware{eino.AgentMiddleware(policies.For)},
//	})
func AgentMiddleware(policies shape.PolicyFunc, opts ...Option) adk.ChatModelAgentMiddleware {
	return &agentMiddleware{BaseChatModelAgentMiddleware: &adk.BaseChatModelAgentMiddleware{}, c: newCapper(policies, opts)}
}

type agentMiddleware struct {
	*adk.BaseChatModelAgentMiddleware
	c *capper
}

func (m *agentMiddleware) WrapInvokableToolCall(_ context.Context, next adk.InvokableToolCallEndpoint, tc *adk.ToolContext) (adk.InvokableToolCallEndpoint, error) {
	return func(ctx context.Context, args string, opts ...tool.Option) (string, error) {
		out, err := next(ctx, args, opts...)
		if err != nil {
			return out, err
		}
		return m.c.text(tc.Name, tc.CallID, out), nil
	}, nil
}

func (m *agentMiddleware) WrapStreamableToolCall(_ context.Context, next adk.StreamableToolCallEndpoint, tc *adk.ToolContext) (adk.StreamableToolCallEndpoint, error) {
	return func(ctx context.Context, args string, opts ...tool.Option) (*schema.StreamReader[string], error) {
		sr, err := next(ctx, args, opts...)
		if err != nil || sr == nil {
			return sr, err
		}
		return m.c.stream(tc.Name, tc.CallID, sr)
	}, nil
}

func (m *agentMiddleware) WrapEnhancedInvokableToolCall(_ context.Context, next adk.EnhancedInvokableToolCallEndpoint, tc *adk.ToolContext) (adk.EnhancedInvokableToolCallEndpoint, error) {
	return func(ctx context.Context, arg *schema.ToolArgument, opts ...tool.Option) (*schema.ToolResult, error) {
		res, err := next(ctx, arg, opts...)
		if err != nil {
			return res, err
		}
		return m.c.result(tc.Name, tc.CallID, res), nil
	}, nil
}

func (m *agentMiddleware) WrapEnhancedStreamableToolCall(_ context.Context, next adk.EnhancedStreamableToolCallEndpoint, tc *adk.ToolContext) (adk.EnhancedStreamableToolCallEndpoint, error) {
	return func(ctx context.Context, arg *schema.ToolArgument, opts ...tool.Option) (*schema.StreamReader[*schema.ToolResult], error) {
		sr, err := next(ctx, arg, opts...)
		if err != nil || sr == nil {
			return sr, err
		}
		return m.c.resultStream(tc.Name, tc.CallID, sr)
	}, nil
}
