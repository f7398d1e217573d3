package claudecode_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/claudecode"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
)

// jstr is s as a JSON string.
func jstr(t testing.TB, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hookPayload is a PostToolUse payload of tool whose tool_response is resp,
// written as it is, with the members in Claude Code's order, or, with
// late, tool_name and session_id after tool_response.
func hookPayload(t testing.TB, tool, resp string, late bool) []byte {
	names := `"tool_name":` + jstr(t, tool) + `,"tool_input":{"command":"make test"},`
	if late {
		return []byte(`{"transcript_path":"/t.jsonl","hook_event_name":"PostToolUse","tool_response":` + resp + `,` + names + `"session_id":"s1","tool_use_id":"t1"}`)
	}
	return []byte(`{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/","hook_event_name":"PostToolUse",` + names + `"tool_response":` + resp + `,"tool_use_id":"t1"}`)
}

// escapes is JSON string content, as written, that decodes differently
// from how it is written: escapes, a surrogate pair, lone surrogates,
// invalid UTF-8 and multi-byte characters, with newlines.
const escapes = `caf\u00e9 \ud83d\ude00 lone \ud800 and \udc00x, bad ` + "\xff\xfe\xe2\x82" + ` \/path\t\"q\" 日本語 ` + "\xf0\x9f\x98" + `\n`

// rawText is a JSON string of about n bytes as written, of lines that mix
// plain text with escapes.
func rawText(n int) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %06d: ", i)
		if i%7 == 0 {
			b.WriteString(escapes)
		} else {
			b.WriteString(`the quick brown fox jumps over the lazy dog\n`)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// streamCases are tool outputs whose long texts a streamed payload
// decodes as they arrive, with outputs of every other shape the hook
// meets. long is a text longer than the hold of every policy tested.
func streamCases(t *testing.T, long int) []struct {
	name, tool, resp string
	late             bool
	longs            int
} {
	logText := jstr(t, testLog(long/40))
	short := jstr(t, "FAIL: TestParse\n")
	manyBlocks := make([]string, 12)
	for i := range manyBlocks {
		if i%3 == 1 {
			manyBlocks[i] = `{"type":"text","text":` + jstr(t, testLog(long/40+i)) + `}`
		} else {
			manyBlocks[i] = `{"type":"text","text":` + jstr(t, fmt.Sprintf("block %d\n", i)) + `}`
		}
	}
	names := make([]string, 3000)
	for i := range names {
		names[i] = fmt.Sprintf("src/pkg%05d/file.go", i)
	}
	filenames, _ := json.Marshal(names)
	return []struct {
		name, tool, resp string
		late             bool
		longs            int
	}{
		{"Bash stdout", "Bash", `{"stdout":` + logText + `,"stderr":"","interrupted":false,"isImage":false}`, false, 1},
		{"Bash stdout and stderr", "Bash", `{"stdout":` + logText + `,"stderr":` + logText + `,"interrupted":false}`, false, 2},
		{"Bash short stdout, long stderr", "Bash", `{"stdout":` + short + `,"stderr":` + logText + `}`, false, 1},
		{"Bash stderr first", "Bash", `{"stderr":` + logText + `,"stdout":` + jstr(t, testLog(long/40+3)) + `,"interrupted":false}`, false, 2},
		{"Bash stderr first, short stdout", "Bash", `{"stderr":` + logText + `,"stdout":` + short + `}`, false, 1},
		{"Bash escapes and invalid UTF-8", "Bash", `{"stdout":` + rawText(long) + `,"stderr":` + rawText(long/3) + `}`, false, 1},
		{"Bash escapes and invalid UTF-8, both long", "Bash", `{"stdout":` + rawText(long) + `,"stderr":` + rawText(long+500) + `}`, false, 2},
		{"Bash escapes held", "Bash", `{"stdout":"` + strings.Repeat(`\u00e9`, long/7) + `","stderr":` + short + `}`, false, 0},
		{"Bash image", "Bash", `{"stdout":` + logText + `,"stderr":"","isImage":true}`, false, 1},
		{"Bash saved by Claude Code", "Bash", `{"stdout":` + logText + `,"stderr":"","persistedOutputPath":"/tmp/out.txt"}`, false, 1},
		{"Bash stdout not a string", "Bash", `{"stdout":12,"stderr":` + logText + `}`, false, 1},
		{"Bash as a string", "Bash", logText, false, 1},
		{"Bash control character", "Bash", `{"stdout":` + logText[:len(logText)*3/4] + "\x01" + logText[len(logText)*3/4:] + `,"stderr":""}`, false, 1},
		{"Bash syntax error after a long text", "Bash", `{"stdout":` + logText + `,"stderr":"" "x"}`, false, 1},
		{"Bash small syntax error", "Bash", `{"stdout":"x" "y", "stderr":` + jstr(t, strings.Repeat("e", 100)) + `}`, false, 0},
		{"Bash late names", "Bash", `{"stdout":` + logText + `,"stderr":` + short + `}`, true, 1},
		{"Grep", "Grep", `{"mode":"content","numFiles":3000,"filenames":` + string(filenames) + `,"content":` + logText + `,"numLines":9}`, false, 1},
		{"WebFetch", "WebFetch", `{"bytes":1,"code":200,"codeText":"OK","result":` + logText + `,"durationMs":3,"url":"https://x"}`, false, 1},
		{"MCP string", "mcp__fs__read", logText, false, 1},
		{"MCP string with escapes", "mcp__fs__read", rawText(long), false, 1},
		{"MCP string, late names", "mcp__fs__read", logText, true, 1},
		{"MCP blocks", "mcp__fs__read", `[{"type":"text","text":` + short + `},{"type":"text","text":` + logText + `},{"type":"image","data":"aGVsbG8=","mimeType":"image/png"},{"type":"text","text":` + short + `}]`, false, 1},
		{"MCP image block with a text", "mcp__fs__read", `[{"type":"image","text":` + logText + `,"data":"aGVsbG8=","mimeType":"image/png"}]`, false, 1},
		{"MCP block, type last", "mcp__fs__read", `[{"text":` + logText + `,"type":"text","annotations":{"audience":["user"]}}]`, false, 1},
		{"MCP block control character", "mcp__fs__read", `[{"type":"text","text":` + short + `},{"type":"text","text":` + logText[:len(logText)*3/4] + "\x01" + logText[len(logText)*3/4:] + `},{"type":"text","text":` + short + `}]`, false, 1},
		{"MCP many blocks", "mcp__fs__read", `[` + strings.Join(manyBlocks, ",") + `]`, false, 4},
		{"MCP result", "mcp__fs__read", `{"content":[{"type":"text","text":` + logText + `},{"type":"resource_link","uri":"file:///a","name":"a","description":"d"}],"structuredContent":{"n":1,"items":["a","b"]},"isError":false}`, false, 1},
		{"MCP result with escapes", "mcp__fs__read", `{"content":[{"type":"text","text":` + rawText(long) + `}],"isError":false}`, false, 1},
		{"Read held", "Read", string(readPayload(t, "/p/f.go", numberedLines(long/30), 1, long/30)), false, 0},
		{"Glob held", "Glob", `{"filenames":` + string(filenames) + `,"numFiles":3000,"truncated":false,"durationMs":1}`, false, 0},
		{"other tool's JSON", "Write", `{"type":"create","filePath":"/p/a","content":` + logText + `}`, false, 0},
		{"JSON array", "mcp__db__query", string(toJSON(t, slices.Repeat([]any{map[string]any{"id": 1, "name": "row"}}, long/24))), false, 0},
	}
}

// storeDir opens a plain store in a directory of its own, keeping at most
// maxEntry bytes an entry (0: the default).
func storeDir(t *testing.T, maxEntry int64) *rest.Dir {
	t.Helper()
	d, err := rest.OpenPlainDir(filepath.Join(t.TempDir(), "rest"), rest.Config{MaxEntryBytes: maxEntry})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// entryRE finds the file a marker names; the ref in it differs between
// two cuts of the same output.
var entryRE = regexp.MustCompile(`(/[^"\\]*/rest/[0-9a-f]+/)([a-z2-7]{26})\.txt`)

// capped is a cut as the tests compare it: the ref and the store's
// directory named in it left out, and the kept files.
type capped struct {
	Out     string
	T       chain.Truncation
	Changed bool
	Err     bool
	Kept    []string
}

// normalize returns c's reply with every kept file's path replaced, and
// the files' contents.
func normalize(t *testing.T, out json.RawMessage, tr chain.Truncation, changed bool, err error) capped {
	t.Helper()
	c := capped{T: tr, Changed: changed, Err: err != nil}
	c.T.Ref = ""
	// The reply's JSON names paths with escaped slashes or not: decoded
	// strings are compared through the raw reply.
	for _, m := range entryRE.FindAllStringSubmatch(string(out), -1) {
		data, rerr := os.ReadFile(m[1] + m[2] + ".txt")
		if rerr != nil {
			t.Errorf("the file a marker names: %v", rerr)
		}
		c.Kept = append(c.Kept, string(data))
	}
	c.Out = entryRE.ReplaceAllString(string(out), `STORE/REF.txt`)
	return c
}

// entries counts the files of a store.
func entries(t *testing.T, d *rest.Dir) int {
	t.Helper()
	if d == nil {
		return 0
	}
	n := 0
	_ = filepath.WalkDir(d.Path(), func(path string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(path, ".txt") {
			n++
		}
		return nil
	})
	return n
}

// The reply of a payload streamed (Hook.ReadCap past its threshold) is the
// reply of Hook.Cap on the same payload held whole, byte for byte, and the
// file it keeps holds the same text, for every tool shape, key order,
// escape and invalid byte, strategy, token limit, and with the rest kept
// or not.
func TestReadCapStreamsAsHeld(t *testing.T) {
	pols := policies(t)
	pols["default"] = shape.Bytes(shape.DefaultMaxBytes)
	pols["small"] = shape.Bytes(300)
	long := 0
	for _, p := range pols {
		long = max(long, claudecode.StreamHold(p))
	}
	long = long*5/4 + 1000
	for _, tc := range streamCases(t, long) {
		for name, p := range pols {
			for _, keep := range []string{"off", "on", "bounded"} {
				if keep == "bounded" && name != "default" && name != "head_tail" {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/keep=%s", tc.name, name, keep), func(t *testing.T) {
					longs := compareStreamed(t, hookPayload(t, tc.tool, tc.resp, tc.late), p, keep, long)
					if longs != tc.longs {
						t.Errorf("the stream held %d long texts, want %d", longs, tc.longs)
					}
				})
			}
		}
	}
}

// compareStreamed checks that the reply of payload streamed is that of
// payload held whole under p, with the rest kept (keep "on"), not
// ("off"), or in a store whose entries are shorter than long ("bounded"),
// and returns how many long texts the stream held.
func compareStreamed(t *testing.T, payload []byte, p shape.Policy, keep string, long int) int {
	t.Helper()
	p.KeepRest = keep != "off"
	var held, streamed *rest.Dir
	switch keep {
	case "on":
		held, streamed = storeDir(t, 0), storeDir(t, 0)
	case "bounded":
		// An entry bound shorter than the long texts: no cut keeps them,
		// and nothing is left in the store.
		held, streamed = storeDir(t, int64(long/2)), storeDir(t, int64(long/2))
	}
	in, err := claudecode.ParseInput(payload)
	var want capped
	if err != nil {
		want.Err = true
	} else {
		out, tr, changed, err := (&claudecode.Hook{Store: held}).Cap(in, p)
		want = normalize(t, out, tr, changed, err)
	}

	longs := -1
	h := claudecode.Streamed(claudecode.Streaming(claudecode.Hook{}, 1, 0), func(n int) { longs = n })
	var called []string
	c, err := h.ReadCap(iotest.HalfReader(bytes.NewReader(payload)), func(tool string) (claudecode.Setup, error) {
		called = append(called, tool)
		return claudecode.Setup{Policy: p, Store: streamed}, nil
	})
	got := normalize(t, c.Out, c.Truncation, c.Changed, err)
	if err != nil && !want.Err {
		t.Logf("ReadCap() error: %v", err)
	}
	if !want.Err && (len(called) == 0 || called[len(called)-1] != in.ToolName || len(called) > 2) {
		// Twice when tool_name is named again after the output.
		t.Errorf("setup called for %q, want %q", called, in.ToolName)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadCap() streamed mismatch with Cap() held (-want +got):\n%.3000s", diff)
	}
	if nw, ng := entries(t, held), entries(t, streamed); nw != ng {
		t.Errorf("the store holds %d files, want %d", ng, nw)
	}
	if in.ToolResponse = nil; err == nil {
		if diff := cmp.Diff(in, c.Input); diff != "" {
			t.Errorf("Input mismatch (-want +got):\n%.1000s", diff)
		}
	}
	return longs
}

// Payloads that name a member twice are read as splitObject reads them,
// the last value standing, streamed or not.
func TestReadCapStreamsNamedTwice(t *testing.T) {
	long := claudecode.StreamHold(shape.Bytes(4096)) * 2
	logText := jstr(t, testLog(long/40))
	for _, tc := range []struct{ name, payload string }{
		{"tool_response twice", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"stdout":` + logText + `},"tool_response":{"stdout":"short","stderr":` + logText + `}}`},
		{"tool_response twice, the last short", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"stdout":` + logText + `},"tool_response":{"stdout":"short"}}`},
		{"tool_name twice before", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Grep","tool_name":"Bash","tool_response":{"stdout":` + logText + `}}`},
		{"session_id null", `{"session_id":null,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"stdout":` + logText + `}}`},
		{"event last", `{"session_id":"s","tool_name":"Bash","tool_response":{"stdout":` + logText + `},"hook_event_name":"PostToolUse"}`},
		{"renamed after a held output", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Grep","tool_response":{"stdout":"x","content":` + jstr(t, strings.Repeat("y\n", 3000)) + `},"tool_name":"Bash"}`},
	} {
		for _, keep := range []string{"off", "on"} {
			t.Run(tc.name+"/keep="+keep, func(t *testing.T) {
				compareStreamed(t, []byte(tc.payload), shape.Bytes(4096), keep, long)
			})
		}
	}
}

// Past its threshold a payload is read through a bounded buffer: the
// streamed cut of a long output holds memory bounded by the limit, not by
// the output's length.
func TestReadCapStreamMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 64 MiB")
	}
	const size = 64 << 20
	line := []byte(`0123456789abcdefghijklmnopqrstuvwxyz\n`)
	for _, name := range []string{"Bash", "mcp__fs__read"} {
		t.Run(name, func(t *testing.T) {
			prefix := `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"` + name + `","tool_response":{"stdout":"`
			suffix := `","stderr":""},"tool_use_id":"t"}`
			if name != "Bash" {
				prefix = `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"` + name + `","tool_response":[{"type":"text","text":"`
				suffix = `"}],"tool_use_id":"t"}`
			}
			r := &repeatReader{head: []byte(prefix), body: line, n: size / len(line), tail: []byte(suffix)}
			var before, after runtimeMem
			before.read()
			c, err := claudecode.Streaming(claudecode.Hook{}, 64<<10, 0).ReadCap(r, func(string) (claudecode.Setup, error) {
				return claudecode.Setup{Policy: shape.Bytes(16384)}, nil
			})
			after.read()
			if err != nil || !c.Changed {
				t.Fatalf("ReadCap() = changed %v, error %v", c.Changed, err)
			}
			if grown := after.total - before.total; grown > 16<<20 {
				t.Errorf("ReadCap() allocated %d MiB for a %d MiB payload, want at most 16 MiB", grown>>20, size>>20)
			}
			if c.Truncation.OriginalBytes != size/len(line)*(len(line)-1) {
				t.Errorf("OriginalBytes = %d, want %d", c.Truncation.OriginalBytes, size/len(line)*(len(line)-1))
			}
		})
	}
}

// repeatReader reads head, body n times, then tail, without holding them
// joined.
type repeatReader struct {
	head, body, tail []byte
	n, off           int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	k := 0
	for k < len(p) {
		switch {
		case len(r.head) > 0:
			c := copy(p[k:], r.head)
			r.head = r.head[c:]
			k += c
		case r.n > 0:
			c := copy(p[k:], r.body[r.off:])
			k += c
			r.off += c
			if r.off == len(r.body) {
				r.off = 0
				r.n--
			}
		case len(r.tail) > 0:
			c := copy(p[k:], r.tail)
			r.tail = r.tail[c:]
			k += c
		default:
			if k == 0 {
				return 0, io.EOF
			}
			return k, nil
		}
	}
	return k, nil
}

// A streamed payload past the bound is refused as one held whole is: the
// error is ErrPayloadTooLarge, and nothing is cut.
func TestReadCapStreamBound(t *testing.T) {
	payload := hookPayload(t, "Bash", `{"stdout":`+jstr(t, testLog(3000))+`}`, false)
	h := claudecode.Streaming(claudecode.Hook{}, 1, int64(len(payload)-1))
	_, err := h.ReadCap(bytes.NewReader(payload), func(string) (claudecode.Setup, error) {
		return claudecode.Setup{Policy: shape.Bytes(1024)}, nil
	})
	if !errors.Is(err, claudecode.ErrPayloadTooLarge) {
		t.Errorf("ReadCap() error = %v, want ErrPayloadTooLarge", err)
	}
	h = claudecode.Streaming(claudecode.Hook{}, 1, int64(len(payload)))
	if _, err := h.ReadCap(bytes.NewReader(payload), func(string) (claudecode.Setup, error) {
		return claudecode.Setup{Policy: shape.Bytes(1024)}, nil
	}); err != nil {
		t.Errorf("ReadCap() of a payload at the bound: %v", err)
	}
}

// Malformed payloads fail as ParseInput fails them, streamed or not; a
// setup error is a *SetupError.
func TestReadCapStreamErrors(t *testing.T) {
	long := jstr(t, testLog(3000))
	tests := []struct {
		name, payload, want string
	}{
		{"not an object", `[` + long + `]`, "not a JSON hook payload"},
		{"cut short", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"stdout":` + long[:len(long)/2], "not a JSON hook payload"},
		{"data after", `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":` + long + `} x`, "not a JSON hook payload"},
		{"another event", `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_response":` + long + `}`, `hook_event_name is "PreToolUse"`},
		{"no tool name", `{"session_id":"s","hook_event_name":"PostToolUse","tool_response":` + long + `}`, "no tool_name"},
		{"tool name not a string", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":3,"tool_response":` + long + `}`, "tool_name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, heldErr := claudecode.ParseInput([]byte(tt.payload))
			h := claudecode.Streaming(claudecode.Hook{}, 1, 0)
			_, err := h.ReadCap(strings.NewReader(tt.payload), func(string) (claudecode.Setup, error) {
				return claudecode.Setup{Policy: shape.Bytes(1024)}, nil
			})
			if err == nil || heldErr == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(heldErr.Error(), tt.want) {
				t.Errorf("ReadCap() error = %v, ParseInput() error = %v; want both to say %q", err, heldErr, tt.want)
			}
		})
	}
	boom := errors.New("bad manifest")
	_, err := claudecode.Streaming(claudecode.Hook{}, 1, 0).ReadCap(bytes.NewReader(hookPayload(t, "Bash", long, false)), func(string) (claudecode.Setup, error) {
		return claudecode.Setup{}, boom
	})
	var se *claudecode.SetupError
	if !errors.As(err, &se) || !errors.Is(err, boom) {
		t.Errorf("ReadCap() error = %v, want a SetupError wrapping %v", err, boom)
	}
}

// Output of the wrong shape, streamed, is never passed on uncapped: where
// Cap would read it whole as JSON, it is cut as the text of its JSON.
func TestReadCapStreamOddShapes(t *testing.T) {
	long := jstr(t, testLog(3000))
	for _, tc := range []struct{ name, tool, resp string }{
		{"a block that is not an object", "mcp__x__y", `[{"type":"text","text":` + long + `},3]`},
		{"text named twice", "mcp__x__y", `[{"type":"text","text":` + long + `,"text":"x"}]`},
		{"stdout named twice", "Bash", `{"stdout":` + long + `,"stdout":` + long + `}`},
		{"syntax error after a long text", "Bash", `{"stdout":` + long + `,"stderr":"" "x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := shape.Bytes(2048)
			c, err := claudecode.Streaming(claudecode.Hook{}, 1, 0).ReadCap(bytes.NewReader(hookPayload(t, tc.tool, tc.resp, false)),
				func(string) (claudecode.Setup, error) { return claudecode.Setup{Policy: p}, nil })
			if err != nil || !c.Changed {
				t.Fatalf("ReadCap() = changed %v, error %v; want a cut", c.Changed, err)
			}
			if len(c.Out) > 2*p.MaxBytes+2 {
				t.Errorf("ReadCap() replaced the output with %d bytes, over the limit", len(c.Out))
			}
			if got := cut.FindMarkers(string(c.Out)); len(got) == 0 && !bytes.Contains(c.Out, []byte("truncated")) {
				t.Errorf("no marker in %.300s", c.Out)
			}
		})
	}
}

// runtimeMem is the bytes the program allocated so far.
type runtimeMem struct{ total uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.total = s.TotalAlloc
}

// Random payloads of every shape the hook streams, their texts of lengths
// about the hold (held, long, long only once decoded), of plain lines,
// escapes, invalid UTF-8 and now and then a byte no JSON string holds, in
// random member orders: streamed, each is cut as held whole.
func TestReadCapStreamsAsHeldRandom(t *testing.T) {
	pols := policies(t)
	pols["default"] = shape.Bytes(shape.DefaultMaxBytes)
	names := slices.Sorted(maps.Keys(pols))
	rng := rand.New(rand.NewPCG(7, 23))
	pieces := []string{`plain line of text\n`, `ok 1\n`, `FAIL: x\n`, `\u00e9\u4e2d`, `\ud83d\ude00`, `\ud800`, "\xff", "\xe2\x82",
		`\"q\"`, `\\`, `\/`, `\t`, "日本", `\u0041`}
	text := func(hold int) string {
		var n int
		switch rng.IntN(4) {
		case 0:
			n = rng.IntN(200)
		case 1:
			n = hold - 50 + rng.IntN(100)
		default:
			n = hold + rng.IntN(2*hold)
		}
		var b strings.Builder
		b.WriteByte('"')
		for b.Len() < n {
			if rng.IntN(5000) == 0 {
				b.WriteByte(byte(rng.IntN(0x20))) // an error, as unquote reads it
			}
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		b.WriteByte('"')
		return b.String()
	}
	object := func(members map[string]string) string {
		keys := slices.Collect(maps.Keys(members))
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(jstr(t, k) + ":" + members[k])
		}
		b.WriteByte('}')
		return b.String()
	}
	for i := range 150 {
		name := names[rng.IntN(len(names))]
		p := pols[name]
		hold := claudecode.StreamHold(p)
		var tool, resp string
		switch rng.IntN(5) {
		case 0:
			tool = "Bash"
			resp = object(map[string]string{"stdout": text(hold), "stderr": text(hold), "interrupted": "false"})
		case 1:
			tool = "Grep"
			resp = object(map[string]string{"mode": `"content"`, "content": text(hold), "filenames": `["a.go","b.go"]`, "numFiles": "2"})
		case 2:
			tool = "mcp__x__y"
			resp = text(hold)
		case 3:
			tool = "mcp__x__y"
			blocks := make([]string, 1+rng.IntN(4))
			for k := range blocks {
				if rng.IntN(4) == 0 {
					blocks[k] = object(map[string]string{"type": `"image"`, "data": `"aGVsbG8="`, "mimeType": `"image/png"`})
				} else {
					blocks[k] = object(map[string]string{"type": `"text"`, "text": text(hold)})
				}
			}
			resp = "[" + strings.Join(blocks, ",") + "]"
			if rng.IntN(2) == 0 {
				resp = object(map[string]string{"content": resp, "isError": "false"})
			}
		default:
			tool = "WebFetch"
			resp = object(map[string]string{"result": text(hold), "code": "200"})
		}
		keep := []string{"off", "on"}[rng.IntN(2)]
		late := rng.IntN(6) == 0
		t.Run(fmt.Sprintf("%d/%s/%s/%s/late=%v", i, tool, name, keep, late), func(t *testing.T) {
			compareStreamed(t, hookPayload(t, tool, resp, late), p, keep, hold)
		})
	}
}
