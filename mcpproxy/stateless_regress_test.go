// Regression tests of the stateless lanes, each from a bug a review of
// the first version found (a notification of a gone listen reaching
// another client, the rest of a chain cut kept under no client's scope,
// upstream listens left open, --call-timeout ending listens, a listen's
// end naming the lane's id, a stdio client's cancellation lost).

package mcpproxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

const rvMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// rvDial returns a Dial whose servers call serve for each line they read,
// with a send func.
func rvDial(serve func(line string, send func(string))) func(context.Context) (mcpproxy.Conn, error) {
	return func(context.Context) (mcpproxy.Conn, error) {
		serverEnd, proxyUp := pipePair()
		var mu sync.Mutex
		send := func(s string) {
			mu.Lock()
			defer mu.Unlock()
			_, _ = io.WriteString(serverEnd, s+"\n")
		}
		go func() {
			sr := bufio.NewReaderSize(serverEnd.r, 1<<20)
			for {
				line, err := sr.ReadString('\n')
				if err != nil {
					return
				}
				serve(strings.TrimSpace(line), send)
			}
		}()
		return mcpproxy.StreamConn(proxyUp), nil
	}
}

func rvID(line string) string {
	var m struct{ ID json.RawMessage }
	_ = json.Unmarshal([]byte(line), &m)
	return string(m.ID)
}

func rvPost(t *testing.T, url, body string, hdr map[string]string, timeout time.Duration) (int, string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b), err
}

// TestStatelessToolResultShapes: the lane puts the client's id back in a
// tools/call result whatever its shape (whitespace around the id, the id
// after the result, a result cut while read), for ids with escapes.
func TestStatelessToolResultShapes(t *testing.T) {
	big := strings.Repeat("x", 300000)
	cases := map[string]func(id string) string{
		"lead ws": func(id string) string {
			return `	 {"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"hi"}]}}`
		},
		"id after": func(id string) string {
			return ` {"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"hi"}]},"id":` + id + `}`
		},
		"big cut": func(id string) string {
			return ` {"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + big + `"}]}}`
		},
		"big cut after": func(id string) string {
			return ` {"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"` + big + `"}]},"id" :  ` + id + ` }`
		},
		"ws id": func(id string) string {
			return `{"jsonrpc":"2.0","id" :  ` + id + ` ,"result":{"content":[{"type":"text","text":"hi"}]}}`
		},
	}
	for name, make := range cases {
		t.Run(name, func(t *testing.T) {
			dial := rvDial(func(line string, send func(string)) {
				if id := rvID(line); id != "" && strings.Contains(line, `"method"`) {
					send(make(id))
				}
			})
			p := hsProxy(t, nil)
			_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: dial, StatelessServers: 1})
			for _, cid := range []string{`"a\"b"`, `"\u00e9"`, `7`} {
				body := `{"jsonrpc":"2.0","id":` + cid + `,"method":"tools/call","params":{"name":"t","arguments":{},` + rvMeta + `}}`
				st, ct, got, err := rvPost(t, hs.URL, body, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "t"}, 5*time.Second)
				var m struct {
					ID json.RawMessage
				}
				jerr := json.Unmarshal([]byte(got), &m)
				if err != nil || jerr != nil || string(m.ID) != cid {
					t.Errorf("id %s: status=%d ct=%s err=%v jerr=%v body=%.300q", cid, st, ct, err, jerr, got)
				}
			}
		})
	}
}

// TestStatelessBigWhole: a result kept whole and larger than the read buffer
// (held in chunks) gets the client's id back, the id after the text.
func TestStatelessBigWhole(t *testing.T) {
	for _, n := range []int{70000, 300000, 1 << 20, 3 << 20} {
		big := strings.Repeat("y", n)
		dial := rvDial(func(line string, send func(string)) {
			if id := rvID(line); id != "" && strings.Contains(line, `"method"`) {
				send(` {"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"` + big + `"}]}, "id" : ` + id + ` }`)
			}
		})
		p, err := mcpproxy.New(mcpproxy.Options{Policies: policytest.Of(t, limitFor(64<<20))})
		if err != nil {
			t.Fatal(err)
		}
		_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: dial, StatelessServers: 1})
		for _, cid := range []string{`"a\"b"`, `7`, `"` + strings.Repeat("q", 5000) + `"`} {
			body := `{"jsonrpc":"2.0","id":` + cid + `,"method":"tools/call","params":{"name":"t","arguments":{},` + rvMeta + `}}`
			st, ct, got, err := rvPost(t, hs.URL, body, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "t"}, 5*time.Second)
			var m struct {
				ID     json.RawMessage
				Result struct{ Content []struct{ Text string } }
			}
			jerr := json.Unmarshal([]byte(got), &m)
			if err != nil || jerr != nil || string(m.ID) != cid || len(m.Result.Content) != 1 || len(m.Result.Content[0].Text) != n {
				t.Errorf("n=%d id %.20s: status=%d ct=%s err=%v jerr=%v body=%.300q", n, cid, st, ct, err, jerr, got)
			}
		}
	}
}

func rvSDKDial(newServer func() *mcp.Server) func(ctx context.Context) (mcpproxy.Conn, error) {
	return func(ctx context.Context) (mcpproxy.Conn, error) {
		serverEnd, proxyUp := pipePair()
		if _, err := newServer().Connect(ctx, sdkEnd(serverEnd), nil); err != nil {
			return nil, err
		}
		return mcpproxy.StreamConn(proxyUp), nil
	}
}

// A listen that the server grants nothing ends at once with a result whose
// _meta names the subscription by the listen's id: the lane's id reaches
// the client.
func TestStatelessListenResultSubscriptionID(t *testing.T) {
	dial := rvSDKDial(func() *mcp.Server {
		return mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	})
	_, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: dial, StatelessServers: 1})
	body := `{"jsonrpc":"2.0","id":"sub-2","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + rvMeta + `}}`
	st, ct, got, err := rvPost(t, hs.URL, body, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}, 5*time.Second)
	t.Logf("status=%d ct=%s err=%v body:\n%s", st, ct, err, got)
	if strings.Count(got, `"io.modelcontextprotocol/subscriptionId":`) != strings.Count(got, `"io.modelcontextprotocol/subscriptionId":"sub-2"`) {
		t.Errorf("a subscriptionId other than the client's \"sub-2\" reached it")
	}
}

// A result over its limit whose text the reader held whole is cut by the
// chain (capping.go), whose kept rest is bound to the lane's own scope,
// not the caller's principal: the caller cannot read it.
func TestStatelessChainCutRestScope(t *testing.T) {
	for _, n := range []int{20_000, 200_000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			big := bigText(n)
			m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{
				PerTool: map[string]manifest.ToolEntry{"big": {MaxBytes: 1 << 20, MaxTokens: 1000}},
			}}
			p, err := mcpproxy.New(mcpproxy.Options{Policies: policytest.Of(t, m), Rest: rest.NewMemory(rest.Config{})})
			if err != nil {
				t.Fatal(err)
			}
			_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: rvSDKDial(func() *mcp.Server {
				server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
				server.AddTool(textTool("big", big))
				return server
			})})
			hdr := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "big", "Authorization": "Bearer a"}
			_, _, got, err := rvPost(t, hs.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{},`+rvMeta+`}}`, hdr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Result struct{ Content []struct{ Text string } }
			}
			if err := json.Unmarshal([]byte(got), &r); err != nil || len(r.Result.Content) == 0 {
				t.Fatalf("%v %.300s", err, got)
			}
			text := r.Result.Content[len(r.Result.Content)-1].Text
			a, _, ok := readMarker(t, text)
			if !ok {
				t.Fatalf("no read in marker: %.300q", text[max(0, len(text)-300):])
			}
			hdr["Mcp-Name"] = rest.DefaultTool
			args, _ := json.Marshal(map[string]any{"ref": a.Ref, "offset": a.Offset})
			_, _, got, err = rvPost(t, hs.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+rest.DefaultTool+`","arguments":`+string(args)+`,`+rvMeta+`}}`, hdr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(got, `"isError":true`) {
				t.Errorf("n=%d: the same principal's read of its own ref failed: %.400s", n, got)
			}
		})
	}
}

// --call-timeout ends every subscriptions/listen after the timeout: the
// listen is a request the server answers only when it ends.
func TestStatelessCallTimeoutSparesListen(t *testing.T) {
	p, err := mcpproxy.New(mcpproxy.Options{CallTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: rvSDKDial(func() *mcp.Server {
		server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
		server.AddTool(textTool("small", "hi"))
		return server
	})})
	body := `{"jsonrpc":"2.0","id":"sub-1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + rvMeta + `}}`
	start := time.Now()
	st, ct, got, err := rvPost(t, hs.URL, body, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}, 2*time.Second)
	t.Logf("after %v: status=%d ct=%s err=%v body:\n%s", time.Since(start), st, ct, err, got)
	if err == nil {
		t.Errorf("the listen ended after %v; want it open until its client leaves", time.Since(start))
	}
}

// TestStatelessListenLeakHTTP (probabilistic: it fails in about half the runs):
// a listen whose client leaves while the lane is about to forward it: the
// lane forgets the call before the HTTP connection asks for its context,
// so the upstream listen is never closed.
func TestStatelessListenLeakHTTP(t *testing.T) {
	var open atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage
			Method string
		}
		_ = json.Unmarshal(b, &m)
		if m.Method != "subscriptions/listen" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		open.Add(1)
		defer open.Add(-1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		_, _ = io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`+string(m.ID)+`},"notifications":{}}}`+"\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(up.Close) // after the handler's Close, which ends its lanes
	dial := func(ctx context.Context) (mcpproxy.Conn, error) {
		return mcpproxy.DialHTTP(ctx, up.URL, nil, nil)
	}
	_, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: dial, UpstreamURL: up.URL, StatelessServers: 1})
	body := `{"jsonrpc":"2.0","id":"s","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + rvMeta + `}}`
	var wg sync.WaitGroup
	for i := 0; i < 1000; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, _, _ = rvPost(t, hs.URL, body, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}, time.Duration(i%5)*time.Millisecond)
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(3 * time.Second)
	for open.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := open.Load(); n > 0 {
		t.Errorf("%d upstream listens still open 3s after every client left", n)
	}
}

// A notification naming the subscription of a listen whose client has
// left reaches another client's call, the one in flight on the lane.
func TestStatelessGoneListenNotification(t *testing.T) {
	var mu sync.Mutex
	var listenID string
	cancelled := make(chan struct{}, 1)
	dial := rvDial(func(line string, send func(string)) {
		var m struct {
			ID     json.RawMessage
			Method string
		}
		_ = json.Unmarshal([]byte(line), &m)
		switch m.Method {
		case "subscriptions/listen":
			mu.Lock()
			listenID = string(m.ID)
			mu.Unlock()
			send(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + string(m.ID) + `},"notifications":{"resourceSubscriptions":["file:///secret/A"]}}}`)
		case "notifications/cancelled":
			cancelled <- struct{}{}
		case "tools/call":
			mu.Lock()
			sub := listenID
			mu.Unlock()
			// A's subscription fires while B's call is served.
			send(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + sub + `},"uri":"file:///secret/A"}}`)
			send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":"B's"}]}}`)
		}
	})
	_, hs := hsServe(t, hsProxy(t, nil), mcpproxy.HTTPOptions{Dial: dial, StatelessServers: 1})

	// A listens, reads its acknowledgement, and leaves.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":"a","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["file:///secret/A"]},`+rvMeta+`}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("no cancellation reached the server")
	}

	// B calls a tool, with a progress-free request, alone on the lane.
	_, ct, got, err := rvPost(t, hs.URL, `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"t","arguments":{},`+rvMeta+`}}`,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "t"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("B got (%s):\n%s", ct, got)
	if strings.Contains(got, "secret/A") {
		t.Errorf("client B got client A's subscription notification")
	}
}

// Over stdio with --url, a 2026 client's notifications/cancelled of its
// listen does not end the upstream request (a stateless server cancels by
// the stream's closing, and the proxy closes nothing).
func TestStatelessStdioFrontCancelListen(t *testing.T) {
	var open atomic.Int32
	var got []string
	var mu sync.Mutex
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Header.Get("Mcp-Method")+" "+string(b))
		mu.Unlock()
		var m struct {
			ID     json.RawMessage
			Method string
		}
		_ = json.Unmarshal(b, &m)
		if m.Method != "subscriptions/listen" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		open.Add(1)
		defer open.Add(-1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		_, _ = io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`+string(m.ID)+`},"notifications":{}}}`+"\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	p := hsProxy(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	server, err := mcpproxy.DialHTTP(ctx, up.URL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	clientEnd, proxyDown := pipePair()
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, mcpproxy.StreamConn(proxyDown), server) }()
	t.Cleanup(func() { cancel(); clientEnd.Close(); <-done; up.Close() })
	_, _ = io.WriteString(clientEnd, `{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+rvMeta+`}}`+"\n")
	br := bufio.NewReader(clientEnd.r)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("client read: %s", strings.TrimSpace(line))
	_, _ = io.WriteString(clientEnd, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`+"\n")
	deadline := time.Now().Add(2 * time.Second)
	for open.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	t.Logf("upstream got: %q", got)
	mu.Unlock()
	if open.Load() > 0 {
		t.Errorf("the upstream listen is still open 2s after its client cancelled it")
	}
}
