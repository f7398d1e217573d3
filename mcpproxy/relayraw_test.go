package mcpproxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// writtenText returns a text of at least n bytes, and the same text as a
// server may write it in a JSON string: every escape JSON has, \u escapes
// where an encoder would write the character itself (✓ as \u2713, 😀 as a
// surrogate pair, / as \/), and <, > and & as they are, which
// encoding/json escapes. A result decoded and written again comes out
// different; one forwarded as it came does not.
func writtenText(n int) (text, written string) {
	const unitText = "%07d \"q\" back\\slash\ttab é 日本 ✓ 😀 <b>&amp;</b> a/b\n"
	const unitWritten = `%07d \"q\" back\\slash\ttab é 日本 \u2713 \ud83d\ude00 <b>&amp;</b> a\/b\n`
	var t, w strings.Builder
	for i := 0; t.Len() < n; i++ {
		fmt.Fprintf(&t, unitText, i)
		fmt.Fprintf(&w, unitWritten, i)
	}
	return t.String(), w.String()
}

// limitFor is a manifest giving the tool t a limit of n bytes.
func limitFor(n int) *manifest.WorkerManifest {
	return &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{
		PerTool: map[string]manifest.ToolEntry{"t": {MaxBytes: n}},
	}}
}

// sameBytes reports where got, of many megabytes, first differs from want.
func sameBytes(t *testing.T, what, want, got string) {
	t.Helper()
	if want == got {
		return
	}
	i := 0
	for i < min(len(want), len(got)) && want[i] == got[i] {
		i++
	}
	window := func(s string) string { return s[max(0, i-40):min(len(s), i+80)] }
	t.Errorf("%s: %d bytes, want %d; first difference at byte %d (-want +got):\n%s",
		what, len(got), len(want), i, cmp.Diff(window(want), window(got)))
}

// A result within its limit goes to the client as the bytes the server
// sent, however large: over the read buffer (4 MiB) and over the message
// bound, with escapes a re-encoder would change, members toolcap does not
// know, spaces between tokens, the id before or after the result.
func TestRelayForwardsLargeResultsAsSent(t *testing.T) {
	_, written := writtenText(5 << 20)
	text := `"text":"` + written + `"`
	for _, tc := range []struct {
		name     string
		maxMsg   int  // Options.MaxMessageBytes; 0 is the default (16 MiB)
		keepRest bool // the rest of a cut is kept: a stream is ready for the text
		frame    string
	}{
		{name: "over the message bound", maxMsg: 1 << 20,
			frame: `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text",` + text + `}]}}`},
		{name: "within the message bound",
			frame: `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text",` + text + `}]}}`},
		{name: "id after the result", maxMsg: 1 << 20,
			frame: `{"result":{"content":[{"type":"text",` + text + `}]},"jsonrpc":"2.0","id":5}`},
		{name: "spaces between tokens", maxMsg: 1 << 20,
			frame: `{ "jsonrpc" : "2.0" , "id" : 5 , "result" : { "content" : [ { "type" : "text" , ` + text + ` } , {"type":"text","text":"two"} ] , "isError" : false } }`},
		{name: "members toolcap does not know, structuredContent, other blocks", maxMsg: 1 << 20,
			frame: `{"jsonrpc":"2.0","id":5,"result":{"zeta":"a\/b","content":[{"type":"text",` + text + `,"annotations":{"audience":["user"]}},` +
				`{"type":"image","data":"AAAA","mimeType":"image/png"}],"structuredContent":{"n":1.50,"s":"\u2713"},"_meta":{"z":1},"alpha":{"b":2,"a":1}}}`},
		{name: "the rest kept", maxMsg: 1 << 20, keepRest: true,
			frame: `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text",` + text + `}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := mcpproxy.Options{Policies: policytest.Of(t, limitFor(8<<20)), MaxMessageBytes: tc.maxMsg}
			if tc.keepRest {
				opts.Rest = rest.NewMemory(rest.Config{})
			}
			s := newRawSession(t, opts)
			s.toServer(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}}`)
			s.atServer()
			s.toClient(tc.frame)
			sameBytes(t, "the client's result", tc.frame, s.atClient())
			// The session goes on.
			s.toClient(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
			if got := s.atClient(); got != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
				t.Errorf("after the result the client got %.200s", got)
			}
		})
	}
}

// A result cut to a high limit, most of it kept, is cut exactly as the
// text held whole would be (cut.Cut of the text blocks joined), whether
// the message fits the read buffer or not, is over the message bound, has
// its id last, or is cut in its second block; the figures are the cut's.
func TestRelayKeptMostlyExact(t *testing.T) {
	const limit = 2 << 20
	text, written := writtenText(5 << 20)
	short, shortWritten := writtenText(3 << 20) // in the read buffer
	first, firstWritten := writtenText(100_000)
	block := func(w string) string { return `{"type":"text","text":"` + w + `"}` }
	for _, tc := range []struct {
		name     string
		maxMsg   int
		keepRest bool
		texts    []string // the server's text blocks
		frame    string
	}{
		{name: "past the read buffer and the message bound", maxMsg: 1 << 20, texts: []string{text},
			frame: `{"jsonrpc":"2.0","id":5,"result":{"content":[` + block(written) + `]}}`},
		{name: "in the read buffer", texts: []string{short},
			frame: `{"jsonrpc":"2.0","id":5,"result":{"content":[` + block(shortWritten) + `]}}`},
		{name: "id after the result", maxMsg: 1 << 20, texts: []string{text},
			frame: `{"result":{"content":[` + block(written) + `]},"jsonrpc":"2.0","id":5}`},
		{name: "cut in the second block", maxMsg: 1 << 20, texts: []string{first, text},
			frame: `{"jsonrpc":"2.0","id":5,"result":{"content":[` + block(firstWritten) + `,` + block(written) + `]}}`},
		{name: "the rest kept", maxMsg: 1 << 20, keepRest: true, texts: []string{first, text},
			frame: `{"jsonrpc":"2.0","id":5,"result":{"content":[` + block(firstWritten) + `,` + block(written) + `]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := mcpproxy.Options{Policies: policytest.Of(t, limitFor(limit)), MaxMessageBytes: tc.maxMsg}
			if tc.keepRest {
				opts.Rest = rest.NewMemory(rest.Config{})
			}
			s := newRawSession(t, opts)
			s.toServer(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}}`)
			s.atServer()
			s.toClient(tc.frame)
			var got struct {
				Result struct {
					Content []struct{ Type, Text string }
					Meta    map[string]map[string]any `json:"_meta"`
				}
			}
			if err := json.Unmarshal([]byte(s.atClient()), &got); err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, b := range got.Result.Content {
				texts = append(texts, b.Text)
			}
			if len(texts) != len(tc.texts) {
				t.Fatalf("%d blocks, want %d", len(texts), len(tc.texts))
			}
			joined := strings.Join(tc.texts, shape.TextSeparator)
			want, st := cut.Cut(joined, limit, cut.Spec{})
			out := strings.Join(texts, shape.TextSeparator)
			if tc.keepRest {
				// The marker names the read of the rest from where the head
				// it shows ends, and counts what it dropped; the head is
				// the text's start, a little shorter than the plain cut's
				// for the room the read takes.
				read, at, ok := readMarker(t, out)
				if !ok {
					t.Fatalf("no read in the marker: %q", out[max(0, len(out)-200):])
				}
				ms := cut.FindMarkers(out)
				if n := ms[len(ms)-1].N; n != len(joined)-at || read.Offset != int64(at) {
					t.Errorf("the marker counts %d bytes and reads from %d; want %d from %d", n, read.Offset, len(joined)-at, at)
				}
				if plainAt := len(want) - cut.MarkerLen(st.Dropped); at > plainAt || at < plainAt-200 {
					t.Errorf("the head ends at %d; want a little before the plain cut's %d", at, plainAt)
				}
				sameBytes(t, "the head", joined[:at], out[:at])
				if len(out) > limit {
					t.Errorf("%d bytes, over the limit of %d", len(out), limit)
				}
				return
			}
			sameBytes(t, "the cut", want, out)
			if len(out) > limit {
				t.Errorf("%d bytes, over the limit of %d", len(out), limit)
			}
			original := len(joined) - (len(tc.texts)-1)*len(shape.TextSeparator)
			wantFig := map[string]any{"unit": "bytes", "limit": float64(limit), "original": float64(original),
				"kept": float64(original - st.Dropped), "dropped": float64(st.Dropped)}
			if diff := cmp.Diff(wantFig, got.Result.Meta["toolcap/truncation"]); diff != "" {
				t.Errorf("figures (-want +got):\n%s", diff)
			}
		})
	}
}

// A result whose copy goes over its bound part way through its text (a
// member of megabytes before its content) is written out from what was
// read, its text decoded from the copy up to that point and from the
// stream after it: the client reads the server's text whole.
func TestRelayCopyLostInsideTheText(t *testing.T) {
	const limit = 64 << 10
	const maxMsg = 4 << 20
	text, written := writtenText(60_000) // within the limit
	// The copy's bound is the message bound plus 8 times the largest
	// limit: a member before the text takes it to the middle of the text.
	padding := strings.Repeat("p", maxMsg+8*limit-len(written)/2)
	for _, tc := range []struct {
		name  string
		frame string
	}{
		{"inside the text", `{"jsonrpc":"2.0","id":5,"result":{"pad":"` + padding + `","content":[{"type":"text","text":"` + written + `"}]}}`},
		{"after the text", `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"` + written + `"}],"pad":"` + padding + `"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, limitFor(limit)), MaxMessageBytes: maxMsg})
			s.toServer(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}}`)
			s.atServer()
			s.toClient(tc.frame)
			var got struct {
				Result struct {
					Content []struct{ Type, Text string }
					Pad     *string
				}
			}
			if err := json.Unmarshal([]byte(s.atClient()), &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Result.Content) != 1 {
				t.Fatalf("%d blocks, want 1", len(got.Result.Content))
			}
			sameBytes(t, "the text", text, got.Result.Content[0].Text)
			if got.Result.Pad != nil {
				// Over the bound of a member toolcap does not know: it is
				// dropped from a result written out.
				t.Errorf("the member over its bound went out (%d bytes)", len(*got.Result.Pad))
			}
		})
	}
}

// The allowance past --max-message is for what the tool's limit measures:
// a result whose other members (unknown ones, at its top or in its result)
// are larger than the bound is not forwarded as it came, but written out
// again from what was read, without them.
func TestRelayAsSentOnlyForMeasuredText(t *testing.T) {
	junk := strings.Repeat("j", 5<<20)
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"hi"}]},"junk":"` + junk + `"}`,
		`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"hi"}],"junk":"` + junk + `"}}`,
	} {
		s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, limitFor(1<<20)), MaxMessageBytes: 1 << 20})
		s.toServer(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}}`)
		s.atServer()
		s.toClient(frame)
		got := s.atClient()
		if len(got) > 1<<20 || strings.Contains(got, "jjjj") || !strings.Contains(got, `"text":"hi"`) {
			t.Errorf("the client got %d bytes (%.120s…), want the result without the 5 MiB member, within --max-message", len(got), got)
		}
	}
}

// A large result within its limit is decoded only for a chain that reads
// it: with a user middleware, the middleware gets the whole text decoded
// (the proxy skips the decoding only when the pinned stages alone run,
// which pass such a text on unread), and the result still goes out as the
// server sent it when the middleware passes it on.
func TestRelayDecodesLargeResultForUserMiddleware(t *testing.T) {
	text, written := writtenText(5 << 20)
	frame := `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"` + written + `"},{"type":"text","text":"two"}]}}`
	var seen []string
	record := func(next chain.Handler) chain.Handler {
		return func(ctx context.Context, call chain.Call) chain.Result {
			r := next(ctx, call)
			if r.Content != nil {
				seen = append(seen, *r.Content)
			}
			return r
		}
	}
	s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, limitFor(8<<20)), MaxMessageBytes: 1 << 20, Middleware: []chain.Middleware{record}})
	s.toServer(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}}`)
	s.atServer()
	s.toClient(frame)
	sameBytes(t, "the client's result", frame, s.atClient())
	if len(seen) != 1 {
		t.Fatalf("the middleware saw %d texts, want 1", len(seen))
	}
	sameBytes(t, "the text the middleware saw", text+shape.TextSeparator+"two", seen[0])
}

// The proxy skips the chain for a large result within its limit when the
// chain is toolcap's pinned stages alone (see capResult): what the client
// gets must be what running the chain gives. A middleware that passes
// every result on as it got it makes the proxy run the chain; each result
// must come out byte for byte the same either way, whether it fits as
// sent or not.
func TestRelayPinnedOnlyAsTheChainRuns(t *testing.T) {
	_, written := writtenText(5 << 20)
	block := func(w string) string { return `{"type":"text","text":"` + w + `"}` }
	invalid := written[:1<<20] + "\xff\xfe" + written[1<<20:]
	frames := map[string]string{
		"one text":          `{"jsonrpc":"2.0","id":5,"result":{"content":[` + block(written) + `]}}`,
		"an error":          `{"jsonrpc":"2.0","id":5,"result":{"content":[` + block(written) + `],"isError":true}}`,
		"two texts":         `{"jsonrpc":"2.0","id":5,"result":{"content":[` + block(written) + `,` + block("two") + `]}}`,
		"invalid UTF-8":     `{"jsonrpc":"2.0","id":5,"result":{"content":[` + block(invalid) + `]}}`,
		"structuredContent": `{"jsonrpc":"2.0","id":5,"result":{"content":[` + block(written) + `],"structuredContent":{"n":1.50,"s":"\u2713"}}}`,
		"the id after":      `{"result":{"content":[` + block(written) + `]},"jsonrpc":"2.0","id":5}`,
		"an image, no text": `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"image","data":"` + strings.Repeat("QUFB", 1<<20) + `","mimeType":"image/png"}]}}`,
	}
	pass := func(next chain.Handler) chain.Handler { return next }
	relay := func(t *testing.T, entry manifest.ToolEntry, mw []chain.Middleware, frame string) string {
		// Another tool's larger limit makes the reader keep t's result
		// as it came past t's own limit: only the policy's check then
		// tells a result that fits from one that does not.
		m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{
			"t": entry, "other": {MaxBytes: 16 << 20},
		}}}
		s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, m), MaxMessageBytes: 1 << 20, Middleware: mw})
		s.toServer(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}}`)
		s.atServer()
		s.toClient(frame)
		return s.atClient()
	}
	for name, frame := range frames {
		// Within, and at the edges of, the texts of about 5.5 MiB; and a
		// token limit that the length alone does not settle.
		for _, entry := range []manifest.ToolEntry{{MaxBytes: 8 << 20}, {MaxBytes: 6 << 20}, {MaxBytes: 5 << 20}, {MaxBytes: 8 << 20, MaxTokens: 1 << 20}} {
			t.Run(fmt.Sprintf("%s/%d bytes %d tokens", name, entry.MaxBytes, entry.MaxTokens), func(t *testing.T) {
				want := relay(t, entry, []chain.Middleware{pass}, frame)
				sameBytes(t, "without user middleware", want, relay(t, entry, nil, frame))
			})
		}
	}
}
