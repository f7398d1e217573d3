package mcpproxy_test

import (
	"bufio"
	"bytes"
	"path/filepath"
	"testing"

	"github.com/toolcap/toolcap/internal/fault"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// BenchmarkRelayLarge times the proxy on the results of docs/benchmarks.md
// "Relay: a result kept whole", in process over pipes (the fault server's
// text, escapes and multi-byte characters, at a 64 MiB limit): 100 MB cut
// with the rest kept in a directory store, the same without the rest, and
// 60 MB kept whole (over the message bound, forwarded as it came).
func BenchmarkRelayLarge(b *testing.B) {
	for _, tc := range []struct {
		name string
		size int64
		keep bool
	}{
		{"100MB-rest", 100_000_000, true},
		{"100MB-norest", 100_000_000, false},
		{"60MB-whole", 60_000_000, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			lim := &manifest.ToolOutputLimits{DefaultMaxBytes: 64 << 20}
			opts := mcpproxy.Options{Policies: policytest.Of(b, &manifest.WorkerManifest{ToolOutput: lim})}
			if tc.keep {
				d, err := rest.OpenDir(filepath.Join(b.TempDir(), "rest"), rest.Config{})
				if err != nil {
					b.Fatal(err)
				}
				opts.Rest = d
			} else {
				lim.KeepRest = ptr(false)
			}
			s := newRawSession(&testing.T{}, opts)
			var frame bytes.Buffer
			frame.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`)
			if err := fault.WriteJSON(&frame, tc.size); err != nil {
				b.Fatal(err)
			}
			frame.WriteString("\"}]}}\n")
			b.SetBytes(int64(frame.Len()))
			for b.Loop() {
				s.toServer(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big"}}`)
				readLine(b, s.sr)
				go func() { _, _ = s.server.Write(frame.Bytes()) }()
				if n := skipLine(b, s.cr); n < 1000 {
					b.Fatalf("a response of %d bytes", n)
				}
			}
		})
	}
}

// skipLine reads past one line of r, and returns its length.
func skipLine(b *testing.B, r *bufio.Reader) int {
	n := 0
	for {
		line, err := r.ReadSlice('\n')
		n += len(line)
		switch {
		case err == nil:
			return n
		case err != bufio.ErrBufferFull:
			b.Fatalf("reading a response: %v", err)
		}
	}
}
