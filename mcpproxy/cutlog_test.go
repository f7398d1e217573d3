package mcpproxy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

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
	for _, tt := range []struct {
		name   string
		result string
		want   []string // per line: the fields present beyond the usual ones
	}{
		{"fits", `{"content":[{"type":"text","text":"ok"}]}`, nil},
		{"text", `{"content":[{"type":"text","text":"` + big + `"}]}`, []string{""}},
		{"text past any limit", `{"content":[{"type":"text","text":"` + huge + `"}]}`, []string{""}},
		{"two blocks", `{"content":[{"type":"text","text":"` + big + `"},{"type":"text","text":"` + big + `"}]}`, []string{""}},
		{"structuredContent", `{"content":[{"type":"text","text":"ok"}],"structuredContent":` + doc + `}`, []string{"part"}},
		{"text and structuredContent", `{"content":[{"type":"text","text":"` + big + `"}],"structuredContent":` + doc + `}`, []string{"structured_kept_bytes"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncBuffer
			logger := hclog.New(&hclog.LoggerOptions{Output: &logs, JSONFormat: true, Level: hclog.Info})
			s := newRawSession(t, mcpproxy.Options{Logger: logger})
			s.toServer(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rows"}}`)
			s.atServer()
			s.toClient(`{"jsonrpc":"2.0","id":2,"result":` + tt.result + `}`)
			s.atClient()

			var got []string
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				if line == "" {
					continue
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("log line %q: %v", line, err)
				}
				if m["@message"] != "tool result truncated" {
					continue
				}
				extra := ""
				for _, k := range []string{"part", "structured_kept_bytes"} {
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
