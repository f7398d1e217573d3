package otel_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// serverEnv, set to a file's path, makes the test binary the MCP server
// of the end-to-end tests (see serveMCP) rather than run the tests.
const serverEnv = "OTELTEST_MCP_SERVER_LOG"

func TestMain(m *testing.M) {
	if log := os.Getenv(serverEnv); log != "" {
		os.Exit(serveMCP(os.Stdin, os.Stdout, log))
	}
	os.Exit(m.Run())
}

// secret is an AWS access key, for the relay's redaction to find.
const secret = "AKIAZ4TQ7MXK2BD5RJWP"

// bigText is the text of the server's tool big: 34,000 bytes and a
// secret, cut by any limit below that.
var bigText = "export AWS_ACCESS_KEY_ID=" + secret + "\n" + strings.Repeat("0123456789abcdef\n", 2000)

// serveMCP is a small MCP server over stdio (newline-delimited JSON-RPC):
// it answers initialize, tools/list and tools/call of its one tool, big,
// and writes each request's method and the traceparent of its
// params._meta ("-" when none) as a line of the file log, so that a test
// sees the trace context the proxy passed on.
func serveMCP(in io.Reader, out io.Writer, log string) int {
	f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	w := bufio.NewWriter(out)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name            string `json:"name"`
				ProtocolVersion string `json:"protocolVersion"`
				Meta            struct {
					TraceParent string `json:"traceparent"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification
		}
		tp := req.Params.Meta.TraceParent
		if tp == "" {
			tp = "-"
		}
		fmt.Fprintf(f, "%s %s %s\n", req.Method, req.Params.Name, tp)
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": req.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "otel-test", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "big", "inputSchema": map[string]any{"type": "object"}}}}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": bigText}}}
		default:
			result = nil
		}
		msg := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		if result == nil {
			msg["error"] = map[string]any{"code": -32601, "message": "no such method"}
		} else {
			msg["result"] = result
		}
		b, _ := json.Marshal(msg)
		w.Write(append(b, '\n'))
		w.Flush()
	}
	return 0
}

// mcpClient speaks streamable HTTP to the proxy, one request at a time.
type mcpClient struct {
	t       *testing.T
	url     string
	session string
	id      int
}

// newMCPClient returns a client of url, once something listens there.
func newMCPClient(t *testing.T, addr string) *mcpClient {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s: %v", addr, err)
		}
	}
	return &mcpClient{t: t, url: "http://" + addr + "/mcp"}
}

// response is a JSON-RPC response, as the client reads it.
type response struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call sends a request with params and header (the POST's extra
// headers), and returns its response.
func (c *mcpClient) call(method string, params any, header http.Header) response {
	c.t.Helper()
	c.id++
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	raw := c.post(body, header)
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		c.t.Fatalf("%s: the response %q: %v", method, raw, err)
	}
	if r.Error != nil {
		c.t.Fatalf("%s: error %d: %s", method, r.Error.Code, r.Error.Message)
	}
	return r
}

// notify sends a notification.
func (c *mcpClient) notify(method string) {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	c.post(body, nil)
}

// post POSTs body and returns the JSON-RPC message that answers it (read
// from an event stream when the proxy answers with one), nil for none.
func (c *mcpClient) post(body []byte, header http.Header) []byte {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	if resp.StatusCode == http.StatusAccepted {
		return nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("POST: %s: %s", resp.Status, b)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.Contains(data, `"id"`) {
			return []byte(strings.TrimSpace(data))
		}
	}
	c.t.Fatalf("the event stream ended without a response")
	return nil
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
