package claudecode_test

import (
	"encoding/json"
	"testing"

	"github.com/toolcap/toolcap/internal/claudecode"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/redact"
)

// FuzzCapToolResponse: whatever a tool responds, CapToolResponse neither
// panics nor returns a replacement that is not JSON, with the built-in
// redaction (an even limit) or without it.
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
		{"Bash", `{"stdout":"key AKIA2OGYBAH6STMMNXNN\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAzdTLm4b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAA\n-----END RSA PRIVATE KEY-----","stderr":""}`},
		{"mcp__a__b", `{"content":[{"type":"text","text":"\u0041KIA2OGYBAH6STMMNXNN"}],"structuredContent":{"k":"x\nAKIA2OGYBAH6STMMNXNN"}}`},
		{"mcp__a__b", `"{\"k\":\"postgres://app:s3cr3tPa55@db:5432/x\"}"`},
		{"Read", `{"type":"text","file":{"content":"a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAzdTLm4b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAA\n-----END RSA PRIVATE KEY-----\nb"}}`},
		{"other", `{"x": AKIA2OGYBAH6STMMNXNN }`},
	} {
		f.Add(seed.tool, []byte(seed.resp), 12)
	}
	f.Fuzz(func(t *testing.T, tool string, resp []byte, limit int) {
		p := shape.Bytes(limit)
		if limit%2 == 0 {
			p.Redact = redact.Default()
		}
		out, _, changed, err := claudecode.CapToolResponse(tool, resp, p)
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
