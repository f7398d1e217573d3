package mcpproxy_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/logtest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// TestCutLogsOneLine: a tools/call result the proxy cuts is one log line,
// whichever of its parts were cut (its text as the reader kept it or as
// the chain's cap cut it, its blocks, its structuredContent), and one that
// fits is none. The line names the parts: the content's figures, and
// structuredContent's in fields of their own when it was cut too.
func TestCutLogsOneLine(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1200) // 19,200 bytes: over 16 KiB
	huge := strings.Repeat("0123456789abcdef", 9000)
	doc, _ := rowsDoc(2000)
	grow := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			r := next(ctx, call)
			return r.WithContent(*r.Content + strings.Repeat("+", 4000))
		}
	}
	for _, tt := range []struct {
		name   string
		mw     []chain.Middleware
		result string
		want   []string   // per line: the fields present beyond the usual ones
		bytes  [2]float64 // the line's original_bytes and kept_bytes, when set
	}{
		{"fits", nil, `{"content":[{"type":"text","text":"ok"}]}`, nil, [2]float64{}},
		{"text", nil, `{"content":[{"type":"text","text":"` + big + `"}]}`, []string{""}, [2]float64{19200, 16333}},
		{"text past any limit", nil, `{"content":[{"type":"text","text":"` + huge + `"}]}`, []string{""}, [2]float64{144000, 16331}},
		{"two blocks", nil, `{"content":[{"type":"text","text":"` + big + `"},{"type":"text","text":"` + big + `"}]}`, []string{""}, [2]float64{}},
		{"structuredContent", nil, `{"content":[{"type":"text","text":"ok"}],"structuredContent":` + doc + `}`, []string{"part"}, [2]float64{}},
		{"text and structuredContent", nil, `{"content":[{"type":"text","text":"` + big + `"}],"structuredContent":` + doc + `}`, []string{"structured_kept_bytes"}, [2]float64{}},
		// The cap cut the server's 144,000 bytes, a middleware added 4,000,
		// the ceiling cut again: the line has the server's size.
		{"cut, grown, cut again", []chain.Middleware{grow}, `{"content":[{"type":"text","text":"` + huge + `"}]}`, []string{"ceiling_kept_bytes"}, [2]float64{144000, 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncBuffer
			logger := hclog.New(&hclog.LoggerOptions{Output: &logs, JSONFormat: true, Level: hclog.Info})
			s := newRawSession(t, mcpproxy.Options{Logger: logger, Middleware: tt.mw})
			s.toServer(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rows"}}`)
			s.atServer()
			s.toClient(`{"jsonrpc":"2.0","id":2,"result":` + tt.result + `}`)
			s.atClient()

			var got []string
			for _, m := range logtest.Lines(t, bytes.NewBufferString(logs.String())) {
				if m["@message"] != "tool result truncated" {
					continue
				}
				if tt.bytes[0] != 0 && m["original_bytes"] != tt.bytes[0] {
					t.Errorf("original_bytes = %v, want %v", m["original_bytes"], tt.bytes[0])
				}
				if tt.bytes[1] != 0 && m["kept_bytes"] != tt.bytes[1] {
					t.Errorf("kept_bytes = %v, want %v", m["kept_bytes"], tt.bytes[1])
				}
				extra := ""
				for _, k := range []string{"part", "structured_kept_bytes", "ceiling_kept_bytes"} {
					if _, ok := m[k]; ok {
						extra = k
					}
				}
				got = append(got, extra)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("cut log lines (-want +got):\n%s\nlogs:\n%s", diff, logs.String())
			}
		})
	}
}
