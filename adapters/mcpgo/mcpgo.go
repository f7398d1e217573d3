// Package mcpgo caps tool results in MCP servers and clients built on
// [github.com/mark3labs/mcp-go] (v1.2.1).
//
// A server author adds [Middleware] to the server's tool handler chain, with
// [server.WithToolHandlerMiddleware] or [server.MCPServer.Use], so that every
// tool result the server sends is held to its tool's policy. An agent that
// calls MCP servers through an mcp-go client wraps it with [WrapClient]: its
// CallTool returns capped results, whatever the server sent.
//
//	policies, err := m.Policies() // m: a loaded *manifest.WorkerManifest
//	// ...
//	s := server.NewMCPServer("logs", "1.0.0", server.WithToolHandlerMiddleware(mcpgo.Middleware(policies.For)))
//	c := mcpgo.WrapClient(mcpClient, policies.For)
//
// # What is capped
//
// [CapResult] does the work, for the [shape.Policy] of the tool, through
// package shape, by the rules toolcap mcp applies to the results it
// relays: the byte limit, the token limit and the strategy (head,
// head_tail and its keep_lines, json) all hold.
//
//   - The content blocks share the policy ([shape.Content]): the text
//     blocks, joined, are cut as one text by the policy, then every block
//     (images, audio and blobs by their base64 size, embedded resources
//     and resource links by what a model may read of them) and the notes
//     are brought within the byte limit together; a block that does not
//     fit is cut or dropped, and a note says what was dropped.
//   - structuredContent, when there is one, is held to the same policy on
//     its own, by its JSON ([shape.JSON]: a shorter valid JSON value; a
//     note at the end of the content says which containers lost
//     elements). When no valid form fits, it is dropped. A client's
//     result is measured by the JSON it arrived as (RawStructuredContent),
//     which the cut keeps in step.
//
// IsError and _meta are left alone. A result within its policy is
// returned as it is; a cut one is a copy.
//
// A nil [shape.PolicyFunc] gives every tool the default limit, 16384 bytes,
// and the head rule.
package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/capvalue"
	"github.com/toolcap/toolcap/internal/shape"
)

// Option configures [Middleware] and [WrapClient].
type Option func(*options)

type options struct {
	logger hclog.Logger
}

// WithLogger sets the logger each cut is reported to, at info level, with
// the field set every toolcap front end logs a cut with ([shape.LogFields]);
// a result whose content and structuredContent are both cut logs two
// lines. Without it nothing is logged.
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

func (o options) capped(tool string, res *mcp.CallToolResult, p shape.Policy) *mcp.CallToolResult {
	out, content, structured := CapResult(res, p)
	for _, t := range []chain.Truncation{content, structured} {
		if t != (chain.Truncation{}) {
			shape.Log(o.logger, tool, "", t)
		}
	}
	return out
}

// Middleware returns a [server.ToolHandlerMiddleware] that fits the result
// of every tool the server runs to policies(tool name). mcp-go applies tool
// middleware in the order added, the first outermost: add this one first,
// so that it sees what the others made of the result.
func Middleware(policies shape.PolicyFunc, opts ...Option) server.ToolHandlerMiddleware {
	if policies == nil {
		policies = shape.Default // the default limit and the head rule for every tool
	}
	o := newOptions(opts)
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := next(ctx, req)
			if err != nil || res == nil {
				return res, err
			}
			return o.capped(req.Params.Name, res, policies(req.Params.Name)), nil
		}
	}
}

// Client is an mcp-go client whose CallTool caps results. Every other
// method is the wrapped client's.
type Client struct {
	client.MCPClient
	policies shape.PolicyFunc
	opts     options
}

// WrapClient returns c with CallTool fitting each result to policies(tool
// name). c is usually a [*client.Client].
func WrapClient(c client.MCPClient, policies shape.PolicyFunc, opts ...Option) *Client {
	if policies == nil {
		policies = shape.Default // the default limit and the head rule for every tool
	}
	return &Client{MCPClient: c, policies: policies, opts: newOptions(opts)}
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
	return c.opts.capped(req.Params.Name, res, c.policies(req.Params.Name)), nil
}

// CapResult returns res with its content and its structuredContent each
// fitted to p (see the package doc), and the figures of each cut: of the
// content in bytes of its blocks as [shape.Size] measures them, of
// structuredContent in bytes of its JSON; a figure is the zero value when
// its part was not changed. When neither was, it returns res itself;
// otherwise a copy, sharing the blocks it did not cut. Content blocks may
// be values or pointers, as mcp-go allows both; a cut block keeps its
// form.
func CapResult(res *mcp.CallToolResult, p shape.Policy) (out *mcp.CallToolResult, content, structured chain.Truncation) {
	if res == nil {
		return nil, content, structured
	}
	sc, raw, s, scChanged := fitStructured(res, p)
	in := blocks(res.Content)
	fitted, fig := shape.Content(in, p, s.Note)
	// A note about structuredContent alone changes the content too.
	contentChanged := fig.Changed()
	if !contentChanged && !scChanged {
		return res, chain.Truncation{}, chain.Truncation{}
	}
	c := *res
	if scChanged {
		c.StructuredContent, c.RawStructuredContent = sc, raw
		structured = s.Figures
	}
	if contentChanged {
		c.Content = rebuild(res.Content, in, fitted)
	}
	if fig.BlocksChanged() {
		content = fig.Figures
	}
	return &c, content, structured
}

// fitStructured fits a result's structuredContent to p: by the JSON it
// arrived as (RawStructuredContent, on a client) when there is one, else by
// its encoding ([capvalue.JSON]). It returns the value and raw JSON to set
// (both nil when no valid form fits: the value is dropped, and its figures
// say so) and what shape.JSON said of the cut. changed is false when the
// value is kept as it is, as is a value that cannot be encoded (mcp-go
// cannot send it either).
func fitStructured(res *mcp.CallToolResult, p shape.Policy) (v any, raw json.RawMessage, s shape.Structured, changed bool) {
	if raw := res.RawStructuredContent; len(raw) > 0 && json.Valid(raw) {
		s, ok := shape.JSON(raw, p, nil)
		switch {
		case !ok:
			return nil, nil, dropped(len(raw), p), true
		case !s.Cut:
			return res.StructuredContent, raw, s, false
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(s.Raw))
		dec.UseNumber() // as capvalue decodes: every digit kept
		if err := dec.Decode(&v); err != nil {
			return nil, nil, dropped(len(raw), p), true
		}
		return v, s.Raw, s, true
	}
	if res.StructuredContent == nil {
		return nil, nil, shape.Structured{}, false
	}
	v, s, ok := capvalue.JSON(res.StructuredContent, p)
	switch {
	case ok:
		return v, nil, s, s.Cut
	case s.Raw == nil:
		return res.StructuredContent, nil, shape.Structured{}, false
	}
	return nil, nil, dropped(len(s.Raw), p), true
}

// dropped is what a structured value of n bytes dropped whole reports.
func dropped(n int, p shape.Policy) shape.Structured {
	return shape.Structured{Figures: shape.DroppedFigures(n, p)}
}

// blocks returns what package shape sees of content, block by block, as
// toolcap mcp measures it: a text block its text; an image or audio block
// its MIME type and its data (base64); an embedded resource its URI, MIME
// type and blob (base64), a text resource's text as the part shape may
// cut; a resource link its URI, name, title and MIME type, its description
// as the part shape may cut. The JSON around them, _meta and annotations
// are not counted, as the JSON wrapping of a text block is not; any other
// block counts its JSON encoding. Blocks may be values or pointers.
func blocks(content []mcp.Content) []shape.Block {
	out := make([]shape.Block, len(content))
	for i, c := range content {
		out[i] = block(c)
	}
	return out
}

func block(c mcp.Content) shape.Block {
	switch b := deref(c).(type) {
	case mcp.TextContent:
		return shape.Block{Kind: shape.BlockText, Text: b.Text}
	case mcp.ImageContent:
		return shape.Block{Kind: shape.BlockImage, Fixed: len(b.MIMEType) + len(b.Data), Name: b.MIMEType}
	case mcp.AudioContent:
		return shape.Block{Kind: shape.BlockAudio, Fixed: len(b.MIMEType) + len(b.Data), Name: b.MIMEType}
	case mcp.EmbeddedResource:
		switch r := b.Resource.(type) {
		case mcp.TextResourceContents:
			return shape.Block{Kind: shape.BlockResource, Text: r.Text, Fixed: len(r.URI) + len(r.MIMEType), Name: r.URI}
		case *mcp.TextResourceContents:
			if r != nil {
				return shape.Block{Kind: shape.BlockResource, Text: r.Text, Fixed: len(r.URI) + len(r.MIMEType), Name: r.URI}
			}
		case mcp.BlobResourceContents:
			return shape.Block{Kind: shape.BlockResource, Fixed: len(r.URI) + len(r.MIMEType) + len(r.Blob), Name: r.URI}
		case *mcp.BlobResourceContents:
			if r != nil {
				return shape.Block{Kind: shape.BlockResource, Fixed: len(r.URI) + len(r.MIMEType) + len(r.Blob), Name: r.URI}
			}
		}
	case mcp.ResourceLink:
		return shape.Block{Kind: shape.BlockLink, Text: b.Description,
			Fixed: len(b.URI) + len(b.Name) + len(b.Title) + len(b.MIMEType), Name: b.URI}
	}
	// Another kind of block, or a nil one: all of it counts.
	enc, _ := json.Marshal(c)
	return shape.Block{Kind: shape.BlockOther, Fixed: len(enc)}
}

// deref returns the value a pointer block points to, so that block reads
// values and pointers alike; a nil pointer stays as it is.
func deref(c mcp.Content) mcp.Content {
	switch b := c.(type) {
	case *mcp.TextContent:
		if b != nil {
			return *b
		}
	case *mcp.ImageContent:
		if b != nil {
			return *b
		}
	case *mcp.AudioContent:
		if b != nil {
			return *b
		}
	case *mcp.EmbeddedResource:
		if b != nil {
			return *b
		}
	case *mcp.ResourceLink:
		if b != nil {
			return *b
		}
	}
	return c
}

// rebuild turns the blocks shape.Fit returned for in, the Blocks of
// content, back into content: a block kept as it was is the tool's own, a
// cut one a copy with its new text, of the same form (value or pointer), a
// note a new text block.
func rebuild(content []mcp.Content, in, fitted []shape.Block) []mcp.Content {
	out := make([]mcp.Content, 0, len(fitted))
	for _, f := range fitted {
		switch {
		case f.From < 0:
			out = append(out, mcp.NewTextContent(f.Text))
		case f.Text == in[f.From].Text:
			out = append(out, content[f.From])
		default:
			out = append(out, withText(content[f.From], f.Text))
		}
	}
	return out
}

// withText returns a copy of the block c, whose text shape cut, with text
// in place of its own, of the same form (value or pointer).
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
	case mcp.ResourceLink:
		c.Description = text
		return c
	case *mcp.ResourceLink:
		cc := *c
		cc.Description = text
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
