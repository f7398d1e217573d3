package shape_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

func TestErrorMessage(t *testing.T) {
	m1000 := strings.Repeat("m", 1000)
	small := []byte(`{"line":3}`)
	big := []byte(`"` + strings.Repeat("d", 200) + `"`)
	tests := []struct {
		name        string
		msg         string
		data        []byte
		p           shape.Policy
		wantMsg     string
		wantData    []byte
		wantFig     chain.Truncation
		wantChanged bool
	}{
		{name: "fits", msg: "no such file", data: small, p: shape.Bytes(128),
			wantMsg: "no such file", wantData: small},
		{name: "small data kept, the message cut to the rest", msg: m1000, data: small, p: shape.Bytes(400),
			wantMsg: head(m1000, 390), wantData: small, wantChanged: true,
			wantFig: chain.Truncation{Limit: 400, OriginalBytes: 1010, KeptBytes: kept(m1000, 390) + 10, DroppedBytes: 1000 - kept(m1000, 390)}},
		{name: "data over a quarter of the limit dropped", msg: m1000, data: big, p: shape.Bytes(400),
			wantMsg: head(m1000, 400), wantChanged: true,
			wantFig: chain.Truncation{Limit: 400, OriginalBytes: 1202, KeptBytes: kept(m1000, 400), DroppedBytes: 1202 - kept(m1000, 400)}},
		{name: "data dropped, the message fits", msg: "short", data: big, p: shape.Bytes(200),
			wantMsg: "short", wantChanged: true,
			wantFig: chain.Truncation{Limit: 200, OriginalBytes: 207, KeptBytes: 5, DroppedBytes: 202}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, data, fig, changed := shape.ErrorMessage(tt.msg, tt.data, tt.p)
			if diff := cmp.Diff(tt.wantMsg, msg); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantData, data); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFig, fig); diff != "" {
				t.Errorf("figures (-want +got):\n%s", diff)
			}
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if n := len(msg) + len(data); n > tt.p.MaxBytes {
				t.Errorf("%d bytes, over the limit of %d", n, tt.p.MaxBytes)
			}
		})
	}
}

// A message is cut by the policy's strategy and held to its token limit.
func TestErrorMessagePolicy(t *testing.T) {
	var b strings.Builder
	for range 200 {
		b.WriteString("at frame\n")
	}
	b.WriteString("panic: boom")
	msg := b.String()
	got, _, fig, _ := shape.ErrorMessage(msg, nil, shape.Policy{MaxBytes: 300, Spec: cut.Spec{Keep: cut.KeepHeadTail}})
	if !strings.HasSuffix(got, "panic: boom") || len(got) > 300 || fig.Strategy != "head_tail" {
		t.Errorf("head_tail: %q, figures %+v", got, fig)
	}
	data := []byte(`"0123456789"`)
	got, keptData, fig, _ := shape.ErrorMessage(msg, data, shape.Policy{MaxBytes: 4000, MaxTokens: 100, Counter: perByte{}})
	if len(got)+len(keptData) > 100 || string(keptData) != string(data) || fig.LimitTokens != 100 {
		t.Errorf("tokens: %d + %d tokens, figures %+v", len(got), len(keptData), fig)
	}
}

// An error read in part: the head rule from what was kept, the count
// exact; data not kept is dropped.
func TestErrorMessageHead(t *testing.T) {
	full := strings.Repeat("é", 5000)
	h := []byte(full[:404])
	want, dropped := cut.Head(full, 400)
	msg, data, fig, changed := shape.ErrorMessageHead(h, len(full), nil, 1<<20, shape.Bytes(400))
	if diff := cmp.Diff(want, msg); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	wantFig := chain.Truncation{Limit: 400, OriginalBytes: len(full) + 1<<20, KeptBytes: len(full) - dropped, DroppedBytes: dropped + 1<<20}
	if diff := cmp.Diff(wantFig, fig); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
	if data != nil || !changed {
		t.Errorf("data %q, changed %v", data, changed)
	}
	// Held whole, within the limit: as ErrorMessage.
	msg, data, _, changed = shape.ErrorMessageHead([]byte("ok"), 2, []byte("1"), 1, shape.Bytes(400))
	if msg != "ok" || string(data) != "1" || changed {
		t.Errorf("got %q %q %v", msg, data, changed)
	}
}
