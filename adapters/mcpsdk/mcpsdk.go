// Package mcpsdk caps tool results in programs built on the official MCP Go
// SDK, [github.com/modelcontextprotocol/go-sdk/mcp].
//
// A server author adds [ServerMiddleware] with
// [mcp.Server.AddReceivingMiddleware], so that every tools/call result the
// server sends is held to its tool's limit; an agent that calls MCP servers
// (adk-go's MCP toolset among them, which uses a go-sdk client) adds
// [ClientMiddleware] with [mcp.Client.AddSendingMiddleware], so that every
// result it receives is capped before it reaches the model:
//
//	server.AddReceivingMiddleware(mcpsdk.ServerMiddleware(m.Limits().For))
//	client.AddSendingMiddleware(mcpsdk.ClientMiddleware(m.Limits().For))
//
// # What is capped
//
// [CapResult] does the work, for the limit of the tool the request named.
// The text of the result's text blocks and embedded text resources shares
// the limit (cut by [middleware.Truncate]'s rule: the head that fits, then
// the marker, marker included), and structuredContent, when there is one,
// is held to the same limit on its own, by its JSON encoding
// ([capvalue.Cap]), so each of the two copies a client may hand its model
// fits. Images, audio, blobs and links are left alone, as are IsError and
// _meta. A result within its limit is returned as it is; a cut one is a
// copy, so the tool's own value is never changed.
//
// The SDK's middleware order depends on the order of calls: a later
// AddReceivingMiddleware call wraps the earlier ones. Add this middleware
// last on a server (outermost: it sees what the others made of the result)
// and first on a client.
//
// Limits are a func(tool string) int such as (*manifest.ToolOutputLimits).For;
// a nil one gives every tool the default limit, 16384 bytes.
//
// [middleware.Truncate]: https://pkg.go.dev/github.com/toolcap/toolcap/middleware#Truncate
// [capvalue.Cap]: https://pkg.go.dev/github.com/toolcap/toolcap/adapters/capvalue#Cap
package mcpsdk

import (
	"context"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/adapters/capvalue"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/middleware"
)

// Option configures [ServerMiddleware] and [ClientMiddleware].
type Option func(*options)

type options struct {
	logger hclog.Logger
}

// WithLogger sets the logger each cut is reported to, at info level, with
// tool, original_bytes, dropped_bytes and limit. Without it the middleware
// is silent.
func WithLogger(l hclog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// ServerMiddleware returns a receiving middleware for an [mcp.Server] that
// caps the result of every tools/call request to limits(tool name). Other
// methods pass through untouched.
func ServerMiddleware(limits middleware.Limits, opts ...Option) mcp.Middleware {
	return capping(limits, opts)
}

// ClientMiddleware returns a sending middleware for an [mcp.Client] that caps
// the result of every tools/call request it sends to limits(tool name),
// before [mcp.ClientSession.CallTool] returns it. Other methods pass through
// untouched.
func ClientMiddleware(limits middleware.Limits, opts ...Option) mcp.Middleware {
	return capping(limits, opts)
}

func capping(limits middleware.Limits, opts []Option) mcp.Middleware {
	if limits == nil {
		limits = (*manifest.ToolOutputLimits)(nil).For // the default limit for every tool
	}
	o := options{logger: hclog.NewNullLogger()}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil || method != "tools/call" {
				return res, err
			}
			out, ok := res.(*mcp.CallToolResult)
			if !ok || out == nil {
				return res, err
			}
			tool := toolName(req)
			limit := limits(tool)
			capped, dropped := CapResult(out, limit)
			if dropped > 0 && o.logger.IsInfo() {
				o.logger.Info("tool result truncated", "tool", tool, "dropped_bytes", dropped, "limit", limit)
			}
			return capped, nil
		}
	}
}

// toolName returns the tool a tools/call request names: the server receives
// [mcp.CallToolParamsRaw], the client sends [mcp.CallToolParams].
func toolName(req mcp.Request) string {
	if req == nil {
		return ""
	}
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParamsRaw:
		if p != nil {
			return p.Name
		}
	case *mcp.CallToolParams:
		if p != nil {
			return p.Name
		}
	}
	return ""
}

// CapResult returns res with its text and its structuredContent each held to
// limit bytes (see the package doc), and the number of bytes dropped. When
// nothing is over the limit it returns res itself and 0; otherwise a copy,
// sharing the blocks it did not cut.
func CapResult(res *mcp.CallToolResult, limit int) (*mcp.CallToolResult, int) {
	if res == nil {
		return nil, 0
	}
	var texts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			texts = append(texts, c.Text)
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				texts = append(texts, c.Resource.Text)
			}
		}
	}
	cut, dropped := capvalue.Strings(texts, limit)
	structured, d := capvalue.Cap(res.StructuredContent, limit)
	if dropped+d == 0 {
		return res, 0
	}
	out := *res
	out.StructuredContent = structured
	if dropped > 0 {
		out.Content = make([]mcp.Content, len(res.Content))
		i := 0
		for j, c := range res.Content {
			switch c := c.(type) {
			case *mcp.TextContent:
				if cut[i] != c.Text {
					cc := *c
					cc.Text = cut[i]
					out.Content[j] = &cc
				} else {
					out.Content[j] = c
				}
				i++
				continue
			case *mcp.EmbeddedResource:
				if c.Resource != nil && c.Resource.Text != "" {
					if cut[i] != c.Resource.Text {
						rc := *c.Resource
						rc.Text = cut[i]
						cc := *c
						cc.Resource = &rc
						out.Content[j] = &cc
					} else {
						out.Content[j] = c
					}
					i++
					continue
				}
			}
			out.Content[j] = c
		}
	}
	return &out, dropped + d
}
