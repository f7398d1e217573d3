package mcpproxy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/mcpproxy"
	"github.com/toolcap/toolcap/middleware"
)

func texts(cs []mcp.Content) []string {
	var out []string
	for _, c := range cs {
		switch b := c.(type) {
		case *mcp.TextContent:
			out = append(out, "text:"+b.Text)
		case *mcp.ImageContent:
			out = append(out, "image")
		default:
			out = append(out, "other")
		}
	}
	return out
}

func TestSplitText(t *testing.T) {
	ann := &mcp.Annotations{Priority: 0.5}
	img := &mcp.ImageContent{MIMEType: "image/png", Data: []byte{1}}
	content := []mcp.Content{
		&mcp.TextContent{Text: "alpha"},
		img,
		&mcp.TextContent{Text: "beta", Annotations: ann},
		&mcp.TextContent{Text: "gamma"},
	}
	joined, ok := mcpproxy.JoinText(content)
	if !ok || joined != "alpha\nbeta\ngamma" {
		t.Fatalf("JoinText = %q, %v", joined, ok)
	}
	str := func(s string) *string { return &s }

	tests := []struct {
		name string
		text *string
		want []string
	}{
		{"unchanged", str(joined), []string{"text:alpha", "image", "text:beta", "text:gamma"}},
		{"cut in the second block", str("alpha\nbe\n[truncated: 9 bytes dropped, refine your query]"),
			[]string{"text:alpha", "image", "text:be\n[truncated: 9 bytes dropped, refine your query]"}},
		{"cut in the first block", str("al[x]"), []string{"text:al[x]", "image"}},
		{"cut right after a block", str("alpha\n[m]"), []string{"text:alpha", "image", "text:[m]"}},
		{"grown at the end", str(joined + "!"), []string{"text:alpha", "image", "text:beta", "text:gamma!"}},
		{"nil drops the text", nil, []string{"image"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mcpproxy.SplitText(content, tt.text)
			if g, w := strings.Join(texts(got), "|"), strings.Join(tt.want, "|"); g != w {
				t.Errorf("SplitText = %s\nwant       %s", g, w)
			}
		})
	}
	// A replaced block keeps its annotations.
	got := mcpproxy.SplitText(content, str("alpha\nbe[x]"))
	if tc := got[2].(*mcp.TextContent); tc.Annotations != ann {
		t.Error("the cut block lost its annotations")
	}
	// The original blocks are not modified.
	if content[2].(*mcp.TextContent).Text != "beta" {
		t.Error("SplitText modified its input")
	}
}

func TestSplitTextWithinLimit(t *testing.T) {
	// Whatever the cut, the text blocks never hold more than the limit.
	content := []mcp.Content{
		&mcp.TextContent{Text: strings.Repeat("a", 300)},
		&mcp.TextContent{Text: strings.Repeat("é", 300)},
		&mcp.TextContent{Text: strings.Repeat("c", 300)},
	}
	joined, _ := mcpproxy.JoinText(content)
	for limit := 128; limit < len(joined)+10; limit += 7 {
		capped, _ := middleware.Truncate(joined, limit)
		total := 0
		for _, c := range mcpproxy.SplitText(content, &capped) {
			total += len(c.(*mcp.TextContent).Text)
		}
		if total > limit {
			t.Fatalf("limit %d: text blocks hold %d bytes", limit, total)
		}
	}
}

func TestCapBlocks(t *testing.T) {
	small := &mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 90)}  // 120 bytes of base64
	large := &mcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 300)} // 400
	res := &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///x", Text: strings.Repeat("r", 500)}}
	link := &mcp.ResourceLink{URI: "file:///y", Name: "y"}
	content := []mcp.Content{small, large, res, link}

	got, dropped := mcpproxy.CapBlocks(content, 200)
	if dropped != 2 {
		t.Errorf("dropped = %d, want 2", dropped)
	}
	if got[0] != small || got[3] != link {
		t.Error("blocks within the limit were not passed as they were")
	}
	if note := got[1].(*mcp.TextContent).Text; note != mcpproxy.DroppedNote("an audio block (audio/wav)", 400, 200) {
		t.Errorf("note = %q", note)
	}
	if note := got[2].(*mcp.TextContent).Text; !strings.Contains(note, "embedded resource (file:///x) of 500 bytes") {
		t.Errorf("note = %q", note)
	}
	same, n := mcpproxy.CapBlocks(content, 1000)
	if n != 0 || &same[0] != &content[0] {
		t.Error("nothing to drop, yet the slice was copied")
	}
}

func TestCapStructured(t *testing.T) {
	long := strings.Repeat("x", 1000)
	t.Run("fits", func(t *testing.T) {
		v := map[string]any{"content": "short", "n": 3.0}
		got, cut, ok := mcpproxy.CapStructured(v, 200)
		if !ok || cut {
			t.Fatalf("cut=%v ok=%v", cut, ok)
		}
		if got.(map[string]any)["content"] != "short" {
			t.Error("changed")
		}
	})
	t.Run("same as text", func(t *testing.T) {
		got, cut, ok := mcpproxy.CapStructured(map[string]any{"content": long}, 300)
		want, _ := middleware.Truncate(long, 300)
		if !ok || !cut || got.(map[string]any)["content"] != want {
			t.Errorf("got %v cut=%v ok=%v", got, cut, ok)
		}
	})
	t.Run("shared budget in key order", func(t *testing.T) {
		v := map[string]any{"b": long, "a": []any{long, 1.0, true, nil}}
		got, cut, ok := mcpproxy.CapStructured(v, 600)
		if !ok || !cut {
			t.Fatalf("cut=%v ok=%v", cut, ok)
		}
		m := got.(map[string]any)
		a0 := m["a"].([]any)[0].(string)
		b := m["b"].(string)
		if len(a0)+len(b) > 600 {
			t.Errorf("strings hold %d bytes", len(a0)+len(b))
		}
		if len(a0) != 600 || b != "" {
			t.Errorf("a[0] = %d bytes, b = %d bytes; want the first string in key order to take the budget", len(a0), len(b))
		}
		if v["b"] != long {
			t.Error("input modified")
		}
	})
	t.Run("skeleton too big", func(t *testing.T) {
		arr := make([]any, 100)
		for i := range arr {
			arr[i] = 123456.0
		}
		if _, _, ok := mcpproxy.CapStructured(map[string]any{"nums": arr}, 200); ok {
			t.Error("a structure whose numbers alone exceed the limit was kept")
		}
	})
}

func resolved(t *testing.T, schema string) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestShape(t *testing.T) {
	long := strings.Repeat("y", 2000)
	orig := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: long}},
		StructuredContent: map[string]any{"content": long},
	}
	capped, _ := middleware.Truncate(long, 500)
	schema := resolved(t, `{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`)

	sh := mcpproxy.Shape(orig, &capped, false, 500, schema)
	if sh.Result.IsError || !sh.TextChanged || !sh.StructuredCut || sh.StructuredDropped {
		t.Errorf("shaped = %+v", sh)
	}
	if sh.Result.StructuredContent.(map[string]any)["content"] != capped {
		t.Error("structured copy differs from the text")
	}
	if orig.Content[0].(*mcp.TextContent).Text != long {
		t.Error("orig modified")
	}

	// A schema the cut breaks: the structured result is dropped and the
	// success becomes an error with a note.
	strict := resolved(t, `{"type":"object","properties":{"content":{"type":"string","pattern":"^y+$"}}}`)
	sh = mcpproxy.Shape(orig, &capped, false, 500, strict)
	if !sh.StructuredDropped || sh.Result.StructuredContent != nil || !sh.Result.IsError {
		t.Errorf("shaped = %+v", sh)
	}
	last := sh.Result.Content[len(sh.Result.Content)-1].(*mcp.TextContent).Text
	if last != mcpproxy.StructuredNote(500) {
		t.Errorf("no note: %q", last)
	}
	total := 0
	for _, c := range sh.Result.Content {
		total += len(c.(*mcp.TextContent).Text)
	}
	if total > 500 {
		t.Errorf("text and note hold %d bytes, over the limit", total)
	}

	// Without an output schema, dropping is enough.
	arr := make([]any, 200)
	for i := range arr {
		arr[i] = 1234567.0
	}
	sh = mcpproxy.Shape(&mcp.CallToolResult{StructuredContent: arr}, nil, false, 500, nil)
	if !sh.StructuredDropped || sh.Result.IsError || sh.Result.Content == nil {
		t.Errorf("shaped = %+v", sh)
	}
}
