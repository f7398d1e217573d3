package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// A lane carries the requests of MCP's stateless revision (2026-07-28)
// from many clients to one server connection: it is the client's side of
// one relay session (Proxy.serve), so that every stateless result is cut,
// kept and read back exactly as a session's is. Each request goes to the
// server under an id of the lane's own (two clients may both send id 1),
// and its progress token likewise; the server's answer comes back with the
// client's id and token, to the POST that sent the request.
//
// What the server sends that names no request (a log line, a request of
// its own) cannot be told apart between the lane's clients: it goes to
// the request in flight when there is exactly one, and is dropped
// otherwise, so that nothing of one client's reaches another. A request of
// the server's is answered with an error: a stateless client cannot be
// asked anything (MCP 2026-07-28 asks through input_required results).
type lane struct {
	pool *lanePool
	in   *io.PipeWriter // the requests, to the relay
	inR  *io.PipeReader
	// queue holds the messages for the relay, each a line, in order:
	// one goroutine writes them to in, so that a POST waits for room in
	// the queue, as long as its client does, and not for the relay,
	// which waits for its server (one that stops reading its input would
	// hold every POST of the lane). done ends that goroutine (Close).
	queue     chan []byte
	done      chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	calls    map[int64]*laneCall // by the lane's id
	tokens   map[int64]*laneCall // by the lane's progress token
	inflight int                 // calls other than subscriptions/listen
	dead     bool                // the relay ended: no new calls
	closed   bool                // its input was closed (Close): no new calls
	// The clients' listens, served by the lane's one upstream listen,
	// hub (see listen.go); retired are upstream listens replaced by hub,
	// ended once its acknowledgement comes.
	listeners map[*laneCall]*listener
	hub       *hubState
	retired   []*laneCall
	// gone: the relay read the end of its server's output (see
	// laneServer): acquire passes it by.
	gone bool
}

// laneCall is one request a lane carries.
type laneCall struct {
	post   *httpSession // the POST's streams, which take the answer
	wire   int64        // the lane's id for it
	id     []byte       // the client's id
	token  []byte       // the client's progress token; nil for none
	wtok   int64        // the lane's progress token, when token is set
	scope  string       // what the refs of its results are bound to
	header http.Header  // the POST's headers, for an HTTP server
	listen bool         // a subscriptions/listen: long-lived
	// stop ends the upstream HTTP request carrying it (see
	// requestContext); nil for none.
	stop context.CancelFunc
	// refusal is an HTTP server's refusal of it, for its POST to answer
	// with the same status; guarded by the lane's mu.
	refusal *upstreamHTTPError
}

func newLane(pool *lanePool) *lane {
	inR, inW := io.Pipe()
	l := &lane{
		pool:   pool,
		in:     inW,
		inR:    inR,
		queue:  make(chan []byte, laneQueue),
		done:   make(chan struct{}),
		calls:  map[int64]*laneCall{},
		tokens: map[int64]*laneCall{},
	}
	go l.write()
	return l
}

// laneQueue is how many messages a lane holds for its relay: past them a
// POST waits for room (or for its client to leave).
const laneQueue = 64

// write hands the queued messages to the relay, in order, until the lane
// closes. A message left in the queue then is dropped: a request's call
// is answered when the relay ends (ended).
func (l *lane) write() {
	for {
		select {
		case msg := <-l.queue:
			if _, err := l.in.Write(msg); err != nil {
				return // the relay ended; ended answers the calls
			}
		case <-l.done:
			return
		}
	}
}

// enqueue queues one message, a line, for the relay; it waits for room
// until ctx ends or the lane closes, either of which it reports.
func (l *lane) enqueue(ctx context.Context, msg []byte) error {
	select {
	case l.queue <- msg:
		return nil
	case <-l.done:
		return errLaneEnded
	case <-ctx.Done():
		return ctx.Err()
	}
}

// enqueueSoon queues msg without waiting: when the queue is full, a
// goroutine waits for room, so that the caller (the relay's reader, or a
// POST whose client left) never blocks on the relay.
func (l *lane) enqueueSoon(msg []byte) {
	select {
	case l.queue <- msg:
	default:
		go func() { _ = l.enqueue(context.Background(), msg) }()
	}
}

// Read gives the relay the clients' requests.
func (l *lane) Read(p []byte) (int, error) { return l.inR.Read(p) }

// Close ends the relay's client side: it reads EOF.
func (l *lane) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.closeOnce.Do(func() { close(l.done) })
	_ = l.in.Close()
	return nil
}

// load is the lane's calls in flight, subscriptions not counted.
func (l *lane) load() (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inflight, l.dead || l.closed || l.gone
}

// ending reports whether the lane takes no more requests: its relay
// ended, or its input was closed as its server ended.
func (l *lane) ending() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dead || l.closed || l.gone
}

// laneServer is a lane's server connection. When its server ends, the
// relay answers the calls it held with errors before it returns and the
// lane is ended: a client that sends its next request on such an answer
// would land on the same lane, to be answered the same. So acquire passes
// the lane by from the moment the relay reads the end of the server's
// output, before those answers go.
type laneServer struct {
	Conn
	l *lane
}

func (s laneServer) Read(p []byte) (int, error) {
	n, err := s.Conn.Read(p)
	if err != nil {
		s.l.mu.Lock()
		s.l.gone = true
		s.l.mu.Unlock()
	}
	return n, err
}

// writeMessageFunc writes a message made in pieces as the server's
// connection takes one (see piecesConn).
func (s laneServer) writeMessageFunc(write func(jsonWriter)) error {
	if pc, ok := s.Conn.(piecesConn); ok {
		return pc.writeMessageFunc(write)
	}
	var b bytes.Buffer
	write(&b)
	return s.Conn.WriteMessage(b.Bytes())
}

// errLaneEnded reports a lane whose server ended.
var errLaneEnded = errors.New("the server connection ended")

// send carries one of a POST's messages to the server: a request under
// the lane's id (the call is registered first, so that its answer, which
// may come at once, finds it), a notification as it is (but a
// cancellation, which names no request of the lane's). A response is
// dropped: no request of the server's reaches a stateless client. It returns the call, nil for
// a message other than a request.
func (l *lane) send(ctx context.Context, post *httpSession, msg []byte, env *message, scope string, header http.Header) (*laneCall, error) {
	var c *laneCall
	switch {
	case env.isRequest() && env.method == "subscriptions/listen":
		if f := parseFilter(msg); f != nil {
			c = &laneCall{post: post, id: env.id, scope: scope, header: header, listen: true}
			l.mu.Lock()
			if l.dead {
				l.mu.Unlock()
				return nil, errLaneEnded
			}
			up := l.listenLocked(c, msg, f)
			l.mu.Unlock()
			if up != nil {
				msg = up
				break
			}
			return c, nil
		}
		// Without notifications the server refuses it: it goes up alone.
		fallthrough
	case env.isRequest():
		c = &laneCall{post: post, wire: l.pool.next.Add(1), id: env.id, scope: scope, header: header, listen: env.method == "subscriptions/listen"}
		out, err := l.rewriteRequest(msg, env, c)
		if err != nil {
			return nil, err
		}
		msg = out
		l.mu.Lock()
		if l.dead {
			l.mu.Unlock()
			return nil, errLaneEnded
		}
		l.calls[c.wire] = c
		if c.token != nil {
			l.tokens[c.wtok] = c
		}
		if !c.listen {
			l.inflight++
		}
		l.mu.Unlock()
	case env.isNotification():
		if env.method == "notifications/cancelled" {
			// A stateless request is cancelled by closing its stream;
			// the request this one names is no request of this POST's
			// (a POST is one message), so no client's the lane knows.
			return nil, nil
		}
	default:
		return nil, nil
	}
	if err := l.enqueue(ctx, append(bytes.TrimSpace(msg), '\n')); err != nil {
		if c != nil {
			l.forget(c)
		}
		return nil, err
	}
	return c, nil
}

// isHub reports whether c is an upstream listen of the lane's own, which
// no POST waits for.
func (c *laneCall) isHub() bool { return c.post == nil }

// rewriteRequest returns msg with the lane's id for c in place of the
// client's, and the lane's progress token in place of the client's when
// it names one (set in c).
func (l *lane) rewriteRequest(msg []byte, env *message, c *laneCall) ([]byte, error) {
	wire := strconv.AppendInt(nil, c.wire, 10)
	tok := progressTokenOf(msg)
	if tok == "" {
		return splice(msg, env.idAt, len(env.id), wire), nil
	}
	c.token = []byte(tok)
	c.wtok = l.pool.next.Add(1)
	out := setMember(msg, strconv.AppendInt(nil, c.wtok, 10), "params", "_meta", "progressToken")
	if out = setMember(out, wire, "id"); out == nil {
		return nil, errors.New("a request that is not a JSON object")
	}
	return out, nil
}

// forget takes c out of the lane: answered, or its client gone.
func (l *lane) forget(c *laneCall) {
	l.mu.Lock()
	if ok, cancels := l.unlistenLocked(c); ok {
		l.mu.Unlock()
		l.sendNow(cancels)
		return
	}
	defer l.mu.Unlock()
	if l.calls[c.wire] != c {
		return
	}
	delete(l.calls, c.wire)
	if c.token != nil {
		delete(l.tokens, c.wtok)
	}
	if !c.listen {
		l.inflight--
	}
}

// requestContext returns ctx for the upstream HTTP request carrying the
// call the lane knows by id, ended when the call's client leaves or the
// lane ends (see statelessLink), and the release the request calls when
// it is done. An answered call's request is not ended early: its body is
// read to its end, so that its connection is used again.
func (l *lane) requestContext(ctx context.Context, id []byte) (context.Context, context.CancelFunc) {
	wire, ok := laneID(id)
	if !ok {
		return ctx, func() {}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx, stop := context.WithCancel(ctx)
	c := l.calls[wire]
	if c == nil {
		// Its client left before it went up: it does not go.
		stop()
		return ctx, stop
	}
	c.stop = stop
	return ctx, stop
}

// transport is the lanes' HTTP transport (see statelessLink).
func (l *lane) transport() http.RoundTripper { return l.pool.transport() }

// stopRequest ends the upstream HTTP request carrying c, if one does.
func (l *lane) stopRequest(c *laneCall) {
	l.mu.Lock()
	stop := c.stop
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// WriteMessage routes one of the relay's messages for the clients (see
// lane); the relay reuses msg once it returns.
func (l *lane) WriteMessage(msg []byte) error {
	return l.deliver(heldMsg{msg}, false)
}

// writeOwned takes a message in parts the lane owns from now on.
func (l *lane) writeOwned(parts [][]byte) error { return l.deliver(heldMsg(parts), true) }

// writeMessageFunc takes a message made into chunks the lane owns.
func (l *lane) writeMessageFunc(write func(jsonWriter)) error {
	var cw chunkWriter
	write(&cw)
	return l.deliver(cw.message(), true)
}

// deliver routes msg; owned says the lane may keep its bytes.
func (l *lane) deliver(msg heldMsg, owned bool) error {
	env, err := msg.envelope()
	if err != nil {
		l.pool.h.p.logger.Debug("a stateless lane dropped a message that is not JSON-RPC", "error", err)
		return nil
	}
	switch {
	case env.isResponse():
		wire, ok := laneID(env.id)
		if !ok {
			return nil
		}
		l.mu.Lock()
		c := l.calls[wire]
		l.mu.Unlock()
		if c == nil {
			l.pool.h.p.logger.Debug("a stateless lane dropped a response whose client is gone", "id", truncID(env.id))
			return nil
		}
		if c.isHub() {
			l.fromHub(c, msg.flat(), env)
			l.forget(c)
			return nil
		}
		l.forget(c)
		out := msg.replace(env.idAt, len(env.id), c.id)
		_ = c.post.deliver(out) // a POST whose client left takes nothing
		return nil
	case env.isRequest():
		// A server that asks its client something (roots, sampling,
		// elicitation) in the stateless revision has no one to ask.
		// Written by a goroutine of its own: this is the relay's reader
		// of the server, and the relay's reader of the lane may be
		// waiting for the server to read, which waits for this reader.
		answer := append(errorResponse(env.id, codeMethodNotFound,
			"toolcap: a stateless client (MCP 2026-07-28) cannot be sent requests; ask through an input_required result"), '\n')
		l.enqueueSoon(answer)
		return nil
	}
	if env.method == "notifications/progress" {
		tok := notifiedToken(msg.flat())
		wtok, ok := laneID([]byte(tok))
		if !ok {
			return nil
		}
		l.mu.Lock()
		c := l.tokens[wtok]
		l.mu.Unlock()
		if c == nil {
			return nil
		}
		out := replaceProgressToken(msg.flat(), c.token)
		if out != nil {
			_ = c.post.deliver(heldMsg{out})
		}
		return nil
	}
	if bytes.Contains(msg.flat(), []byte(metaSubscriptionID)) {
		c := l.subscriber(msg)
		switch {
		case c == nil:
			// A listen of the lane's that ended, or none: no client's.
			return nil
		case c.isHub():
			l.fromHub(c, msg.flat(), env)
			return nil
		}
		// It names the listen request by the lane's id: the client's
		// goes in its place.
		if out := replaceMeta(msg.flat(), metaSubscriptionID, c.id); out != nil {
			_ = c.post.deliver(heldMsg{out})
		}
		return nil
	}
	l.mu.Lock()
	var only *laneCall
	if l.inflight == 1 {
		for _, c := range l.calls {
			if !c.listen {
				only = c
			}
		}
	}
	l.mu.Unlock()
	if only == nil {
		l.pool.h.p.logger.Debug("a stateless lane dropped a notification that names no request", "method", env.method)
		return nil
	}
	if !owned {
		msg = heldMsg{bytes.Clone(msg.flat())}
	}
	_ = only.post.deliver(msg)
	return nil
}

// subscriber returns the subscriptions/listen call a notification names
// in _meta["io.modelcontextprotocol/subscriptionId"], when it names one of
// the lane's.
func (l *lane) subscriber(msg heldMsg) *laneCall {
	flat := msg.flat()
	if !bytes.Contains(flat, []byte(metaSubscriptionID)) {
		return nil
	}
	var n struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(flat, &n) != nil {
		return nil
	}
	id := n.Params.Meta[metaSubscriptionID]
	l.mu.Lock()
	defer l.mu.Unlock()
	wire, ok := laneID(id)
	if !ok {
		return nil
	}
	if c := l.calls[wire]; c != nil && c.listen {
		return c
	}
	return nil
}

// ended answers every call the relay left unanswered (requests it had not
// read when the server ended) with a JSON-RPC error, so that each request
// still gets one answer, and takes no new calls.
func (l *lane) ended(why error) {
	l.mu.Lock()
	l.dead = true
	calls := make([]*laneCall, 0, len(l.calls))
	for _, c := range l.calls {
		if !c.isHub() {
			calls = append(calls, c)
		}
		if c.stop != nil {
			c.stop()
		}
	}
	for c := range l.listeners {
		calls = append(calls, c)
	}
	clear(l.listeners)
	l.hub, l.retired = nil, nil
	clear(l.calls)
	clear(l.tokens)
	l.inflight = 0
	l.mu.Unlock()
	msg := "toolcap: the MCP server ended before it answered"
	if why != nil {
		msg += ": " + why.Error()
	}
	for _, c := range calls {
		_ = c.post.deliver(heldMsg{errorResponse(c.id, codeInternal, msg)})
	}
}

// requestHeader returns the headers of the POST that sent the request the
// lane knows by id, for an HTTP server's request (see statelessLink).
func (l *lane) requestHeader(id []byte) http.Header {
	wire, ok := laneID(id)
	if !ok {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.calls[wire]; c != nil {
		return c.header
	}
	return nil
}

// refused records an HTTP server's refusal of a request, by the lane's
// id, for its POST to answer with the server's status.
func (l *lane) refused(id []byte, e *upstreamHTTPError) {
	wire, ok := laneID(id)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.calls[wire]; c != nil {
		c.refusal = e
	}
}

// refusal returns, and forgets, the refusal recorded for call c.
func (l *lane) refusal(c *laneCall) *upstreamHTTPError {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := c.refusal
	c.refusal = nil
	return e
}

// requestScope returns the scope the refs of the request the lane knows by
// id are bound to (see scopedConn).
func (l *lane) requestScope(id []byte) (string, bool) {
	wire, ok := laneID(id)
	if !ok {
		return "", false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.calls[wire]; c != nil {
		return c.scope, true
	}
	return "", false
}

// laneID reads one of the lane's ids (or progress tokens): a positive
// integer.
func laneID(raw []byte) (int64, bool) {
	s := string(bytes.TrimSpace(raw))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		// The same number written otherwise (5.0, 5e0), as the relay
		// matches ids.
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != float64(int64(f)) {
			return 0, false
		}
		n = int64(f)
	}
	return n, n > 0
}

// splice returns msg with its n bytes at at replaced by repl, in a new
// slice.
func splice(msg []byte, at int64, n int, repl []byte) []byte {
	out := make([]byte, 0, len(msg)-n+len(repl))
	out = append(out, msg[:at]...)
	out = append(out, repl...)
	return append(out, msg[int(at)+n:]...)
}

// replace returns the message with its n bytes at at replaced by repl:
// the one chunk they are in copied with the change, or the chunks they
// span joined; the others are shared.
func (m heldMsg) replace(at int64, n int, repl []byte) heldMsg {
	var off int64
	for i, c := range m {
		end := off + int64(len(c))
		if at >= off && at+int64(n) <= end {
			out := make(heldMsg, len(m))
			copy(out, m)
			out[i] = splice(c, at-off, n, repl)
			return out
		}
		off = end
	}
	return heldMsg{splice(m.flat(), at, n, repl)}
}

// setMember returns the JSON object msg with value at path (each element
// a member's name, the objects on the way made when absent); nil when msg,
// or a value on the way, is not an object. The members come out sorted:
// the proxy's own rewrite of a small message, never a server's result.
func setMember(msg []byte, value json.RawMessage, path ...string) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(msg, &obj) != nil || obj == nil {
		return nil
	}
	if len(path) == 1 {
		obj[path[0]] = value
	} else {
		inner := obj[path[0]]
		if len(inner) == 0 {
			inner = json.RawMessage("{}")
		}
		if obj[path[0]] = setMember(inner, value, path[1:]...); obj[path[0]] == nil {
			return nil
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return out
}

// replaceProgressToken returns a progress notification with token in
// place of its progress token; nil when it cannot be read.
func replaceProgressToken(msg []byte, token []byte) []byte {
	return setMember(msg, token, "params", "progressToken")
}

// replaceMeta returns a notification with value in place of its
// params._meta[key]; nil when it cannot be read.
func replaceMeta(msg []byte, key string, value []byte) []byte {
	return setMember(msg, value, "params", "_meta", key)
}

// metaSubscriptionID is the _meta key of a notification that belongs to
// a subscriptions/listen request (MCP 2026-07-28).
const metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// codeMethodNotFound is JSON-RPC's error code for a method not served.
const codeMethodNotFound = -32601

var (
	_ Conn       = (*lane)(nil)
	_ piecesConn = (*lane)(nil)
	_ ownedConn  = (*lane)(nil)
	_ piecesConn = laneServer{}
)
