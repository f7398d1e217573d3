package mcpproxy_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolcap/toolcap/mcpproxy"
)

// BenchmarkHTTPCall times one small request through the HTTP handler, in
// process: a POST of a ping in a session, answered by a scripted server
// over a pipe. The allocations are the client's, the handler's and the
// relay's together; what the handler changes shows in their difference.
// "json" is answered as application/json (the response came first, in
// time), "stream" as a stream of events (JSONWait < 0).
func BenchmarkHTTPCall(b *testing.B) {
	for _, bc := range []struct {
		name string
		wait time.Duration
		want string // the Content-Type of the answers
	}{{"json", 0, "application/json"}, {"stream", -1, "text/event-stream"}} {
		b.Run(bc.name, func(b *testing.B) {
			p, err := mcpproxy.New(mcpproxy.Options{})
			if err != nil {
				b.Fatal(err)
			}
			up := &hsUpstream{}
			h := p.HTTPHandler(mcpproxy.HTTPOptions{Dial: up.dial, JSONWait: bc.wait})
			hs := httptest.NewServer(h)
			b.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = h.Close(ctx)
				hs.Close()
			})
			post := func(session, body string) *http.Response {
				req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				if session != "" {
					req.Header.Set("Mcp-Session-Id", session)
				}
				resp, err := hs.Client().Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || n == 0 {
					b.Fatalf("%.40s: %s, %d bytes", body, resp.Status, n)
				}
				return resp
			}
			resp := post("", hsInit)
			session := resp.Header.Get("Mcp-Session-Id")
			b.ReportAllocs()
			i := 1
			for b.Loop() {
				i++
				resp := post(session, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"ping"}`)
				if ct := resp.Header.Get("Content-Type"); ct != bc.want {
					b.Fatalf("answered as %s, want %s", ct, bc.want)
				}
			}
		})
	}
}
