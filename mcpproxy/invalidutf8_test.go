package mcpproxy_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// TestRelayInvalidUTF8 is issue 22's first case end to end: a server's text
// of bytes that are not valid UTF-8 reaches the client within the limit in
// UTF-8 bytes of what the client decodes, and the marker's N and _meta say
// what was kept in that measure. A Go server would have replaced the bytes
// when encoding, so the frame is written by hand, the raw bytes inside the
// JSON string.
func TestRelayInvalidUTF8(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
	}{
		{"100,000 0xFF", strings.Repeat("\xff", 100_000)},
		{"within the limit as bytes, over it decoded", strings.Repeat("\xff", 10_000)},
		{"larger than the buffer", strings.Repeat("ok \xe2\x82\xff é\n", 1<<20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawSession(t, mcpproxy.Options{MaxMessageBytes: 32 << 20})
			s.toServer(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"}}`)
			s.atServer()
			// Newlines escaped; every other byte raw, invalid ones included.
			s.toClient(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + strings.ReplaceAll(tc.text, "\n", `\n`) + `"}]}}`)
			line := s.atClient()
			var got struct {
				ID     int `json:"id"`
				Result struct {
					Content []struct{ Text string }
					Meta    map[string]map[string]any `json:"_meta"`
				}
			}
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatal(err)
			}
			if got.ID != 7 || len(got.Result.Content) != 1 {
				t.Fatalf("got %.300s", line)
			}
			out := got.Result.Content[0].Text // as the client decodes it
			decoded, _ := cut.ReplaceInvalid(tc.text)
			if len(out) > manifest.DefaultMaxBytes || !utf8.ValidString(out) {
				t.Fatalf("the client decodes %d bytes (valid UTF-8 %v) at a limit of %d", len(out), utf8.ValidString(out), manifest.DefaultMaxBytes)
			}
			ms := cut.FindMarkers(out)
			if len(ms) != 1 {
				t.Fatalf("%d markers in %.200q", len(ms), out[max(0, len(out)-200):])
			}
			kept := ms[0].Start
			if out[:kept] != decoded[:kept] {
				t.Errorf("the text kept is not the start of the decoded text")
			}
			want := map[string]any{"unit": "bytes", "limit": 16384.0, "original": float64(len(decoded)), "kept": float64(kept), "dropped": float64(len(decoded) - kept)}
			if diff := cmp.Diff(want, got.Result.Meta["toolcap/truncation"]); diff != "" {
				t.Errorf("_meta figures (-want +got):\n%s", diff)
			}
			if ms[0].N != len(decoded)-kept {
				t.Errorf("marker says %d dropped, the decoded text less what was kept is %d", ms[0].N, len(decoded)-kept)
			}
			t.Logf("%s: %s bytes sent, the client reads %d bytes (%d U+FFFD), marker N %d", tc.name, strconv.Itoa(len(tc.text)), len(out), strings.Count(out, "\uFFFD"), ms[0].N)
		})
	}
}
