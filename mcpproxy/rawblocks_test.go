package mcpproxy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// The blocks of a capped result go out as they came when shape kept them,
// member for member (those toolcap does not know included, in their
// order), and with only their text replaced when shape cut it, so that
// nothing of a block is lost to a decoding into a block type.
func TestRelayBlocksAsTheyCame(t *testing.T) {
	long := strings.Repeat("abcdefgh", 2600) // 20,800 bytes: over the default limit
	// mid is a text the reader keeps in a block other than a text block,
	// which the block before it leaves too little room for.
	mid := strings.Repeat("abcdefgh", 2000)
	before := `{"type":"text","text":"` + strings.Repeat("x", 1000) + `"}`
	enc := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	image := `{"mimeType":"image/png","x-extra":[1,{"a":null}],"data":"AAAA","type":"image","annotations":{"priority":0.5}}`
	text := `{"_meta":{"k":"v"},"type":"text","annotations":{"audience":["user"]},"text":` + enc(long) + `,"x-extra":true}`
	link := `{"type":"resource_link","uri":"file:///a","name":"a","description":` + enc(mid) + `,"_meta":{"k":1},"icons":[{"src":"data:,"}]}`
	res := `{"type":"resource","resource":{"uri":"file:///r","mimeType":"text/plain","text":` + enc(mid) + `,"_meta":{"m":1}},"annotations":{"audience":["user"]}}`
	emptyText := `{"type":"text","x":1}`
	for _, tc := range []struct {
		name string
		// blocks are the server's; want[i] is, for the client's block i,
		// the server's block it is (the same bytes but for the text),
		// or "" for a note toolcap added.
		blocks []string
		want   []string
		// cut is the text of the input that the client's block at
		// cutAt has cut (the rest of the block is as sent).
		cut   string
		cutAt int
	}{
		{name: "an image kept, a text cut", blocks: []string{image, text}, want: []string{image, text}, cut: long, cutAt: 1},
		{name: "a resource link's description cut", blocks: []string{before, link}, want: []string{before, link}, cut: mid, cutAt: 1},
		{name: "an embedded resource's text cut", blocks: []string{before, res}, want: []string{before, res}, cut: mid, cutAt: 1},
		{name: "a block of a type MCP does not define dropped", blocks: []string{`{"type":"widget","w":1}`, text}, want: []string{text, ""}, cut: long, cutAt: 0},
		// Not a text for the chain, whose text is the text blocks' texts
		// joined: it stays where it was, and the text goes to the text
		// block.
		{name: "a text block without text", blocks: []string{emptyText, text}, want: []string{emptyText, text}, cut: long, cutAt: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawSession(t, mcpproxy.Options{})
			s.toServer(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}`)
			s.atServer()
			s.toClient(`{"jsonrpc":"2.0","id":3,"result":{"content":[` + strings.Join(tc.blocks, ",") + `]}}`)
			var got struct {
				Result struct{ Content []json.RawMessage }
			}
			line := s.atClient()
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatalf("%v: %.300s", err, line)
			}
			if len(got.Result.Content) != len(tc.want) {
				t.Fatalf("got %d blocks, want %d: %.600s", len(got.Result.Content), len(tc.want), line)
			}
			for i, w := range tc.want {
				out := string(got.Result.Content[i])
				if w == "" {
					var note struct{ Type, Text string }
					if err := json.Unmarshal([]byte(out), &note); err != nil || note.Type != "text" || !strings.HasPrefix(note.Text, "[toolcap: ") {
						t.Errorf("block %d: got %.300s, want a note of toolcap's", i, out)
					}
					continue
				}
				if i == tc.cutAt {
					// The block as sent with its text replaced by the cut
					// text, whatever it is: the cut is tested elsewhere.
					cut := cutText(t, out)
					if cut == "" || len(cut) >= len(tc.cut) || len(cut) > manifest.DefaultMaxBytes || !strings.HasPrefix(tc.cut, cut[:min(100, len(cut))]) {
						t.Errorf("block %d: the text is %d bytes, not a cut of the server's", i, len(cut))
					}
					w = strings.Replace(w, enc(tc.cut), enc(cut), 1)
				}
				if diff := cmp.Diff(w, out); diff != "" {
					t.Errorf("block %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

// cutText returns the text a block of the client's holds: a text block's
// text, a resource link's description, an embedded resource's text.
func cutText(t *testing.T, block string) string {
	t.Helper()
	var b struct {
		Text, Description string
		Resource          struct{ Text string }
	}
	if err := json.Unmarshal([]byte(block), &b); err != nil {
		t.Fatalf("%v: %.300s", err, block)
	}
	return b.Text + b.Description + b.Resource.Text
}
