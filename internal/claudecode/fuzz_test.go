package claudecode_test

import (
	"encoding/json"
	"testing"

	"github.com/toolcap/toolcap/internal/claudecode"
	"github.com/toolcap/toolcap/internal/shape"
)

// FuzzCapToolResponse: whatever a tool responds, CapToolResponse neither
// panics nor returns a replacement that is not JSON.
func FuzzCapToolResponse(f *testing.F) {
	for _, seed := range []struct {
		tool, resp string
	}{
		{"Bash", `{"stdout":"a\nb\nc\nd\ne\nf\ng","stderr":"x\ny\nz","interrupted":false}`},
		{"Read", `{"type":"text","file":{"content":"line\nline\nline\nline\n"}}`},
		{"Read", `{"type":"notebook","file":{"cells":[{"source":"a"},{"source":"bbbbbbbb"}]}}`},
		{"Grep", `{"content":"a.go:1:x\nb.go:2:y\n","filenames":["a.go","b.go"]}`},
		{"Glob", `{"filenames":["a","bb","ccc","dddd"],"numFiles":4}`},
		{"WebFetch", `{"result":"<p>héllo wörld</p>"}`},
		{"mcp__a__b", `[{"type":"text","text":"one two three"},{"type":"image","data":"AAAA","mimeType":"image/png"}]`},
		{"mcp__a__b", `{"content":[{"type":"resource","resource":{"uri":"x","text":"long text here"}}],"structuredContent":{"k":[1,2,3,4]}}`},
		{"mcp__a__b", `"a plain string result"`},
		{"other", `{"rows":[{"id":1},{"id":2}],"n":2}`},
	} {
		f.Add(seed.tool, []byte(seed.resp), 12)
	}
	f.Fuzz(func(t *testing.T, tool string, resp []byte, limit int) {
		out, _, changed, err := claudecode.CapToolResponse(tool, resp, shape.Bytes(limit))
		if err != nil || !changed {
			if out != nil {
				t.Errorf("no change (error %v), yet a replacement %q", err, out)
			}
			return
		}
		if !json.Valid(out) {
			t.Errorf("replacement %q is not JSON", out)
		}
	})
}
