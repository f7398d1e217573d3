package pin_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/internal/shape"
)

// fields counts a token per space-separated field and per space: at most
// one token per byte, as a Counter must.
type fields struct{}

func (fields) Count(s string) int { return len(strings.Fields(s)) + strings.Count(s, " ") }

func TestCapWithTokens(t *testing.T) {
	policy := func(tool string) shape.Policy {
		if tool == "Read" {
			return shape.Policy{MaxBytes: 4096, Counter: fields{}} // no token limit of its own
		}
		return shape.Policy{MaxBytes: 4096, MaxTokens: 100, Counter: fields{}}
	}
	text := strings.Repeat("word ", 400) // 2,000 bytes, 800 tokens
	wantTok, st := cut.CutTokens(text, 4096, 100, fields{}, cut.Spec{})
	tests := []struct {
		name    string
		tool    string
		content string
		want    string
		trunc   chain.Truncation
		ok      bool
	}{
		{"tokens cut", "Grep", text, wantTok, chain.Truncation{
			Limit: 4096, OriginalBytes: 2000, KeptBytes: st.Kept, DroppedBytes: st.Dropped, LimitTokens: 100,
			Unit: "tokens", OriginalTokens: 800, KeptTokens: st.KeptTokens, DroppedTokens: st.DroppedTokens,
		}, true},
		{"no token limit", "Read", text, text, chain.Truncation{}, false},
		{"within both", "Grep", "a few words", "a few words", chain.Truncation{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := pin.Cap(nil, pin.WithPolicy(policy))(returning(chain.Result{Content: ptr(tt.content)}))
			res := h(context.Background(), chain.Call{Tool: tt.tool})
			if diff := cmp.Diff(tt.want, *res.Content); diff != "" {
				t.Errorf("content mismatch (-want +got):\n%s", diff)
			}
			tr, ok := res.Truncation()
			if diff := cmp.Diff(tt.trunc, tr); diff != "" || ok != tt.ok {
				t.Errorf("Truncation() = _, %v; mismatch (-want +got):\n%s", ok, diff)
			}
			if got := (fields{}).Count(*res.Content); got > 100 && tt.tool != "Read" {
				t.Errorf("%d tokens, over the limit of 100", got)
			}
		})
	}
	if !strings.HasSuffix(wantTok, cut.TokenMarker(st.DroppedTokens)) || st.DroppedTokens < 1 {
		t.Errorf("a cut by tokens ends in %q", wantTok[max(0, len(wantTok)-60):])
	}
}

// TestCeilingWithTokens: a middleware that grows a result past its token
// limit is cut again, by tokens.
func TestCeilingWithTokens(t *testing.T) {
	grow := strings.Repeat("more ", 300)
	h := pin.Ceiling(nil, pin.WithPolicy(func(string) shape.Policy {
		return shape.Policy{MaxBytes: 1 << 20, MaxTokens: 64, Counter: fields{}}
	}))(
		returning(chain.Result{Content: ptr(grow)}))
	res := h(context.Background(), chain.Call{Tool: "Grep"})
	c, ok := res.Ceiling()
	if !ok || c.Unit != "tokens" || (fields{}).Count(*res.Content) > 64 {
		t.Fatalf("ceiling %+v, %v; %d tokens", c, ok, (fields{}).Count(*res.Content))
	}
}
