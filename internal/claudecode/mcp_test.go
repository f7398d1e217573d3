package claudecode_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/claudecode"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/tokens"
)

// policies are the per-tool policies the MCP text tests run under: every
// setting a manifest can give a tool.
func policies(t *testing.T) map[string]shape.Policy {
	t.Helper()
	fail, err := cut.CompileKeepLines([]string{`FAIL`})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]shape.Policy{
		"head":              shape.Bytes(4096),
		"head_tail":         {MaxBytes: 4096, Spec: cut.Spec{Keep: cut.KeepHeadTail, TailShare: 0.3, KeepLines: fail}},
		"json":              {MaxBytes: 4096, Spec: cut.Spec{Keep: cut.KeepJSON, Fallback: cut.KeepHeadTail}},
		"tokens":            {MaxBytes: 12000, MaxTokens: 1000, Counter: tokens.NewCalibrated()},
		"tokens, head_tail": {MaxBytes: 12000, MaxTokens: 2500, Spec: cut.Spec{Keep: cut.KeepHeadTail, KeepLines: fail}, Counter: tokens.NewCalibrated()},
	}
}

// testLog is a test run's log: mostly ok lines, a FAIL in the middle.
func testLog(lines int) string {
	var b strings.Builder
	for i := range lines {
		fmt.Fprintf(&b, "=== RUN   TestStep%05d\n--- PASS: TestStep%05d (0.00s)\n", i, i)
		if i == lines/2 {
			b.WriteString("--- FAIL: TestParse (0.01s)\n")
		}
	}
	return b.String()
}

// An MCP tool's text comes out byte for byte as shape.Text makes it, the
// cut toolcap cap and toolcap mcp make of the same text under the same
// policy: as a bare string and as the one text block of a result.
func TestCapToolResponseMCPTextSameAsText(t *testing.T) {
	for _, size := range []int{2000, 180000} {
		text := testLog(size / 50)
		for name, p := range policies(t) {
			t.Run(fmt.Sprintf("%s/%d", name, len(text)), func(t *testing.T) {
				want, _, wantChanged := shape.Text(text, p)
				for _, resp := range []any{
					text,
					[]any{map[string]any{"type": "text", "text": text}},
					map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": false},
				} {
					out, _, changed, err := claudecode.CapToolResponse("mcp__ci__log", toJSON(t, resp), p)
					if err != nil || changed != wantChanged {
						t.Fatalf("CapToolResponse(%T) = changed %v, error %v; want changed %v", resp, changed, err, wantChanged)
					}
					if !changed {
						continue
					}
					var got string
					switch v := decoded(t, out); {
					case v["$"] != nil:
						if s, ok := v["$"].(string); ok {
							got = s
						} else {
							got = v["$"].([]any)[0].(map[string]any)["text"].(string)
						}
					default:
						got = v["content"].([]any)[0].(map[string]any)["text"].(string)
					}
					if got != want {
						t.Errorf("%T: the text differs from shape.Text's (%d bytes, want %d):\n%.300q\nwant\n%.300q", resp, len(got), len(want), got, want)
					}
				}
			})
		}
	}
}

// markerRE finds a byte marker.
var markerRE = regexp.MustCompile(`\n\[truncated: \d+ bytes dropped, refine your query\]`)

// MCP content blocks are fitted together by shape.Content: the text blocks
// joined and cut as one text, every block (images too) within the limit,
// dropped blocks named by a note.
func TestCapToolResponseMCPBlocks(t *testing.T) {
	p := shape.Bytes(4096)
	tests := []struct {
		name     string
		response any
		want     []string // each output block: its type and, for text, its start
	}{
		{
			// The blocks take the limit in order: the text, cut to the
			// limit, leaves no room for the image after it, which a note
			// replaces; the last text block goes with the cut text.
			name: "text blocks and a small image",
			response: []any{
				map[string]any{"type": "text", "text": numbered("row", 5000)},
				map[string]any{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
				map[string]any{"type": "text", "text": "note: done"},
			},
			want: []string{"text:row 000000", "text:[toolcap: dropped an image block (image/png) of 21 bytes"},
		},
		{
			name: "an image over the limit",
			response: []any{
				map[string]any{"type": "text", "text": "here it is"},
				map[string]any{"type": "image", "data": strings.Repeat("A", 100000), "mimeType": "image/png"},
			},
			want: []string{"text:here it is", "text:[toolcap: dropped an image block (image/png) of 100009 bytes"},
		},
		{
			name: "an embedded text resource",
			response: []any{
				map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///big.log", "mimeType": "text/plain", "text": numbered("log", 5000)}},
			},
			want: []string{"resource"},
		},
		{
			name: "a resource link with a long description",
			response: map[string]any{"content": []any{
				map[string]any{"type": "resource_link", "uri": "file:///a", "name": "a", "description": numbered("about", 5000)},
			}},
			want: []string{"resource_link"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, fig, changed, err := claudecode.CapToolResponse("mcp__fs__read", toJSON(t, tt.response), p)
			if err != nil || !changed {
				t.Fatalf("CapToolResponse() = changed %v, error %v; want a cut", changed, err)
			}
			v := decoded(t, out)
			blocks, ok := v["$"].([]any)
			if !ok {
				blocks = v["content"].([]any)
			}
			var got []string
			size := 0
			for _, b := range blocks {
				m := b.(map[string]any)
				typ := m["type"].(string)
				switch typ {
				case "text":
					text := m["text"].(string)
					size += len(text)
					got = append(got, "text:"+text[:min(len(text), len(tt.want[len(got)])-len("text:"))])
				case "image":
					size += len(m["data"].(string)) + len(m["mimeType"].(string))
					got = append(got, typ)
				case "resource":
					r := m["resource"].(map[string]any)
					text := r["text"].(string)
					if len(markerRE.FindAllString(text, -1)) != 1 || r["uri"] != "file:///big.log" {
						t.Errorf("resource %v: want its text cut with one marker, its URI kept", r["uri"])
					}
					size += len(text) + len(r["uri"].(string)) + len(r["mimeType"].(string))
					got = append(got, typ)
				case "resource_link":
					d := m["description"].(string)
					if len(markerRE.FindAllString(d, -1)) != 1 {
						t.Errorf("resource link: want its description cut with one marker")
					}
					size += len(d) + len(m["uri"].(string)) + len(m["name"].(string))
					got = append(got, typ)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("blocks mismatch (-want +got):\n%s", diff)
			}
			if size > p.MaxBytes {
				t.Errorf("the blocks hold %d bytes, over the limit %d", size, p.MaxBytes)
			}
			if fig.Limit != p.MaxBytes || fig.DroppedBytes <= 0 {
				t.Errorf("figures %+v: want the limit and the bytes dropped", fig)
			}
		})
	}
}

// More text blocks than tokens: the blocks share the one text's cut, and
// the model reads at most the token limit in all.
func TestCapToolResponseMCPBlocksTokens(t *testing.T) {
	p := shape.Policy{MaxBytes: 16384, MaxTokens: 40, Counter: tokens.NewCalibrated()}
	var blocks []any
	var texts []string
	for i := range 60 {
		s := strings.Repeat(fmt.Sprintf("block %02d\n", i), 10)
		blocks = append(blocks, map[string]any{"type": "text", "text": s})
		texts = append(texts, s)
	}
	out, _, changed, err := claudecode.CapToolResponse("mcp__fs__read_file", toJSON(t, blocks), p)
	if err != nil || !changed {
		t.Fatalf("CapToolResponse() = changed %v, error %v; want a cut", changed, err)
	}
	var got []map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	kept := make([]string, len(got))
	for i, b := range got {
		kept[i] = b["text"]
	}
	joined := strings.Join(kept, shape.TextSeparator)
	if err := capcheck.Text(strings.Join(texts, shape.TextSeparator), joined, p); err != nil {
		t.Error(err)
	}
	if n := p.Counter.Count(joined); n > p.MaxTokens || n < p.MaxTokens*3/4 {
		t.Errorf("the model reads %d tokens, want at most %d and most of them", n, p.MaxTokens)
	}
}

// Structured values keep valid JSON: an MCP result's structuredContent on
// its own, with a note of what it kept; any other value as a whole; a
// notebook's cells as an array.
func TestCapToolResponseJSON(t *testing.T) {
	rows := make([]any, 400)
	for i := range rows {
		rows[i] = map[string]any{"id": i, "body": strings.Repeat("z", 100)}
	}
	p := shape.Bytes(4096)

	t.Run("a value of its own", func(t *testing.T) {
		out, fig, changed, err := claudecode.CapToolResponse("mcp__db__query", toJSON(t, map[string]any{"rows": rows, "count": 400}), p)
		if err != nil || !changed {
			t.Fatalf("CapToolResponse() = changed %v, error %v; want a cut", changed, err)
		}
		v := decoded(t, out)
		if len(out) > p.MaxBytes || v["count"] != float64(400) || len(v["rows"].([]any)) == 0 {
			t.Errorf("%d bytes, count %v, %d rows; want within %d, count kept, some rows", len(out), v["count"], len(v["rows"].([]any)), p.MaxBytes)
		}
		if fig.Strategy != string(cut.KeepJSON) || fig.Limit != p.MaxBytes {
			t.Errorf("figures %+v: want a json cut at the limit", fig)
		}
	})
	t.Run("a value of its own, tokens", func(t *testing.T) {
		q := shape.Policy{MaxBytes: 16384, MaxTokens: 1000, Counter: tokens.NewCalibrated()}
		out, fig, changed, err := claudecode.CapToolResponse("mcp__db__query", toJSON(t, map[string]any{"rows": rows}), q)
		if err != nil || !changed {
			t.Fatalf("CapToolResponse() = changed %v, error %v; want a cut", changed, err)
		}
		if n := q.Counter.Count(string(out)); n > q.MaxTokens || !json.Valid(out) || fig.LimitTokens != q.MaxTokens {
			t.Errorf("%d tokens, valid %v, figures %+v; want valid JSON within %d tokens", n, json.Valid(out), fig, q.MaxTokens)
		}
	})
	t.Run("structuredContent", func(t *testing.T) {
		resp := map[string]any{
			"content":           []any{map[string]any{"type": "text", "text": "400 rows"}},
			"structuredContent": map[string]any{"rows": rows},
		}
		out, _, changed, err := claudecode.CapToolResponse("mcp__db__query", toJSON(t, resp), p)
		if err != nil || !changed {
			t.Fatalf("CapToolResponse() = changed %v, error %v; want a cut", changed, err)
		}
		var got struct {
			Content           []map[string]any
			StructuredContent json.RawMessage
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.StructuredContent) > p.MaxBytes || !json.Valid(got.StructuredContent) {
			t.Errorf("structuredContent of %d bytes: want valid JSON within %d", len(got.StructuredContent), p.MaxBytes)
		}
		if len(got.Content) != 2 || got.Content[0]["text"] != "400 rows" || !strings.HasPrefix(got.Content[1]["text"].(string), "[toolcap: ") {
			t.Errorf("content %v: want the text block and a note of what the structured cut kept", got.Content)
		}
	})
	t.Run("notebook cells", func(t *testing.T) {
		cells := make([]any, 200)
		for i := range cells {
			cells[i] = map[string]any{"cellType": "code", "source": strings.Repeat("x = 1\n", 20), "cell_id": fmt.Sprint(i)}
		}
		resp := map[string]any{"type": "notebook", "file": map[string]any{"filePath": "/p/n.ipynb", "cells": cells}}
		out := cutOf(t, "Read", resp, p)
		file := out["file"].(map[string]any)
		got, ok := file["cells"].([]any)
		enc, _ := json.Marshal(got)
		if !ok || len(got) == 0 || len(got) == len(cells) || len(enc) > p.MaxBytes || file["filePath"] != "/p/n.ipynb" {
			t.Errorf("cells: %d of %d, %d bytes; want an array of fewer cells within %d, filePath kept", len(got), len(cells), len(enc), p.MaxBytes)
		}
	})
}
