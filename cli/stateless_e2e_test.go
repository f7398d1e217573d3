//go:build !toolcap_nomcp

package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/internal/fault"
	"github.com/toolcap/toolcap/internal/rest"
)

// MCP's stateless revision (2026-07-28: no initialize, no session; each
// request names its version in _meta and in the MCP-Protocol-Version
// header) end to end: a real Go SDK client and a real Go SDK server
// (test/statelessserver, whose tool big returns the deterministic text of
// package fault), through toolcap in each of the three ways a 2026 client
// reaches a 2026 server:
//
//   - listen-url: the client over HTTP to `toolcap mcp --listen --url`,
//     relaying to the server's stateless streamable HTTP handler;
//   - listen-stdio: the client over HTTP to `toolcap mcp --listen --
//     statelessserver`, the server a process of a lane, over stdio;
//   - url-stdio: the client runs `toolcap mcp --url` over stdio, relaying to
//     the server's stateless HTTP handler.
//
// Each checks what the client receives: the session negotiated
// 2026-07-28 with the server's own discover answer, tools/list lists
// toolcap_read, the big result comes cut to the default limit with the
// marker naming the read of the rest, each page the read gives continues
// the text where the last stopped and carries resultType "complete", and
// the pages give back the whole text byte for byte; over HTTP, a ref is
// read by none but its principal.

// statelessVersion is the protocol version of the stateless revision.
const statelessVersion = "2026-07-28"

// statelessServerName is test/statelessserver's serverInfo name.
const statelessServerName = "toolcap-statelessserver"

// statelessBigBytes is the length of the big tool's text (its default).
const statelessBigBytes = 200_000

// statelessLimit is toolcap's default limit of a tool's result.
const statelessLimit = 16384

// statelessMarker is the end of a result cut with the rest kept: the bytes
// dropped, the ref and the offset to read on from.
var statelessMarker = regexp.MustCompile(`\n\[truncated: (\d+) bytes dropped, refine your query or read the rest: toolcap_read \{"ref":"([a-z2-7]{26})","offset":(\d+)(?:,"length":\d+)?\}\]$`)

// statelessBinaries builds toolcap and test/statelessserver as users build
// them (without the race detector: GOFLAGS is cleared), skipping the test
// when there is no go command unless TOOLCAP_MCP_E2E=1 (CI) says there
// must be one.
func statelessBinaries(t *testing.T) (toolcap, server string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("TOOLCAP_MCP_E2E") == "1" {
			t.Fatalf("TOOLCAP_MCP_E2E=1 but there is no go command to build toolcap with: %v", err)
		}
		t.Skip("no go command to build toolcap and the test server with")
	}
	dir := t.TempDir()
	build := exec.Command(goTool, "build", "-o", dir+string(filepath.Separator), "../cmd/toolcap", "../test/statelessserver")
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	return filepath.Join(dir, "toolcap"+exe), filepath.Join(dir, "statelessserver"+exe)
}

// statelessMode is one way through toolcap.
type statelessMode struct {
	name string
	// connect connects the Go SDK client through toolcap.
	connect func(t *testing.T) *mcp.ClientSession
	// raw sends one request as a bare client would, outside the SDK, and
	// returns the response whole: a POST to toolcap's endpoint over HTTP
	// (auth, when set, its Authorization), a line to a toolcap process of
	// its own over stdio.
	raw func(t *testing.T, method string, params map[string]any, auth string) json.RawMessage
	// http: refs are bound to a principal, which the raw request names by
	// its Authorization.
	http bool
	// logs is toolcap's output.
	logs fmt.Stringer
}

func TestStatelessEndToEnd(t *testing.T) {
	start := time.Now()
	toolcap, server := statelessBinaries(t)
	want := fault.Prefix(statelessBigBytes, statelessBigBytes)
	cache := t.TempDir()
	env := append(os.Environ(), "XDG_CACHE_HOME="+cache)

	// The server over stateless streamable HTTP, for the two --url modes.
	srv := exec.Command(server, "-http", "127.0.0.1:0")
	upAddr, upLogs, _ := serve(t, srv, srv.StdoutPipe, regexp.MustCompile(`^listening on (\S+)$`))
	upstream := "http://" + upAddr + "/mcp"
	upstreamPID := srv.Process.Pid

	// The server answers 2026-07-28 directly, with the whole text.
	direct := connectHTTP(t, upstream)
	if v := direct.InitializeResult().ProtocolVersion; v != statelessVersion {
		t.Fatalf("direct: the SDK client negotiated %q with the stateless server, want %s", v, statelessVersion)
	}
	if got := bigText(t, direct, "big", nil); got != want {
		t.Fatalf("direct: big gives %d bytes, not the %d of fault.Prefix", len(got), len(want))
	}
	direct.Close()

	listen := func(args ...string) (url string, logs fmt.Stringer) {
		cmd := exec.Command(toolcap, append([]string{"mcp", "--listen", "127.0.0.1:0"}, args...)...)
		cmd.Env = env
		addr, l, _ := serve(t, cmd, cmd.StderrPipe, regexp.MustCompile(`serving http://(\S+)/mcp$`))
		return "http://" + addr + "/mcp", l
	}
	urlListen, urlLogs := listen("--url", upstream)
	stdioListen, stdioLogs := listen("--", server)
	stdioFront := &lockedBuffer{}
	modes := []statelessMode{
		{
			name:    "listen-url",
			connect: func(t *testing.T) *mcp.ClientSession { return connectHTTP(t, urlListen) },
			raw:     postRaw(urlListen),
			http:    true,
			logs:    urlLogs,
		},
		{
			name:    "listen-stdio",
			connect: func(t *testing.T) *mcp.ClientSession { return connectHTTP(t, stdioListen) },
			raw:     postRaw(stdioListen),
			http:    true,
			logs:    stdioLogs,
		},
		{
			name: "url-stdio",
			connect: func(t *testing.T) *mcp.ClientSession {
				cmd := exec.Command(toolcap, "mcp", "--url", upstream)
				cmd.Env, cmd.Stderr = env, stdioFront
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "stateless-e2e", Version: "1"}, nil).
					Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
				if err != nil {
					t.Fatalf("connecting over stdio to toolcap mcp --url: %v\n%s", err, stdioFront)
				}
				return cs
			},
			raw:  stdioRaw(t, toolcap, env, upstream),
			logs: stdioFront,
		},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n  %-13s %8s %8s %6s %9s %s", "mode", "cut", "wire", "pages", "read", "servers")
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := checkStatelessMode(t, m, want)
			servers := "-"
			if m.name == "listen-stdio" && runtime.GOOS == "linux" {
				// The lanes' server processes: never more than the pool
				// (running reads /proc).
				n := len(running(t, server, upstreamPID))
				if n < 1 || n > 4 {
					t.Errorf("%d server processes run behind --listen, want 1 to 4 (the lanes' pool)", n)
				}
				servers = strconv.Itoa(n)
			}
			fmt.Fprintf(&table, "\n  %-13s %8d %8d %6d %9d %s", m.name, f.cut, f.wire, f.pages, f.read, servers)
			if t.Failed() {
				t.Logf("toolcap's output:\n%s", m.logs)
			}
		})
	}
	if t.Failed() {
		t.Logf("the server's output:\n%s", upLogs)
	}
	t.Logf("what the clients received (bytes: the cut text, the raw response of the call, the pages read, the text they gave back)%s", table.String())
	t.Logf("stateless end to end: %s", time.Since(start).Round(time.Millisecond))
}

// statelessFigures is what one mode's client received.
type statelessFigures struct {
	cut   int // the cut result's text, marker included
	wire  int // the raw response of the same call, whole
	pages int // the pages the read tool gave
	read  int // the text they gave back, the cut's kept head included
}

// checkStatelessMode runs the checks of one mode (see the comment at the
// top of the file) and returns what the client received.
func checkStatelessMode(t *testing.T, m statelessMode, want string) statelessFigures {
	var f statelessFigures
	cs := m.connect(t)
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// The session is the stateless revision's, and its discover answer
	// is the server's.
	init := cs.InitializeResult()
	if init == nil || init.ProtocolVersion != statelessVersion {
		t.Fatalf("the SDK client negotiated %+v, want protocol version %s", init, statelessVersion)
	}
	if init.ServerInfo == nil || init.ServerInfo.Name != statelessServerName {
		t.Errorf("discover's serverInfo is %+v, want the server's (%s)", init.ServerInfo, statelessServerName)
	}
	var disc struct {
		Result struct {
			SupportedVersions []string `json:"supportedVersions"`
			Meta              struct {
				ServerInfo struct {
					Name string `json:"name"`
				} `json:"io.modelcontextprotocol/serverInfo"`
			} `json:"_meta"`
		} `json:"result"`
	}
	raw := m.raw(t, "server/discover", map[string]any{}, "")
	if err := json.Unmarshal(raw, &disc); err != nil || !slices.Contains(disc.Result.SupportedVersions, statelessVersion) ||
		disc.Result.Meta.ServerInfo.Name != statelessServerName {
		t.Errorf("a bare server/discover gets %s (%v); want the server's answer (serverInfo %s), supportedVersions listing %s",
			raw, err, statelessServerName, statelessVersion)
	}

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "toolcap_read") || !slices.Contains(names, "big") {
		t.Errorf("tools/list lists %v; want big and toolcap_read", names)
	}

	// The cut result: within the limit, its head the text's, its marker
	// naming the rest.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "big"})
	if err != nil {
		t.Fatalf("tools/call big: %v", err)
	}
	text := onlyText(t, "tools/call big", res)
	f.cut = len(text)
	loc := statelessMarker.FindStringSubmatchIndex(text)
	if res.IsError || loc == nil || len(text) > statelessLimit {
		t.Fatalf("tools/call big gives %d bytes (isError %v), ending %q; want a cut within %d bytes with the marker naming toolcap_read",
			len(text), res.IsError, text[max(0, len(text)-200):], statelessLimit)
	}
	head := text[:loc[0]]
	dropped, _ := strconv.Atoi(text[loc[2]:loc[3]])
	ref := text[loc[4]:loc[5]]
	offset, _ := strconv.Atoi(text[loc[6]:loc[7]])
	if head != want[:min(len(head), len(want))] || offset != len(head) || dropped != len(want)-len(head) {
		t.Fatalf("the cut keeps %d bytes (the text's own: %v), drops %d, reads on at %d; want the text's first bytes, %d dropped, the offset their length",
			len(head), strings.HasPrefix(want, head), dropped, offset, len(want)-len(head))
	}
	// The same call, bare: its whole response is what a client reads.
	wire := m.raw(t, "tools/call", map[string]any{"name": "big", "arguments": map[string]any{}}, "")
	f.wire = len(wire)
	var bare struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(wire, &bare); err != nil || len(bare.Result.Content) != 1 ||
		len(bare.Result.Content[0].Text) > statelessLimit || !statelessMarker.MatchString(bare.Result.Content[0].Text) {
		t.Errorf("a bare tools/call big gets %d bytes, not one text within %d bytes ending in the marker (%v): %.300s", len(wire), statelessLimit, err, wire)
	}

	// The next page, bare: the text where the cut stopped, a result of
	// the revision (resultType "complete").
	page := m.raw(t, "tools/call", map[string]any{"name": "toolcap_read", "arguments": map[string]any{"ref": ref, "offset": offset}}, "")
	var read struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError    bool   `json:"isError"`
			ResultType string `json:"resultType"`
		} `json:"result"`
	}
	rawPage, rawRef := "", ref
	switch {
	case !m.http:
		// A toolcap over stdio is a session of its own, which the SDK
		// client's ref is not: the bare client reads its own call's.
		loc := statelessMarker.FindStringSubmatchIndex(bare.Result.Content[0].Text)
		if loc == nil {
			break
		}
		rawRef = bare.Result.Content[0].Text[loc[4]:loc[5]]
		page = m.raw(t, "tools/call", map[string]any{"name": "toolcap_read", "arguments": map[string]any{"ref": rawRef, "offset": offset}}, "")
		fallthrough
	default:
		if err := json.Unmarshal(page, &read); err != nil || read.Result.IsError || len(read.Result.Content) != 1 {
			t.Fatalf("a bare toolcap_read at %d gets %.300s (%v); want one page", offset, page, err)
		}
		// Its marker names its own ref.
		rawPage = strings.ReplaceAll(read.Result.Content[0].Text, `"ref":"`+rawRef+`"`, `"ref":"`+ref+`"`)
		if read.Result.ResultType != "complete" {
			t.Errorf(`the bare toolcap_read's result has resultType %q, want "complete": %.200s`, read.Result.ResultType, page)
		}
	}

	// Every page through the SDK: each continues the text exactly, and
	// together they give it back whole.
	got := []byte(head)
	for off := offset; ; f.pages++ {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "toolcap_read", Arguments: map[string]any{"ref": ref, "offset": off}})
		if err != nil {
			t.Fatalf("toolcap_read at %d: %v", off, err)
		}
		text := onlyText(t, "toolcap_read", res)
		if res.IsError || len(text) > statelessLimit {
			t.Fatalf("toolcap_read at %d gives %d bytes (isError %v): %.200q", off, len(text), res.IsError, text)
		}
		if f.pages == 0 {
			if rawPage != "" && rawPage != text {
				t.Errorf("the bare toolcap_read at %d gives a page of %d bytes, the SDK's %d differing", off, len(rawPage), len(text))
			}
			// What the client decoded says "complete" too (the SDK keeps
			// it, and writes it back).
			if b, _ := json.Marshal(res); !bytes.Contains(b, []byte(`"resultType":"complete"`)) {
				t.Errorf("the SDK client decoded the page without resultType complete: %.200s", b)
			}
		}
		loc := statelessMarker.FindStringSubmatchIndex(text)
		if loc == nil {
			if !strings.HasPrefix(want[off:], text) {
				t.Fatalf("the last page, at %d, is not the text's from there (%d bytes)", off, len(text))
			}
			got = append(got, text...)
			f.pages++
			break
		}
		body := text[:loc[0]]
		next, _ := strconv.Atoi(text[loc[6]:loc[7]])
		if text[loc[4]:loc[5]] != ref || !strings.HasPrefix(want[off:], body) || next != off+len(body) || len(body) == 0 {
			t.Fatalf("the page at %d keeps %d bytes (the text's from there: %v), names ref %s and offset %d; want ref %s and offset %d",
				off, len(body), strings.HasPrefix(want[off:], body), text[loc[4]:loc[5]], next, ref, off+len(body))
		}
		got = append(got, body...)
		off = next
	}
	f.read = len(got)
	if string(got) != want {
		t.Errorf("the cut's head and the pages give %d bytes, differing from the %d of the text", len(got), len(want))
	}

	// Over HTTP, a ref is its principal's: another Authorization reads
	// nothing.
	if m.http {
		other := m.raw(t, "tools/call", map[string]any{"name": "toolcap_read", "arguments": map[string]any{"ref": ref, "offset": offset}}, "Bearer someone-else")
		var res struct {
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal(other, &res); err != nil || !res.Result.IsError || len(res.Result.Content) != 1 ||
			!strings.Contains(res.Result.Content[0].Text, rest.ErrUnknown.Error()) {
			t.Errorf("toolcap_read of the ref with another Authorization gets %.300s (%v); want an error result %q", other, err, rest.ErrUnknown)
		}
	}
	return f
}

// connectHTTP connects the Go SDK client to the MCP endpoint url.
func connectHTTP(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stateless-e2e", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	return cs
}

// bigText returns the text of a tools/call of tool.
func bigText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	return onlyText(t, "tools/call "+tool, res)
}

// onlyText returns the text of a result that is one text block.
func onlyText(t *testing.T, what string, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks, want 1", what, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: a %T block, want text", what, res.Content[0])
	}
	return tc.Text
}

// statelessMeta is the _meta of a bare stateless request.
func statelessMeta() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    statelessVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "stateless-e2e-bare", "version": "1"},
	}
}

// statelessRequest is a bare request of the revision, with id.
func statelessRequest(t *testing.T, id int, method string, params map[string]any) []byte {
	t.Helper()
	p := map[string]any{"_meta": statelessMeta()}
	for k, v := range params {
		p[k] = v
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": p})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// postRaw returns the raw of a mode served over HTTP at url: one POST
// with the revision's headers (SEP-2243), its answer read as JSON or as a
// stream of events, whichever it is.
func postRaw(url string) func(t *testing.T, method string, params map[string]any, auth string) json.RawMessage {
	id := 1000
	return func(t *testing.T, method string, params map[string]any, auth string) json.RawMessage {
		t.Helper()
		id++
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(statelessRequest(t, id, method, params)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", statelessVersion)
		req.Header.Set("Mcp-Method", method)
		if name, ok := params["name"].(string); ok {
			req.Header.Set("Mcp-Name", name)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", method, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("POST %s: reading the answer: %v", method, err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %s: %.300s", method, resp.Status, body)
		}
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			return body
		}
		// The response is the event whose data has the request's id.
		for line := range strings.Lines(string(body)) {
			data, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data:")
			if !ok {
				continue
			}
			var env struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal([]byte(data), &env) == nil && string(env.ID) == strconv.Itoa(id) {
				return json.RawMessage(strings.TrimSpace(data))
			}
		}
		t.Fatalf("POST %s: no response with id %d in the stream: %.300s", method, id, body)
		return nil
	}
}

// stdioRaw returns the raw of the url-stdio mode: a toolcap mcp --url
// process of its own, a request a line on its stdin and the line of its
// response read from its stdout. auth is not used (stdio carries none).
func stdioRaw(t *testing.T, toolcap string, env []string, upstream string) func(t *testing.T, method string, params map[string]any, auth string) json.RawMessage {
	t.Helper()
	cmd := exec.Command(toolcap, "mcp", "--url", upstream)
	cmd.Env = env
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan []byte, 16)
	go func() {
		defer close(lines)
		r := bufio.NewReaderSize(out, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("toolcap mcp --url did not exit 10 s after its stdin closed\n%s", logs)
			cmd.Process.Kill()
			<-done
		}
	})
	id := 2000
	return func(t *testing.T, method string, params map[string]any, _ string) json.RawMessage {
		t.Helper()
		id++
		if _, err := in.Write(append(statelessRequest(t, id, method, params), '\n')); err != nil {
			t.Fatalf("writing %s to toolcap mcp --url: %v\n%s", method, err, logs)
		}
		timeout := time.After(20 * time.Second)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("toolcap mcp --url ended before it answered %s\n%s", method, logs)
				}
				var env struct {
					ID json.RawMessage `json:"id"`
				}
				if json.Unmarshal(line, &env) == nil && string(env.ID) == strconv.Itoa(id) {
					return json.RawMessage(bytes.TrimSpace(line))
				}
			case <-timeout:
				t.Fatalf("toolcap mcp --url did not answer %s within 20 s\n%s", method, logs)
			}
		}
	}
}
