// Package mcpsdk caps tool results in programs built on the official MCP Go
// SDK, [github.com/modelcontextprotocol/go-sdk/mcp].
//
// A server author adds [ServerMiddleware] with
// [mcp.Server.AddReceivingMiddleware], so that every tools/call result the
// server sends is held to its tool's policy; an agent that calls MCP
// servers (adk-go's MCP toolset among them, which uses a go-sdk client)
// adds [ClientMiddleware] with [mcp.Client.AddSendingMiddleware], so that
// every result it receives is capped before it reaches the model:
//
//	policies, err := m.Policies() // m: a loaded *manifest.WorkerManifest
//	// ...
//	server.AddReceivingMiddleware(mcpsdk.ServerMiddleware(policies.For))
//	client.AddSendingMiddleware(mcpsdk.ClientMiddleware(policies.For))
//
// # What is capped
//
// [CapResult] does the work, for the [shape.Policy] of the tool the request
// named, through package shape, by the rules toolcap mcp applies to the
// results it relays: the byte limit, the token limit and the strategy
// (head, head_tail and its keep_lines, json) all hold.
//
//   - The content blocks share the policy ([shape.Content]): the text
//     blocks, joined, are cut as one text by the policy, then every block
//     (images, audio and blobs by their base64 size, embedded resources
//     and resource links by what a model may read of them) and the notes
//     are brought within the byte limit together; a block that does not
//     fit is cut or dropped, and a note says what was dropped.
//   - structuredContent, when there is one, is held to the same policy on
//     its own, by its JSON encoding ([shape.JSON]: a shorter valid JSON
//     value; a note at the end of the content says which containers lost
//     elements). When no valid form fits, it is dropped.
//
// IsError and _meta are left alone. A result within its policy is returned
// as it is; a cut one is a copy, so the tool's own value is never changed.
//
// The SDK's middleware order depends on the order of calls: a later
// AddReceivingMiddleware call wraps the earlier ones. Add this middleware
// last on a server (outermost: it sees what the others made of the result)
// and first on a client.
//
// A nil [shape.PolicyFunc] gives every tool the default limit, 16384 bytes,
// and the head rule.
package mcpsdk

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/capvalue"
	"github.com/toolcap/toolcap/internal/shape"
)

// Option configures [ServerMiddleware] and [ClientMiddleware].
type Option func(*options)

type options struct {
	logger hclog.Logger
}

// WithLogger sets the logger each cut is reported to, at info level, with
// the field set every toolcap front end logs a cut with ([shape.LogFields]);
// a result whose content and structuredContent are both cut logs two
// lines. Without it the middleware is silent.
func WithLogger(l hclog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// ServerMiddleware returns a receiving middleware for an [mcp.Server] that
// fits the result of every tools/call request to policies(tool name).
// Other methods pass through untouched.
func ServerMiddleware(policies shape.PolicyFunc, opts ...Option) mcp.Middleware {
	return capping(policies, opts)
}

// ClientMiddleware returns a sending middleware for an [mcp.Client] that
// fits the result of every tools/call request it sends to policies(tool
// name), before [mcp.ClientSession.CallTool] returns it. Other methods
// pass through untouched.
func ClientMiddleware(policies shape.PolicyFunc, opts ...Option) mcp.Middleware {
	return capping(policies, opts)
}

func capping(policies shape.PolicyFunc, opts []Option) mcp.Middleware {
	if policies == nil {
		policies = shape.Default // the default limit and the head rule for every tool
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
			capped, content, structured := CapResult(out, policies(tool))
			for _, t := range []chain.Truncation{content, structured} {
				if t != (chain.Truncation{}) {
					shape.Log(o.logger, tool, "", t)
				}
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

// CapResult returns res with its content and its structuredContent each
// fitted to p (see the package doc), and the figures of each cut: of the
// content in bytes of its blocks as [shape.Size] measures them, of
// structuredContent in bytes of its JSON encoding; a figure is the zero
// value when its part was not changed. When neither was, it returns res
// itself; otherwise a copy, sharing the blocks it did not cut.
func CapResult(res *mcp.CallToolResult, p shape.Policy) (out *mcp.CallToolResult, content, structured chain.Truncation) {
	if res == nil {
		return nil, content, structured
	}
	sc, s, scChanged := fitStructured(res.StructuredContent, p)
	in := blocks(res.Content)
	fitted, fig := shape.Content(in, p, s.Note)
	// A note about structuredContent alone changes the content too.
	contentChanged := fig.Changed()
	if !contentChanged && !scChanged {
		return res, chain.Truncation{}, chain.Truncation{}
	}
	c := *res
	if scChanged {
		c.StructuredContent = sc
		structured = s.Figures
	}
	if contentChanged {
		c.Content = fromBlocks(res.Content, in, fitted)
	}
	if fig.BlocksChanged() {
		content = fig.Figures
	}
	return &c, content, structured
}

// fitStructured fits a result's structuredContent to p by its JSON
// encoding ([capvalue.JSON]): the cut value and what shape.JSON said of it,
// or nil when no valid form fits (its figures then drop it whole). changed
// is false when v is kept as it is, as is a value that cannot be encoded
// (the SDK cannot send it either).
func fitStructured(v any, p shape.Policy) (any, shape.Structured, bool) {
	if v == nil {
		return nil, shape.Structured{}, false
	}
	out, s, ok := capvalue.JSON(v, p)
	switch {
	case ok:
		return out, s, s.Cut
	case s.Raw == nil:
		return v, shape.Structured{}, false
	}
	n := len(s.Raw)
	return nil, shape.Structured{Figures: shape.DroppedFigures(n, p)}, true
}

// blocks returns what package shape sees of content, block by block, as
// toolcap mcp measures it: a text block its text; an image or audio block
// its MIME type and its data as sent (base64); an embedded resource its
// URI, MIME type and blob (base64), and its text, the part shape may cut
// when it has no blob (a blob resource is kept whole or dropped); a
// resource link its URI, name, title and MIME type, its description as the
// part shape may cut. The JSON around them, _meta and annotations are not
// counted, as the JSON wrapping of a text block is not; any other block
// counts its JSON encoding.
func blocks(content []mcp.Content) []shape.Block {
	out := make([]shape.Block, len(content))
	for i, c := range content {
		out[i] = block(c)
	}
	return out
}

func block(c mcp.Content) shape.Block {
	b64 := base64.StdEncoding.EncodedLen
	switch b := c.(type) {
	case *mcp.TextContent:
		if b != nil {
			return shape.Block{Kind: shape.BlockText, Text: b.Text}
		}
	case *mcp.ImageContent:
		if b != nil {
			return shape.Block{Kind: shape.BlockImage, Fixed: len(b.MIMEType) + b64(len(b.Data)), Name: b.MIMEType}
		}
	case *mcp.AudioContent:
		if b != nil {
			return shape.Block{Kind: shape.BlockAudio, Fixed: len(b.MIMEType) + b64(len(b.Data)), Name: b.MIMEType}
		}
	case *mcp.EmbeddedResource:
		if b != nil && b.Resource != nil {
			r := b.Resource
			blk := shape.Block{Kind: shape.BlockResource, Name: r.URI,
				Fixed: len(r.URI) + len(r.MIMEType) + b64(len(r.Blob))}
			if len(r.Blob) > 0 {
				blk.Fixed += len(r.Text) // a blob resource is kept whole or dropped
			} else {
				blk.Text = r.Text
			}
			return blk
		}
	case *mcp.ResourceLink:
		if b != nil {
			return shape.Block{Kind: shape.BlockLink, Text: b.Description,
				Fixed: len(b.URI) + len(b.Name) + len(b.Title) + len(b.MIMEType), Name: b.URI}
		}
	}
	// Another kind of block, or a nil one: all of it counts.
	enc, _ := json.Marshal(c)
	return shape.Block{Kind: shape.BlockOther, Fixed: len(enc)}
}

// fromBlocks turns the blocks package shape returned ([shape.Content],
// [shape.Fit]) for in, the [blocks] of content, back into content: a block
// kept as it was is the tool's own (annotations, _meta and all), a cut one
// a copy with its new text, a note shape added a new text block. content
// is not modified. toolcap mcp reads and writes the blocks' JSON itself, by
// the same measures, without decoding them into the SDK's types.
func fromBlocks(content []mcp.Content, in, fitted []shape.Block) []mcp.Content {
	out := make([]mcp.Content, 0, len(fitted))
	for _, f := range fitted {
		if f.From < 0 {
			out = append(out, &mcp.TextContent{Text: f.Text})
			continue
		}
		c := content[f.From]
		if f.Text == in[f.From].Text {
			out = append(out, c)
			continue
		}
		switch b := c.(type) {
		case *mcp.TextContent:
			cc := *b
			cc.Text = f.Text
			c = &cc
		case *mcp.EmbeddedResource:
			rc := *b.Resource
			rc.Text = f.Text
			cc := *b
			cc.Resource = &rc
			c = &cc
		case *mcp.ResourceLink:
			cc := *b
			cc.Description = f.Text
			c = &cc
		}
		out = append(out, c)
	}
	return out
}
