// Package anthropiccap ages the history of an agent built on the Anthropic
// Go SDK (github.com/anthropics/anthropic-sdk-go/v2): before each Messages
// request, [Age] replaces the content of the oldest tool_result blocks by
// the stubs of a [history.Ager], which name the read of the whole original
// that toolcap's store keeps. A tool_result keeps its tool_use_id, its
// is_error, its cache_control and its place, so every tool_use stays
// paired with its result and the request is one the API accepts.
//
// The model reads a stub back with toolcap's read tool, which a
// toolcap worker answers (worker.Worker.ReadTool gives its definition to
// list beside the program's tools).
package anthropiccap

import (
	"context"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolcap/toolcap/history"
)

// Age ages the tool results of msgs, the history an agent is about to
// send, with a: it returns the history with each aged tool_result's
// content replaced by one text block, its stub, and the pass. Keep the
// history it returns, and send it: the stubs are then the same bytes on
// every later request, and the prompt cache breaks once per batch.
//
// msgs itself is not changed: the messages and blocks that change are
// copies. A tool_result that holds anything but text (an image, a
// document) is counted and never aged; so is one whose tool_use_id no
// earlier assistant message's tool_use has (a request the API refuses
// anyway, which Age does not make worse). The error is the context's.
func Age(ctx context.Context, a *history.Ager, msgs []anthropic.MessageParam) ([]anthropic.MessageParam, history.Pass, error) {
	type at struct{ msg, block int }
	var (
		results []history.Result
		where   []at
	)
	tools := map[string]string{} // tool_use id -> tool name, so far
	for i, m := range msgs {
		switch {
		case m.OfAssistant != nil:
			for _, b := range m.OfAssistant.Content {
				if b.OfToolUse != nil {
					tools[b.OfToolUse.ID] = b.OfToolUse.Name
				}
			}
		case m.OfUser != nil:
			for j, b := range m.OfUser.Content {
				tr := b.OfToolResult
				if tr == nil {
					continue
				}
				name, paired := tools[tr.ToolUseID]
				text, textOnly := contentText(tr.Content)
				results = append(results, history.Result{ID: tr.ToolUseID, Tool: name, Text: text, Keep: !textOnly || !paired})
				where = append(where, at{i, j})
			}
		}
	}
	p, err := a.Age(ctx, results)
	if err != nil || len(p.Aged) == 0 {
		return msgs, p, err
	}
	out := append([]anthropic.MessageParam(nil), msgs...)
	copied := map[int]bool{}
	for _, g := range p.Aged {
		w := where[g.Index]
		if !copied[w.msg] {
			u := *out[w.msg].OfUser
			u.Content = append([]anthropic.ContentBlockParamUnion(nil), u.Content...)
			out[w.msg] = anthropic.MessageParam{OfUser: &u}
			copied[w.msg] = true
		}
		blocks := out[w.msg].OfUser.Content
		tr := *blocks[w.block].OfToolResult
		stub := anthropic.TextBlockParam{Text: g.Stub}
		for _, c := range tr.Content {
			if c.OfText != nil && c.OfText.CacheControl.Type != "" {
				// A cache breakpoint on a text block of the result
				// stays a breakpoint on the stub.
				stub.CacheControl = c.OfText.CacheControl
			}
		}
		tr.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &stub}}
		blocks[w.block] = anthropic.ContentBlockParamUnion{OfToolResult: &tr}
	}
	return out, p, nil
}

// contentText returns the text of a tool_result's content, its text
// blocks joined by newlines, and whether it holds text only.
func contentText(content []anthropic.ToolResultBlockParamContentUnion) (string, bool) {
	if len(content) == 1 && content[0].OfText != nil {
		return content[0].OfText.Text, true
	}
	var b strings.Builder
	textOnly := true
	for _, c := range content {
		if c.OfText == nil {
			textOnly = false
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.OfText.Text)
	}
	return b.String(), textOnly
}
