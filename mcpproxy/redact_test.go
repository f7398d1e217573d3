package mcpproxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/logtest"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/redacttest"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

const (
	awsMarker = "[redacted: aws-access-token]"
	keyMarker = "[redacted: private-key]"
)

// leaks fails t when s holds any part of the two secrets that a reader
// could use: the key, either line of the private key's body.
func leaks(t *testing.T, what, s string) {
	t.Helper()
	aws, key := redacttest.Secrets()
	lines := strings.Split(key, "\n")
	for _, secret := range []string{aws, lines[1], lines[2]} {
		if i := strings.Index(s, secret); i >= 0 {
			t.Errorf("%s holds a secret at byte %d: %.80q", what, i, s[i:])
		}
	}
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// decodeJSON decodes a message, its numbers as they were written.
func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%v: %.300s", err, s)
	}
	return v
}

// redactionLines returns the "redacted secrets" log lines in logs.
func redactionLines(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range logtest.Lines(t, bytes.NewBufferString(logs)) {
		if m["@message"] == "redacted secrets" {
			out = append(out, m)
		}
	}
	return out
}

// A result's secrets are redacted before anything sees them, wherever
// the relay keeps a string the model reads: the text blocks' texts, an
// embedded resource's text, structuredContent's strings, a JSON-RPC
// error's message and data. A result with a secret is never forwarded as
// the server sent it; _meta says what was redacted, and the log has one
// line of it, rules and counts, no value. A tool with redact = false, and
// a result with no secret, go out as they came.
func TestRelayRedactsResults(t *testing.T) {
	aws, key := redacttest.Secrets()
	text := "id: " + aws + "\nkey:\n" + key + "\nend"
	redacted := "id: " + awsMarker + "\nkey:\n" + keyMarker + "\nend"
	const both = `{"rules":{"aws-access-token":1,"private-key":1},"count":2}`
	off := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{
		"t": {MaxBytes: 1 << 20, Redaction: manifest.Redaction{Redact: ptr(false)}},
	}}}
	for _, tc := range []struct {
		name string
		m    *manifest.WorkerManifest
		// answer is the server's member answering the call ("result":...
		// or "error":...), want the client's; "" when it is the server's
		// message as it came.
		answer, want string
		logged       string // the rules of the log line; "" for none
		absent       string // not in the client's answer either, when set
	}{
		{name: "text within its limit", m: limitFor(1 << 20),
			answer: `"result":{"content":[{"type":"text","text":` + jsonString(text) + `}]}`,
			want:   `"result":{"content":[{"type":"text","text":` + jsonString(redacted) + `}],"_meta":{"toolcap/redaction":` + both + `}}`,
			logged: "aws-access-token=1 private-key=1"},
		{name: "an error result with _meta of its own", m: limitFor(1 << 20),
			answer: `"result":{"content":[{"type":"text","text":` + jsonString(text) + `}],"isError":true,"_meta":{"k":"v"}}`,
			want:   `"result":{"content":[{"type":"text","text":` + jsonString(redacted) + `}],"isError":true,"_meta":{"k":"v","toolcap/redaction":` + both + `}}`,
			logged: "aws-access-token=1 private-key=1"},
		{name: "two texts, an embedded resource, an image", m: limitFor(1 << 20),
			answer: `"result":{"content":[{"type":"text","text":"a ` + aws + `"},{"type":"text","text":"b ` + aws + `"},` +
				`{"type":"resource","resource":{"uri":"file:///k.pem","mimeType":"text/plain","text":` + jsonString(key) + `}},` +
				`{"type":"image","data":"` + aws + `","mimeType":"image/png"}]}`,
			// An image's data is base64, never redacted.
			want: `"result":{"content":[{"type":"text","text":"a ` + awsMarker + `"},{"type":"text","text":"b ` + awsMarker + `"},` +
				`{"type":"resource","resource":{"uri":"file:///k.pem","mimeType":"text/plain","text":"` + keyMarker + `"}},` +
				`{"type":"image","data":"` + aws + `","mimeType":"image/png"}],"_meta":{"toolcap/redaction":{"rules":{"aws-access-token":2,"private-key":1},"count":3}}}`,
			logged: "aws-access-token=2 private-key=1"},
		{name: "structuredContent", m: limitFor(1 << 20),
			answer: `"result":{"content":[{"type":"text","text":"see structuredContent"}],"structuredContent":{"aws":"` + aws + `","n":1.50,"keys":[{"pem":` + jsonString(key) + `}],"ok":"a\/b"}}`,
			want:   `"result":{"content":[{"type":"text","text":"see structuredContent"}],"structuredContent":{"aws":"` + awsMarker + `","n":1.50,"keys":[{"pem":"` + keyMarker + `"}],"ok":"a/b"},"_meta":{"toolcap/redaction":` + both + `}}`,
			logged: "aws-access-token=1 private-key=1"},
		{name: "structuredContent cut", m: limitFor(200),
			answer: `"result":{"content":[{"type":"text","text":"see structuredContent"}],"structuredContent":{"aws":"` + aws + `","pad":"` + strings.Repeat("p", 400) + `"}}`,
			logged: "aws-access-token=1"},
		// Its string is shortened as it is read (longer than any cut
		// keeps): not in the middle of a key, whose first bytes would show.
		{name: "structuredContent over the bound, keys everywhere", m: limitFor(16384),
			answer: `"result":{"content":[{"type":"text","text":"see structuredContent"}],"structuredContent":{"s":"` + strings.Repeat(aws+" ", 2000) + `"}}`,
			logged: "aws-access-token=", absent: "AKIA"},
		{name: "a JSON-RPC error", m: limitFor(1 << 20),
			answer: `"error":{"code":-32000,"message":` + jsonString("failed: "+aws) + `,"data":{"pem":` + jsonString(key) + `,"n":1}}`,
			want:   `"error":{"code":-32000,"message":"failed: ` + awsMarker + `","data":{"pem":"` + keyMarker + `","n":1}}`,
			logged: "aws-access-token=1 private-key=1"},
		{name: "redact = false", m: off,
			answer: `"result":{"content":[{"type":"text","text":` + jsonString(text) + `}],"structuredContent":{"aws":"` + aws + `"}}`},
		{name: "redact = false, a JSON-RPC error", m: off,
			answer: `"error":{"code":-32000,"message":` + jsonString("failed: "+aws) + `}`},
		{name: "no secret", m: limitFor(1 << 20),
			answer: `"result":{"content":[{"type":"text","text":"AKIAXXXXXXXXXXXXXXXX is no key"}],"structuredContent":{"s":"a\/b \u2713"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncBuffer
			logger := hclog.New(&hclog.LoggerOptions{Output: &logs, JSONFormat: true, Level: hclog.Info})
			s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, tc.m), Logger: logger})
			s.toServer(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}`)
			s.atServer()
			sent := `{"jsonrpc":"2.0","id":3,` + tc.answer + `}`
			s.toClient(sent)
			got := s.atClient()
			switch {
			case tc.want == "" && tc.logged == "":
				if got != sent {
					t.Errorf("not forwarded as sent:\n got %s\nwant %s", got, sent)
				}
			case tc.want != "":
				if diff := cmp.Diff(decodeJSON(t, `{"jsonrpc":"2.0","id":3,`+tc.want+`}`), decodeJSON(t, got)); diff != "" {
					t.Errorf("the client's answer (-want +got):\n%s", diff)
				}
			}
			if tc.absent != "" && strings.Contains(got, tc.absent) {
				i := strings.Index(got, tc.absent)
				t.Errorf("the client's answer holds %q: %.80q", tc.absent, got[i:])
			}
			if tc.logged != "" {
				// An image's data is no text: left as it is.
				leaks(t, "the client's answer", strings.ReplaceAll(got, `"data":"`+aws+`"`, ""))
				if got == sent {
					t.Errorf("a result with secrets was forwarded as sent")
				}
			}
			// The line is written before the answer is sent.
			lines := redactionLines(t, logs.String())
			var rules []string
			for _, l := range lines {
				rules = append(rules, fmt.Sprint(l["rules"]))
			}
			var want []string
			if tc.logged != "" {
				want = []string{tc.logged}
				if len(rules) == 1 && strings.HasSuffix(tc.logged, "=") && strings.HasPrefix(rules[0], tc.logged) {
					want = rules // a count the test does not fix
				}
			}
			if diff := cmp.Diff(want, rules); diff != "" {
				t.Errorf("redaction log lines (-want +got):\n%s", diff)
			}
			leaks(t, "the log", logs.String())
		})
	}
}

// spyStore is a store that records every byte written to its entries,
// committed or not: what the relay would have kept.
type spyStore struct {
	*rest.Memory
	mu      sync.Mutex
	entries []*bytes.Buffer
}

func newSpyStore() *spyStore { return &spyStore{Memory: rest.NewMemory(rest.Config{})} }

func (s *spyStore) Create(ctx context.Context, scope string) (rest.Entry, error) {
	e, err := s.Memory.Create(ctx, scope)
	if err != nil {
		return e, err
	}
	b := &bytes.Buffer{}
	s.mu.Lock()
	s.entries = append(s.entries, b)
	s.mu.Unlock()
	return spyEntry{Entry: e, s: s, b: b}, nil
}

// written returns what was written to each entry since the last call.
func (s *spyStore) written() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, b := range s.entries {
		out = append(out, b.String())
	}
	s.entries = nil
	return out
}

type spyEntry struct {
	rest.Entry
	s *spyStore
	b *bytes.Buffer
}

func (e spyEntry) Write(p []byte) (int, error) {
	e.s.mu.Lock()
	e.b.Write(p)
	e.s.mu.Unlock()
	return e.Entry.Write(p)
}

// The same secrets, with the server's message split in two writes at every
// byte of them: whatever piece of the text the relay decodes a secret in,
// it is redacted, in the text the client gets and in what the store
// keeps. The message is larger than the relay's read buffer (4 MiB), so
// that it is read as a stream, the split where the decoded pieces end;
// the secrets lie past the first buffer. Within its limit, the result is
// read raw (to forward as it came) until the secret is found, as the text
// ends or as it is read on, then redone redacted from the relay's copy; over it with keep_rest, the text is cut
// and written to the store as it is read. A message within the buffer,
// read whole, is split the same.
func TestRelayRedactsSplitWrites(t *testing.T) {
	aws, key := redacttest.Secrets()
	sample := aws + "\n" + key
	for _, tc := range []struct {
		name      string
		pad, tail int // bytes of text before the sample, and after it
		limit     int
		keep      bool
	}{
		{"in the read buffer, within its limit", 1000, 100, 1 << 20, false},
		// The secret is found when the text ends, or as it is read.
		{"streamed, within its limit", 5 << 20, 100, 12 << 20, false},
		{"streamed, within its limit, a long text after", 5 << 20, 200 << 10, 12 << 20, false},
		{"streamed, cut while read, the rest kept", 5 << 20, 200 << 10, 2000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unit := "a line of text, long enough\n"
			pad := strings.Repeat(unit, tc.pad/len(unit)+1)
			tail := strings.Repeat(unit, tc.tail/len(unit)+1)
			text := pad + sample + "\n" + tail
			redacted := pad + awsMarker + "\n" + keyMarker + "\n" + tail
			store := newSpyStore()
			opts := mcpproxy.Options{Policies: policytest.Of(t, limitFor(tc.limit))}
			if tc.keep {
				opts.Rest = store
			}
			s := newRawSession(t, opts)
			frame := `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":` + jsonString(text) + `}]}}`
			// The answer within the limit, as the relay writes it.
			answer := `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":` + jsonString(redacted) + `}],` +
				`"_meta":{"toolcap/redaction":{"rules":{"aws-access-token":1,"private-key":1},"count":2}}}}`
			from := strings.Index(frame, aws)
			to := from + len(jsonString(sample)) - 2
			step := 1
			if raceEnabled && tc.pad > 1<<20 {
				// Every offset without the race detector; under it, which
				// relays 5 MB ten times slower, every 16th and the edges.
				step = 16
			}
			for k := from; k <= to; k += step {
				if step > 1 && to-k < step {
					k = to
				}
				id := k - from + 1
				s.toServer(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t"}}`, id))
				s.atServer()
				msg := fmt.Sprintf(frame, id)
				at := k + len(fmt.Sprint(id)) - 2 // %d took 2 bytes of frame
				go func() {
					_, _ = io.WriteString(s.server, msg[:at])
					_, _ = io.WriteString(s.server, msg[at:]+"\n")
				}()
				got := s.atClient()
				if !tc.keep {
					if want := fmt.Sprintf(answer, id); got != want {
						sameBytes(t, fmt.Sprintf("split at %d: the client's answer", k-from), want, got)
						return
					}
					continue
				}
				var m struct {
					Result struct {
						Content []struct{ Text string }
						Meta    map[string]json.RawMessage `json:"_meta"`
					}
				}
				if err := json.Unmarshal([]byte(got), &m); err != nil || len(m.Result.Content) != 1 {
					t.Fatalf("split at %d: %v: %.300s", k-from, err, got)
				}
				gotText := m.Result.Content[0].Text
				leaks(t, fmt.Sprintf("split at %d: the client's text", k-from), gotText)
				kept := store.written()
				if len(kept) != 1 || kept[0] != redacted {
					t.Fatalf("split at %d: the store was written %d entries, want the redacted text", k-from, len(kept))
				}
				// The marker counts what the redacted text drops.
				if ms := cut.FindMarkers(gotText); len(ms) != 1 || ms[0].N != len(redacted)-ms[0].Start {
					t.Fatalf("split at %d: markers %+v in a text of %d bytes, want one counting what %d bytes of text drop", k-from, ms, len(gotText), len(redacted))
				}
				if got, want := string(m.Result.Meta["toolcap/redaction"]), `{"rules":{"aws-access-token":1,"private-key":1},"count":2}`; got != want {
					t.Fatalf("split at %d: _meta toolcap/redaction %s, want %s", k-from, got, want)
				}
				leaks(t, fmt.Sprintf("split at %d: the client's answer", k-from), got)
				if t.Failed() {
					return
				}
			}
		})
	}
}

// A text over its limit with keep_rest: the cut the client gets, the
// entry the store keeps, read back page by page through the read tool,
// and the figures all hold the redacted text, no secret. The marker
// counts the bytes of the redacted text it drops, and _meta's figures
// are those of the redacted text.
func TestRelayRedactsKeptRest(t *testing.T) {
	aws, key := redacttest.Secrets()
	var text, redacted strings.Builder
	for i := range 40 {
		line := fmt.Sprintf("line %d of the log, with nothing to hide in it\n", i)
		for range 50 {
			text.WriteString(line)
			redacted.WriteString(line)
		}
		// A secret in the head the client sees, in the rest, at the end.
		if i == 0 || i == 20 || i == 39 {
			text.WriteString("creds " + aws + "\n" + key + "\n")
			redacted.WriteString("creds " + awsMarker + "\n" + keyMarker + "\n")
		}
	}
	store := newSpyStore()
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	server.AddTool(textTool("logs", text.String()))
	p, err := mcpproxy.New(mcpproxy.Options{Rest: store})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, p, server)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "logs"})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Content[0].(*mcp.TextContent).Text
	leaks(t, "the client's text", got)
	a, start, ok := readMarker(t, got)
	if !ok {
		t.Fatalf("no marker naming a read: %.300q", got[max(0, len(got)-300):])
	}
	want := redacted.String()
	if got[:start] != want[:start] || !strings.Contains(got[:start], awsMarker+"\n"+keyMarker) {
		t.Errorf("the cut shows %.200q..., want the redacted head", got[:start])
	}
	ms := cut.FindMarkers(got)
	if n := ms[len(ms)-1].N; n != len(want)-start {
		t.Errorf("the marker counts %d bytes, want %d, what the redacted text drops (the server's text drops %d)", n, len(want)-start, text.Len()-start)
	}
	var fig struct {
		Original int `json:"original"`
	}
	raw, _ := json.Marshal(res.Meta["toolcap/truncation"])
	if err := json.Unmarshal(raw, &fig); err != nil || fig.Original != len(want) {
		t.Errorf("_meta toolcap/truncation %s, want original %d", raw, len(want))
	}
	if diff := cmp.Diff(map[string]any{"rules": map[string]any{"aws-access-token": 3.0, "private-key": 3.0}, "count": 3.0 + 3.0}, res.Meta["toolcap/redaction"]); diff != "" {
		t.Errorf("_meta toolcap/redaction (-want +got):\n%s", diff)
	}
	for i, w := range store.written() {
		leaks(t, fmt.Sprintf("store entry %d", i), w)
	}
	all, pages := readPages(t, cs, a.Ref, manifest.DefaultMaxBytes)
	if pages < 2 {
		t.Errorf("the rest was read in %d page, want several", pages)
	}
	if all != want {
		sameBytes(t, "the text read back", want, all)
	}
	leaks(t, "the text read back", all)
}

// The user's middleware, above the cap, gets the redacted text and the
// counts the relay redacted from it (chain.Result.Redactions), as the
// worker's do: the relay's reader is the pinned redact stage.
func TestRelayRedactionsReachTheChain(t *testing.T) {
	aws, key := redacttest.Secrets()
	type seen struct {
		content    string
		redactions map[string]int
	}
	var got []seen
	var mu sync.Mutex
	record := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			r := next(ctx, call)
			mu.Lock()
			got = append(got, seen{*r.Content, r.Redactions()})
			mu.Unlock()
			return r
		}
	}
	s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, limitFor(1<<20)), Middleware: []chain.Middleware{record}})
	for i, text := range []string{"no secret", aws + "\n" + key} {
		s.toServer(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t"}}`, i))
		s.atServer()
		s.toClient(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%s}]}}`, i, jsonString(text)))
		s.atClient()
	}
	want := []seen{
		{"no secret", nil},
		{awsMarker + "\n" + keyMarker, map[string]int{"aws-access-token": 1, "private-key": 1}},
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(seen{})); diff != "" {
		t.Errorf("what the middleware saw (-want +got):\n%s", diff)
	}
}

// A result whose id comes after it is read before the relay knows which
// call it answers: it is redacted by the detectors of every call it may
// answer, the safe choice, so that a call whose tool does not redact
// gets markers too while a call whose tool does is pending. Alone, it
// goes out as it came.
func TestRelayRedactsBeforeTheIDIsKnown(t *testing.T) {
	aws, _ := redacttest.Secrets()
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{
		"off": {MaxBytes: 1 << 20, Redaction: manifest.Redaction{Redact: ptr(false)}},
		"t":   {MaxBytes: 1 << 20},
	}}}
	s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, m)})
	answer := func(id int) string {
		return fmt.Sprintf(`{"result":{"content":[{"type":"text","text":"key %s"}]},"jsonrpc":"2.0","id":%d}`, aws, id)
	}
	redacted := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"key %s"}],"_meta":{"toolcap/redaction":{"rules":{"aws-access-token":1},"count":1}}}}`, id, awsMarker)
	}
	call := func(id int, tool string) {
		s.toServer(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q}}`, id, tool))
		s.atServer()
	}
	call(1, "off")
	call(2, "t")
	var got, want []string
	for _, id := range []int{1, 2} {
		s.toClient(answer(id))
		got, want = append(got, s.atClient()), append(want, redacted(id))
	}
	call(3, "off")
	s.toClient(answer(3))
	got, want = append(got, s.atClient()), append(want, answer(3))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the client's answers (-want +got):\n%s", diff)
	}
}
