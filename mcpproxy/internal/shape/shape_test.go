package shape_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/cut"
	"github.com/toolcap/toolcap/mcpproxy/internal/shape"
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
	joined, ok := shape.JoinText(content)
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
			got := shape.SplitText(content, tt.text)
			if g, w := strings.Join(texts(got), "|"), strings.Join(tt.want, "|"); g != w {
				t.Errorf("SplitText = %s\nwant       %s", g, w)
			}
		})
	}
	// A replaced block keeps its annotations.
	got := shape.SplitText(content, str("alpha\nbe[x]"))
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
	joined, _ := shape.JoinText(content)
	for limit := 128; limit < len(joined)+10; limit += 7 {
		capped, _ := middleware.Truncate(joined, limit)
		total := 0
		for _, c := range shape.SplitText(content, &capped) {
			total += len(c.(*mcp.TextContent).Text)
		}
		if total > limit {
			t.Fatalf("limit %d: text blocks hold %d bytes", limit, total)
		}
	}
}

// describe gives a block's kind and what a test checks of it.
func describe(cs []mcp.Content) []string {
	var out []string
	for _, c := range cs {
		switch b := c.(type) {
		case *mcp.TextContent:
			out = append(out, "text:"+b.Text)
		case *mcp.ImageContent:
			out = append(out, fmt.Sprintf("image:%d", len(b.Data)))
		case *mcp.AudioContent:
			out = append(out, fmt.Sprintf("audio:%d", len(b.Data)))
		case *mcp.EmbeddedResource:
			out = append(out, fmt.Sprintf("resource:%s:%s:%d", b.Resource.URI, b.Resource.Text, len(b.Resource.Blob)))
		case *mcp.ResourceLink:
			out = append(out, fmt.Sprintf("link:%s:%s:%s", b.URI, b.Name, b.Description))
		default:
			out = append(out, fmt.Sprintf("%T", c))
		}
	}
	return out
}

func TestCapBlocks(t *testing.T) {
	img := func(n int) *mcp.ImageContent { return &mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, n)} }
	text := func(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }
	cut := func(s string, n int) string { c, _ := middleware.Truncate(s, n); return c }
	res := func(text string) *mcp.EmbeddedResource {
		return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///x", Text: text}}
	}
	a100, r1000, x1000 := strings.Repeat("a", 100), strings.Repeat("r", 1000), strings.Repeat("x", 1000)
	imgNote := func(size, limit int) string { return shape.DroppedNote("an image block (image/png)", size, limit) }
	// An image of 90 bytes takes 9 (MIME type) + 120 (base64) = 129.
	tenImages := make([]mcp.Content, 10)
	for i := range tenImages {
		tenImages[i] = img(90)
	}
	var sixImages []string
	for range 6 {
		sixImages = append(sixImages, "image:90")
	}

	tests := []struct {
		name        string
		content     []mcp.Content
		limit       int
		want        []string
		wantDropped int
	}{
		{"within the limit: unchanged",
			[]mcp.Content{text("hi"), img(90), res("r")}, 1000,
			[]string{"text:hi", "image:90", "resource:file:///x:r:0"}, 0},
		{"an image over what the text leaves is dropped, the note fits",
			[]mcp.Content{text(a100), img(300)}, 400,
			[]string{"text:" + a100, "text:" + imgNote(409, 400)}, 1},
		{"images share one budget; one note for all dropped",
			tenImages, 1000,
			append(sixImages, "text:"+shape.DroppedNote("4 blocks", 4*129, 1000)), 4},
		{"an embedded text resource is cut by the rule of text",
			[]mcp.Content{text(a100), res(r1000)}, 400,
			[]string{"text:" + a100, "resource:file:///x:" + cut(r1000, 400-100-9) + ":0"}, 0},
		{"a resource link's description is cut",
			[]mcp.Content{&mcp.ResourceLink{URI: "file:///y", Name: "y", Description: x1000}}, 300,
			[]string{"link:file:///y:y:" + cut(x1000, 300-9-1)}, 0},
		{"a resource link too large to cut is dropped",
			[]mcp.Content{&mcp.ResourceLink{URI: "file:///y", Name: strings.Repeat("n", 500)}}, 300,
			[]string{"text:" + shape.DroppedNote("a resource link (file:///y)", 509, 300)}, 1},
		{"blocks take the budget in order: an image before the text",
			[]mcp.Content{img(90), text(x1000)}, 400,
			[]string{"image:90", "text:" + cut(x1000, 400-129)}, 0},
		{"the text is cut further to make room for the note",
			[]mcp.Content{text(strings.Repeat("t", 400)), img(100)}, 400,
			[]string{"text:" + cut(strings.Repeat("t", 400), 400-len(imgNote(145, 400))), "text:" + imgNote(145, 400)}, 1},
		{"text cut again keeps an exact count",
			[]mcp.Content{text(cut(x1000, 400)), img(100)}, 400,
			[]string{"text:" + cut(x1000, 400-len(imgNote(145, 400))), "text:" + imgNote(145, 400)}, 1},
		{"a small limit takes the short note",
			[]mcp.Content{text(strings.Repeat("s", 50)), img(200)}, 128,
			[]string{"text:" + strings.Repeat("s", 50), "text:[toolcap: 1 block over the limit dropped]"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, dropped := shape.CapBlocks(tt.content, tt.limit)
			if diff := cmp.Diff(tt.want, describe(got)); diff != "" {
				t.Errorf("CapBlocks (-want +got):\n%s", diff)
			}
			if dropped != tt.wantDropped {
				t.Errorf("dropped = %d, want %d", dropped, tt.wantDropped)
			}
			if n := shape.ContentSize(got); n > tt.limit {
				t.Errorf("content holds %d bytes, over the limit of %d", n, tt.limit)
			}
		})
	}

	content := []mcp.Content{text("hi"), img(90)}
	if same, _ := shape.CapBlocks(content, 1000); &same[0] != &content[0] {
		t.Error("nothing to do, yet the slice was copied")
	}
}

// TestCapBlocksRecutMatchesTruncate: a text the chain cut at one limit, cut
// again at a smaller one, is what Truncate makes of the original at the
// smaller limit: same kept bytes, same exact count.
func TestCapBlocksRecutMatchesTruncate(t *testing.T) {
	orig := strings.Repeat("é", 3000) + strings.Repeat("z", 7000)
	first, _ := middleware.Truncate(orig, 9000)
	for limit := 64; limit <= 9000; limit += 37 {
		want, _ := middleware.Truncate(orig, limit)
		got, _ := shape.CapBlocks([]mcp.Content{&mcp.TextContent{Text: first}}, limit)
		if diff := cmp.Diff([]string{"text:" + want}, describe(got)); diff != "" {
			t.Fatalf("limit %d (-want +got):\n%s", limit, diff)
		}
	}
}

// TestCapBlocksWithinLimit: whatever the mix and the limit, the blocks and
// the notes together stay within the limit.
func TestCapBlocksWithinLimit(t *testing.T) {
	var content []mcp.Content
	for i := range 12 {
		content = append(content,
			&mcp.TextContent{Text: strings.Repeat("t", 100*i)},
			&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 50*i)},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///r", Text: strings.Repeat("r", 150*i)}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b", Blob: make([]byte, 40*i)}},
			&mcp.ResourceLink{URI: "file:///l", Name: "l", Description: strings.Repeat("d", 80*i)},
			&mcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 70*i)},
		)
	}
	for limit := 128; limit < shape.ContentSize(content)+100; limit += 97 {
		got, _ := shape.CapBlocks(content, limit)
		if n := shape.ContentSize(got); n > limit {
			t.Fatalf("limit %d: content holds %d bytes", limit, n)
		}
	}
}

func TestCapStructuredJSON(t *testing.T) {
	long := strings.Repeat("x", 1000)
	graph := func(n int) string {
		var e, r []string
		for i := range n {
			e = append(e, fmt.Sprintf(`{"name":"e%d","entityType":"t","observations":["a sentence long enough"]}`, i))
			r = append(r, fmt.Sprintf(`{"from":"e%d","to":"e%d","relationType":"knows"}`, i, i+1))
		}
		return `{"entities":[` + strings.Join(e, ",") + `],"relations":[` + strings.Join(r, ",") + `]}`
	}
	graphSchema := resolved(t, `{"type":"object","required":["entities","relations"],"properties":{"entities":{"type":"array"},"relations":{"type":"array"}}}`)
	tests := []struct {
		name     string
		in       string
		limit    int
		schema   *jsonschema.Resolved
		want     string // "" for "cut, see check"
		wantCut  bool
		wantOK   bool
		wantNote string
	}{
		{name: "fits", in: `{"z":"short","a":3}`, limit: 200, want: `{"z":"short","a":3}`, wantOK: true},
		{name: "a string cut in place, key order kept", in: `{"z":1,"content":"` + long + `"}`, limit: 300, wantCut: true, wantOK: true},
		{name: "every member kept, arrays share the rest", in: graph(400), limit: 16384, schema: graphSchema, wantCut: true, wantOK: true,
			wantNote: "kept "},
		{name: "numbers alone too big", in: "[" + strings.Repeat("123456789,", 100) + "1]", limit: 1, wantOK: false},
		{name: "a cut the schema refuses", in: `{"content":"` + strings.Repeat("y", 1000) + `"}`, limit: 300,
			schema: resolved(t, `{"type":"object","properties":{"content":{"type":"string","pattern":"^y+$"}}}`), wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, ok := shape.CapStructuredJSON([]byte(tt.in), tt.limit, tt.schema, nil)
			if ok != tt.wantOK || sc.Cut != tt.wantCut {
				t.Fatalf("ok %v cut %v, want %v %v", ok, sc.Cut, tt.wantOK, tt.wantCut)
			}
			if !ok {
				return
			}
			if tt.want != "" {
				if diff := cmp.Diff(tt.want, string(sc.Raw)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}
			if len(sc.Raw) > tt.limit || !json.Valid(sc.Raw) {
				t.Errorf("%d bytes (limit %d), valid %v", len(sc.Raw), tt.limit, json.Valid(sc.Raw))
			}
			if !strings.Contains(sc.Note, tt.wantNote) {
				t.Errorf("note %q, want it to contain %q", sc.Note, tt.wantNote)
			}
		})
	}

	// The graph keeps its first entities and relations, whole, in order.
	sc, _ := shape.CapStructuredJSON([]byte(graph(400)), 16384, graphSchema, nil)
	var g struct {
		Entities  []struct{ Name string }
		Relations []struct{ From string }
	}
	if err := json.Unmarshal(sc.Raw, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Entities) == 0 || len(g.Relations) == 0 || g.Entities[0].Name != "e0" || g.Relations[0].From != "e0" {
		t.Errorf("kept %d entities, %d relations", len(g.Entities), len(g.Relations))
	}
	want := fmt.Sprintf("kept %d of 400 items of /entities, %d of 400 items of /relations", len(g.Entities), len(g.Relations))
	if !strings.Contains(sc.Note, want) {
		t.Errorf("note %q, want %q", sc.Note, want)
	}
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
		Content: []mcp.Content{&mcp.TextContent{Text: long}},
	}
	structured := []byte(`{"content":"` + long + `"}`)
	capped, _ := middleware.Truncate(long, 500)
	schema := resolved(t, `{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`)

	sh := shape.Shape(shape.Input{Result: orig, StructuredRaw: structured, Text: &capped, Limit: 500, Schema: schema})
	if sh.Result.IsError || !sh.TextChanged || !sh.StructuredCut || sh.StructuredDropped {
		t.Errorf("shaped = %+v", sh)
	}
	if len(sh.StructuredRaw) > 500 || !json.Valid(sh.StructuredRaw) || !bytes.HasPrefix(sh.StructuredRaw, []byte(`{"content":"yyy`)) {
		t.Errorf("structured = %.80s… (%d bytes)", sh.StructuredRaw, len(sh.StructuredRaw))
	}
	if orig.Content[0].(*mcp.TextContent).Text != long {
		t.Error("orig modified")
	}

	// A schema the cut breaks: the structured result is dropped and the
	// success becomes an error with a note.
	strict := resolved(t, `{"type":"object","properties":{"content":{"type":"string","pattern":"^y+$"}}}`)
	sh = shape.Shape(shape.Input{Result: orig, StructuredRaw: structured, Text: &capped, Limit: 500, Schema: strict})
	if !sh.StructuredDropped || sh.StructuredRaw != nil || !sh.Result.IsError {
		t.Errorf("shaped = %+v", sh)
	}
	last := sh.Result.Content[len(sh.Result.Content)-1].(*mcp.TextContent).Text
	if last != shape.StructuredNote(500) {
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
	nums := []byte("[" + strings.Repeat("1234567,", 200) + "1]")
	sh = shape.Shape(shape.Input{Result: &mcp.CallToolResult{}, StructuredRaw: nums, Text: nil, Limit: 1, Schema: nil})
	if !sh.StructuredDropped || sh.Result.IsError || sh.Result.Content == nil {
		t.Errorf("shaped = %+v", sh)
	}
}

// TestShapeNotesWithinLimit: the notes Shape adds (the structured note, the
// dropped-block note) count against the limit with the blocks, down to the
// smallest limit a manifest accepts.
func TestShapeNotesWithinLimit(t *testing.T) {
	strict := resolved(t, `{"type":"object","properties":{"content":{"type":"string","pattern":"^y+$"}}}`)
	long := strings.Repeat("y", 20000)
	tests := []struct {
		name     string
		content  []mcp.Content
		limit    int
		wantLast string
	}{
		{"structured note, default limit", []mcp.Content{&mcp.TextContent{Text: long}}, 16384, shape.StructuredNote(16384)},
		{"structured note, smallest limit", []mcp.Content{&mcp.TextContent{Text: long}}, 128, "[toolcap: structuredContent over the limit dropped]"},
		{"both notes, smallest limit", []mcp.Content{
			&mcp.TextContent{Text: long},
			&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 1000)},
		}, 128, "[toolcap: structuredContent over the limit dropped]"},
		{"both notes, middling limit", []mcp.Content{
			&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 1000)},
			&mcp.TextContent{Text: long},
		}, 600, shape.StructuredNote(600)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := &mcp.CallToolResult{Content: tt.content}
			joined, _ := shape.JoinText(tt.content)
			capped, _ := middleware.Truncate(joined, tt.limit) // what the chain makes of it
			sh := shape.Shape(shape.Input{Result: orig, StructuredRaw: []byte(`{"content":"` + long + `"}`), Text: &capped, Limit: tt.limit, Schema: strict})
			if !sh.StructuredDropped || !sh.Result.IsError {
				t.Fatalf("shaped = %+v, want the structured result dropped and an error", sh)
			}
			got := sh.Result.Content
			if diff := cmp.Diff(tt.wantLast, got[len(got)-1].(*mcp.TextContent).Text); diff != "" {
				t.Errorf("last block (-want +got):\n%s", diff)
			}
			if n := shape.ContentSize(got); n > tt.limit {
				t.Errorf("blocks and notes hold %d bytes, over the limit of %d", n, tt.limit)
			}
			if text := got[0].(*mcp.TextContent).Text; len(got) > 1 && !strings.Contains(text, "[truncated: ") && !strings.HasPrefix(text, "[toolcap: ") {
				t.Errorf("the first block is neither cut text nor a note: %.80q", text)
			}
		})
	}
}

// A head_tail text that has to give up room to another block keeps its
// shape: one marker between head and tail, its count exact.
func TestCapBlocksKeepsHeadTail(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "ok %d\n", i)
	}
	b.WriteString("FAIL: TestX")
	log := b.String()
	text, st := cut.Cut(log, 3000, cut.Spec{Keep: cut.KeepHeadTail})
	if st.Dropped == 0 {
		t.Fatal("not cut")
	}
	content := []mcp.Content{&mcp.TextContent{Text: text}, &mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 500)}}
	got, _ := shape.CapBlocks(content, 3000)
	out := got[0].(*mcp.TextContent).Text
	re := regexp.MustCompile(`\n\[truncated: (\d+) bytes dropped, refine your query\]\n`)
	ms := re.FindAllStringSubmatchIndex(out, -1)
	if len(ms) != 1 || !strings.HasPrefix(out, "ok 0\n") || !strings.HasSuffix(out, "FAIL: TestX") {
		t.Fatalf("got %d markers in %q…%q", len(ms), out[:40], out[len(out)-40:])
	}
	n, _ := strconv.Atoi(out[ms[0][2]:ms[0][3]])
	kept := len(out) - (ms[0][1] - ms[0][0])
	if n != len(log)-kept {
		t.Errorf("the marker says %d, want %d (%d kept of %d)", n, len(log)-kept, kept, len(log))
	}
	if size := shape.ContentSize(got); size > 3000 {
		t.Errorf("content holds %d bytes, over 3000", size)
	}
}
