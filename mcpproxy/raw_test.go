package mcpproxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// rawSession drives both sides of a Proxy with raw frames.
type rawSession struct {
	t      *testing.T
	client pipeConn // the test's client end
	server pipeConn // the test's server end
	cr, sr *bufio.Reader
	done   chan error
}

func newRawSession(t *testing.T, opts mcpproxy.Options) *rawSession {
	t.Helper()
	p, err := mcpproxy.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	serverEnd, proxyUp := pipePair()
	clientEnd, proxyDown := pipePair()
	s := &rawSession{
		t: t, client: clientEnd, server: serverEnd,
		cr:   bufio.NewReaderSize(clientEnd.r, 1<<20),
		sr:   bufio.NewReaderSize(serverEnd.r, 1<<20),
		done: make(chan error, 1),
	}
	go func() {
		s.done <- p.Serve(context.Background(), mcpproxy.StreamConn(proxyDown), mcpproxy.StreamConn(proxyUp))
	}()
	t.Cleanup(func() {
		s.client.Close()
		s.server.Close()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return")
		}
	})
	return s
}

// write writes one frame (asynchronously, as a peer would) to w.
func (s *rawSession) write(w io.Writer, frame string) {
	go func() { _, _ = io.WriteString(w, frame+"\n") }()
}

func (s *rawSession) toServer(frame string) { s.write(s.client, frame) }
func (s *rawSession) toClient(frame string) { s.write(s.server, frame) }

// frameWait is how long readLine waits for a frame before it calls the
// relay stuck: long enough for the largest results of these tests under the
// race detector on a loaded 2-core machine (a 15 MB structuredContent takes
// over 10 s there).
const frameWait = 60 * time.Second

func readLine(t testing.TB, r *bufio.Reader) string {
	t.Helper()
	type line struct {
		s   string
		err error
	}
	ch := make(chan line, 1)
	go func() {
		s, err := r.ReadString('\n')
		ch <- line{s, err}
	}()
	select {
	case l := <-ch:
		if l.err != nil {
			t.Fatalf("reading a frame: %v", l.err)
		}
		return strings.TrimSuffix(l.s, "\n")
	case <-time.After(frameWait):
		t.Fatalf("no frame within %v", frameWait)
		return ""
	}
}

func (s *rawSession) atServer() string { return readLine(s.t, s.sr) }
func (s *rawSession) atClient() string { return readLine(s.t, s.cr) }

func TestRelayForwardsAsItCame(t *testing.T) {
	s := newRawSession(t, mcpproxy.Options{})
	frames := []struct {
		toServer bool
		frame    string
	}{
		{true, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`},
		{false, `{"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}},"jsonrpc":"2.0","id":1}`},
		{true, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{true, `{"jsonrpc":"2.0","id":"a","method":"tools/list"}`},
		{false, `{"result":{"tools":[{"name":"z","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},{"name":"a","inputSchema":{"type":"object"}}]},"jsonrpc":"2.0","id":"a"}`},
		{false, `{"jsonrpc":"2.0","id":7,"method":"roots/list"}`},
		{true, `{"jsonrpc":"2.0","id":7,"result":{"roots":[{"uri":"file:///tmp","name":"tmp"}]}}`},
		{true, `{"jsonrpc":"2.0","id":2,"method":"x/unknown","params":{"zeta":1,"alpha":[1,2,  3]}}`},
		{false, `{"jsonrpc":"2.0","id":2,"result":{"zeta":1,"alpha":{"b":1,"a":2}},"_extra":true}`},
		{true, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"z","arguments":{}}}`},
		{false, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ok"}],"structuredContent":{"z":1,"a":2},"_meta":{"k":"v"}}}`},
	}
	for _, f := range frames {
		if f.toServer {
			s.toServer(f.frame)
			if got := s.atServer(); got != f.frame {
				t.Errorf("the server got\n%s\nwant\n%s", got, f.frame)
			}
		} else {
			s.toClient(f.frame)
			if got := s.atClient(); got != f.frame {
				t.Errorf("the client got\n%s\nwant\n%s", got, f.frame)
			}
		}
	}
}

func TestRelaySkipsStrayLines(t *testing.T) {
	s := newRawSession(t, mcpproxy.Options{})
	s.toClient("debug: starting up\n{not json}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}")
	if got, want := s.atClient(), `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`; got != want {
		t.Errorf("after stray lines the client got %s, want %s", got, want)
	}
}

// bigText is a text of n bytes with escapes and multi-byte characters.
func bigText(n int) string {
	unit := "line \"quoted\" \\ é 日本\tend\n"
	return strings.ToValidUTF8(strings.Repeat(unit, n/len(unit)+1)[:n], "")
}

func TestRelayCapsWhileReading(t *testing.T) {
	for _, tc := range []struct {
		name   string
		size   int
		idLast bool
	}{
		{"in the buffer", 100_000, false},
		{"in the buffer, id last", 100_000, true},
		{"larger than the buffer", 9 << 20, false},
		{"larger than the buffer, id last", 9 << 20, true},
		{"larger than the message bound, id last", 20 << 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawSession(t, mcpproxy.Options{MaxMessageBytes: 16 << 20})
			s.toServer(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}}`)
			s.atServer()
			text := bigText(tc.size)
			tc.size = len(text)
			enc, _ := json.Marshal(text)
			res := `"result":{"content":[{"type":"text","text":` + string(enc) + `}]}`
			frame := `{"jsonrpc":"2.0","id":5,` + res + `}`
			if tc.idLast {
				frame = `{` + res + `,"jsonrpc":"2.0","id":5}`
			}
			s.toClient(frame)
			var got struct {
				ID     int `json:"id"`
				Result struct {
					Content []struct{ Text string }
					Meta    map[string]map[string]any `json:"_meta"`
				}
			}
			if err := json.Unmarshal([]byte(s.atClient()), &got); err != nil {
				t.Fatal(err)
			}
			if got.ID != 5 || len(got.Result.Content) != 1 {
				t.Fatalf("got %+v", got)
			}
			out := got.Result.Content[0].Text
			m := markerRE.FindStringSubmatch(out)
			if len(out) > manifest.DefaultMaxBytes || m == nil {
				t.Fatalf("got %d bytes ending %q", len(out), out[max(0, len(out)-60):])
			}
			if err := capcheck.Text(text, out, shape.Bytes(manifest.DefaultMaxBytes)); err != nil {
				t.Error(err)
			}
			kept := len(out) - len(m[0])
			if want := fmt.Sprint(tc.size - kept); m[1] != want || out[:kept] != text[:kept] {
				t.Errorf("marker count %s, want %s (kept %d)", m[1], want, kept)
			}
			fig := got.Result.Meta["toolcap/truncation"]
			if diff := cmp.Diff(map[string]any{"unit": "bytes", "limit": 16384.0, "original": float64(tc.size), "kept": float64(kept), "dropped": float64(tc.size - kept)}, fig); diff != "" {
				t.Errorf("figures (-want +got):\n%s", diff)
			}
			// The session goes on.
			s.toClient(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
			if got := s.atClient(); got != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
				t.Errorf("after the big result the client got %s", got)
			}
		})
	}
}

func TestRelayBoundsOtherMessages(t *testing.T) {
	s := newRawSession(t, mcpproxy.Options{MaxMessageBytes: 1 << 20})
	s.toServer(`{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"big://x"}}`)
	s.atServer()
	enc, _ := json.Marshal(bigText(2 << 20))
	s.toClient(`{"jsonrpc":"2.0","id":9,"result":{"contents":[{"uri":"big://x","text":` + string(enc) + `}]}}`)
	var got struct {
		ID    int
		Error struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal([]byte(s.atClient()), &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != 9 || got.Error.Code != -32603 || !strings.Contains(got.Error.Message, "over the proxy's bound of 1048576 bytes") {
		t.Errorf("got %+v", got)
	}
}

// A log of any size through the proxy with head_tail: the end of the log,
// where a failure is, reaches the client; a line matching keep_lines from
// the middle too; the count is exact.
func TestRelayHeadTailWhileReading(t *testing.T) {
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{
		PerTool: map[string]manifest.ToolEntry{"t": {Strategy: manifest.Strategy{Keep: cut.KeepHeadTail, KeepLines: []string{`^error: `}}}},
	}}
	for _, lines := range []int{20_000, 1_000_000} { // in the buffer, and past it
		t.Run(fmt.Sprint(lines), func(t *testing.T) {
			var b strings.Builder
			for i := range lines {
				fmt.Fprintf(&b, "ok %d\n", i)
				if i == lines/2 {
					b.WriteString("error: x\n")
				}
			}
			b.WriteString("FAIL: TestX")
			text := b.String()
			s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, m)})
			s.toServer(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}`)
			s.atServer()
			enc, _ := json.Marshal(text)
			s.toClient(`{"result":{"content":[{"type":"text","text":` + string(enc) + `}]},"jsonrpc":"2.0","id":1}`)
			var got struct {
				Result struct{ Content []struct{ Text string } }
			}
			if err := json.Unmarshal([]byte(s.atClient()), &got); err != nil {
				t.Fatal(err)
			}
			out := got.Result.Content[0].Text
			want, st := cut.Cut(text, manifest.DefaultMaxBytes, cut.Spec{Keep: cut.KeepHeadTail, KeepLines: []*regexp.Regexp{regexp.MustCompile(`^error: `)}})
			if diff := cmp.Diff(want, out); diff != "" {
				t.Errorf("the proxy's cut differs from cut.Cut's (-want +got):\n%.2000s", diff)
			}
			if err := capcheck.Text(text, out, shape.Bytes(manifest.DefaultMaxBytes)); err != nil {
				t.Error(err)
			}
			if !strings.HasSuffix(out, "FAIL: TestX") || !strings.Contains(out, "\nerror: x\n") || st.Dropped == 0 {
				t.Errorf("out ends %q", out[max(0, len(out)-40):])
			}
		})
	}
}

// Results whose members are not what MCP says still get an answer, valid
// JSON, capped when over the limit.
func TestRelayOddResults(t *testing.T) {
	long, _ := json.Marshal(bigText(100_000))
	for _, tc := range []struct{ name, result string }{
		{"structuredContent null", `{"content":[{"type":"text","text":` + string(long) + `}],"structuredContent":null}`},
		{"content null", `{"content":null}`},
		{"isError null", `{"content":[],"isError":null}`},
		{"a block that is a string", `{"content":["x",{"type":"text","text":` + string(long) + `}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawSession(t, mcpproxy.Options{})
			s.toServer(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t"}}`)
			s.atServer()
			s.toClient(`{"jsonrpc":"2.0","id":4,"result":` + tc.result + `}`)
			got := s.atClient()
			var resp struct {
				ID     int
				Result json.RawMessage
			}
			if err := json.Unmarshal([]byte(got), &resp); err != nil || resp.ID != 4 || resp.Result == nil {
				t.Fatalf("got %.300s (%v)", got, err)
			}
			if len(got) > 3*manifest.DefaultMaxBytes {
				t.Errorf("the answer is %d bytes", len(got))
			}
		})
	}
}

// A response of the client's over the bound is answered to the server with
// an error in its place.
func TestRelayBoundsClientResponses(t *testing.T) {
	s := newRawSession(t, mcpproxy.Options{MaxMessageBytes: 1000})
	s.toClient(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}`)
	s.atClient()
	s.toServer(`{"jsonrpc":"2.0","id":"s1","result":{"content":{"type":"text","text":"` + strings.Repeat("x", 2000) + `"}}}`)
	var got struct {
		ID    string
		Error struct{ Message string }
	}
	if err := json.Unmarshal([]byte(s.atServer()), &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != "s1" || !strings.Contains(got.Error.Message, "the client's response was") {
		t.Errorf("the server got %+v", got)
	}
}

// A tools/call whose params hold a value of the wrong type after the
// tool's name is still that tool's call: its policy cuts the result, as
// before the params were decoded once for every use (encoding/json fills
// in what decodes before it reports the type error).
func TestRelayToolCallParamsTypeError(t *testing.T) {
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{
		PerTool: map[string]manifest.ToolEntry{"search": {MaxBytes: 200}},
	}}
	for _, params := range []string{
		`{"name":"search","arguments":{"q":"x"}}`,
		`{"name":"search","arguments":{"q":"x"},"extra":[1,2],"_meta":7}`,
		`{"name":"search","arguments":{"q":"x"},"name":7}`,
	} {
		t.Run(params, func(t *testing.T) {
			s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, m)})
			s.toServer(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`)
			s.atServer()
			text := strings.Repeat("x", 1000)
			s.toClient(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`)
			var got struct {
				Result struct{ Content []struct{ Text string } }
			}
			if err := json.Unmarshal([]byte(s.atClient()), &got); err != nil {
				t.Fatal(err)
			}
			want, _ := cut.Cut(text, 200, cut.Spec{})
			if diff := cmp.Diff(want, got.Result.Content[0].Text); diff != "" {
				t.Errorf("not cut to the tool's 200 bytes (-want +got):\n%s", diff)
			}
		})
	}
}
