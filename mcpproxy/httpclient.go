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
// A stream of events that ends before the response to its request (the
// server may close it at any time, SEP-1699) is resumed with a GET and
// Last-Event-ID after the delay its retry field set, or a short backoff
// when it set none; a request whose stream cannot be resumed is answered
// with a JSON-RPC error, so that it does not wait forever.
//
// A request the server refuses with 401 or 403 is answered with a
// JSON-RPC error naming the status and WWW-Authenticate; with
// [ForwardAuth], the refusal is also recorded, whole, for the server the
// proxy serves HTTP with (see [upstreamAuth]).
//
// The connection does not dial anything until the first message: a server
// that cannot be reached makes the initialize request fail with a JSON-RPC
// error the client sees.
func DialHTTP(ctx context.Context, url string, header http.Header, logger hclog.Logger, opts ...HTTPClientOption) (Conn, error) {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("mcpproxy: %q is not an http:// or https:// URL", url)
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	var cfg httpClientConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	pr, pw := io.Pipe()
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &httpClientConn{
		url:    url,
		header: header.Clone(),
		client: &http.Client{},
		logger: logger,
		pr:     pr,
		pw:     pw,
		ctx:    cctx,
		cancel: cancel,
	}
	if cfg.forwardAuth {
		c.auth = upstreamAuthFrom(ctx)
	}
	c.link = statelessLinkFrom(ctx)
	if c.link != nil {
		c.client.Transport = c.link.transport()
	}
	return c, nil
}

// An HTTPClientOption configures [DialHTTP].
type HTTPClientOption func(*httpClientConfig)

type httpClientConfig struct {
	forwardAuth bool
}

// ForwardAuth makes the connection authorize as the proxy's client does
// rather than as the proxy: when the dial's context carries an
// [upstreamAuth] ([withUpstreamAuth]), the Authorization it was last given
// replaces the dial's own with every request, and the server's refusals
// (401, 403) are recorded in it for the proxy's server to relay. Without
// one (a client over stdio), it changes nothing.
func ForwardAuth() HTTPClientOption {
	return func(c *httpClientConfig) { c.forwardAuth = true }
}

// Bounds of reconnecting a stream of events.
const (
	// maxRetryDelay caps the delay a server's retry field asks for, so
	// that a server cannot park a request for hours.
	maxRetryDelay = 30 * time.Second
	// resumeFailures is how many resumptions in a row may bring no new
	// event before a request's stream is given up.
	resumeFailures = 5
	// getOpenWait bounds how long the messages after
	// notifications/initialized wait for the GET stream to open.
	getOpenWait = 5 * time.Second
)

type httpClientConn struct {
	url    string
	header http.Header
	client *http.Client
	logger hclog.Logger
	auth   *upstreamAuth // nil unless dialled with ForwardAuth and one
	// link, for a connection that carries the requests of MCP's
	// stateless revision (a lane's), gives each request's own headers and
	// takes the server's refusals; nil for a session's.
	link statelessLink
	// bindings gives the x-mcp-header arguments of a tool, for the headers
	// of a stateless request from a client over stdio (see
	// mirrorHeaders); set by the proxy that serves over it.
	bindings func(tool string) []paramBinding

	pr  *io.PipeReader // what the relay reads: the server's messages
	pw  *io.PipeWriter
	wmu sync.Mutex // one message at a time into pw

	// send is held by WriteMessage until its POST is on its way: the one
	// sender, which keeps the order of messages.
	send sync.Mutex

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu sync.Mutex
	// stateless ends the POST of each stateless request of a client over
	// stdio in flight, by its id (idKey): its cancellation.
	stateless  map[string]context.CancelFunc
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
		// The server has the notification: the session is ready. What
		// follows waits for the GET stream to be open (or refused): a
		// server sends some messages only on that stream, and drops them
		// when it is not open yet, as the TypeScript SDK's does with a
		// request made while serving a tools/call.
		opened := c.startGET()
		t := time.NewTimer(getOpenWait)
		defer t.Stop()
		select {
		case <-opened:
		case <-t.C:
			c.logger.Debug("the MCP server's GET stream did not open in time; going on without it", "url", c.url, "waited", getOpenWait.String())
		case <-c.ctx.Done():
			return io.ErrClosedPipe
		}
	}
	return nil
}

func (c *httpClientConn) newRequest(ctx context.Context, method string, body []byte) (*http.Request, error) {
	return c.newRequestFor(ctx, method, body, nil, nil)
}

// newRequestFor is newRequest for a message whose id is id (nil for none):
// on a stateless connection, the headers of the client's request it came
// in go with it, and no session's; so do mirrored, when not nil (see
// mirrorHeaders).
func (c *httpClientConn) newRequestFor(ctx context.Context, method string, body, id []byte, mirrored http.Header) (*http.Request, error) {
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
	if c.auth != nil {
		if v := c.auth.currentAuthorization(); v != "" {
			req.Header.Set("Authorization", v)
		}
	}
	if c.link != nil {
		// Each request says its own protocol version, method, name and
		// parameters (SEP-2243): nothing of a session overrides them.
		for k, v := range c.link.requestHeader(id) {
			req.Header[k] = v
		}
		return req, nil
	}
	if mirrored != nil {
		// A request of the stateless revision from a client over stdio:
		// its headers are made from its body, and no session's go with it.
		for k, v := range mirrored {
			req.Header[k] = v
		}
		return req, nil
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
	if c.link == nil && env.isNotification() && env.method == "notifications/cancelled" && c.cancelMirrored(msg) {
		// A stateless request of a client over stdio: cancelled by
		// closing its stream, as the revision says (SEP-2575).
		return
	}
	if c.link != nil {
		if env.isNotification() && env.method == "notifications/cancelled" {
			// A stateless request is cancelled by closing its stream
			// (its context, ended by the lane), not by a message that
			// no server could tie to it.
			return
		}
		if env.isRequest() {
			var release context.CancelFunc
			ctx, release = c.link.requestContext(ctx, env.id)
			defer release()
		}
	}
	if !initialize && !env.isNotification() && !env.isResponse() {
		// A request, or a batch: on its way once written.
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteRequest: func(httptrace.WroteRequestInfo) { onWay() },
		})
	}
	var mirrored http.Header
	if c.link == nil && env.isRequest() {
		mirrored = mirrorHeaders(msg, env, c.bindings)
		if mirrored != nil {
			var stop context.CancelFunc
			ctx, stop = context.WithCancel(ctx)
			key := idKey(env.id)
			c.mu.Lock()
			if c.stateless == nil {
				c.stateless = map[string]context.CancelFunc{}
			}
			c.stateless[key] = stop
			c.mu.Unlock()
			defer func() {
				c.mu.Lock()
				delete(c.stateless, key)
				c.mu.Unlock()
				stop()
			}()
		}
	}
	req, err := c.newRequestFor(ctx, http.MethodPost, msg, env.id, mirrored)
	if err != nil {
		c.fail(env, err.Error())
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	setTraceHeaders(req.Header, msg)
	resp, err := c.client.Do(req)
	if err != nil {
		// A request cancelled (its stateless client left, or cancelled
		// it) is owed no answer.
		if c.ctx.Err() == nil && req.Context().Err() == nil {
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
	if (c.link != nil || mirrored != nil) && resp.StatusCode/100 != 2 {
		c.refusedStateless(env, resp)
		return
	}
	if resp.StatusCode == http.StatusAccepted {
		if env.isRequest() {
			c.fail(env, fmt.Sprintf("%s answered the request with 202 Accepted and no response", c.url))
		}
		return
	}
	if refusable(resp.StatusCode) {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxRefusalBody))
		refusal := &upstreamHTTPError{URL: c.url, Status: resp.StatusCode, Header: resp.Header.Clone(), Body: body}
		if c.auth != nil && env.isRequest() {
			// Recorded before the request is answered: the server finds
			// it when the answer reaches the request's stream.
			c.auth.refuse(string(env.id), refusal)
		}
		c.fail(env, refusal.Error())
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
		want := 0 // the responses the stream owes
		if env.isRequest() || env.batch {
			want = 1
		}
		var cur eventCursor
		err := c.readEvents(resp.Body, &cur, result, 0)
		onWay()
		if c.ctx.Err() != nil || cur.responses >= want {
			return
		}
		// The stream ended, or broke, before its response: resume it where
		// it was, as the server asked.
		// The stateless revision has no resumption (SEP-2575): its
		// request is answered with an error, as a client re-sends it.
		if cur.seenID && c.link == nil && c.resume(&cur, want) {
			return
		}
		why := "its stream of events ended before the response"
		if err != nil && !errors.Is(err, io.EOF) {
			why = fmt.Sprintf("its stream of events broke before the response: %v", err)
		}
		if !cur.seenID {
			why += ", with no event id to resume it from"
		}
		c.fail(env, fmt.Sprintf("%s: %s", c.url, why))
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
		if !env.isRequest() && !env.batch {
			// A notification or a response is owed no answer (the
			// transport says 202 and no body), yet some servers answer
			// 200 with JSON: {"jsonrpc":"2.0","result":{}}, a response
			// with no id, say, as the conformance suite's does. Relayed,
			// it answers nothing and breaks a client that checks what it
			// reads (the go-sdk's fails its stream): it is dropped, as
			// the go-sdk's own client drops it.
			n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			c.logger.Debug("dropped the body of the answer to a message that is owed none", "method", env.method, "status", resp.StatusCode, "bytes", n)
			return
		}
		if !c.deliver(resp.Body) && env.isRequest() {
			c.fail(env, fmt.Sprintf("%s answered with an empty body", c.url))
		}
	}
}

// cancelMirrored ends the POST of the stateless request a cancellation
// names, and reports whether it named one.
func (c *httpClientConn) cancelMirrored(msg []byte) bool {
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &n) != nil || len(n.Params.RequestID) == 0 {
		return false
	}
	c.mu.Lock()
	stop := c.stateless[idKey(n.Params.RequestID)]
	c.mu.Unlock()
	if stop == nil {
		return false
	}
	stop()
	return true
}

// maxStatelessRefusal bounds the body of a stateless request's refusal the
// proxy reads: a JSON-RPC error with its data, or an OAuth error.
const maxStatelessRefusal = 64 << 10

// refusedStateless relays an HTTP server's refusal of a stateless request
// (any status but 2xx): recorded whole for the client's POST to answer
// with the same status and headers (see statelessLink), and answered in
// the relay with the server's own JSON-RPC error when its body is one, so
// that its code reaches the client as it was (-32020, -32022, -32602...);
// with a JSON-RPC error naming the status otherwise.
func (c *httpClientConn) refusedStateless(env *message, resp *http.Response) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxStatelessRefusal))
	refusal := &upstreamHTTPError{URL: c.url, Status: resp.StatusCode, Header: resp.Header.Clone(), Body: body}
	if !env.isRequest() {
		c.logger.Debug("the MCP server refused a stateless notification", "method", env.method, "status", resp.StatusCode)
		return
	}
	// Decided before the refusal is handed over: its readers take it as
	// it is.
	got, err := envelopeOfMessage(bytes.TrimSpace(body))
	refusal.JSONRPC = err == nil && got.isResponse() && got.hasError && idKey(got.id) == idKey(env.id)
	if c.link != nil {
		c.link.refused(env.id, refusal)
	}
	if refusal.JSONRPC {
		c.deliver(bytes.NewReader(bytes.TrimSpace(body)))
		return
	}
	c.fail(env, refusal.Error())
}

// fail answers a request the server could not be asked, so that the
// client's request still gets its one answer.
func (c *httpClientConn) fail(env *message, why string) {
	c.logger.Warn("a message could not be sent to the MCP server", "method", env.method, "id", string(env.id), "error", why)
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

// eventCursor is where a stream of events is, for resuming it: the last
// event id seen and the reconnection delay the server set, which hold
// across the stream's reconnections, and the responses it has carried.
type eventCursor struct {
	last      string
	seenID    bool          // an id field was seen: the stream can be resumed
	retry     time.Duration // the server's retry field; zero when it set none
	responses int
}

// readEvents relays the messages of a stream of server-sent events as they
// arrive, noting in cur the ids, the retry field and the responses. A
// non-nil result means the stream answers initialize: each message is held
// whole to look for the protocol version, and result is called once the
// initialize result has been relayed. With stopAfter > 0, it returns once
// the stream has carried that many responses, though the stream may go on.
// An event with no data (a priming event, which carries only an id and a
// retry field) relays nothing.
func (c *httpClientConn) readEvents(body io.Reader, cur *eventCursor, result func(), stopAfter int) error {
	initialize := result != nil
	br := bufio.NewReaderSize(body, 64<<10)
	var (
		event    string
		inData   bool // a message is being written to the relay
		locked   bool
		response bool   // the message being written is a response
		pending  []byte // data of an initialize result, held to read the version
		held     bool   // pending holds a data line, perhaps empty
	)
	endEvent := func() {
		if inData {
			_, _ = c.pw.Write([]byte("\n"))
			if response {
				cur.responses++
			}
		}
		if locked {
			c.wmu.Unlock()
			locked = false
		}
		if held && len(bytes.TrimSpace(pending)) > 0 {
			found := c.sniffVersion(pending)
			if env, err := envelopeOfMessage(pending); err != nil || env.isResponse() {
				cur.responses++
			}
			c.wmu.Lock()
			_, _ = c.pw.Write(append(bytes.ReplaceAll(pending, []byte("\n"), []byte(" ")), '\n'))
			c.wmu.Unlock()
			if found {
				result()
			}
		}
		pending, held = nil, false
		inData, response, event = false, false, ""
	}
	defer endEvent()
	for {
		line, err := br.ReadSlice('\n')
		full := err == nil
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if len(line) == 0 {
				return err
			}
		}
		field, value, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch {
		case len(line) == 0 || (full && len(bytes.TrimRight(line, "\r\n")) == 0):
			endEvent()
			if stopAfter > 0 && cur.responses >= stopAfter {
				return nil
			}
			continue
		case string(field) == "event":
			event = string(value)
		case string(field) == "id":
			if bytes.IndexByte(value, 0) < 0 { // as EventSource does
				cur.last, cur.seenID = string(value), true
			}
		case string(field) == "retry":
			if d, ok := retryDelay(value); ok {
				cur.retry = d
			}
		case string(field) == "data" && (event == "" || event == "message"):
			if initialize {
				if held {
					pending = append(pending, ' ') // a second data line
				}
				pending, held = append(pending, value...), true
			} else {
				if !inData && full && len(bytes.TrimSpace(value)) == 0 {
					// Nothing yet: an event with empty data (a priming
					// event) is not a message.
					continue
				}
				if !inData {
					c.wmu.Lock()
					locked, inData = true, true
					response = isResponseHead(value, full)
				} else {
					_, _ = c.pw.Write([]byte(" ")) // a second data line
				}
				if _, werr := c.pw.Write(value); werr != nil {
					return werr
				}
			}
			// The rest of a line longer than the buffer.
			for !full {
				line, err = br.ReadSlice('\n')
				full = err == nil
				if err != nil && !errors.Is(err, bufio.ErrBufferFull) && len(line) == 0 {
					return err
				}
				chunk := bytes.TrimRight(line, "\r\n")
				if initialize {
					pending = append(pending, chunk...)
				} else if _, werr := c.pw.Write(chunk); werr != nil {
					return werr
				}
			}
			continue
		}
		// The rest of a long line of any other field is not needed.
		for !full {
			_, err = br.ReadSlice('\n')
			full = err == nil
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return err
			}
		}
	}
}

// retryDelay reads an SSE retry field: a delay in milliseconds, all ASCII
// digits (anything else is ignored, as EventSource does), capped at
// maxRetryDelay.
func retryDelay(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var ms int64
	for _, b := range v {
		if b < '0' || b > '9' {
			return 0, false
		}
		if ms < int64(maxRetryDelay/time.Millisecond) { // no overflow on a long field
			ms = ms*10 + int64(b-'0')
		}
	}
	return min(time.Duration(ms)*time.Millisecond, maxRetryDelay), true
}

// isResponseHead reports whether the message whose first data line is
// head is a response. A line longer than the buffer (full false) is taken
// for a response, as notifications and requests are small; so is one that
// is not a whole message (JSON over several data lines), so that a stream
// is never resumed for a response it may have carried.
func isResponseHead(head []byte, full bool) bool {
	if !full {
		return true
	}
	env, err := envelopeOfMessage(head)
	return err != nil || env.isResponse()
}

// getStream opens a GET stream (resuming after cur's last event, when it
// has one) and relays its events until it ends, or until it has carried
// stopAfter responses when stopAfter > 0. It reports open == false when
// the server offers no such stream, or no longer the one resumed. It calls
// answered, when not nil, once the server has answered the GET (or could
// not be reached).
func (c *httpClientConn) getStream(cur *eventCursor, stopAfter int, answered func()) (open bool, err error) {
	if answered != nil {
		defer answered()
	}
	req, err := c.newRequest(c.ctx, http.MethodGet, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if cur.seenID {
		req.Header.Set(lastEventIDHdr, cur.last)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return true, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 { // 405: the server offers no such stream
		return false, nil
	}
	if answered != nil {
		answered()
	}
	err = c.readEvents(resp.Body, cur, nil, stopAfter)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return true, err
}

// reconnectDelay is how long to wait before reopening a stream: what the
// server's retry field asked for, or else fallback.
func reconnectDelay(cur *eventCursor, fallback time.Duration) time.Duration {
	if cur.retry > 0 {
		return cur.retry
	}
	return fallback
}

// sleep waits d, or until the connection closes; it reports whether the
// connection is still open.
func (c *httpClientConn) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// resume reopens a request's stream that ended before its want responses,
// with a GET and Last-Event-ID, after the delay the server asked for, as
// often as the server keeps sending events; it reports whether the
// responses came.
func (c *httpClientConn) resume(cur *eventCursor, want int) bool {
	for failures := 0; failures < resumeFailures; {
		if !c.sleep(reconnectDelay(cur, time.Duration(failures+1)*200*time.Millisecond)) {
			return true // closing: nobody waits for the answer
		}
		before := cur.last
		open, err := c.getStream(cur, want, nil)
		if cur.responses >= want {
			return true
		}
		if !open {
			c.logger.Warn("the MCP server did not resume a stream that ended before its response", "url", c.url, "last_event_id", cur.last)
			return false
		}
		if cur.last == before {
			failures++
		} else {
			failures = 0 // the server is sending: it may close streams to be polled
		}
		if err != nil {
			c.logger.Debug("resuming a stream of events failed", "url", c.url, "error", err)
		}
	}
	return false
}

// startGET opens the stream of what the server sends on its own, once, and
// reopens it when it ends, until the connection closes. The channel it
// returns is closed once the server has answered the first GET (or could
// not be reached).
func (c *httpClientConn) startGET() <-chan struct{} {
	opened := make(chan struct{})
	answered := sync.OnceFunc(func() { close(opened) })
	c.mu.Lock()
	if c.getStarted || c.closed {
		c.mu.Unlock()
		answered()
		return opened
	}
	c.getStarted = true
	c.wg.Add(1) // under mu, after the closed check: Close waits for it
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		defer answered()
		var cur eventCursor
		for failures := 0; failures < 5 && c.ctx.Err() == nil; {
			open, err := c.getStream(&cur, 0, answered)
			if !open {
				return
			}
			wait := reconnectDelay(&cur, 100*time.Millisecond)
			if err != nil {
				failures++
				wait = reconnectDelay(&cur, time.Duration(failures)*200*time.Millisecond)
			} else {
				failures = 0
			}
			if !c.sleep(wait) {
				return
			}
		}
	}()
	return opened
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
	id := c.sessionID // none on a stateless connection
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
