package mcpproxy_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolcap/toolcap/mcpproxy"
)

// connCounter counts the connections an http.Server holds open.
type connCounter struct {
	mu     sync.Mutex
	open   int
	closed chan struct{} // signalled at each close
}

func (c *connCounter) state(_ net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s {
	case http.StateNew:
		c.open++
	case http.StateClosed, http.StateHijacked:
		c.open--
		select {
		case c.closed <- struct{}{}:
		default:
		}
	}
}

func (c *connCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

// waitConns waits until the server holds want connections or fewer, or
// until deadline.
func (c *connCounter) waitConns(want int, deadline time.Time) bool {
	for c.count() > want {
		select {
		case <-c.closed:
		case <-time.After(time.Until(deadline)):
			return c.count() <= want
		}
	}
	return true
}

// slowPost opens a connection to addr and sends a POST's headers, with
// the changes edit makes, announcing a body of 1000 bytes; it then sends
// drip bytes of it, one every interval (never the whole body), until the
// connection fails. It returns the connection.
func slowPost(t *testing.T, addr, session string, edit func(h http.Header), drip int, interval time.Duration) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Content-Length", "1000")
	if session != "" {
		h.Set("Mcp-Session-Id", session)
	}
	if edit != nil {
		edit(h)
	}
	var b strings.Builder
	b.WriteString("POST / HTTP/1.1\r\nHost: " + addr + "\r\n")
	_ = h.Write(&b)
	b.WriteString("\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	if drip > 0 {
		go func() {
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for range drip {
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
				<-tick.C
			}
		}()
	}
	return c
}

// answerThenClose reads the response on c and then waits for the server
// to close c, before deadline; it returns the response's status, whether
// it said Connection: close, and whether c was closed.
func answerThenClose(c net.Conn, deadline time.Time) (status int, closing, closed bool, err error) {
	_ = c.SetReadDeadline(deadline)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, false, false, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// Past the response, the server closes the connection: EOF, or a
	// reset when bytes the client sent were left unread.
	_, err = br.ReadByte()
	var ne net.Error
	closed = err != nil && !(errors.As(err, &ne) && ne.Timeout())
	return resp.StatusCode, resp.Close, closed, nil
}

// Issue 39, item 9: connections that send a POST's headers and then its
// body a byte at a time each get 408 within the body timeout and are
// closed, however many they are; a refusal sent before the body is read
// closes its connection too, rather than waiting for a body the client
// trickles.
func TestHTTPSlowBodiesAreClosed(t *testing.T) {
	const (
		bodyTimeout = 300 * time.Millisecond
		slow        = 20
		// The server closes its end 500 ms after the answer at the most
		// (net/http's wait for the client to read it), and the test runs
		// on 2 cores beside other tests.
		bound = bodyTimeout + 5*time.Second
	)
	p := hsProxy(t, nil)
	up := &hsUpstream{}
	h := p.HTTPHandler(mcpproxy.HTTPOptions{Dial: up.dial, BodyTimeout: bodyTimeout})
	conns := &connCounter{closed: make(chan struct{}, 1)}
	hs := httptest.NewUnstartedServer(h)
	hs.Config.ConnState = conns.state
	hs.Config.ReadHeaderTimeout = 10 * time.Second
	hs.Start()
	t.Cleanup(func() {
		_ = h.Close(t.Context())
		hs.Close()
	})
	addr := strings.TrimPrefix(hs.URL, "http://")
	session := hsInitialize(t, hs.URL, nil)
	// The client's own connections, kept alive, are not the test's.
	http.DefaultClient.CloseIdleConnections()
	if !conns.waitConns(0, time.Now().Add(bound)) {
		t.Fatalf("%d connections open before the test", conns.count())
	}

	t.Run("slow bodies", func(t *testing.T) {
		start := time.Now()
		cs := make([]net.Conn, slow)
		for i := range cs {
			cs[i] = slowPost(t, addr, session, nil, 200, 20*time.Millisecond)
		}
		type answer struct {
			Status  int
			Closing bool
			Closed  bool
		}
		var got []answer
		for _, c := range cs {
			status, closing, closed, err := answerThenClose(c, start.Add(bound))
			if err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			got = append(got, answer{status, closing, closed})
		}
		for i, a := range got {
			if a != (answer{http.StatusRequestTimeout, true, true}) {
				t.Errorf("connection %d: %+v, want 408, Connection: close, closed", i, a)
			}
		}
		if took := time.Since(start); took > bound {
			t.Errorf("%d slow bodies took %v to be answered and closed, over %v", slow, took, bound)
		}
		if !conns.waitConns(0, start.Add(bound)) {
			t.Errorf("the server holds %d connections after %v, want 0", conns.count(), bound)
		}
	})

	for _, tc := range []struct {
		name    string
		session string
		edit    func(http.Header)
		want    int
	}{
		{"unknown session", "no-such-session", nil, http.StatusNotFound},
		{"not JSON", session, func(h http.Header) { h.Set("Content-Type", "text/plain") }, http.StatusUnsupportedMediaType},
		{"over the bound", session, func(h http.Header) { h.Set("Content-Length", "999999999") }, http.StatusRequestEntityTooLarge},
		{"not a loopback host", session, func(h http.Header) { h.Set("Origin", "http://evil.example") }, http.StatusForbidden},
	} {
		t.Run("refused before the body: "+tc.name, func(t *testing.T) {
			start := time.Now()
			c := slowPost(t, addr, tc.session, tc.edit, 0, 0)
			status, closing, closed, err := answerThenClose(c, start.Add(bound))
			if err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			if status != tc.want || !closing || !closed {
				t.Errorf("status %d, Connection: close %v, closed %v; want %d, true, true", status, closing, closed, tc.want)
			}
			if !conns.waitConns(0, start.Add(bound)) {
				t.Errorf("the server holds %d connections after %v, want 0", conns.count(), bound)
			}
		})
	}
}
