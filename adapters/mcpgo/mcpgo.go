// Package mcpgo caps tool results in MCP servers and clients built on
// [github.com/mark3labs/mcp-go] (v1.2.1).
//
// A server author adds [Middleware] to the server's tool handler chain, with
// [server.WithToolHandlerMiddleware] or [server.MCPServer.Use], so that every
// tool result the server sends is held to its tool's limit. An agent that
// calls MCP servers through an mcp-go client wraps it with [WrapClient]: its
// CallTool returns capped results, whatever the server sent.
//
//	s := server.NewMCPServer("logs", "1.0.0", server.WithToolHandlerMiddleware(mcpgo.Middleware(m.Limits().For)))
//	c := mcpgo.WrapClient(mcpClient, m.Limits().For)
//
// # What is capped
//
// [CapResult] does the work, as toolcap's MCP proxy does: the text of the
// result's text blocks and embedded text resources shares the tool's limit,
// each cut by [middleware.Truncate]'s rule (the head that fits, then the
// marker, marker included), and structuredContent, when there is one, is
// held to the same limit on its own by its JSON encoding ([capvalue.Cap]).
// Images, audio, blobs and IsError are left alone. A result within its
// limit is returned as it is; a cut one is a copy.
//
// Limits are a func(tool string) int such as (*manifest.ToolOutputLimits).For;
// a nil one gives every tool the default limit, 16384 bytes.
//
// [middleware.Truncate]: https://pkg.go.dev/github.com/toolcap/toolcap/middleware#Truncate
// [capvalue.Cap]: https://pkg.go.dev/github.com/toolcap/toolcap/adapters/capvalue#Cap
package mcpgo

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolcap/toolcap/adapters/capvalue"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/middleware"
)

// Option configures [Middleware] and [WrapClient].
type Option func(*options)

type options struct {
	logger hclog.Logger
}

// WithLogger sets the logger each cut is reported to, at info level, with
// tool, dropped_bytes and limit. Without it nothing is logged.
func WithLogger(l hclog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

func newOptions(opts []Option) options {
	o := options{logger: hclog.NewNullLogger()}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

func (o options) capped(tool string, res *mcp.CallToolResult, limit int) *mcp.CallToolResult {
	out, dropped := CapResult(res, limit)
	if dropped > 0 && o.logger.IsInfo() {
		o.logger.Info("tool result truncated", "tool", tool, "dropped_bytes", dropped, "limit", limit)
	}
	return out
}

// Middleware returns a [server.ToolHandlerMiddleware] that caps the result
// of every tool the server runs to limits(tool name). mcp-go applies tool
// middleware in the order added, the first outermost: add this one first,
// so that it sees what the others made of the result.
func Middleware(limits middleware.Limits, opts ...Option) server.ToolHandlerMiddleware {
	if limits == nil {
		limits = (*manifest.ToolOutputLimits)(nil).For // the default limit for every tool
	}
	o := newOptions(opts)
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := next(ctx, req)
			if err != nil || res == nil {
				return res, err
			}
			return o.capped(req.Params.Name, res, limits(req.Params.Name)), nil
		}
	}
}

// Client is an mcp-go client whose CallTool caps results. Every other
// method is the wrapped client's.
type Client struct {
	client.MCPClient
	limits middleware.Limits
	opts   options
}

// WrapClient returns c with CallTool capping each result to limits(tool
// name). c is usually a [*client.Client].
func WrapClient(c client.MCPClient, limits middleware.Limits, opts ...Option) *Client {
	if limits == nil {
		limits = (*manifest.ToolOutputLimits)(nil).For // the default limit for every tool
	}
	return &Client{MCPClient: c, limits: limits, opts: newOptions(opts)}
}

// CallTool calls the wrapped client's CallTool and caps its result.
func (c *Client) CallTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if c.MCPClient == nil {
		return nil, errors.New("mcpgo: WrapClient was given a nil client")
	}
	res, err := c.MCPClient.CallTool(ctx, req)
	if err != nil || res == nil {
		return res, err
	}
	return c.opts.capped(req.Params.Name, res, c.limits(req.Params.Name)), nil
}

// CapResult returns res with its text and its structuredContent each held to
// limit bytes (see the package doc), and the number of bytes dropped. When
// nothing is over the limit it returns res itself and 0; otherwise a copy.
// Content blocks may be values or pointers, as mcp-go allows both.
func CapResult(res *mcp.CallToolResult, limit int) (*mcp.CallToolResult, int) {
	if res == nil {
		return nil, 0
	}
	var texts []string
	for _, c := range res.Content {
		if s, ok := textOf(c); ok {
			texts = append(texts, s)
		}
	}
	cut, dropped := capvalue.Strings(texts, limit)
	structured, d := capvalue.Cap(res.StructuredContent, limit)
	if dropped+d == 0 {
		return res, 0
	}
	out := *res
	if d > 0 {
		out.StructuredContent = structured
		if res.RawStructuredContent != nil {
			// Keep the raw copy in step, so no reader gets the uncut one.
			out.RawStructuredContent, _ = json.Marshal(structured)
		}
	}
	if dropped > 0 {
		out.Content = make([]mcp.Content, len(res.Content))
		i := 0
		for j, c := range res.Content {
			if _, ok := textOf(c); ok {
				out.Content[j] = withText(c, cut[i])
				i++
			} else {
				out.Content[j] = c
			}
		}
	}
	return &out, dropped + d
}

// textOf returns the text of a text block or an embedded text resource.
func textOf(c mcp.Content) (string, bool) {
	switch c := c.(type) {
	case mcp.TextContent:
		return c.Text, true
	case *mcp.TextContent:
		return c.Text, c != nil
	case mcp.EmbeddedResource:
		return resourceText(c.Resource)
	case *mcp.EmbeddedResource:
		if c != nil {
			return resourceText(c.Resource)
		}
	}
	return "", false
}

func resourceText(r mcp.ResourceContents) (string, bool) {
	switch r := r.(type) {
	case mcp.TextResourceContents:
		return r.Text, true
	case *mcp.TextResourceContents:
		return r.Text, r != nil
	}
	return "", false
}

// withText returns a copy of the block c (for which textOf is true) with
// text in place of its own, of the same kind (value or pointer).
func withText(c mcp.Content, text string) mcp.Content {
	switch c := c.(type) {
	case mcp.TextContent:
		c.Text = text
		return c
	case *mcp.TextContent:
		cc := *c
		cc.Text = text
		return &cc
	case mcp.EmbeddedResource:
		c.Resource = resourceWithText(c.Resource, text)
		return c
	case *mcp.EmbeddedResource:
		cc := *c
		cc.Resource = resourceWithText(c.Resource, text)
		return &cc
	}
	return c
}

func resourceWithText(r mcp.ResourceContents, text string) mcp.ResourceContents {
	switch r := r.(type) {
	case mcp.TextResourceContents:
		r.Text = text
		return r
	case *mcp.TextResourceContents:
		rc := *r
		rc.Text = text
		return &rc
	}
	return r
}
