package claudecode_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/claudecode"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/redact"
)

// The secrets of the redaction tests, made as redact's own tests make
// theirs (a prefix and characters of the rule's alphabet), and their
// markers.
const (
	awsKey = "AKIA2OGYBAH6STMMNXNN"
	// privKey spans 5 lines.
	privKey = "-----BEGIN OPENSSH PRIVATE KEY-----\n" +
		"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" +
		"QyNTUxOQAAACBkZXYgb25seSwgbm90IGEgcmVhbCBrZXksIGp1c3QgYSB0ZXN0AAAAA\n" +
		"Zm9yIHRoZSBob29rJ3MgcmVkYWN0aW9uIHRlc3RzIG9ubHkgcGxlYXNlIGlnbm9yZQ\n" +
		"-----END OPENSSH PRIVATE KEY-----"
	awsMarker = "[redacted: aws-access-token]"
	keyMarker = "[redacted: private-key]"
)

// secretParts are strings only a secret holds: none may reach the model
// or a kept file.
var secretParts = []string{awsKey, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "Zm9yIHRoZSBob29rJ3MgcmVkYWN0aW9u"}

// redacted is s with the test's secrets replaced by their markers, as
// redact.Text replaces them.
func redacted(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, awsKey, awsMarker), privKey, keyMarker)
}

// redacting is a policy of limit bytes that redacts with the built-in
// rules, as a manifest's policy does by default.
func redacting(limit int) shape.Policy {
	return shape.Policy{MaxBytes: limit, KeepRest: true, Redact: redact.Default()}
}

// noSecret fails the test when s holds a part of a secret.
func noSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, p := range secretParts {
		if strings.Contains(s, p) {
			t.Errorf("%s holds a secret (%s...): %.300q", what, p[:8], s)
		}
	}
}

// capHeld runs the hook on a payload of tool with resp, held whole.
func capHeld(t *testing.T, tool, resp string, p shape.Policy, store *rest.Dir) claudecode.Capped {
	t.Helper()
	c, err := (&claudecode.Hook{}).ReadCap(bytes.NewReader(hookPayload(t, tool, resp, false)), func(string) (claudecode.Setup, error) {
		return claudecode.Setup{Policy: p, Store: store}, nil
	})
	if err != nil {
		t.Fatalf("ReadCap() error: %v", err)
	}
	return c
}

// redactedOut is what a redaction test compares of a cut.
type redactedOut struct {
	Out        string
	Changed    bool
	Redactions map[string]int
}

// TestHookRedacts: every text of a tool's output the hook fits is
// redacted before anything sees it; an output within the limit with a
// secret is replaced by the same output with the markers in place of the
// secrets (and nothing else written otherwise), one without a secret, or
// whose tool does not redact, is left alone.
func TestHookRedacts(t *testing.T) {
	both := "export AWS_ACCESS_KEY_ID=" + awsKey + "\n" + privKey + "\nok\n"
	bash := func(stdout, stderr string) string {
		return `{"stdout":` + jstr(t, stdout) + `,"stderr":` + jstr(t, stderr) + `,"interrupted":false,"isImage":false}`
	}
	file := "package main\n\n// key: " + awsKey + "\nconst pem = `\n" + privKey + "\n`\n\nfunc main() {}"
	// Read's content keeps its lines: the private key's marker is
	// followed by the newlines of its 5 lines.
	fileRedacted := "package main\n\n// key: " + awsMarker + "\nconst pem = `\n" + keyMarker + "\n\n\n\n\n`\n\nfunc main() {}"
	read := func(content string) string {
		return `{"type":"text","file":{"filePath":"/p/main.go","content":` + jstr(t, content) + `,"numLines":13,"startLine":1,"totalLines":13}}`
	}
	mcpResult := func(text, key, pem string) string {
		return `{"content":[{"type":"text","text":` + jstr(t, text) + `}],"structuredContent":{"user":{"key":` + jstr(t, key) + `,"pem":` + jstr(t, pem) + `,"n":3}},"isError":false}`
	}
	structured := `{"id":7,"log":"start\n` + awsKey + `\nend"}`
	dataURL := "data:image/png;base64,iVBORw0KGgo" + awsKey + "AAAA"
	counts := map[string]int{"aws-access-token": 1, "private-key": 1}
	for _, tc := range []struct {
		name, tool, resp string
		p                shape.Policy
		want             redactedOut
	}{
		{"Bash stdout", "Bash", bash(both, ""), redacting(16384),
			redactedOut{bash(redacted(both), ""), true, counts}},
		{"Bash stderr", "Bash", bash("ok\n", "fatal: token "+awsKey), redacting(16384),
			redactedOut{bash("ok\n", "fatal: token "+awsMarker), true, map[string]int{"aws-access-token": 1}}},
		{"Read of a file with secrets", "Read", read(file), redacting(16384),
			redactedOut{read(fileRedacted), true, counts}},
		{"Grep content and names", "Grep", `{"mode":"content","numFiles":1,"filenames":["keys/` + awsKey + `.txt"],"content":` + jstr(t, "a.env:1:KEY="+awsKey) + `,"numLines":1}`, redacting(16384),
			redactedOut{`{"mode":"content","numFiles":1,"filenames":["keys/` + awsMarker + `.txt"],"content":` + jstr(t, "a.env:1:KEY="+awsMarker) + `,"numLines":1}`, true, map[string]int{"aws-access-token": 2}}},
		{"Glob names", "Glob", `{"filenames":["a.go","creds/` + awsKey + `.json"],"numFiles":2,"truncated":false}`, redacting(16384),
			redactedOut{`{"filenames":["a.go","creds/` + awsMarker + `.json"],"numFiles":2,"truncated":false}`, true, map[string]int{"aws-access-token": 1}}},
		{"WebFetch", "WebFetch", `{"code":200,"result":` + jstr(t, "the key is "+awsKey) + `}`, redacting(16384),
			redactedOut{`{"code":200,"result":` + jstr(t, "the key is "+awsMarker) + `}`, true, map[string]int{"aws-access-token": 1}}},
		{"MCP text block and structuredContent", "mcp__db__user", mcpResult("user 3: "+awsKey, awsKey, privKey), redacting(16384),
			redactedOut{mcpResult("user 3: "+awsMarker, awsMarker, keyMarker), true, map[string]int{"aws-access-token": 2, "private-key": 1}}},
		{"MCP structuredContent keyed by a secret", "mcp__db__keys", `{"content":[],"structuredContent":{"` + awsKey + `":{"user":"bob"}}}`, redacting(16384),
			redactedOut{`{"content":[],"structuredContent":{"` + awsMarker + `":{"user":"bob"}}}`, true, map[string]int{"aws-access-token": 1}}},
		{"MCP structured text, a secret after an escape", "mcp__db__user", jstr(t, structured), redacting(16384),
			redactedOut{jstr(t, `{"id":7,"log":"start\n`+awsMarker+`\nend"}`), true, map[string]int{"aws-access-token": 1}}},
		{"MCP string", "mcp__fs__read", jstr(t, both), redacting(16384),
			redactedOut{jstr(t, redacted(both)), true, counts}},
		{"MCP image data left alone", "mcp__img__get", `[{"type":"text","text":` + jstr(t, "key "+awsKey) + `},{"type":"image","data":"` + awsKey + `","mimeType":"image/png"}]`, redacting(16384),
			redactedOut{`[{"type":"text","text":` + jstr(t, "key "+awsMarker) + `},{"type":"image","data":"` + awsKey + `","mimeType":"image/png"}]`, true, map[string]int{"aws-access-token": 1}}},
		{"Bash image left alone", "Bash", `{"stdout":` + jstr(t, dataURL) + `,"stderr":"","isImage":true}`, redacting(16384),
			redactedOut{}},
		{"wrong shape within the limit", "Bash", `{"stdout":12,"stderr":` + jstr(t, awsKey) + `}`, redacting(16384),
			redactedOut{`{"stdout":12,"stderr":` + jstr(t, awsMarker) + `}`, true, map[string]int{"aws-access-token": 1}}},
		{"Claude Code's saved output", "Bash", `{"stdout":"<persisted-output>\nkey ` + awsKey + `\n</persisted-output>","stderr":"","persistedOutputPath":"/tmp/o.txt"}`, redacting(16384),
			redactedOut{`{"stdout":"<persisted-output>\nkey ` + awsMarker + `\n</persisted-output>","stderr":"","persistedOutputPath":"/tmp/o.txt"}`, true, map[string]int{"aws-access-token": 1}}},
		{"no secret", "Bash", bash("PASS\nok  \tpkg\t0.1s\n", ""), redacting(16384),
			redactedOut{}},
		{"redact off", "Bash", bash(both, ""), shape.Bytes(16384),
			redactedOut{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := capHeld(t, tc.tool, tc.resp, tc.p, nil)
			got := redactedOut{string(c.Out), c.Changed, c.Redactions}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ReadCap() mismatch (-want +got):\n%s", diff)
			}
			if c.Changed && !json.Valid(c.Out) {
				t.Errorf("the replacement is not JSON: %.300q", c.Out)
			}
			// Streamed, the same.
			s, err := claudecode.Streaming(claudecode.Hook{}, 1, 0).ReadCap(iotest.HalfReader(bytes.NewReader(hookPayload(t, tc.tool, tc.resp, false))),
				func(string) (claudecode.Setup, error) { return claudecode.Setup{Policy: tc.p}, nil })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, redactedOut{string(s.Out), s.Changed, s.Redactions}); diff != "" {
				t.Errorf("ReadCap() streamed mismatch (-want +got):\n%s", diff)
			}
			// CapToolResponse, the library's cut, redacts as the hook does.
			out, _, changed, err := claudecode.CapToolResponse(tc.tool, json.RawMessage(tc.resp), tc.p)
			if tc.tool != "Read" && tc.name != "wrong shape within the limit" && tc.name != "Claude Code's saved output" {
				if diff := cmp.Diff(redactedOut{tc.want.Out, tc.want.Changed, nil}, redactedOut{string(out), changed, nil}); diff != "" || err != nil {
					t.Errorf("CapToolResponse() error %v, mismatch (-want +got):\n%s", err, diff)
				}
			}
		})
	}
}

// TestHookRedactsBeforeTheCut: over the limit, the cut is of the redacted
// text: its figures and the marker's N count the redacted text, and the
// file of the rest holds the redacted text, byte for byte, never a
// secret.
func TestHookRedactsBeforeTheCut(t *testing.T) {
	body := testLog(400) // 24 KB
	for _, tc := range []struct {
		name, tool string
		text       string
		resp       func(text string) string
		// file is what the kept file holds of the redacted text.
		file func(text string) string
		// kept returns the text of the reply's cut.
		kept func(t *testing.T, out map[string]any) string
	}{
		{
			name: "Bash", tool: "Bash",
			text: "AWS_ACCESS_KEY_ID=" + awsKey + "\n" + body[:8000] + privKey + "\n" + body[8000:] + "last: " + awsKey + "\n",
			resp: func(s string) string { return `{"stdout":` + jstr(t, s) + `,"stderr":"","interrupted":false}` },
			file: func(s string) string { return s },
			kept: func(t *testing.T, out map[string]any) string { return out["stdout"].(string) },
		},
		{
			name: "Bash stdout and stderr", tool: "Bash",
			text: "AWS_ACCESS_KEY_ID=" + awsKey + "\n" + body + privKey + "\n",
			resp: func(s string) string {
				return `{"stdout":` + jstr(t, s) + `,"stderr":` + jstr(t, "warning: "+awsKey) + `,"interrupted":false}`
			},
			file: func(s string) string { return s + "\nwarning: " + awsMarker },
			kept: func(t *testing.T, out map[string]any) string { return out["stdout"].(string) },
		},
		{
			name: "MCP text", tool: "mcp__fs__read_text_file",
			text: privKey + "\n" + body + awsKey + "\n",
			resp: func(s string) string {
				return `{"content":[{"type":"text","text":` + jstr(t, s) + `}],"isError":false}`
			},
			file: func(s string) string { return s },
			kept: func(t *testing.T, out map[string]any) string {
				return out["content"].([]any)[0].(map[string]any)["text"].(string)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := storeDir(t, 0)
			c := capHeld(t, tc.tool, tc.resp(tc.text), redacting(4096), store)
			if !c.Changed || c.Truncation.DroppedBytes == 0 {
				t.Fatalf("ReadCap() = changed %v, %+v; want a cut", c.Changed, c.Truncation)
			}
			noSecret(t, "the reply", string(c.Out))
			red := redacted(tc.text)
			out := decoded(t, c.Out)
			kept := tc.kept(t, out)
			ms := cut.FindMarkers(kept)
			if len(ms) != 1 || ms[0].Rest == nil {
				t.Fatalf("want one marker naming the rest in %.300q", kept)
			}
			if !strings.HasPrefix(red, strings.TrimRight(kept[:ms[0].Start], "\n")) {
				t.Errorf("the cut is not the head of the redacted text: %.300q", kept)
			}
			// The figures count the redacted text.
			if tc.name != "Bash stdout and stderr" {
				if diff := cmp.Diff(
					[]int{len(red), len(red) - c.Truncation.KeptBytes},
					[]int{c.Truncation.OriginalBytes, ms[0].N}); diff != "" {
					t.Errorf("OriginalBytes and the marker's N (-want +got):\n%s", diff)
				}
			}
			var args struct {
				FilePath string `json:"file_path"`
			}
			if err := json.Unmarshal([]byte(ms[0].Rest.Args), &args); err != nil {
				t.Fatal(err)
			}
			file, err := os.ReadFile(args.FilePath)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.file(red), string(file)); diff != "" {
				t.Errorf("the kept file (-want +got):\n%.2000s", diff)
			}
			noSecret(t, "the kept file", string(file))
			if c.Redactions["aws-access-token"] == 0 || c.Redactions["private-key"] != 1 {
				t.Errorf("Redactions = %v", c.Redactions)
			}
		})
	}
}

// TestHookRedactsReadOverTheLimit: a Read cut over the limit names the
// Read of the next line of the file: a secret that spans lines keeps
// them, so the numbers the model reads are the file's.
func TestHookRedactsReadOverTheLimit(t *testing.T) {
	lines := strings.Split(numberedLines(200), "\n")
	lines[3] = "key = " + awsKey
	file := strings.Join(lines[:5], "\n") + "\n" + privKey + "\n" + strings.Join(lines[5:], "\n")
	total := strings.Count(file, "\n") + 1
	resp := string(readPayload(t, "/p/big.txt", file, 1, total))
	c := capHeld(t, "Read", resp, redacting(2048), nil)
	if !c.Changed {
		t.Fatal("no cut")
	}
	noSecret(t, "the reply", string(c.Out))
	f := decoded(t, c.Out)["file"].(map[string]any)
	content := f["content"].(string)
	ms := cut.FindMarkers(content)
	if len(ms) != 1 || ms[0].Rest == nil {
		t.Fatalf("want one marker naming the next Read in %.300q", content)
	}
	shown := strings.Split(strings.TrimSuffix(content[:ms[0].Start], "\n"), "\n")
	var next struct{ Offset int }
	if err := json.Unmarshal([]byte(ms[0].Rest.Args), &next); err != nil {
		t.Fatal(err)
	}
	redLines := strings.Split(redactedLinesOf(file), "\n")
	if diff := cmp.Diff(redLines[:len(shown)], shown); diff != "" {
		t.Errorf("the lines shown are not the file's, redacted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{len(shown), len(shown) + 1, total}, []int{int(f["numLines"].(float64)), next.Offset, len(redLines)}); diff != "" {
		t.Errorf("numLines, the next Read's offset, the redacted file's lines (-want +got):\n%s", diff)
	}
	// The next Read starts at the line after the last shown, which is the
	// same line of the file as of its redacted text.
	if lines := strings.Split(file, "\n"); lines[next.Offset-1] != redLines[next.Offset-1] {
		t.Errorf("line %d: %q in the file, %q redacted", next.Offset, lines[next.Offset-1], redLines[next.Offset-1])
	}
}

// redactedLinesOf is the test's file with the secrets redacted as Read's
// content is: the private key's lines kept.
func redactedLinesOf(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, awsKey, awsMarker), privKey, keyMarker+strings.Repeat("\n", strings.Count(privKey, "\n")))
}

// TestReadCapStreamRedactsSplit: a payload past the streaming threshold
// is redacted as it streams: a secret wherever the stream's reads and
// pieces split it is found whole, the reply and the kept file are those
// of the payload held whole, and neither holds a secret; the kept file is
// the redacted text byte for byte. The payload is read in pieces of 1021
// bytes, in halves, and 64 KiB at a time (as a pipe reads); the decoded text
// reaches the redactor in pieces of about 64 KiB wherever the reads fall,
// the first of them the text's first hold bytes, so each secret is put at
// one of several offsets around each multiple of 64 KiB (one text a
// secret), and texts dense with secrets (one every few dozen bytes, at
// several phases) straddle every boundary of every reader.
func TestReadCapStreamRedactsSplit(t *testing.T) {
	p := redacting(4096)
	hold := claudecode.StreamHold(p)
	base := testLog(6000) // 340 KB
	type textCase struct {
		name string
		text string
	}
	var texts []textCase
	for k := 1; k <= 3 && !testing.Short(); k++ {
		for _, d := range []int{-len(privKey) / 2, -len(awsKey) / 2, -1, 0, 1, 7} {
			off := k*64<<10 + d
			secret := awsKey
			if (k+d)%2 == 0 {
				secret = privKey
			}
			// The secret at the start of a line (after an escaped newline
			// in the JSON).
			texts = append(texts, textCase{fmt.Sprintf("at %d", off), base[:off] + "\n" + secret + "\n" + base[off:]})
		}
	}
	for _, phase := range []int{0, 37, 101, 173} {
		var b strings.Builder
		b.WriteString(base[:phase])
		for i := 0; b.Len() < 5*hold; i++ {
			fmt.Fprintf(&b, "=== RUN   TestStep%05d\n", i)
			if i%2 == 0 {
				b.WriteString(privKey + "\n")
			} else {
				b.WriteString("export AWS_ACCESS_KEY_ID=" + awsKey + "\n")
			}
		}
		texts = append(texts, textCase{fmt.Sprintf("dense/%d", phase), b.String()})
	}
	readers := map[string]func([]byte) io.Reader{
		"pieces of 1021 bytes": func(b []byte) io.Reader { return &piecesOf{b, 1021} },
		"halves":               func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
		"a pipe":               pipe,
	}
	for _, tool := range []string{"Bash", "mcp__fs__read", "WebFetch"} {
		for _, tc := range texts {
			text := tc.text
			var resp, want string
			switch tool {
			case "Bash":
				resp = `{"stdout":` + jstr(t, text) + `,"stderr":` + jstr(t, "warn "+awsKey) + `,"interrupted":false}`
				want = redacted(text) + "\nwarn " + awsMarker
			case "WebFetch":
				resp = `{"code":200,"result":` + jstr(t, text) + `}`
				want = redacted(text)
			default:
				resp = `[{"type":"text","text":` + jstr(t, "head "+awsKey+"\n") + `},{"type":"text","text":` + jstr(t, text) + `}]`
				want = "head " + awsMarker + "\n\n" + redacted(text)
			}
			n := strings.Count(text, awsKey) + strings.Count(text, privKey)
			if tool != "WebFetch" {
				n++ // and the other text's: stderr, the first block
			}
			if tool == "WebFetch" && !strings.HasPrefix(tc.name, "dense") {
				continue // a text cut and kept on its own, as Bash's
			}
			payload := hookPayload(t, tool, resp, false)
			t.Run(tool+"/"+tc.name, func(t *testing.T) {
				if compareStreamed(t, payload, p, "on", hold) == 0 {
					t.Errorf("no long text: the payload was not streamed")
				}
				for name, reader := range readers {
					store := storeDir(t, 0)
					c, err := claudecode.Streaming(claudecode.Hook{}, 1, 0).ReadCap(reader(payload),
						func(string) (claudecode.Setup, error) { return claudecode.Setup{Policy: p, Store: store}, nil })
					if err != nil || !c.Changed {
						t.Fatalf("%s: ReadCap() = changed %v, error %v", name, c.Changed, err)
					}
					noSecret(t, name+": the reply", string(c.Out))
					got := 0
					for _, k := range c.Redactions {
						got += k
					}
					kept := normalize(t, c.Out, c.Truncation, c.Changed, nil).Kept
					if len(kept) != 1 {
						t.Fatalf("%s: %d kept files, want 1", name, len(kept))
					}
					if diff := cmp.Diff([]any{n, len(want), true}, []any{got, len(kept[0]), kept[0] == want}); diff != "" {
						t.Errorf("%s: redactions, the kept file's length and whether it is the redacted text (-want +got):\n%s", name, diff)
					}
					noSecret(t, name+": the kept file", kept[0])
				}
			})
		}
	}
}

// TestReadCapStreamRedactsAsText: a streamed output the cut reads as the
// text of its JSON (one of the wrong shape) is redacted as it streamed:
// its JSON as written, escapes decoded, so a secret after an escaped
// newline, or a private key whose lines are joined by escaped ones, is
// found.
func TestReadCapStreamRedactsAsText(t *testing.T) {
	long := jstr(t, awsKey+"\n"+privKey+"\n"+testLog(3000)+"\n"+awsKey)
	for _, tc := range []struct{ name, tool, resp string }{
		{"stdout named twice", "Bash", `{"stdout":` + long + `,"stdout":` + long + `}`},
		{"syntax error after a long text", "Bash", `{"stdout":` + long + `,"stderr":"" "x"}`},
		{"a block that is not an object", "mcp__x__y", `[{"type":"text","text":` + long + `},3]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := claudecode.Streaming(claudecode.Hook{}, 1, 0).ReadCap(iotest.HalfReader(bytes.NewReader(hookPayload(t, tc.tool, tc.resp, false))),
				func(string) (claudecode.Setup, error) { return claudecode.Setup{Policy: redacting(2048)}, nil })
			if err != nil || !c.Changed {
				t.Fatalf("ReadCap() = changed %v, error %v; want a cut", c.Changed, err)
			}
			noSecret(t, "the reply", string(c.Out))
			var s string
			if err := json.Unmarshal(c.Out, &s); err != nil {
				t.Fatalf("the reply is not the text of the JSON: %v", err)
			}
			if !strings.Contains(s, awsMarker) || !strings.Contains(s, keyMarker) || c.Redactions["private-key"] == 0 {
				t.Errorf("no markers in the head %.300q; Redactions = %v", s, c.Redactions)
			}
		})
	}
}

// piecesOf reads data n bytes at a time.
type piecesOf struct {
	data []byte
	n    int
}

func (r *piecesOf) Read(b []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := copy(b[:min(len(b), r.n)], r.data)
	r.data = r.data[k:]
	return k, nil
}
