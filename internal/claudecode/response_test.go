package claudecode_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/claudecode"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/tokens"
)

// numbered returns n lines "prefix 000000".
func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s %06d\n", prefix, i)
	}
	return b.String()
}

// fileNames returns n file names.
func fileNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("src/pkg%05d/file_test.go", i)
	}
	return out
}

// toJSON encodes v as a tool's output, failing the test when it cannot.
func toJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decoded decodes a replacement: an object, or any other value under "$".
func decoded(t testing.TB, out json.RawMessage) map[string]any {
	t.Helper()
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("replacement %.200q is not JSON: %v", out, err)
	}
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{"$": v}
}

// field returns the texts at the dotted keys of a decoded output: a string
// as it is, an array of strings joined by "\n", a missing key as "".
func field(keys ...string) func(map[string]any) []string {
	return func(o map[string]any) []string {
		texts := make([]string, 0, len(keys))
		for _, k := range keys {
			v := any(o)
			for _, part := range strings.Split(k, ".") {
				m, _ := v.(map[string]any)
				v = m[part]
			}
			switch x := v.(type) {
			case string:
				texts = append(texts, x)
			case []any:
				s := make([]string, len(x))
				for i, e := range x {
					s[i], _ = e.(string)
				}
				texts = append(texts, strings.Join(s, "\n"))
			default:
				texts = append(texts, "")
			}
		}
		return texts
	}
}

// A cut output of every tool holds the limit in what the model reads, each
// text's marker exact, spends the budget, and keeps the other fields.
func TestCapToolResponseTools(t *testing.T) {
	tests := []struct {
		name     string
		tool     string
		response any
		texts    func(map[string]any) []string
		same     []string // fields the cut leaves as they were
	}{
		{
			name: "Bash stdout and a short stderr", tool: "Bash",
			response: map[string]any{"stdout": numbered("ok", 10000), "stderr": "FAIL: TestX", "interrupted": false, "isImage": false},
			texts:    field("stdout", "stderr"), same: []string{"interrupted", "isImage"},
		},
		{
			name: "Bash both streams long", tool: "Bash",
			response: map[string]any{"stdout": numbered("out", 8000), "stderr": numbered("err", 8000), "interrupted": true},
			texts:    field("stdout", "stderr"), same: []string{"interrupted"},
		},
		{
			name: "Read text", tool: "Read",
			response: map[string]any{"type": "text", "file": map[string]any{"filePath": "/p/big.go", "content": numbered("// line", 7000), "numLines": 7000, "startLine": 1, "totalLines": 7000}},
			texts:    field("file.content"), same: []string{"type"},
		},
		{
			name: "Grep content", tool: "Grep",
			response: map[string]any{"mode": "content", "numFiles": 2, "filenames": []string{"a.go", "b.go"}, "content": numbered("a.go:1:TODO", 6000), "numLines": 6000},
			texts:    field("content", "filenames"), same: []string{"mode", "numLines", "numFiles", "filenames"},
		},
		{
			name: "Grep files", tool: "Grep",
			response: map[string]any{"mode": "files_with_matches", "numFiles": 5000, "filenames": fileNames(5000)},
			texts:    field("content", "filenames"), same: []string{"mode"},
		},
		{
			name: "Glob", tool: "Glob",
			response: map[string]any{"durationMs": 12, "numFiles": 5000, "filenames": fileNames(5000), "truncated": false},
			texts:    field("filenames"), same: []string{"durationMs"},
		},
		{
			name: "WebFetch", tool: "WebFetch",
			response: map[string]any{"bytes": 100000, "code": 200, "codeText": "OK", "result": numbered("<p>page", 7000), "durationMs": 300, "url": "https://example.com/"},
			texts:    field("result"), same: []string{"bytes", "code", "codeText", "durationMs", "url"},
		},
	}
	for _, limit := range []int{16384, 4096} {
		p := shape.Bytes(limit)
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/%d", tt.name, limit), func(t *testing.T) {
				resp := toJSON(t, tt.response)
				out, fig, changed, err := claudecode.CapToolResponse(tt.tool, resp, p)
				if err != nil || !changed {
					t.Fatalf("CapToolResponse() = changed %v, error %v; want a cut", changed, err)
				}
				orig, got := decoded(t, resp), decoded(t, out)
				in, kept := tt.texts(orig), tt.texts(got)
				if err := capcheck.Texts(in, kept, p); err != nil {
					t.Error(err)
				}
				total := 0
				for _, s := range kept {
					total += len(s)
				}
				if total < limit*9/10 {
					t.Errorf("the model reads %d bytes of a %d-byte budget: the cut wastes it", total, limit)
				}
				if fig.Limit != limit || fig.DroppedBytes <= 0 || fig.KeptBytes+fig.DroppedBytes != fig.OriginalBytes {
					t.Errorf("figures %+v: want limit %d and bytes that add up", fig, limit)
				}
				for _, k := range tt.same {
					if diff := cmp.Diff(orig[k], got[k]); diff != "" {
						t.Errorf("field %s changed (-want +got):\n%s", k, diff)
					}
				}
			})
		}
	}
}

// The fields beside the text say what the cut did.
func TestCapToolResponseFields(t *testing.T) {
	p := shape.Bytes(4096)
	t.Run("Glob", func(t *testing.T) {
		out := cutOf(t, "Glob", map[string]any{"durationMs": 1, "numFiles": 5000, "filenames": fileNames(5000), "truncated": false}, p)
		names := out["filenames"].([]any)
		last := names[len(names)-1].(string)
		if !cut.IsMarkerLine(last) || out["truncated"] != true || out["numFiles"] != float64(len(names)-1) {
			t.Errorf("last name %q, truncated %v, numFiles %v of %d names; want the marker, true and the names before it",
				last, out["truncated"], out["numFiles"], len(names))
		}
		for _, n := range names[:len(names)-1] {
			if !strings.HasSuffix(n.(string), "_test.go") {
				t.Errorf("a file name was cut in the middle: %q", n)
			}
		}
	})
	t.Run("Grep files", func(t *testing.T) {
		out := cutOf(t, "Grep", map[string]any{"mode": "files_with_matches", "numFiles": 5000, "filenames": fileNames(5000)}, p)
		names := out["filenames"].([]any)
		if _, ok := out["truncated"]; ok || out["numFiles"] != float64(len(names)-1) || !cut.IsMarkerLine(names[len(names)-1].(string)) {
			t.Errorf("numFiles %v of %d names, truncated %v; want the names before the marker and no truncated (GrepOutput has none)",
				out["numFiles"], len(names), out["truncated"])
		}
	})
	t.Run("Read", func(t *testing.T) {
		out := cutOf(t, "Read", map[string]any{"type": "text", "file": map[string]any{"filePath": "/p/big.go", "content": numbered("// line", 7000), "numLines": 7000, "totalLines": 7000}}, p)
		file := out["file"].(map[string]any)
		content := file["content"].(string)
		if n := strings.Count(content, "\n") + 1; file["numLines"] != float64(n) {
			t.Errorf("numLines = %v, want the %d lines of the cut content", file["numLines"], n)
		}
		if file["filePath"] != "/p/big.go" || file["totalLines"] != float64(7000) {
			t.Errorf("filePath %v, totalLines %v changed", file["filePath"], file["totalLines"])
		}
	})
	t.Run("Bash keeps a short stderr whole", func(t *testing.T) {
		out := cutOf(t, "Bash", map[string]any{"stdout": numbered("ok", 10000), "stderr": "FAIL: TestX", "interrupted": false}, p)
		if out["stderr"] != "FAIL: TestX" {
			t.Errorf("stderr = %q, want the short stderr whole", out["stderr"])
		}
	})
	t.Run("Bash without stderr gets none", func(t *testing.T) {
		out := cutOf(t, "Bash", map[string]any{"stdout": numbered("ok", 10000), "interrupted": false}, p)
		if _, ok := out["stderr"]; ok {
			t.Errorf("stderr = %q, want it left out as the tool left it", out["stderr"])
		}
	})
}

// cutOf cuts a tool's response, which must be cut, and returns it decoded.
func cutOf(t *testing.T, tool string, response any, p shape.Policy) map[string]any {
	t.Helper()
	out, _, changed, err := claudecode.CapToolResponse(tool, toJSON(t, response), p)
	if err != nil || !changed {
		t.Fatalf("CapToolResponse(%s) = changed %v, error %v; want a cut", tool, changed, err)
	}
	return decoded(t, out)
}

// Small outputs, pinned byte for byte.
func TestCapToolResponsePinned(t *testing.T) {
	tests := []struct {
		name     string
		tool     string
		response string
		p        shape.Policy
		want     string
	}{
		{
			// The example of docs/adapters/claude-code.md: stdout and
			// stderr hold 160 bytes together, the short stderr whole.
			name: "Bash", tool: "Bash", p: shape.Bytes(160),
			response: `{"stdout":"` + strings.Repeat("ok\\n", 100) + `","stderr":"FAIL: TestParse","interrupted":false}`,
			want:     `{"interrupted":false,"stderr":"FAIL: TestParse","stdout":"` + strings.Repeat("ok\\n", 31) + `ok\n[truncated: 205 bytes dropped, refine your query]"}`,
		},
		{
			name: "Glob", tool: "Glob", p: shape.Bytes(80),
			response: `{"durationMs":3,"filenames":["a/one.go","a/two.go","a/three.go","b/four.go","b/five.go","b/six.go","c/seven.go","d/eight.go","d/nine.go","d/ten.go"],"numFiles":10,"truncated":false}`,
			want:     `{"durationMs":3,"filenames":["a/one.go","a/two.go","a/three.go","[truncated: 70 bytes dropped, refine your query]"],"numFiles":3,"truncated":true}`,
		},
		{
			name: "Grep content and names share the limit", tool: "Grep", p: shape.Bytes(120),
			response: `{"mode":"content","filenames":["x.go","y.go"],"numFiles":2,"content":"` + strings.Repeat("x.go:1:TODO\\n", 20) + `","numLines":20}`,
			want:     `{"content":"` + strings.Repeat("x.go:1:TODO\\n", 5) + `x\n[truncated: 179 bytes dropped, refine your query]","filenames":["x.go","y.go"],"mode":"content","numFiles":2,"numLines":20}`,
		},
		{
			name: "WebFetch, head_tail", tool: "WebFetch", p: shape.Policy{MaxBytes: 120, Spec: cut.Spec{Keep: cut.KeepHeadTail}},
			response: `{"code":200,"result":"` + numberedJSON(40) + `","url":"https://e.x/"}`,
			want: `{"code":200,"result":"line 00\nline 01\nline 02\nline 03\nline \n[truncated: 251 bytes dropped, refine your query]\n` +
				`line 36\nline 37\nline 38\nline 39\n","url":"https://e.x/"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, changed, err := claudecode.CapToolResponse(tt.tool, json.RawMessage(tt.response), tt.p)
			if err != nil || !changed {
				t.Fatalf("CapToolResponse() = changed %v, error %v; want a cut", changed, err)
			}
			if diff := cmp.Diff(tt.want, string(out)); diff != "" {
				t.Errorf("CapToolResponse() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// numberedJSON is n lines "line NN\n" as the inside of a JSON string.
func numberedJSON(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `line %02d\n`, i)
	}
	return b.String()
}

// Output that fits, binary data and an empty response reach the model as
// they are.
func TestCapToolResponseLeavesAlone(t *testing.T) {
	big := strings.Repeat("A", 100000)
	tests := []struct {
		name     string
		tool     string
		response string
	}{
		{"small Bash", "Bash", `{"stdout":"hello\n","stderr":"","interrupted":false}`},
		{"small MCP", "mcp__fs__list", `[{"type":"text","text":"a\nb"}]`},
		{"Bash image", "Bash", `{"stdout":"` + big + `","stderr":"","interrupted":false,"isImage":true}`},
		{"Read image", "Read", `{"type":"image","file":{"base64":"` + big + `","type":"image/png","originalSize":100000}}`},
		{"Read PDF", "Read", `{"type":"pdf","file":{"base64":"` + big + `","originalSize":100000}}`},
		{"empty", "Bash", ``},
		{"null", "Bash", ` null `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, fig, changed, err := claudecode.CapToolResponse(tt.tool, json.RawMessage(tt.response), shape.Bytes(4096))
			if err != nil || changed || out != nil || fig != (chain.Truncation{}) {
				t.Errorf("CapToolResponse() = %.100q, %+v, changed %v, error %v; want nothing to do", out, fig, changed, err)
			}
		})
	}
}

// A field of the wrong type is an error that names it; the output is then
// left as it is.
func TestCapToolResponseErrors(t *testing.T) {
	long := strings.Repeat("1,", 5000) + "1"
	tests := []struct {
		name, tool, response, want string
	}{
		{"Bash stdout", "Bash", `{"stdout":[` + long + `]}`, "stdout is not a string"},
		{"Bash stderr", "Bash", `{"stdout":"","stderr":{"a":[` + long + `]}}`, "stderr is not a string"},
		{"Read content", "Read", `{"type":"text","file":{"content":[` + long + `]}}`, "file.content is not a string"},
		{"Grep names", "Grep", `{"content":"","filenames":"` + strings.Repeat("a", 10000) + `"}`, "filenames is not an array of strings"},
		{"Glob names", "Glob", `{"filenames":[` + long + `]}`, "filenames is not an array of strings"},
		{"WebFetch result", "WebFetch", `{"result":[` + long + `]}`, "result is not a string"},
		{"not JSON", "mcp__x__y", `{"a":` + long, "not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, changed, err := claudecode.CapToolResponse(tt.tool, json.RawMessage(tt.response), shape.Bytes(4096))
			if err == nil || !strings.Contains(err.Error(), tt.want) || changed || out != nil {
				t.Errorf("CapToolResponse() = %.100q, changed %v, error %v; want an error naming %q", out, changed, err, tt.want)
			}
		})
	}
}

// tokenMarkerRE finds a marker that counts tokens.
var tokenMarkerRE = regexp.MustCompile(`\n\[truncated: \d+ tokens dropped, refine your query\]`)

// A token limit holds for the texts too, also when the output is well
// within the byte limit; texts that share it share the tokens.
func TestCapToolResponseTokens(t *testing.T) {
	short := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%s %04d\n", prefix, i)
		}
		return b.String()
	}
	names := make([]string, 60)
	for i := range names {
		names[i] = fmt.Sprintf("src/pkg%03d/file.go", i)
	}
	tests := []struct {
		name         string
		tool         string
		response     any
		texts        func(map[string]any) []string
		tokenMarkers int // how many markers count tokens; the others count bytes
	}{
		{name: "Bash stdout", tool: "Bash", tokenMarkers: 1,
			response: map[string]any{"stdout": short("ok", 60), "stderr": "", "interrupted": false},
			texts:    field("stdout", "stderr")},
		{name: "Bash stdout and stderr share it", tool: "Bash", tokenMarkers: 2,
			response: map[string]any{"stdout": short("out", 30), "stderr": short("err", 30), "interrupted": false},
			texts:    field("stdout", "stderr")},
		{name: "Read text", tool: "Read", tokenMarkers: 1,
			response: map[string]any{"type": "text", "file": map[string]any{"filePath": "/p/a.go", "content": short("// line", 60), "numLines": 60}},
			texts:    field("file.content")},
		{name: "Grep content", tool: "Grep", tokenMarkers: 1,
			response: map[string]any{"mode": "content", "numFiles": 0, "filenames": []string{}, "content": short("a.go:1:TODO", 60)},
			texts:    field("content", "filenames")},
		{name: "Glob file names", tool: "Glob",
			response: map[string]any{"durationMs": 3, "numFiles": 60, "filenames": names, "truncated": false},
			texts:    field("filenames")},
		{name: "MCP text", tool: "mcp__github__search_code", tokenMarkers: 1,
			response: short("match", 60),
			texts:    func(o map[string]any) []string { return []string{o["$"].(string)} }},
	}
	const limit = 100
	p := shape.Policy{MaxBytes: 16384, MaxTokens: limit, Counter: tokens.NewCalibrated()}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := toJSON(t, tt.response)
			if len(resp) > p.MaxBytes {
				t.Fatalf("the response is %d bytes: over the byte limit, it does not test the token limit alone", len(resp))
			}
			out, fig, changed, err := claudecode.CapToolResponse(tt.tool, resp, p)
			if err != nil || !changed {
				t.Fatalf("CapToolResponse() = changed %v, error %v; want a cut", changed, err)
			}
			if fig.LimitTokens != limit {
				t.Errorf("figures %+v: want LimitTokens %d", fig, limit)
			}
			in, kept := tt.texts(decoded(t, resp)), tt.texts(decoded(t, out))
			if err := capcheck.Texts(in, kept, p); err != nil {
				t.Error(err)
			}
			total, byTokens := 0, 0
			for _, s := range kept {
				total += p.Counter.Count(s)
				byTokens += len(tokenMarkerRE.FindAllString(s, -1))
			}
			if total < limit*3/4 {
				t.Errorf("the model reads %d tokens of %d: the cut wastes the limit", total, limit)
			}
			if byTokens != tt.tokenMarkers {
				t.Errorf("%d token markers, want %d", byTokens, tt.tokenMarkers)
			}
		})
	}
}

// TestCapGrepPagination: Claude Code adds "\n\n[Showing results with
// pagination = limit: N]" (", offset: M" too) to the content of a Grep in
// content mode whose head_limit or offset applied; the hook keeps its room,
// so that what the model reads, the note included, is within the limit
// (issue 38, item 3: the model read 16,418 bytes of a 16,384 limit).
func TestCapGrepPagination(t *testing.T) {
	content := numbered("src/pkg/file.go:12: match", 800) // 32,800 bytes
	for _, tt := range []struct {
		name     string
		response map[string]any
		note     string // what Claude Code adds
	}{
		{"no pagination", map[string]any{"mode": "content", "content": content, "numLines": 800}, ""},
		{"a head_limit applied", map[string]any{"mode": "content", "content": content, "numLines": 800, "appliedLimit": 800},
			"\n\n[Showing results with pagination = limit: 800]"},
		{"a head_limit and an offset", map[string]any{"mode": "content", "content": content, "numLines": 800, "appliedLimit": 800, "appliedOffset": 40},
			"\n\n[Showing results with pagination = limit: 800, offset: 40]"},
		{"files mode: no note on the content", map[string]any{"mode": "files_with_matches", "content": content, "filenames": []string{}, "appliedLimit": 800}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, _, changed, err := claudecode.CapToolResponse("Grep", toJSON(t, tt.response), shape.Bytes(16384))
			if err != nil || !changed {
				t.Fatalf("CapToolResponse: changed %v, %v", changed, err)
			}
			var got struct{ Content string }
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if seen := len(got.Content) + len(tt.note); seen > 16384 || seen < 16384-64 {
				t.Errorf("the model reads %d bytes (content %d, note %d); want at most 16384, and near it", seen, len(got.Content), len(tt.note))
			}
		})
	}
}
