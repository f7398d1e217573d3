package mcpproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// HTTPOptions configures [Proxy.HTTPHandler].
type HTTPOptions struct {
	// Token, when set, is the bearer token every request must carry in its
	// Authorization header.
	Token string
	// Dial connects to the server for a new session: one server process per
	// session when the server is a command ([Command]), one session of the
	// upstream endpoint when it is one ([DialHTTP]).
	Dial func(ctx context.Context) (Conn, error)
}

// maxQueued bounds the messages for the client that wait for a stream to
// carry them (when the client has no GET stream open and no POST waiting).
const maxQueued = 1024

// HTTPHandler returns an http.Handler serving MCP's streamable HTTP
// transport to clients, each session relayed to a server of its own
// through p, so that capping is the same as over stdio.
//
// POST carries the client's messages: a request is answered on a stream of
// server-sent events that ends with its response (and carries what the
// server sends meanwhile, when the client has no GET stream open); a
// notification or a response is answered 202. The initialize request starts
// a session, whose id the response's Mcp-Session-Id header gives. GET opens
// the stream of what the server sends on its own; DELETE ends the session
// and stops its server. Requests whose Origin header names another host than
// a loopback one are refused (DNS rebinding), and so are those without the
// token when one is set. Events carry no ids, so a broken stream is not
// resumed: its client sees its requests fail and may retry them.
func (p *Proxy) HTTPHandler(opts HTTPOptions) http.Handler {
	return &httpHandler{p: p, opts: opts, sessions: map[string]*httpSession{}}
}

type httpHandler struct {
	p    *Proxy
	opts HTTPOptions

	mu       sync.Mutex
	sessions map[string]*httpSession
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.opts.Token != "" {
		want := "Bearer " + h.opts.Token
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "toolcap: a bearer token is required", http.StatusUnauthorized)
			return
		}
	}
	if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
		http.Error(w, "toolcap: origin not allowed", http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		s := h.session(w, r)
		if s != nil {
			s.get(w, r)
		}
	case http.MethodDelete:
		s := h.session(w, r)
		if s != nil {
			s.close()
			w.WriteHeader(http.StatusNoContent)
		}
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "toolcap: method not allowed", http.StatusMethodNotAllowed)
	}
}

func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// session finds the request's session, or answers 400 or 404.
func (h *httpHandler) session(w http.ResponseWriter, r *http.Request) *httpSession {
	id := r.Header.Get(sessionHeader)
	if id == "" {
		http.Error(w, "toolcap: missing "+sessionHeader, http.StatusBadRequest)
		return nil
	}
	h.mu.Lock()
	s := h.sessions[id]
	h.mu.Unlock()
	if s == nil {
		http.Error(w, "toolcap: unknown or ended session", http.StatusNotFound)
		return nil
	}
	return s
}

func (h *httpHandler) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(h.p.max)+1))
	if err != nil {
		http.Error(w, "toolcap: reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > h.p.max {
		http.Error(w, fmt.Sprintf("toolcap: the request is over the proxy's bound of %d bytes", h.p.max), http.StatusRequestEntityTooLarge)
		return
	}
	body = bytes.ReplaceAll(bytes.TrimSpace(body), []byte("\n"), []byte(" "))
	if len(body) == 0 {
		http.Error(w, "toolcap: empty request", http.StatusBadRequest)
		return
	}
	msgs := [][]byte{body}
	if body[0] == '[' {
		msgs = splitBatch(body)
		if len(msgs) == 0 {
			// JSON-RPC 2.0: an empty batch is an invalid request; it is
			// not forwarded.
			http.Error(w, "toolcap: an empty batch, or one that is not valid JSON, is an invalid request", http.StatusBadRequest)
			return
		}
	}
	var ids []string
	initialize := false
	for _, m := range msgs {
		env, err := envelopeOfMessage(m)
		if err != nil {
			http.Error(w, "toolcap: not a JSON-RPC message: "+err.Error(), http.StatusBadRequest)
			return
		}
		if env.isRequest() {
			ids = append(ids, string(env.id))
			initialize = initialize || env.method == "initialize"
		}
	}

	var s *httpSession
	if initialize && r.Header.Get(sessionHeader) == "" {
		s, err = h.start(r.Context())
		if err != nil {
			h.p.logger.Error("could not reach the MCP server for a new session", "error", err)
			http.Error(w, "toolcap: could not reach the MCP server: "+err.Error(), http.StatusBadGateway)
			return
		}
		w.Header().Set(sessionHeader, s.id)
	} else if s = h.session(w, r); s == nil {
		return
	}

	if len(ids) == 0 {
		if err := s.send(body); err != nil {
			http.Error(w, "toolcap: the session ended", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	st := s.openStream(ids)
	defer s.closeStream(st)
	if err := s.send(body); err != nil {
		http.Error(w, "toolcap: the session ended", http.StatusNotFound)
		return
	}
	st.serve(w, r)
}

// start begins a new session: a server of its own, relayed through the
// proxy until either side ends.
func (h *httpHandler) start(ctx context.Context) (*httpSession, error) {
	server, err := h.opts.Dial(context.WithoutCancel(ctx))
	if err != nil {
		return nil, err
	}
	inR, inW := io.Pipe()
	s := &httpSession{
		id:      rand.Text(),
		in:      inW,
		inR:     inR,
		pending: map[string]*eventStream{},
		done:    make(chan struct{}),
	}
	h.mu.Lock()
	h.sessions[s.id] = s
	h.mu.Unlock()
	go func() {
		err := h.p.serve(context.Background(), s, server, "http:"+s.id)
		if err != nil {
			h.p.logger.Warn("a session ended", "session", s.id, "error", err)
		}
		h.mu.Lock()
		delete(h.sessions, s.id)
		h.mu.Unlock()
		s.close()
	}()
	return s, nil
}

// httpSession is one client's session: the client's side of a relay.
type httpSession struct {
	id   string
	in   *io.PipeWriter // the client's messages, to the relay
	inR  *io.PipeReader
	inMu sync.Mutex

	mu         sync.Mutex
	pending    map[string]*eventStream // POST streams waiting for a response, by request id
	standalone *eventStream            // the GET stream
	queue      [][]byte                // messages waiting for a stream
	done       chan struct{}
	closeOnce  sync.Once
}

// Read gives the relay the client's messages.
func (s *httpSession) Read(p []byte) (int, error) { return s.inR.Read(p) }

// send hands one of the client's messages (one line) to the relay.
func (s *httpSession) send(msg []byte) error {
	s.inMu.Lock()
	defer s.inMu.Unlock()
	_, err := s.in.Write(append(msg, '\n'))
	return err
}

// WriteMessage takes one of the relay's messages for the client and routes
// it to its stream: a response to the POST that asked for it, anything else
// to the GET stream, or to a POST stream still open, or to a bounded queue
// until one opens.
func (s *httpSession) WriteMessage(msg []byte) error {
	env, err := envelopeOfMessage(msg)
	if err != nil {
		env = nil // not a response: it goes to whatever stream is open
	}
	msg = bytes.Clone(msg) // it waits for its stream
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return io.ErrClosedPipe
	default:
	}
	s.route(msg, env)
	return nil
}

// route sends msg, whose envelope is env (nil when unknown), on its way;
// it requires s.mu.
func (s *httpSession) route(msg []byte, env *message) {
	if env != nil && env.isResponse() {
		if st := s.pending[string(env.id)]; st != nil {
			delete(s.pending, string(env.id))
			st.push(msg, true)
			return
		}
	}
	if st := s.anyStream(); st != nil {
		st.push(msg, false)
		return
	}
	if len(s.queue) < maxQueued {
		s.queue = append(s.queue, msg)
	}
}

// anyStream returns a stream that can carry a message that answers no
// request; it requires s.mu.
func (s *httpSession) anyStream() *eventStream {
	if s.standalone != nil {
		return s.standalone
	}
	for _, st := range s.pending {
		return st
	}
	return nil
}

// flushQueue sends what waited for a stream; it requires s.mu.
func (s *httpSession) flushQueue() {
	if st := s.anyStream(); st != nil {
		for _, m := range s.queue {
			st.push(m, false)
		}
		s.queue = nil
	}
}

func (s *httpSession) openStream(ids []string) *eventStream {
	st := newEventStream(len(ids))
	s.mu.Lock()
	for _, id := range ids {
		s.pending[id] = st
	}
	s.flushQueue()
	s.mu.Unlock()
	return st
}

func (s *httpSession) closeStream(st *eventStream) {
	s.mu.Lock()
	for id, x := range s.pending {
		if x == st {
			delete(s.pending, id)
		}
	}
	if s.standalone == st {
		s.standalone = nil
	}
	s.mu.Unlock()
}

func (s *httpSession) get(w http.ResponseWriter, r *http.Request) {
	st := newEventStream(-1)
	s.mu.Lock()
	if s.standalone != nil {
		s.mu.Unlock()
		http.Error(w, "toolcap: a GET stream is already open for this session", http.StatusConflict)
		return
	}
	s.standalone = st
	s.flushQueue()
	s.mu.Unlock()
	defer s.closeStream(st)
	st.serve(w, r)
}

// Close ends the client's side: the relay reads EOF.
func (s *httpSession) Close() error {
	s.close()
	return nil
}

func (s *httpSession) close() {
	s.closeOnce.Do(func() {
		close(s.done)
		// Not under inMu: a send blocked on a pipe nobody reads any more
		// holds it; closing the reader ends that send.
		_ = s.inR.CloseWithError(io.ErrClosedPipe)
		_ = s.in.Close()
		s.mu.Lock()
		for _, st := range s.pending {
			st.end()
		}
		if s.standalone != nil {
			s.standalone.end()
		}
		s.mu.Unlock()
	})
}

// eventStream is one HTTP response carrying server-sent events.
type eventStream struct {
	mu    sync.Mutex
	msgs  [][]byte
	left  int // responses still to come; -1: the GET stream, which never ends by itself
	ended bool
	wake  chan struct{}
}

func newEventStream(responses int) *eventStream {
	return &eventStream{left: responses, wake: make(chan struct{}, 1)}
}

func (st *eventStream) push(msg []byte, response bool) {
	st.mu.Lock()
	st.msgs = append(st.msgs, msg)
	if response && st.left > 0 {
		st.left--
	}
	st.mu.Unlock()
	st.signal()
}

func (st *eventStream) end() {
	st.mu.Lock()
	st.ended = true
	st.mu.Unlock()
	st.signal()
}

func (st *eventStream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// serve writes the stream's events until its last response, the end of the
// session, or the client's going away.
func (st *eventStream) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	for {
		st.mu.Lock()
		msgs := st.msgs
		st.msgs = nil
		done := st.left == 0 || st.ended
		st.mu.Unlock()
		for _, m := range msgs {
			var b strings.Builder
			b.Grow(len(m) + 24)
			b.WriteString("event: message\ndata: ")
			b.Write(m)
			b.WriteString("\n\n")
			if _, err := io.WriteString(w, b.String()); err != nil {
				return
			}
		}
		if flusher != nil && len(msgs) > 0 {
			flusher.Flush()
		}
		if done {
			return
		}
		select {
		case <-st.wake:
		case <-r.Context().Done():
			return
		}
	}
}
