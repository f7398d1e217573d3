package mcpproxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// connect serves server through p in a session of its own and returns a
// client session connected to it: several of them share p, and its store.
func connect(t *testing.T, p *mcpproxy.Proxy, server *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	serverEnd, proxyUp := pipePair()
	clientEnd, proxyDown := pipePair()
	ss, err := server.Connect(ctx, sdkEnd(serverEnd), nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, mcpproxy.StreamConn(proxyDown), mcpproxy.StreamConn(proxyUp)) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, sdkEnd(clientEnd), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return after the client closed")
		}
		ss.Close()
	})
	return cs
}

// readMarker returns the read a text's last marker names, and where the
// marker starts; ok is false for a text without one.
func readMarker(t *testing.T, text string) (args rest.ReadArgs, start int, ok bool) {
	t.Helper()
	ms := cut.FindMarkers(text)
	if len(ms) == 0 || ms[len(ms)-1].Rest == nil {
		return rest.ReadArgs{}, 0, false
	}
	m := ms[len(ms)-1]
	if m.Rest.Tool != rest.DefaultTool || m.End != len(text) {
		t.Fatalf("marker %q: want one naming %s at the end", text[m.Start:m.End], rest.DefaultTool)
	}
	a, err := rest.ParseReadArgs(json.RawMessage(m.Rest.Args))
	if err != nil {
		t.Fatalf("marker %q: %v", text[m.Start:m.End], err)
	}
	return a, m.Start, true
}

// callText calls tool with args and returns its text and whether it is an
// error result.
func callText(t *testing.T, cs *mcp.ClientSession, tool string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s %v: %d blocks, want 1", tool, args, len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// readPages follows the read of ref from offset 0 to the end, checking
// that every page is within limit and names the next offset; it returns
// the text the pages give and how many there were.
func readPages(t *testing.T, cs *mcp.ClientSession, ref string, limit int) (string, int) {
	t.Helper()
	var got strings.Builder
	off, pages := int64(0), 0
	for {
		page, isErr := callText(t, cs, rest.DefaultTool, map[string]any{"ref": ref, "offset": off})
		pages++
		if isErr || len(page) > limit {
			t.Fatalf("page at %d: isError %v, %d bytes (limit %d): %.200q", off, isErr, len(page), limit, page)
		}
		a, start, ok := readMarker(t, page)
		if !ok {
			got.WriteString(page)
			return got.String(), pages
		}
		got.WriteString(page[:start])
		if want := off + int64(start); a.Ref != ref || a.Offset != want {
			t.Fatalf("page at %d names %+v, want ref %s offset %d", off, a, ref, want)
		}
		off = a.Offset
	}
}

func TestRelayKeepsTheRest(t *testing.T) {
	big := bigText(1_500_000)
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	server.AddTool(textTool("big", big))
	p, err := mcpproxy.New(mcpproxy.Options{Rest: rest.NewMemory(rest.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, p, server)
	other := connect(t, p, server)
	ctx := context.Background()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	a, start, ok := readMarker(t, text)
	if !ok || len(text) > manifest.DefaultMaxBytes {
		t.Fatalf("cut result: %d bytes ending %q; want <= %d with a marker naming %s", len(text), text[max(0, len(text)-120):], manifest.DefaultMaxBytes, rest.DefaultTool)
	}
	if text[:start] != big[:start] || a.Offset != int64(start) {
		t.Errorf("the cut shows %d bytes and names offset %d; want the head of the text and its end", start, a.Offset)
	}
	var fig map[string]any
	raw, _ := json.Marshal(res.Meta["toolcap/truncation"])
	_ = json.Unmarshal(raw, &fig)
	want := map[string]any{"unit": "bytes", "limit": 16384.0, "original": float64(len(big)), "kept": float64(start),
		"dropped": float64(len(big) - start), "ref": a.Ref, "resume": float64(start)}
	if diff := cmp.Diff(want, fig); diff != "" {
		t.Errorf("_meta figures (-want +got):\n%s", diff)
	}

	got, pages := readPages(t, cs, a.Ref, manifest.DefaultMaxBytes)
	if got != big {
		t.Errorf("the pages give %d bytes, differing from the %d of the result", len(got), len(big))
	}
	if min := len(big)/manifest.DefaultMaxBytes + 1; pages < min {
		t.Errorf("%d pages, want at least %d", pages, min)
	}

	// Another session: the same error as a ref nobody made, isError.
	foreign, isErr := callText(t, other, rest.DefaultTool, map[string]any{"ref": a.Ref})
	unknownRef := rest.NewRef()
	unknown, unknownErr := callText(t, other, rest.DefaultTool, map[string]any{"ref": unknownRef})
	if !isErr || !unknownErr || strings.ReplaceAll(foreign, a.Ref, unknownRef) != unknown || !strings.Contains(foreign, rest.ErrUnknown.Error()) {
		t.Errorf("foreign ref: %q (isError %v); unknown ref: %q (isError %v); want the same error", foreign, isErr, unknown, unknownErr)
	}
}

// listServer answers tools/list on the raw session s with a first page of
// tools and a cursor, then a last page of last; it returns the frames the
// client got.
func listPages(t *testing.T, s *rawSession, first, last string) (string, string) {
	t.Helper()
	s.toServer(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	s.atServer()
	s.toClient(`{"jsonrpc":"2.0","id":1,"result":{"tools":[` + first + `],"nextCursor":"2"}}`)
	p1 := s.atClient()
	s.toServer(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"2"}}`)
	s.atServer()
	s.toClient(`{"jsonrpc":"2.0","id":2,"result":{"tools": [` + last + ` ] , "x":1}}`)
	return p1, s.atClient()
}

func TestRelayListsTheReadTool(t *testing.T) {
	const a = `{"name":"a","inputSchema":{"type":"object"},"description":"<a> & b"}`
	const b = `{"name":"b", "inputSchema":{"type":"object"}}`
	k, err := rest.NewKeeper(rest.NewMemory(rest.Config{}))
	if err != nil {
		t.Fatal(err)
	}
	def := k.Definition()
	// The read tool as an MCP tool: name, title, description, inputSchema,
	// annotations, with the description as written (no HTML escapes). The
	// annotations say it only reads (issue 41: Codex runs a tool under its
	// default approval only when it is marked read-only and closed-world).
	var enc bytes.Buffer
	e := json.NewEncoder(&enc)
	e.SetEscapeHTML(false)
	if err := e.Encode(struct {
		Name        string          `json:"name"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Annotations json.RawMessage `json:"annotations"`
	}{def.Name, def.Title, def.Description, def.InputSchema,
		json.RawMessage(`{"title":"Read the rest of a cut tool output","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`)}); err != nil {
		t.Fatal(err)
	}
	readTool := bytes.TrimSuffix(enc.Bytes(), []byte("\n"))
	for _, tc := range []struct {
		name      string
		rest      rest.Store
		manifest  *manifest.WorkerManifest
		last      string
		wantLast  string
		wantWarn  bool
		wantFirst string
	}{
		{name: "kept", rest: rest.NewMemory(rest.Config{}), last: b,
			wantLast: `{"jsonrpc":"2.0","id":2,"result":{"tools": [` + b + `,` + string(readTool) + `] , "x":1}}`},
		{name: "no store", last: b,
			wantLast: `{"jsonrpc":"2.0","id":2,"result":{"tools": [` + b + ` ] , "x":1}}`},
		{name: "keep_rest = false", rest: rest.NewMemory(rest.Config{}), last: b,
			manifest: &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{KeepRest: ptr(false)}},
			wantLast: `{"jsonrpc":"2.0","id":2,"result":{"tools": [` + b + ` ] , "x":1}}`},
		{name: "shadowed", rest: rest.NewMemory(rest.Config{}), last: b + `,{"name":"toolcap_read","inputSchema":{"type":"object"}}`,
			wantLast: `{"jsonrpc":"2.0","id":2,"result":{"tools": [` + b + `,` + string(readTool) + `] , "x":1}}`, wantWarn: true},
		{name: "empty last page", rest: rest.NewMemory(rest.Config{}), last: ``,
			wantLast: `{"jsonrpc":"2.0","id":2,"result":{"tools": [` + string(readTool) + `] , "x":1}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncBuffer
			logger := hclog.New(&hclog.LoggerOptions{Output: &logs, JSONFormat: true, Level: hclog.Warn})
			s := newRawSession(t, mcpproxy.Options{Rest: tc.rest, Policies: policytest.Of(t, tc.manifest), Logger: logger})
			p1, p2 := listPages(t, s, a, tc.last)
			if diff := cmp.Diff(`{"jsonrpc":"2.0","id":1,"result":{"tools":[`+a+`],"nextCursor":"2"}}`, p1); diff != "" {
				t.Errorf("first page (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLast, p2); diff != "" {
				t.Errorf("last page (-want +got):\n%s", diff)
			}
			if got := strings.Contains(logs.String(), "shadows it"); got != tc.wantWarn {
				t.Errorf("shadowing warning: %v, want %v; logs:\n%s", got, tc.wantWarn, logs.String())
			}
		})
	}
}

func TestRelayAnswersReadsItself(t *testing.T) {
	s := newRawSession(t, mcpproxy.Options{Rest: rest.NewMemory(rest.Config{})})
	// Answered by the proxy, never forwarded: the server's next message is
	// the ping that follows.
	s.toServer(`{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"toolcap_read","arguments":{"ref":"` + rest.NewRef() + `"}}}`)
	var got struct {
		ID     string `json:"id"`
		Result struct {
			Content []struct{ Type, Text string }
			IsError bool `json:"isError"`
		}
	}
	if err := json.Unmarshal([]byte(s.atClient()), &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != "r" || !got.Result.IsError || len(got.Result.Content) != 1 || !strings.Contains(got.Result.Content[0].Text, rest.ErrUnknown.Error()) {
		t.Errorf("read of an unknown ref: %+v", got)
	}
	// In a batch too: the read is answered, the rest forwarded.
	s.toServer(`[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"toolcap_read","arguments":{"offset":-1}}},{"jsonrpc":"2.0","id":8,"method":"ping"}]`)
	if got := s.atClient(); !strings.Contains(got, `"id":7`) || !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "offset -1") {
		t.Errorf("read in a batch: %s", got)
	}
	if diff := cmp.Diff(`[{"jsonrpc":"2.0","id":8,"method":"ping"}]`, s.atServer()); diff != "" {
		t.Errorf("the server got (-want +got):\n%s", diff)
	}
	s.toServer(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if diff := cmp.Diff(`{"jsonrpc":"2.0","id":9,"method":"ping"}`, s.atServer()); diff != "" {
		t.Errorf("the server got (-want +got):\n%s", diff)
	}
}

func TestRelayKeepRestOff(t *testing.T) {
	big := bigText(100_000)
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	server.AddTool(textTool("big", big))
	server.AddTool(textTool("other", big))
	for _, tc := range []struct {
		name string
		lim  *manifest.ToolOutputLimits
		kept map[string]bool
	}{
		{"off", &manifest.ToolOutputLimits{KeepRest: ptr(false)}, map[string]bool{"big": false, "other": false}},
		{"off for one tool", &manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"big": {KeepRest: ptr(false)}}},
			map[string]bool{"big": false, "other": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := mcpproxy.New(mcpproxy.Options{Rest: rest.NewMemory(rest.Config{}), Policies: policytest.Of(t, &manifest.WorkerManifest{ToolOutput: tc.lim})})
			if err != nil {
				t.Fatal(err)
			}
			cs := connect(t, p, server)
			got := map[string]bool{}
			for tool := range tc.kept {
				text, _ := callText(t, cs, tool, nil)
				_, _, got[tool] = readMarker(t, text)
				if !got[tool] && !markerRE.MatchString(text) {
					t.Errorf("%s: no plain marker at the end of %q", tool, text[len(text)-80:])
				}
			}
			if diff := cmp.Diff(tc.kept, got); diff != "" {
				t.Errorf("rest kept, by tool (-want +got):\n%s", diff)
			}
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			listed := false
			for _, tool := range tools.Tools {
				listed = listed || tool.Name == rest.DefaultTool
			}
			if want := tc.kept["other"]; listed != want {
				t.Errorf("read tool listed: %v, want %v", listed, want)
			}
		})
	}
}

// TestRelayStoreQuota: six results of 2 MB under a quota of 8 MiB; the
// store never holds more, the oldest ref is gone, the newest readable.
func TestRelayStoreQuota(t *testing.T) {
	const quota = 8 << 20
	store := rest.NewMemory(rest.Config{MaxBytes: quota})
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	texts := make([]string, 6)
	for i := range texts {
		texts[i] = strings.Repeat(fmt.Sprintf("result %d line\n", i), 2_000_000/15)
		server.AddTool(textTool(fmt.Sprint("t", i), texts[i]))
	}
	p, err := mcpproxy.New(mcpproxy.Options{Rest: store})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, p, server)
	var refs []string
	for i := range texts {
		text, _ := callText(t, cs, fmt.Sprint("t", i), nil)
		a, _, ok := readMarker(t, text)
		if !ok {
			t.Fatalf("t%d: no marker naming a read: %q", i, text[len(text)-100:])
		}
		refs = append(refs, a.Ref)
		if u := store.Usage(); u.Bytes+u.Writing > quota {
			t.Errorf("after t%d the store holds %d + %d bytes, over its quota of %d", i, u.Bytes, u.Writing, quota)
		}
	}
	oldest, isErr := callText(t, cs, rest.DefaultTool, map[string]any{"ref": refs[0]})
	if !isErr || !strings.Contains(oldest, rest.ErrUnknown.Error()) {
		t.Errorf("oldest ref: isError %v, %q; want the unknown ref's error", isErr, oldest)
	}
	newest, isErr := callText(t, cs, rest.DefaultTool, map[string]any{"ref": refs[5], "offset": 0})
	if a, start, ok := readMarker(t, newest); isErr || !ok || newest[:start] != texts[5][:start] || a.Offset != int64(start) {
		t.Errorf("newest ref: isError %v, %.100q", isErr, newest)
	}
}

// TestRelayHTTPRefsAreBound checks the scope of a ref over HTTP: a 2025
// session's refs are readable from that session alone; a stateless
// client's (2026-07-28, no session) from any later request of the same
// principal, its Authorization, and from no other's.
func TestRelayHTTPRefsAreBound(t *testing.T) {
	big := bigText(200_000)
	tests := []struct {
		name      string
		stateless int      // HTTPOptions.StatelessServers
		auth      []string // each client's Authorization: the reader, a peer of it, another
		peerReads bool     // whether the second client reads the first's ref
	}{
		{"2025 sessions", -1, []string{"", "", ""}, false},
		{"2026 principals", 0, []string{"Bearer a", "Bearer a", "Bearer b"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := mcpproxy.New(mcpproxy.Options{Rest: rest.NewMemory(rest.Config{})})
			if err != nil {
				t.Fatal(err)
			}
			dial := func(ctx context.Context) (mcpproxy.Conn, error) {
				server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
				server.AddTool(textTool("big", big))
				serverEnd, proxyUp := pipePair()
				if _, err := server.Connect(ctx, sdkEnd(serverEnd), nil); err != nil {
					return nil, err
				}
				return mcpproxy.StreamConn(proxyUp), nil
			}
			hs := httptest.NewServer(p.HTTPHandler(mcpproxy.HTTPOptions{Dial: dial, StatelessServers: tt.stateless}))
			defer hs.Close()
			ctx := context.Background()
			var sessions []*mcp.ClientSession
			for _, auth := range tt.auth {
				hc := &http.Client{Transport: authorizing{auth}}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hc}, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				sessions = append(sessions, cs)
			}
			text, _ := callText(t, sessions[0], "big", nil)
			a, _, ok := readMarker(t, text)
			if !ok {
				t.Fatalf("no marker naming a read: %q", text[len(text)-100:])
			}
			if got, _ := readPages(t, sessions[0], a.Ref, manifest.DefaultMaxBytes); got != big {
				t.Errorf("the pages give %d bytes, differing from the %d of the result", len(got), len(big))
			}
			peer, isErr := callText(t, sessions[1], rest.DefaultTool, map[string]any{"ref": a.Ref})
			if tt.peerReads {
				if isErr || !strings.HasPrefix(big, peer[:min(len(peer), 1000)]) {
					t.Errorf("a ref read by the same principal: isError %v, %.100q; want the text's first page", isErr, peer)
				}
			} else if !isErr || !strings.Contains(peer, rest.ErrUnknown.Error()) {
				t.Errorf("a ref of another HTTP session: isError %v, %q; want the unknown ref's error", isErr, peer)
			}
			foreign, isErr := callText(t, sessions[2], rest.DefaultTool, map[string]any{"ref": a.Ref})
			if !isErr || !strings.Contains(foreign, rest.ErrUnknown.Error()) {
				t.Errorf("a ref of another principal: isError %v, %q; want the unknown ref's error", isErr, foreign)
			}
		})
	}
}

// authorizing is a transport that sends its Authorization (none when
// empty) with every request.
type authorizing struct{ auth string }

func (a authorizing) RoundTrip(r *http.Request) (*http.Response, error) {
	if a.auth != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", a.auth)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// streamText writes a result of n bytes of text for id 5 to w in pieces,
// never holding it whole: byte i of the text is pattern[i%len(pattern)].
func streamText(w io.Writer, n int, pattern string) error {
	if _, err := io.WriteString(w, `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"`); err != nil {
		return err
	}
	chunk := []byte(strings.Repeat(pattern, 64<<10/len(pattern)))
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	_, err := io.WriteString(w, `"}]}}`+"\n")
	return err
}

// TestRelayStreamsTheRest: a 128 MB result is cut while it is read and
// written to the store as it is: the heap stays bounded, the store keeps
// max_entry_bytes of it, and the pages read it back.
func TestRelayStreamsTheRest(t *testing.T) {
	const (
		size     = 128 << 20
		entryMax = 8 << 20
		pattern  = "0123456789abcdefghijklmnopqrstuvwxyz " // 37 bytes, none to escape in JSON
	)
	store, err := rest.OpenDir(filepath.Join(t.TempDir(), "rest"), rest.Config{MaxEntryBytes: entryMax})
	if err != nil {
		t.Fatal(err)
	}
	s := newRawSession(t, mcpproxy.Options{Rest: store})
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
		}
	})
	s.toServer(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"huge"}}`)
	s.atServer()
	go func() { _ = streamText(s.server, size, pattern) }()
	line := s.atClient()
	close(stop)
	wg.Wait()
	grew := int64(peak.Load()) - int64(base.HeapAlloc)
	t.Logf("heap: %d MiB at the start, peak growth %d MiB", base.HeapAlloc>>20, grew>>20)
	if grew > 64<<20 {
		t.Errorf("the heap grew by %d MiB while a %d MiB result streamed; want at most 64", grew>>20, size>>20)
	}
	var got struct {
		Result struct {
			Content []struct{ Text string }
			Meta    map[string]map[string]any `json:"_meta"`
		}
	}
	if err := json.Unmarshal([]byte(line), &got); err != nil || len(got.Result.Content) != 1 {
		t.Fatalf("result %.200s: %v", line, err)
	}
	text := got.Result.Content[0].Text
	a, start, ok := readMarker(t, text)
	if !ok || len(text) > manifest.DefaultMaxBytes || a.Offset != int64(start) {
		t.Fatalf("cut result: %d bytes ending %q", len(text), text[max(0, len(text)-120):])
	}
	if fig := got.Result.Meta["toolcap/truncation"]; fig["ref"] != a.Ref || fig["original"] != float64(size) {
		t.Errorf("_meta figures %v: want ref %s and original %d", fig, a.Ref, size)
	}
	// A page from the middle of what the store kept, and past it.
	read := func(id int, offset int) (string, bool) {
		s.toServer(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"toolcap_read","arguments":{"ref":%q,"offset":%d}}}`, id, a.Ref, offset))
		var r struct {
			Result struct {
				Content []struct{ Text string }
				IsError bool `json:"isError"`
			}
		}
		if err := json.Unmarshal([]byte(s.atClient()), &r); err != nil || len(r.Result.Content) != 1 {
			t.Fatalf("read at %d: %v", offset, err)
		}
		return r.Result.Content[0].Text, r.Result.IsError
	}
	off := entryMax / 2
	page, isErr := read(6, off)
	_, pstart, ok := readMarker(t, page)
	full := strings.Repeat(pattern, (off+2*manifest.DefaultMaxBytes)/len(pattern)+2)
	if isErr || !ok || len(page) > manifest.DefaultMaxBytes || page[:pstart] != full[off:off+pstart] {
		t.Errorf("page at %d: isError %v, %d bytes: %.100q", off, isErr, len(page), page)
	}
	if page, isErr := read(7, entryMax+1); !isErr || !strings.Contains(page, "max_entry_bytes") {
		t.Errorf("page past what the store kept: isError %v, %q", isErr, page)
	}
	if u := store.Usage(); u.Bytes > entryMax+4096 || u.Entries != 1 {
		t.Errorf("store usage %+v: want one entry of at most %d bytes", u, entryMax)
	}
}

// ptr returns a pointer to v, for the manifest's optional fields.
func ptr[T any](v T) *T { return &v }
