package claudecode_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/claudecode"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
)

// numberedLines is n lines "line NNNNN …" of about 46 bytes, joined by
// newlines without a last one, as Read's file.content holds a file.
func numberedLines(n int) string {
	ls := make([]string, n)
	for i := range ls {
		ls[i] = fmt.Sprintf("line %05d: the quick brown fox jumps over", i+1)
	}
	return strings.Join(ls, "\n")
}

// rendered is what the model reads of Read's content, as Claude Code
// 2.1.328 renders it: each line as its number, a tab and the line.
func rendered(content string, start int) string {
	ls := strings.Split(content, "\n")
	for i := range ls {
		ls[i] = strconv.Itoa(start+i) + "\t" + ls[i]
	}
	return strings.Join(ls, "\n")
}

// readPayload is the tool_response of a Read of lines [start, start+n) of
// file, as Claude Code sends it.
func readPayload(t *testing.T, path, file string, start, limit int) json.RawMessage {
	t.Helper()
	all := strings.Split(file, "\n")
	end := min(start-1+limit, len(all))
	content := strings.Join(all[start-1:end], "\n")
	return toJSON(t, map[string]any{"type": "text", "file": map[string]any{
		"filePath": path, "content": content, "numLines": end - start + 1, "startLine": start, "totalLines": len(all)}})
}

// readArgsRE finds the Read a marker names.
var readArgsRE = regexp.MustCompile(`or read the rest: Read (\{[^}]*\})\]`)

type readArgs struct {
	FilePath string `json:"file_path"`
	Offset   int    `json:"offset"`
	Limit    int    `json:"limit"`
}

// nextRead returns the Read the marker of s names, and false when there is
// none.
func nextRead(t *testing.T, s string) (readArgs, bool) {
	t.Helper()
	m := readArgsRE.FindStringSubmatch(s)
	if m == nil {
		return readArgs{}, false
	}
	var a readArgs
	if err := json.Unmarshal([]byte(m[1]), &a); err != nil {
		t.Fatalf("the marker's Read %s: %v", m[1], err)
	}
	return a, true
}

// Output Claude Code saved to a file itself reaches the model as Claude
// Code made it, however long.
func TestHookLeavesClaudeCodesSavedOutput(t *testing.T) {
	preview := strings.Repeat("0123456789\n", 2728)
	tests := []struct {
		name string
		tool string
		resp any
	}{
		{"Bash with persistedOutputPath", "Bash", map[string]any{"stdout": preview, "stderr": "", "interrupted": false,
			"persistedOutputPath": "/home/u/.claude/projects/p/tool-results/b1.txt", "persistedOutputSize": 1_900_000}},
		{"MCP persisted-output text", "mcp__fs__search", "<persisted-output>\nOutput too large (1.2MB). Full output saved to: /x/tool-results/m1.txt\n\nPreview (first 2KB):\n" + preview + "</persisted-output>"},
		{"MCP persisted-output block", "mcp__fs__search", []any{map[string]any{"type": "text", "text": "<persisted-output>\n" + preview}}},
		{"MCP over its token limit", "mcp__fs__search", "Error: result (1,234,567 characters) exceeds maximum allowed tokens. Output has been saved to /x/tool-results/m2.txt.\n" + preview},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := claudecode.Input{HookEventName: "PostToolUse", ToolName: tt.tool, ToolResponse: toJSON(t, tt.resp)}
			out, _, changed, err := (&claudecode.Hook{}).Cap(in, shape.Bytes(4096))
			if err != nil || changed || out != nil {
				t.Errorf("Cap() = %.80q, changed %v, error %v; want Claude Code's text left alone", out, changed, err)
			}
		})
	}
}

// A Read is cut on a line boundary with its line numbers counted: what the
// model reads, numbers included, is within the limit; numLines counts the
// lines it got; the marker names the Read of the next line.
func TestHookReadLines(t *testing.T) {
	file := numberedLines(1500)
	for _, limit := range []int{16384, 4096, 300} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			in := claudecode.Input{HookEventName: "PostToolUse", ToolName: "Read",
				ToolInput: toJSON(t, map[string]any{"file_path": "/p/big.txt"}), ToolResponse: readPayload(t, "/p/big.txt", file, 1, 2000)}
			out, fig, changed, err := (&claudecode.Hook{}).Cap(in, shape.Bytes(limit))
			if err != nil || !changed {
				t.Fatalf("Cap() = changed %v, error %v; want a cut", changed, err)
			}
			var got struct {
				File struct {
					Content                         string
					NumLines, StartLine, TotalLines int
				}
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			seen := rendered(got.File.Content, 1)
			if len(seen) > limit {
				t.Errorf("the model reads %d bytes with the line numbers, over %d", len(seen), limit)
			}
			if len(seen) < limit*3/4 {
				t.Errorf("the model reads %d bytes of %d: the cut wastes the limit", len(seen), limit)
			}
			k := got.File.NumLines
			if !strings.HasPrefix(file, got.File.Content[:strings.Index(got.File.Content, "\n[truncated: ")]+"\n") {
				t.Error("the kept lines are not whole lines of the file")
			}
			next, ok := nextRead(t, got.File.Content)
			if !ok {
				t.Fatalf("no Read named in %q", got.File.Content[len(got.File.Content)-200:])
			}
			want := readArgs{FilePath: "/p/big.txt", Offset: k + 1, Limit: next.Limit}
			if diff := cmp.Diff(want, next); diff != "" || next.Limit < 1 {
				t.Errorf("the marker's Read mismatch (-want +got):\n%s", diff)
			}
			if ms := cut.FindMarkers(got.File.Content); len(ms) != 1 || ms[0].N != fig.DroppedBytes || fig.DroppedBytes != len(file)-strings.Index(file, fmt.Sprintf("line %05d:", k+1))+1 {
				t.Errorf("markers %+v, figures %+v: want one counting the bytes after line %d", ms, fig, k)
			}
		})
	}
}

// A Read that Claude Code paged for tokens (truncatedByTokenCap) comes with
// Claude Code's own note, which no hook can change, that the page shows
// lines 1 to numLines and that the next Read starts after them: when the
// hook's cut shows fewer, its marker line says which lines the note counts
// wrongly and where to read on, and the whole, banner included, is within
// the limit.
func TestHookReadPagedByClaudeCode(t *testing.T) {
	file := numberedLines(1500)
	const path, read = "/p/big.txt", 867
	resp := map[string]any{"type": "text", "file": map[string]any{
		"filePath": path, "content": strings.Join(strings.Split(file, "\n")[:read], "\n"),
		"numLines": read, "startLine": 1, "totalLines": 1500, "truncatedByTokenCap": true}}
	for _, limit := range []int{16384, 4096} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			in := claudecode.Input{HookEventName: "PostToolUse", ToolName: "Read",
				ToolInput: toJSON(t, map[string]any{"file_path": path}), ToolResponse: toJSON(t, resp)}
			out, _, changed, err := (&claudecode.Hook{}).Cap(in, shape.Bytes(limit))
			if err != nil || !changed {
				t.Fatalf("Cap() = changed %v, error %v; want a cut", changed, err)
			}
			var got struct {
				File struct {
					Content             string
					NumLines            int
					TruncatedByTokenCap bool
				}
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			k := got.File.NumLines
			next, ok := nextRead(t, got.File.Content)
			if !ok || next.Offset != k+1 || !got.File.TruncatedByTokenCap {
				t.Fatalf("numLines %d, the marker's Read %+v (found %v), truncatedByTokenCap %v: want the Read of line %d, the flag kept",
					k, next, ok, got.File.TruncatedByTokenCap, k+1)
			}
			note := fmt.Sprintf(" [toolcap: Claude Code's note on this Read counts lines %d-%d as shown; they were cut: read on from offset %d, not %d]", k+1, read, k+1, read+1)
			if !strings.HasSuffix(got.File.Content, note) {
				t.Errorf("the content ends %q, want the note %q", got.File.Content[max(0, len(got.File.Content)-200):], note)
			}
			// Claude Code's banner, rebuilt from numLines where it
			// re-renders the result, counts against the limit too.
			banner := fmt.Sprintf("[Truncated: PARTIAL view — %s: showing %d of %d lines. Call Read with offset/limit to page through. Do NOT answer from this page alone if the answer may be further in the file.]", path, k, 1500)
			if n := len(rendered(got.File.Content, 1)) + 2 + len(banner); n > limit {
				t.Errorf("the model reads %d bytes with the numbers and the banner, over %d", n, limit)
			}
		})
	}
}

// With a store, a cut output is kept whole as a plain file, and following
// the markers' Reads page after page (each page cut again by the hook, as
// Claude Code runs it after its Read) gives back the output line for line,
// every page within the limit, without keeping a page again.
func TestHookKeepsTheRest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "claude-code")
	store, err := rest.OpenPlainDir(dir, rest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := &claudecode.Hook{Store: store}
	output := numberedLines(3000) + "\n"
	const limit = 4096
	p := shape.Policy{MaxBytes: limit, KeepRest: true}
	tests := []struct {
		name string
		tool string
		resp any
		text func(map[string]any) string
	}{
		{"Bash", "Bash", map[string]any{"stdout": output, "stderr": "", "interrupted": false},
			func(o map[string]any) string { return o["stdout"].(string) }},
		{"MCP text", "mcp__ci__log", output, func(o map[string]any) string { return o["$"].(string) }},
		{"MCP blocks", "mcp__ci__log", []any{map[string]any{"type": "text", "text": output}},
			func(o map[string]any) string { return o["$"].([]any)[0].(map[string]any)["text"].(string) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := claudecode.Input{HookEventName: "PostToolUse", ToolName: tt.tool, SessionID: "session-1", ToolResponse: toJSON(t, tt.resp)}
			out, fig, changed, err := h.Cap(in, p)
			if err != nil || !changed {
				t.Fatalf("Cap() = changed %v, error %v; want a cut", changed, err)
			}
			first := tt.text(decoded(t, out))
			if len(first) > limit {
				t.Errorf("first page: %d bytes, over %d", len(first), limit)
			}
			next, ok := nextRead(t, first)
			if !ok || fig.Ref == "" {
				t.Fatalf("no Read named (figures %+v) in %q", fig, first[max(0, len(first)-300):])
			}
			if !store.IsEntryPath(next.FilePath) {
				t.Fatalf("the Read names %s, not a file of the store %s", next.FilePath, dir)
			}
			file, err := readFileString(next.FilePath)
			if err != nil || file != output {
				t.Fatalf("the kept file (%d bytes, %v) is not the output (%d bytes)", len(file), err, len(output))
			}
			lines := strings.Split(file, "\n")
			var got []string
			got = append(got, strings.Split(first[:strings.Index(first, "\n[truncated: ")], "\n")[:next.Offset-1]...)
			for pages := 0; ; pages++ {
				if pages > 100 {
					t.Fatal("more than 100 pages: the reads do not move on")
				}
				in := claudecode.Input{HookEventName: "PostToolUse", ToolName: "Read", SessionID: "session-1",
					ToolResponse: readPayload(t, next.FilePath, file, next.Offset, next.Limit)}
				pout, _, changed, err := h.Cap(in, p)
				if err != nil {
					t.Fatal(err)
				}
				var page struct {
					File struct {
						Content  string
						NumLines int
					}
				}
				if changed {
					if err := json.Unmarshal(pout, &page); err != nil {
						t.Fatal(err)
					}
				} else {
					_ = json.Unmarshal(in.ToolResponse, &page)
				}
				if n := len(rendered(page.File.Content, next.Offset)); n > limit {
					t.Errorf("page at line %d: %d bytes with numbers, over %d", next.Offset, n, limit)
				}
				content, _, marked := strings.Cut(page.File.Content, "\n[truncated: ")
				if !marked && page.File.NumLines > 0 {
					content = page.File.Content
				}
				got = append(got, strings.Split(content, "\n")[:page.File.NumLines]...)
				a, ok := nextRead(t, page.File.Content)
				if !ok {
					break
				}
				if a.Offset != next.Offset+page.File.NumLines {
					t.Fatalf("page at line %d of %d lines names offset %d", next.Offset, page.File.NumLines, a.Offset)
				}
				next = a
			}
			if diff := cmp.Diff(lines[:len(lines)-1], got[:min(len(got), len(lines)-1)]); diff != "" || len(got) < len(lines)-1 {
				t.Errorf("the pages (%d lines) do not give back the output (%d lines) (-want +got):\n%.2000s", len(got), len(lines)-1, diff)
			}
			if u := store.Usage(); u.Entries > len(tests) {
				t.Errorf("the store holds %d entries: a page was kept again", u.Entries)
			}
		})
	}
}

// Output nested deeper than a decoder goes, or of the wrong shape, is
// never passed on uncapped: a structuredContent too deep to decode is
// dropped beside the content cut to the limit (as toolcap mcp drops a
// structuredContent no valid form of which fits), and a Bash stdout that is
// not a string is cut as the text of its JSON.
func TestHookFailsClosed(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	text := strings.Repeat("x", 1<<20)
	// asText is the replacement as one text: the output cut as text.
	asText := func(out []byte) (string, error) {
		var s string
		err := json.Unmarshal(out, &s)
		return s, err
	}
	// asContent is the text of the one content block of an MCP result
	// without structuredContent.
	asContent := func(out []byte) (string, error) {
		var r struct {
			Content []struct {
				Type, Text string
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			return "", err
		}
		if len(r.Content) != 1 || r.Content[0].Type != "text" || r.StructuredContent != nil {
			return "", fmt.Errorf("want one text block and no structuredContent")
		}
		return r.Content[0].Text, nil
	}
	tests := []struct {
		name    string
		payload string
		text    func([]byte) (string, error)
	}{
		{"deep structuredContent", `{"hook_event_name":"PostToolUse","tool_name":"mcp__a__b","session_id":"s","tool_response":{"content":[{"type":"text","text":"` + text + `"}],"structuredContent":` + deep + `}}`, asContent},
		{"Bash stdout not a string", `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"stdout":[` + strings.Repeat("1,", 20000) + `1]}}`, asText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := claudecode.ParseInput([]byte(tt.payload))
			if err != nil {
				t.Fatalf("ParseInput: %v", err)
			}
			out, _, changed, err := (&claudecode.Hook{}).Cap(in, shape.Bytes(4096))
			if err != nil || !changed {
				t.Fatalf("Cap() = changed %v, error %v; want a cut", changed, err)
			}
			s, err := tt.text(out)
			if err != nil || len(s) > 4096 || len(cut.FindMarkers(s)) != 1 {
				t.Errorf("replacement %.100q (text of %d bytes, %v): want a text within 4096 with one marker", out, len(s), err)
			}
		})
	}
}

// Many small MCP text blocks share the limit with one marker: what the
// model reads is within it and no block goes without a word.
func TestHookManySmallBlocks(t *testing.T) {
	for _, n := range []int{500, 2000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			blocks := make([]any, n)
			for i := range blocks {
				blocks[i] = map[string]any{"type": "text", "text": fmt.Sprintf("result %04d: some text of a search hit", i)}
			}
			in := claudecode.Input{HookEventName: "PostToolUse", ToolName: "mcp__s__find", ToolResponse: toJSON(t, blocks)}
			out, _, changed, err := (&claudecode.Hook{}).Cap(in, shape.Bytes(4096))
			if err != nil || !changed {
				t.Fatalf("Cap() = changed %v, error %v; want a cut", changed, err)
			}
			var got []struct{ Type, Text string }
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			total, markers := 0, 0
			for _, b := range got {
				total += len(b.Text)
				markers += len(cut.FindMarkers(b.Text))
				if b.Text == "" {
					t.Errorf("an empty block among %d", len(got))
					break
				}
			}
			if total > 4096 || markers != 1 || len(got) < 50 {
				t.Errorf("%d blocks of %d bytes in all with %d markers: want many, within 4096, one marker", len(got), total, markers)
			}
		})
	}
}

func readFileString(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

// An MCP tool's output that is a JSON text too long to be cut as JSON
// (Claude Code hands the hook structuredContent's JSON text, one line of
// it) is kept in a form Read pages: its strings' line breaks are line
// breaks of the file, and the marker names the line where the cut stands,
// whose page goes on from there.
func TestHookKeepsJSONTextPageable(t *testing.T) {
	store, err := rest.OpenPlainDir(filepath.Join(t.TempDir(), "claude-code"), rest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := &claudecode.Hook{Store: store}
	text := numberedLines(2000) + "\n"
	doc, err := json.Marshal(map[string]string{"content": text})
	if err != nil {
		t.Fatal(err)
	}
	const limit = 16384
	p := shape.Policy{MaxBytes: limit, KeepRest: true}
	in := claudecode.Input{HookEventName: "PostToolUse", ToolName: "mcp__fs__read_text_file", SessionID: "s", ToolResponse: toJSON(t, string(doc))}
	out, _, changed, err := h.Cap(in, p)
	if err != nil || !changed {
		t.Fatalf("Cap() = changed %v, error %v; want a cut", changed, err)
	}
	var first string
	if err := json.Unmarshal(out, &first); err != nil {
		t.Fatal(err)
	}
	next, ok := nextRead(t, first)
	if !ok || len(first) > limit {
		t.Fatalf("first page of %d bytes names no Read: %q", len(first), first[max(0, len(first)-300):])
	}
	file, err := readFileString(next.FilePath)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":"` + text + `"}`; file != want {
		t.Fatalf("the kept file (%d bytes) is not the document with its line breaks (%d bytes): %.200q", len(file), len(want), file)
	}
	// The first page shows the document up to the marker: its last line,
	// whole or not, is the line the Read starts at.
	shown := first[:strings.Index(first, "[truncated: ")]
	lastShown := shown[strings.LastIndex(shown, `\n`)+2:]
	lines := strings.Split(file, "\n")
	if next.Offset < 2 || next.Offset > len(lines) || !strings.HasPrefix(lines[next.Offset-1], strings.TrimSpace(lastShown)) {
		t.Fatalf("the marker names line %d (%.60q), want the line the first page stopped in (%.60q)", next.Offset, lines[min(max(next.Offset-1, 0), len(lines)-1)], lastShown)
	}
	page := claudecode.Input{HookEventName: "PostToolUse", ToolName: "Read", SessionID: "s",
		ToolResponse: readPayload(t, next.FilePath, file, next.Offset, next.Limit)}
	pout, _, _, err := h.Cap(page, p)
	if err != nil {
		t.Fatal(err)
	}
	if pout == nil {
		pout = page.ToolResponse
	}
	var got struct{ File struct{ Content string } }
	if err := json.Unmarshal(pout, &got); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.File.Content, lines[next.Offset-1]) || len(rendered(got.File.Content, next.Offset)) > limit {
		t.Errorf("the page at line %d starts %.80q, want the line %.80q, within %d bytes", next.Offset, got.File.Content, lines[next.Offset-1], limit)
	}
}

// An MCP tool's structuredContent, as the JSON text Claude Code hands the
// hook, short enough to reach the model as JSON, is cut as JSON and kept:
// the marker inside its cut string names the Read of the whole document
// (its pageable form) from the first line, and the cut is still a valid
// document within the limit.
func TestHookKeepsStructuredJSON(t *testing.T) {
	store, err := rest.OpenPlainDir(filepath.Join(t.TempDir(), "claude-code"), rest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := &claudecode.Hook{Store: store}
	var names []string
	for i := range 700 {
		names = append(names, fmt.Sprintf("/srv/project/dir%02d/file_%04d_match.txt", i%20, i))
	}
	doc, err := json.Marshal(map[string]string{"content": strings.Join(names, "\n")})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []shape.Policy{{MaxBytes: 16384, KeepRest: true}, {MaxBytes: 4096, KeepRest: true}, {MaxBytes: 4096}} {
		t.Run(fmt.Sprintf("%d keep %v", p.MaxBytes, p.KeepRest), func(t *testing.T) {
			in := claudecode.Input{HookEventName: "PostToolUse", ToolName: "mcp__fs__search_files", SessionID: "s", ToolResponse: toJSON(t, string(doc))}
			out, fig, changed, err := h.Cap(in, p)
			if err != nil || !changed {
				t.Fatalf("Cap() = changed %v, error %v; want a cut", changed, err)
			}
			var text string
			if err := json.Unmarshal(out, &text); err != nil {
				t.Fatal(err)
			}
			var v struct{ Content string }
			if len(text) > p.MaxBytes || json.Unmarshal([]byte(text), &v) != nil {
				t.Fatalf("the cut (%d bytes) is not a JSON document within %d: %.200q", len(text), p.MaxBytes, text)
			}
			ms := cut.FindMarkers(v.Content)
			if len(ms) != 1 {
				t.Fatalf("%d markers in the cut string, want 1", len(ms))
			}
			if !p.KeepRest {
				if ms[0].Rest != nil || fig.Ref != "" {
					t.Errorf("keep_rest off: the marker names %+v", ms[0].Rest)
				}
				return
			}
			next, ok := nextRead(t, v.Content)
			if !ok || next.Offset != 1 || fig.Ref == "" || !store.IsEntryPath(next.FilePath) {
				t.Fatalf("the marker names %+v (found %v, ref %q), want the Read of a file of the store from line 1", next, ok, fig.Ref)
			}
			file, err := readFileString(next.FilePath)
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"content":"` + strings.Join(names, "\n") + `"}`; file != want {
				t.Errorf("the kept file is not the document in its pageable form: %.200q", file)
			}
		})
	}
}
