package mcpproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Header names of MCP's streamable HTTP transport.
const (
	sessionHeader  = "Mcp-Session-Id"
	versionHeader  = "Mcp-Protocol-Version"
	lastEventIDHdr = "Last-Event-ID"
)

// DialHTTP returns a connection to the MCP server at the streamable HTTP
// endpoint url, sending header with every request (an Authorization header,
// say). Each message the proxy writes is POSTed as it is; what comes back,
// as JSON or as a stream of server-sent events, is read as it arrives, so
// that results are capped while they are read here too. After the client's
// notifications/initialized, a GET stream carries what the server sends on
// its own (list_changed notifications, requests); it is reopened with
// Last-Event-ID when it breaks. Close ends the session with a DELETE.
//
// Messages leave in the order they are written: WriteMessage returns once
// its POST is on its way, and the answer is read concurrently, so that a
// long tool call does not hold up what follows it. A notification or a
// response is on its way when the server has accepted it (202: the server
// has taken it, before the requests after it); a request when it has been
// written whole to its connection, as the server may send a request's
// headers only with its first event, which for a long tool call is its
// result; initialize when its result has been read, since the protocol
// version it chooses goes in the header of every later request.
//
// The connection does not dial anything until the first message: a server
// that cannot be reached makes the initialize request fail with a JSON-RPC
// error the client sees.
func DialHTTP(ctx context.Context, url string, header http.Header, logger hclog.Logger) (Conn, error) {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("mcpproxy: %q is not an http:// or https:// URL", url)
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	pr, pw := io.Pipe()
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &httpClientConn{
		url:    url,
		header: header.Clone(),
		client: &http.Client{},
		logger: logger,
		pr:     pr,
		pw:     pw,
		ctx:    cctx,
		cancel: cancel,
	}, nil
}

type httpClientConn struct {
	url    string
	header http.Header
	client *http.Client
	logger hclog.Logger

	pr  *io.PipeReader // what the relay reads: the server's messages
	pw  *io.PipeWriter
	wmu sync.Mutex // one message at a time into pw

	// send is held by WriteMessage until its POST is on its way: the one
	// sender, which keeps the order of messages.
	send sync.Mutex

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	sessionID  string
	version    string
	getStarted bool
	closed     bool
}

func (c *httpClientConn) Read(p []byte) (int, error) { return c.pr.Read(p) }

// WriteMessage POSTs msg and returns once the POST is on its way (see
// [DialHTTP]); what comes back is relayed by a goroutine of its own. A
// message the server cannot be sent is answered, when it is a request, with
// a JSON-RPC error read from the connection, so that the session goes on.
func (c *httpClientConn) WriteMessage(msg []byte) error {
	env, err := envelopeOfMessage(msg)
	if err != nil {
		// The relay writes only the messages it has read whole.
		c.logger.Warn("a message that is not JSON-RPC was not sent to the MCP server", "error", err)
		return nil
	}
	// A mutex held while the POST goes out, rather than a queue drained by
	// a goroutine: the relay's reader waits for its turn, so nothing queues
	// without bound and no goroutine outlives a message it has not sent.
	c.send.Lock()
	defer c.send.Unlock()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return io.ErrClosedPipe
	}
	c.wg.Add(1) // under mu, after the closed check: Close waits for it
	c.mu.Unlock()
	body := bytes.Clone(msg) // msg is the relay's until this returns
	onWay := make(chan struct{})
	var once sync.Once
	go func() {
		defer c.wg.Done()
		c.post(body, env, func() { once.Do(func() { close(onWay) }) })
	}()
	select {
	case <-onWay:
	case <-c.ctx.Done():
		return io.ErrClosedPipe
	}
	if env.isNotification() && env.method == "notifications/initialized" {
		// The server has the notification: the session is ready.
		c.startGET()
	}
	return nil
}

func (c *httpClientConn) newRequest(ctx context.Context, method string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url, r)
	if err != nil {
		return nil, err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	c.mu.Lock()
	if c.sessionID != "" {
		req.Header.Set(sessionHeader, c.sessionID)
	}
	if c.version != "" {
		req.Header.Set(versionHeader, c.version)
	}
	c.mu.Unlock()
	return req, nil
}

// post sends one message and relays what comes back. It calls onWay once
// the message is on its way (see [DialHTTP]), and in any case before it
// returns.
func (c *httpClientConn) post(msg []byte, env *message, onWay func()) {
	defer onWay()
	initialize := env.isRequest() && env.method == "initialize"
	ctx := c.ctx
	if !initialize && !env.isNotification() && !env.isResponse() {
		// A request, or a batch: on its way once written.
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteRequest: func(httptrace.WroteRequestInfo) { onWay() },
		})
	}
	req, err := c.newRequest(ctx, http.MethodPost, msg)
	if err != nil {
		c.fail(env, err.Error())
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.client.Do(req)
	if err != nil {
		if c.ctx.Err() == nil {
			c.fail(env, fmt.Sprintf("the request to %s failed: %v", c.url, err))
		}
		return
	}
	defer resp.Body.Close()
	if id := resp.Header.Get(sessionHeader); id != "" {
		c.mu.Lock()
		if c.sessionID == "" {
			c.sessionID = id
		}
		c.mu.Unlock()
	}
	if !initialize {
		// The initialize result is read first: the protocol version it
		// gives goes in the header of every later request.
		onWay()
	}
	if resp.StatusCode == http.StatusAccepted {
		if env.isRequest() {
			c.fail(env, fmt.Sprintf("%s answered the request with 202 Accepted and no response", c.url))
		}
		return
	}
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		c.fail(env, fmt.Sprintf("%s answered %s: %s", c.url, resp.Status, strings.TrimSpace(string(body))))
		return
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "text/event-stream":
		var result func()
		if initialize {
			// What follows initialize goes once its result is in, though
			// the stream may stay open.
			result = onWay
		}
		last, err := c.readEvents(resp.Body, result)
		onWay()
		if err != nil && c.ctx.Err() == nil && last != "" {
			// The stream broke before its end: resume it where it was.
			c.resume(last)
		}
	default:
		if initialize {
			body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			if err == nil {
				c.sniffVersion(body)
				if !c.deliver(bytes.NewReader(body)) {
					c.fail(env, fmt.Sprintf("%s answered initialize with an empty body", c.url))
				}
			}
			return
		}
		if !c.deliver(resp.Body) && env.isRequest() {
			c.fail(env, fmt.Sprintf("%s answered with an empty body", c.url))
		}
	}
}

// fail answers a request the server could not be asked, so that the
// client's request still gets its one answer.
func (c *httpClientConn) fail(env *message, why string) {
	c.logger.Warn("a message could not be sent to the MCP server", "error", why)
	if !env.isRequest() {
		return
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, _ = c.pw.Write(append(errorResponse(env.id, codeInternal, "toolcap: "+why), '\n'))
}

// sniffVersion records the protocol version the server chose in its
// initialize result, for the header of every later request, and reports
// whether body was that result.
func (c *httpClientConn) sniffVersion(body []byte) bool {
	var r struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(body, &r) != nil || r.Result.ProtocolVersion == "" {
		return false
	}
	c.mu.Lock()
	c.version = r.Result.ProtocolVersion
	c.mu.Unlock()
	return true
}

// deliver copies one message to the relay as one line: newlines inside it
// (pretty-printed JSON) become spaces. It reports whether there was one.
func (c *httpClientConn) deliver(r io.Reader) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	buf := make([]byte, 64<<10)
	wrote := false
	for {
		n, err := r.Read(buf)
		if n > 0 {
			chunk := bytes.ReplaceAll(buf[:n], []byte("\n"), []byte(" "))
			if _, werr := c.pw.Write(chunk); werr != nil {
				return wrote
			}
			wrote = true
		}
		if err != nil {
			break
		}
	}
	if wrote {
		_, _ = c.pw.Write([]byte("\n"))
	}
	return wrote
}

// readEvents relays the messages of a stream of server-sent events as they
// arrive, and returns the id of the last event. A non-nil result means the
// stream answers initialize: each message is held whole to look for the
// protocol version, and result is called once the initialize result has
// been relayed.
func (c *httpClientConn) readEvents(body io.Reader, result func()) (last string, err error) {
	initialize := result != nil
	br := bufio.NewReaderSize(body, 64<<10)
	var (
		event   string
		inData  bool // a message is being written to the relay
		locked  bool
		pending []byte // data of an initialize result, held to read the version
	)
	endEvent := func() {
		if inData {
			_, _ = c.pw.Write([]byte("\n"))
		}
		if locked {
			c.wmu.Unlock()
			locked = false
		}
		if pending != nil {
			found := c.sniffVersion(pending)
			c.wmu.Lock()
			_, _ = c.pw.Write(append(bytes.ReplaceAll(pending, []byte("\n"), []byte(" ")), '\n'))
			c.wmu.Unlock()
			pending = nil
			if found {
				result()
			}
		}
		inData, event = false, ""
	}
	defer endEvent()
	for {
		line, err := br.ReadSlice('\n')
		full := err == nil
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if len(line) == 0 {
				return last, err
			}
		}
		field, value, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch {
		case len(line) == 0 || (full && len(bytes.TrimRight(line, "\r\n")) == 0):
			endEvent()
			continue
		case string(field) == "event":
			event = string(value)
		case string(field) == "id":
			last = string(value)
		case string(field) == "data" && (event == "" || event == "message"):
			if initialize {
				pending = append(pending, value...)
			} else {
				if !locked {
					c.wmu.Lock()
					locked = true
				} else if inData {
					_, _ = c.pw.Write([]byte(" ")) // a second data line
				}
				inData = true
				if _, werr := c.pw.Write(value); werr != nil {
					return last, werr
				}
			}
			// The rest of a line longer than the buffer.
			for !full {
				line, err = br.ReadSlice('\n')
				full = err == nil
				if err != nil && !errors.Is(err, bufio.ErrBufferFull) && len(line) == 0 {
					return last, err
				}
				chunk := bytes.TrimRight(line, "\r\n")
				if initialize {
					pending = append(pending, chunk...)
				} else if _, werr := c.pw.Write(chunk); werr != nil {
					return last, werr
				}
			}
			continue
		}
		// The rest of a long line of any other field is not needed.
		for !full {
			_, err = br.ReadSlice('\n')
			full = err == nil
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return last, err
			}
		}
	}
}

// getStream opens a GET stream (resuming after last, when set) and relays
// its events until it ends. It returns the id of the last event, and
// open == false when the server offers no such stream.
func (c *httpClientConn) getStream(last string) (newLast string, open bool, err error) {
	req, err := c.newRequest(c.ctx, http.MethodGet, nil)
	if err != nil {
		return last, false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if last != "" {
		req.Header.Set(lastEventIDHdr, last)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return last, true, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 { // 405: the server offers no such stream
		return last, false, nil
	}
	l, err := c.readEvents(resp.Body, nil)
	if l != "" {
		last = l
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return last, true, err
}

// resume reopens a broken stream with a GET and Last-Event-ID.
func (c *httpClientConn) resume(last string) {
	for attempt := 0; attempt < 3 && c.ctx.Err() == nil; attempt++ {
		l, open, err := c.getStream(last)
		if !open || err == nil {
			return
		}
		last = l
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
}

// startGET opens the stream of what the server sends on its own, once, and
// reopens it when it ends, until the connection closes.
func (c *httpClientConn) startGET() {
	c.mu.Lock()
	if c.getStarted || c.closed {
		c.mu.Unlock()
		return
	}
	c.getStarted = true
	c.wg.Add(1) // under mu, after the closed check: Close waits for it
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		last := ""
		for failures := 0; failures < 5 && c.ctx.Err() == nil; {
			l, open, err := c.getStream(last)
			if !open {
				return
			}
			last = l
			if err != nil {
				failures++
				time.Sleep(time.Duration(failures) * 200 * time.Millisecond)
				continue
			}
			failures = 0
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

// Close ends the session (a DELETE, when the server gave one) and stops the
// streams.
func (c *httpClientConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	id := c.sessionID
	c.mu.Unlock()
	if id != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if req, err := c.newRequest(ctx, http.MethodDelete, nil); err == nil {
			if resp, err := c.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	c.cancel()
	_ = c.pw.Close()
	c.wg.Wait()
	return nil
}
