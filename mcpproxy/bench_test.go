package mcpproxy_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// BenchmarkRelayResult times the proxy's own work on one tools/call round
// trip, in process over pipes: the request forwarded, the result read,
// checked and forwarded (uncut: the tool's limit is above it) or capped.
// 10MB-relay is past the read buffer (4 MiB), forwarded as it came;
// 10MB-kept is cut to a limit that keeps most of it.
func BenchmarkRelayResult(b *testing.B) {
	off := false
	for _, tc := range []struct {
		name       string
		size       int
		limit      int
		unredacted bool // redact = false
	}{
		{"small", 64, 0, false},
		{"small-unredacted", 64, 0, true},
		{"1MB-relay", 1 << 20, 4 << 20, false},
		{"1MB-relay-unredacted", 1 << 20, 4 << 20, true},
		{"1MB-capped", 1 << 20, 0, false},
		{"10MB-relay", 10 << 20, 64 << 20, false},
		{"10MB-kept", 10 << 20, 8 << 20, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var m *manifest.WorkerManifest
			if tc.limit > 0 || tc.unredacted {
				l := &manifest.ToolOutputLimits{}
				if tc.limit > 0 {
					l.PerTool = map[string]manifest.ToolEntry{"t": {MaxBytes: tc.limit}}
				}
				if tc.unredacted {
					l.Redaction.Redact = &off
				}
				m = &manifest.WorkerManifest{ToolOutput: l}
			}
			s := newRawSession(&testing.T{}, mcpproxy.Options{Policies: policytest.Of(b, m)})
			enc, _ := json.Marshal(bigText(tc.size))
			b.SetBytes(int64(len(enc)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				s.toServer(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t"}}`, i))
				readLine(b, s.sr)
				s.toClient(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%s}]}}`, i, enc))
				readLine(b, s.cr)
			}
		})
	}
}
