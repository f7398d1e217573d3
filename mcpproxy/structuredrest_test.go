package mcpproxy_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// fileLines is about n bytes of numbered lines, each unlike the others,
// with what JSON escapes and multi-byte characters in them, as a text file
// a filesystem server reads.
func fileLines(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%06d\t\"quoted\" C:\\dir é 日本 %s\n", i, strings.Repeat("z", i%11))
	}
	return b.String()
}

// TestRelayStructuredNamesTheRead: a result whose text and
// structuredContent are both over the limit, the text's rest kept. A client
// that shows the model structuredContent (Claude Code does) must find there
// the read of the kept text: server-filesystem's read_text_file answers
// {"content": text}, whose cut string's head is the text's start, so the
// read goes on from where it ends; a server whose text is its structured
// value as JSON gets the read from 0.
func TestRelayStructuredNamesTheRead(t *testing.T) {
	file := fileLines(80_000)
	long := fileLines(2_000_000) // past what the proxy holds: cut while read
	stat := map[string]any{"path": "/tmp/f.txt", "size": len(file), "content": file}
	statJSON, err := json.Marshal(stat)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		text       string
		structured any
		schema     string // the tool's output schema; none when empty
		fromHead   bool   // the read starts where the string's head ends; else 0
	}{
		{name: "mirrored", text: file, structured: map[string]any{"content": file}, fromHead: true},
		{name: "mirrored, cut while read", text: long, structured: map[string]any{"content": long}, fromHead: true},
		{name: "mirrored, output schema", text: file, structured: map[string]any{"content": file}, fromHead: true,
			schema: `{"type":"object","required":["content"],"properties":{"content":{"type":"string"}}}`},
		{name: "text is the structured value as JSON", text: string(statJSON), structured: stat},
		{name: "text is the structured value as JSON, output schema", text: string(statJSON), structured: stat,
			schema: `{"type":"object","required":["path","content"],"properties":{"path":{"type":"string"},"size":{"type":"integer"},"content":{"type":"string"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawSession(t, mcpproxy.Options{Rest: rest.NewMemory(rest.Config{})})
			if tc.schema != "" {
				s.toServer(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
				s.atServer()
				s.toClient(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read_text_file","inputSchema":{"type":"object"},"outputSchema":` + tc.schema + `}]}}`)
				s.atClient()
			}
			s.toServer(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/tmp/f.txt"}}}`)
			s.atServer()
			answer, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "result": map[string]any{
				"content":           []any{map[string]any{"type": "text", "text": tc.text}},
				"structuredContent": tc.structured,
			}})
			if err != nil {
				t.Fatal(err)
			}
			s.toClient(string(answer))
			var got struct {
				Result structuredAnswer
			}
			if out := s.atClient(); json.Unmarshal([]byte(out), &got) != nil {
				t.Fatalf("the client's answer: %.300q", out)
			}
			res := got.Result
			if res.IsError || len(res.Content) == 0 {
				t.Fatalf("isError %v, %d blocks; want a success with its text", res.IsError, len(res.Content))
			}
			// A text cut as JSON has its marker in a block of its own,
			// after a newline that joins them back.
			var texts []string
			for _, b := range res.Content {
				texts = append(texts, b.Text)
			}
			text := strings.Join(texts, "\n")
			textRead, _, ok := readMarker(t, text)
			if !ok {
				t.Fatalf("the text's marker names no read: %.200q", text[max(0, len(text)-200):])
			}
			if n := len(res.StructuredContent); n > manifest.DefaultMaxBytes {
				t.Errorf("structuredContent of %d bytes, over the limit %d", n, manifest.DefaultMaxBytes)
			}
			m, head := structuredRead(t, res.StructuredContent)
			a, err := rest.ParseReadArgs(json.RawMessage(m.Rest.Args))
			if err != nil {
				t.Fatalf("the structured marker's read %s: %v", m.Rest.Args, err)
			}
			want := rest.ReadArgs{Ref: textRead.Ref}
			if tc.fromHead {
				want.Offset = int64(len(head))
				if !strings.HasPrefix(tc.text, head) {
					t.Errorf("the structured string's head is not the text's start")
				}
			}
			if diff := cmp.Diff(want, a); diff != "" {
				t.Errorf("the structured marker's read (-want +got):\n%s", diff)
			}
			// Its N is what that read returns, to the end (issue 41).
			if wantN := len(tc.text) - int(a.Offset); m.N != wantN {
				t.Errorf("the structured marker says %d bytes dropped; a read from %d returns %d", m.N, a.Offset, wantN)
			}

			// The read it names, called as the model would: the text from
			// that offset.
			s.toServer(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + m.Rest.Tool + `","arguments":` + m.Rest.Args + `}}`)
			var page struct {
				Result structuredAnswer
			}
			if out := s.atClient(); json.Unmarshal([]byte(out), &page) != nil || len(page.Result.Content) != 1 || page.Result.IsError {
				t.Fatalf("the read's answer: %.300q", out)
			}
			next := page.Result.Content[0].Text
			if ms := cut.FindMarkers(next); len(ms) > 0 {
				next = next[:ms[len(ms)-1].Start]
			}
			if next == "" || !strings.HasPrefix(tc.text[a.Offset:], next) {
				t.Errorf("the read from %d gives %.100q, not the text from there", a.Offset, next)
			}
		})
	}
}

// structuredRead returns the one marker naming a read in the strings of
// the structuredContent sc, which must end its string, and the string's
// head before it.
func structuredRead(t *testing.T, sc json.RawMessage) (cut.Found, string) {
	t.Helper()
	var v any
	if err := json.Unmarshal(sc, &v); err != nil {
		t.Fatalf("structuredContent %.200q: %v", sc, err)
	}
	var found []cut.Found
	var heads []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			for _, m := range cut.FindMarkers(v) {
				if m.Rest != nil {
					if m.End != len(v) {
						t.Errorf("a marker naming a read inside a string, not at its end: %q", v[m.Start:m.End])
					}
					found, heads = append(found, m), append(heads, v[:m.Start])
				}
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	if len(found) != 1 {
		t.Fatalf("%d markers naming a read in structuredContent, want 1: %.300q", len(found), sc)
	}
	if found[0].Rest.Tool != rest.DefaultTool {
		t.Errorf("the structured marker names %s, want %s", found[0].Rest.Tool, rest.DefaultTool)
	}
	return found[0], heads[0]
}

// TestRelayStructuredKeepsTextThatFits: a text within the limit is passed
// on whole, but its structured form, the same text JSON-escaped, is over
// it: the text is kept all the same, and the structured cut names the read
// of what it dropped (issue 41: a 16,384-byte file's structuredContent,
// which Codex shows the model, lost 931 bytes that no read reached).
func TestRelayStructuredKeepsTextThatFits(t *testing.T) {
	text := fileLines(15_000) // tabs, quotes and backslashes: longer escaped
	if len(text) > manifest.DefaultMaxBytes {
		t.Fatalf("the text is %d bytes; want one within the limit", len(text))
	}
	s := newRawSession(t, mcpproxy.Options{Rest: rest.NewMemory(rest.Config{})})
	s.toServer(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/tmp/f.txt"}}}`)
	s.atServer()
	answer, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "result": map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": text}},
		"structuredContent": map[string]any{"content": text},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s.toClient(string(answer))
	var got struct{ Result structuredAnswer }
	if out := s.atClient(); json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("the client's answer: %.300q", out)
	}
	res := got.Result
	if len(res.Content) != 1 || res.Content[0].Text != text || res.IsError {
		t.Fatalf("%d blocks, isError %v; want the text whole", len(res.Content), res.IsError)
	}
	if n := len(res.StructuredContent); n > manifest.DefaultMaxBytes {
		t.Errorf("structuredContent of %d bytes, over the limit %d", n, manifest.DefaultMaxBytes)
	}
	m, head := structuredRead(t, res.StructuredContent)
	a, err := rest.ParseReadArgs(json.RawMessage(m.Rest.Args))
	if err != nil {
		t.Fatalf("the structured marker's read %s: %v", m.Rest.Args, err)
	}
	if !strings.HasPrefix(text, head) || a.Offset != int64(len(head)) || m.N != len(text)-len(head) {
		t.Fatalf("head of %d bytes (the text's start: %v), read from %d, N %d; want the read from the head's end and N the %d bytes after it",
			len(head), strings.HasPrefix(text, head), a.Offset, m.N, len(text)-len(head))
	}
	s.toServer(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + m.Rest.Tool + `","arguments":` + m.Rest.Args + `}}`)
	var page struct{ Result structuredAnswer }
	if out := s.atClient(); json.Unmarshal([]byte(out), &page) != nil || len(page.Result.Content) != 1 || page.Result.IsError {
		t.Fatalf("the read's answer: %.300q", out)
	}
	if got := page.Result.Content[0].Text; head+got != text {
		t.Errorf("the structured head and the read give %d bytes; want the text's %d", len(head)+len(got), len(text))
	}
}
