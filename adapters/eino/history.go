package eino

import (
	"context"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/toolcap/toolcap/history"
)

// HistoryMiddleware returns an [adk.ChatModelAgentMiddleware] that ages the
// history of an [adk.ChatModelAgent] before each model call, through its
// BeforeModelRewriteState: with a, the content of the oldest tool messages
// becomes the stub that names the read of the whole original toolcap's
// store keeps ([history.Ager]). A tool message keeps its ToolCallID,
// ToolName and place, so every tool call stays paired with its result; one
// with multimodal content, or whose ToolCallID no earlier assistant tool
// call has, is counted and never aged. Its other hooks do nothing:
//
//	adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
//		// ...
//		Handlers: []adk.ChatModelAgentMiddleware{eino.AgentMiddleware(policies.For), eino.HistoryMiddleware(ager)},
//	})
//
// The state's messages are not changed in place: the state returned holds
// a copy of the slice, with copies of the messages it ages. The agent
// keeps that state, so a stub is the same bytes on every later call.
func HistoryMiddleware(a *history.Ager) adk.ChatModelAgentMiddleware {
	return &historyMiddleware{BaseChatModelAgentMiddleware: &adk.BaseChatModelAgentMiddleware{}, a: a}
}

type historyMiddleware struct {
	*adk.BaseChatModelAgentMiddleware
	a *history.Ager
}

func (m *historyMiddleware) BeforeModelRewriteState(ctx context.Context, state *adk.ChatModelAgentState, _ *adk.ModelContext) (context.Context, *adk.ChatModelAgentState, error) {
	if state == nil {
		return ctx, state, nil
	}
	msgs, _, err := Age(ctx, m.a, state.Messages)
	if err != nil {
		return ctx, state, err
	}
	out := *state
	out.Messages = msgs
	return ctx, &out, nil
}

// Age ages the tool messages of msgs with a, as [HistoryMiddleware] does
// before each model call, for an Eino program with a loop of its own: it
// returns the messages with each aged tool message's content replaced by
// its stub, and the pass. msgs itself is not changed.
func Age(ctx context.Context, a *history.Ager, msgs []*schema.Message) ([]*schema.Message, history.Pass, error) {
	var (
		results []history.Result
		where   []int
	)
	calls := map[string]bool{} // tool call ids so far
	for i, m := range msgs {
		if m == nil {
			continue
		}
		switch m.Role {
		case schema.Assistant:
			for _, c := range m.ToolCalls {
				calls[c.ID] = true
			}
		case schema.Tool:
			multimodal := len(m.MultiContent) > 0 || len(m.UserInputMultiContent) > 0
			results = append(results, history.Result{ID: m.ToolCallID, Tool: m.ToolName, Text: m.Content, Keep: multimodal || !calls[m.ToolCallID]})
			where = append(where, i)
		}
	}
	p, err := a.Age(ctx, results)
	if err != nil || len(p.Aged) == 0 {
		return msgs, p, err
	}
	out := append([]*schema.Message(nil), msgs...)
	for _, g := range p.Aged {
		m := *out[where[g.Index]]
		m.Content = g.Stub
		out[where[g.Index]] = &m
	}
	return out, p, nil
}
