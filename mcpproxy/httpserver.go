package mcpproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// HTTPOptions configures [Proxy.HTTPHandler]. Its zero bounds mean their
// defaults, which fit a proxy on a small machine serving a team.
type HTTPOptions struct {
	// Token, when set, is the bearer token every request must carry in its
	// Authorization header ("Bearer <token>", the scheme in any case).
	Token string
	// Dial connects to the server for a new session: one server process per
	// session when the server is a command ([Command]), one session of the
	// upstream endpoint when it is one ([DialHTTP]). Its ctx is not the
	// request's (a session outlives the POST that started it): it ends
	// when [HTTPHandler.Close] is called, which a dial in progress should
	// heed.
	Dial func(ctx context.Context) (Conn, error)
	// MaxMessageBytes bounds a request's body: one larger is answered 413
	// and not read further (not read at all when its Content-Length says
	// so). Zero means the proxy's
	// [Options.MaxMessageBytes].
	MaxMessageBytes int
	// MaxBodyBytes bounds the bytes of request bodies held at once across
	// every request of every session, so that many large POSTs at once
	// cannot take the proxy's memory: a body takes its room as its bytes
	// arrive (not as its Content-Length announces them, so that idle
	// connections hold next to none), and a request whose body would go
	// over it is answered 503 with Retry-After. Zero means four times the
	// bound of one body.
	MaxBodyBytes int64
	// BodyTimeout bounds the time a client takes to send a request's body,
	// so that a client sending a byte now and then cannot hold a
	// connection and its memory. Zero means [defaultBodyTimeout].
	BodyTimeout time.Duration
	// MaxSessions bounds the sessions open at once (each has a server of
	// its own): an initialize beyond it is answered 503 with a JSON-RPC
	// error. Zero means [DefaultMaxSessions].
	MaxSessions int
	// SessionIdle ends a session, and stops its server, when it has had no
	// request and no open stream for that long. Zero means
	// [DefaultSessionIdle].
	SessionIdle time.Duration
	// StreamBuffer bounds the bytes of messages waiting for one stream's
	// client to read them (a response is always taken): a client that
	// falls further behind has its stream cut off rather than the proxy
	// holding the rest. It is also how much of the GET stream is kept for
	// a client that resumes it (Last-Event-ID), and how much of a POST
	// stream's events already written (four times as much across a
	// session's POST streams). Zero means [defaultStreamBuffer].
	StreamBuffer int
	// ResumeGrace is how long a POST stream whose connection broke before
	// its response went out waits for its client to resume it (a GET with
	// the Last-Event-ID of the last event it read), its messages and
	// response still kept for it; then they are dropped. What a
	// session's broken streams hold in all is bounded by twice
	// MaxMessageBytes: past it the stream that broke first is let go
	// (its client's resumption is then refused). Zero means
	// [defaultResumeGrace].
	ResumeGrace time.Duration
	// JSONWait is how long a POST of one request waits for the server's
	// first message about it before it opens its stream of events: when
	// that message is the response, the answer is that response alone, as
	// application/json (what a client gets for most calls: no stream to
	// read, and one write); when it is another message, or when none comes
	// in time, the answer is a stream of events as usual, its priming event
	// first where the protocol version has one. Until the stream opens its
	// client cannot resume it: a connection that breaks within JSONWait
	// loses the answer, as one that breaks before a JSON answer does. Zero
	// means [defaultJSONWait]; a negative value opens every stream at once.
	JSONWait time.Duration
	// ProtocolVersions are the values of the MCP-Protocol-Version header
	// accepted; another is answered 400. Nil means
	// [defaultProtocolVersions].
	ProtocolVersions []string
	// ForwardAuth passes each client's Authorization header on to the
	// upstream of its session, and relays an upstream's 401 or 403 (its
	// status, WWW-Authenticate and body) to the client, so that a client
	// completes OAuth with the upstream through the proxy. It takes
	// effect with a Dial made by [DialHTTP] with [ForwardAuth]: the
	// session's [upstreamAuth] is in the dial's context. The header then
	// belongs to the upstream, so Token must be empty. With UpstreamURL
	// set, the proxy also stands for the upstream in its OAuth protected
	// resource metadata: see [HTTPHandler.Mount].
	ForwardAuth bool
	// UpstreamURL is the streamable HTTP endpoint Dial connects to, when
	// it is one. With ForwardAuth, the upstream's protected resource
	// metadata is fetched from it and mapped to the proxy's URL, and the
	// resource_metadata of the upstream's WWW-Authenticate is rewritten
	// to name the proxy's copy ([HTTPHandler.Mount]); without
	// it, the WWW-Authenticate is relayed unchanged.
	UpstreamURL string
	// PublicOrigin is the proxy's origin (scheme and host, such as
	// https://mcp.example.com) as its clients reach it, when that is not
	// the one their requests name: behind a front that terminates TLS, the
	// requests name http://. The protected resource metadata and the
	// rewritten WWW-Authenticate then name it; "" takes the origin from
	// each request (http://, or https:// when the proxy serves TLS itself,
	// and the request's Host). Paths are the proxy's own.
	PublicOrigin string
	// StatelessServers bounds the server connections that the requests
	// of MCP's stateless revision (2026-07-28: no initialize, no session;
	// each request names its version in its _meta and the
	// MCP-Protocol-Version header) share: each is dialled with Dial, a
	// process when the server is a command, and carries the requests of
	// many clients at once, each under an id of its own, its answer back
	// to its POST. A 2025 client's initialize still starts a session, with
	// a server of its own, beside them. Zero means
	// [DefaultStatelessServers]; a negative value serves no stateless
	// request (each is answered UnsupportedProtocolVersionError, -32022,
	// with the versions served).
	StatelessServers int
}

// The defaults of [HTTPOptions].
const (
	defaultBodyTimeout  = 30 * time.Second
	DefaultMaxSessions  = 64
	DefaultSessionIdle  = 30 * time.Minute
	defaultStreamBuffer = 1 << 20
	// defaultResumeGrace outlasts the go-sdk client's reconnections (5
	// tries, 1 s growing by half each time, with jitter) and the
	// TypeScript SDK's.
	defaultResumeGrace = time.Minute
	// defaultJSONWait lets a call the server answers within it go out as
	// one JSON body, and opens the stream of a longer one soon enough that
	// a connection broken while it runs is rarely one the client cannot
	// resume.
	defaultJSONWait = 100 * time.Millisecond
)

// HTTPHandler returns an http.Handler serving MCP's streamable HTTP
// transport to clients, each session relayed to a server of its own
// through p, so that capping is the same as over stdio.
//
// POST carries the client's messages: a request is answered on a stream of
// server-sent events that ends with its response, and carries the
// messages related to it (its progress notifications; the server's
// requests, log lines and cancellations while it is the only one
// pending), or, when its response is the first of them and comes within
// [HTTPOptions.JSONWait], with that response alone as application/json
// (not for a batch); a notification or a response is answered 202. The initialize
// request starts a session, whose id the response's Mcp-Session-Id header
// gives. GET opens the stream of what the server sends on its own, and of
// its notifications about the session (list_changed, resources/updated,
// and any other not about a request), which go there when it is open.
// Every event has an id that names its stream: a GET with Last-Event-ID
// resumes the GET stream from there while the proxy still holds the
// events, or a POST stream whose connection broke (within
// [HTTPOptions.ResumeGrace]) with the events after that id and the rest,
// its response last. DELETE ends the session and stops its server.
//
// Every check that needs only headers is made before a body is read:
// a Host that is not a loopback name on a loopback listener (DNS
// rebinding) and an Origin naming another host than a loopback one are
// refused 403, a request without the token when one is set 401, an
// unsupported MCP-Protocol-Version 400, a POST whose Content-Type is not
// JSON 415, an Accept without the types the transport sends 406, an
// unknown session 404. Bodies, sessions and streams are bounded (see
// [HTTPOptions]). [HTTPHandler.Close] ends every session.
func (p *Proxy) HTTPHandler(opts HTTPOptions) *HTTPHandler {
	h := &HTTPHandler{
		p:           p,
		dial:        opts.Dial,
		maxBody:     opts.MaxMessageBytes,
		bodyTimeout: opts.BodyTimeout,
		maxSessions: opts.MaxSessions,
		idle:        opts.SessionIdle,
		streamMax:   opts.StreamBuffer,
		resumeGrace: opts.ResumeGrace,
		jsonWait:    opts.JSONWait,
		versions:    opts.ProtocolVersions,
		forwardAuth: opts.ForwardAuth,
		sessions:    map[string]*httpSession{},
	}
	h.token = opts.Token
	_, _ = rand.Read(h.scopeKey[:])
	if opts.ForwardAuth && opts.UpstreamURL != "" {
		m, err := newResourceMetadata(opts.UpstreamURL, opts.PublicOrigin, p.logger)
		if err != nil {
			// The dial refuses it as well: every session fails to start.
			p.logger.Warn("no protected resource metadata for the upstream", "url", opts.UpstreamURL, "error", err)
		}
		h.meta = m
	}
	if h.maxBody <= 0 {
		h.maxBody = p.max
	}
	h.budget.limit = opts.MaxBodyBytes
	if h.budget.limit <= 0 {
		h.budget.limit = 4 * int64(h.maxBody)
	}
	// A body is read into a buffer one byte longer than the bound (to see
	// that it ends there): the budget holds at least one.
	h.budget.limit = max(h.budget.limit, int64(h.maxBody)+1)
	if h.bodyTimeout <= 0 {
		h.bodyTimeout = defaultBodyTimeout
	}
	if h.maxSessions <= 0 {
		h.maxSessions = DefaultMaxSessions
	}
	if h.idle <= 0 {
		h.idle = DefaultSessionIdle
	}
	if h.streamMax <= 0 {
		h.streamMax = defaultStreamBuffer
	}
	h.replayMax = 4 * h.streamMax
	// The POST streams a session's client dropped hold at most twice the
	// largest request's bytes (32 MiB at the default 16 MiB) for their
	// clients to resume: a response of that size always fits.
	h.heldMax = 2 * int64(h.maxBody)
	if h.resumeGrace <= 0 {
		h.resumeGrace = defaultResumeGrace
	}
	if h.jsonWait == 0 {
		h.jsonWait = defaultJSONWait
	}
	if h.versions == nil {
		h.versions = defaultProtocolVersions
	}
	h.base, h.stop = context.WithCancel(context.Background())
	if n := opts.StatelessServers; n >= 0 && h.dial != nil && slices.ContainsFunc(h.versions, stateless) {
		if n == 0 {
			n = DefaultStatelessServers
		}
		h.lanes = &lanePool{h: h, dial: h.dial, size: n}
		if opts.UpstreamURL == "" {
			// The proxy is the HTTP server its stateless clients reach: it
			// checks their headers as the go-sdk's server does (an HTTP
			// upstream checks its own).
			h.validate = h.validateHeaders
		}
	}
	return h
}

// An HTTPHandler serves MCP's streamable HTTP transport; see
// [Proxy.HTTPHandler].
type HTTPHandler struct {
	p           *Proxy
	dial        func(ctx context.Context) (Conn, error)
	token       string // the bearer token every request needs; "" for none
	maxBody     int
	bodyTimeout time.Duration
	maxSessions int
	idle        time.Duration
	streamMax   int
	replayMax   int           // the bytes a session's POST streams keep once written, for resumption
	heldMax     int64         // the bytes a session's broken POST streams hold in all while they wait to be resumed
	resumeGrace time.Duration // how long a broken POST stream waits to be resumed
	jsonWait    time.Duration // how long a POST of one request waits to be answered as JSON; < 0 never
	versions    []string
	forwardAuth bool
	meta        *resourceMetadata // the upstream's metadata, mapped; nil when not served

	// lanes carry the stateless requests; nil when none are served.
	lanes *lanePool
	// validate checks a stateless request's HTTP headers against its body
	// when the proxy is the server its clients reach; nil otherwise.
	validate func(r *http.Request, msg []byte, env *message) *requestError
	// scopeKey keys the hash of a stateless client's credential that
	// binds its refs (principalScope).
	scopeKey [32]byte

	budget bodyBudget
	// base is the context of every session's relay: Close cancels it,
	// which stops every server.
	base context.Context
	stop context.CancelFunc
	// relays counts the sessions' relays still running.
	relays sync.WaitGroup

	mu       sync.Mutex
	sessions map[string]*httpSession
	starting int  // sessions being started, counted against the bound
	closed   bool // Close was called: no new session
}

// Sessions returns the number of sessions open.
func (h *HTTPHandler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// Close ends every session and stops its server (for a [Command], the
// whole stop sequence: its input closed, then SIGTERM, then SIGKILL), and
// refuses new sessions from then on. It waits until every server has
// stopped, or until ctx ends, whose error it then returns. It is meant for
// a program's shutdown, after http.Server.Shutdown has stopped taking
// requests (Shutdown does not wait for the events streams, which Close
// ends).
func (h *HTTPHandler) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	sessions := make([]*httpSession, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	for _, s := range sessions {
		s.close() // its streams end: their handlers return
	}
	if h.lanes != nil {
		h.lanes.close()
	}
	h.stop() // each relay closes its server
	done := make(chan struct{})
	go func() {
		h.relays.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mcpproxy: stopping the sessions' servers: %w", ctx.Err())
	}
}

func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.admit(w, r) {
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet, http.MethodDelete:
		if r.Header.Get(sessionHeader) == "" && stateless(r.Header.Get(versionHeader)) {
			// The stateless revision has neither the GET stream nor
			// sessions to delete (subscriptions/listen replaces the one).
			w.Header().Set("Allow", "POST")
			refuse(w, r, "toolcap: "+r.Method+" is not served for protocol version "+r.Header.Get(versionHeader)+" (stateless: POST only)", http.StatusMethodNotAllowed)
			return
		}
		if r.Method == http.MethodDelete {
			if s := h.session(w, r); s != nil {
				s.leave()
				s.close()
				w.WriteHeader(http.StatusNoContent)
			}
			return
		}
		if _, events := accepts(r.Header.Values("Accept")); !events {
			refuse(w, r, "toolcap: Accept must list text/event-stream", http.StatusNotAcceptable)
			return
		}
		if s := h.session(w, r); s != nil {
			s.serveGET(w, r)
			s.leave()
		}
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		refuse(w, r, "toolcap: method not allowed", http.StatusMethodNotAllowed)
	}
}

// session finds the request's session and counts the request as active in
// it until the caller calls leave, or answers 400 or 404.
func (h *HTTPHandler) session(w http.ResponseWriter, r *http.Request) *httpSession {
	id := r.Header.Get(sessionHeader)
	if id == "" {
		refuse(w, r, "toolcap: missing "+sessionHeader, http.StatusBadRequest)
		return nil
	}
	h.mu.Lock()
	s := h.sessions[id]
	h.mu.Unlock()
	if s == nil || !s.enter() {
		refuse(w, r, "toolcap: unknown or ended session", http.StatusNotFound)
		return nil
	}
	if s.auth != nil {
		// A refreshed or stepped-up token applies from this request on.
		s.auth.SetAuthorization(r.Header.Get("Authorization"))
	}
	return s
}

// reserve counts a session about to start against the bound, or answers
// 503.
func (h *HTTPHandler) reserve(w http.ResponseWriter, r *http.Request) bool {
	h.mu.Lock()
	closed, full := h.closed, len(h.sessions)+h.starting >= h.maxSessions
	if !closed && !full {
		h.starting++
	}
	h.mu.Unlock()
	switch {
	case closed:
		refuseRPC(w, r, http.StatusServiceUnavailable, codeServerBusy, "toolcap: the proxy is shutting down")
		return false
	case full:
		w.Header().Set("Retry-After", "10")
		refuseRPC(w, r, http.StatusServiceUnavailable, codeServerBusy,
			fmt.Sprintf("toolcap: the proxy serves its maximum of %d sessions (--max-sessions); retry later, or end a session (DELETE)", h.maxSessions))
		return false
	}
	return true
}

func (h *HTTPHandler) unreserve() {
	h.mu.Lock()
	h.starting--
	h.mu.Unlock()
}

func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request) {
	if !postHeaders(w, r) {
		return
	}
	// The session, or room for a new one, before the body is read.
	var s *httpSession
	reserved := false
	if r.Header.Get(sessionHeader) != "" {
		if s = h.session(w, r); s == nil {
			return
		}
		defer s.leave()
	} else if !stateless(r.Header.Get(versionHeader)) {
		if !h.reserve(w, r) {
			return
		}
		reserved = true
		defer func() {
			if reserved {
				h.unreserve()
			}
		}()
	}

	body, held, err := h.readBody(w, r)
	if err != nil {
		h.bodyError(w, r, err)
		return
	}
	defer func() { h.budget.give(held) }()
	body = bytes.TrimSpace(body)
	// The relay reads newline-delimited messages: a newline inside JSON is
	// whitespace (or invalid in a string anyway), so it becomes a space, in
	// place.
	for i, c := range body {
		if c == '\n' {
			body[i] = ' '
		}
	}
	if len(body) == 0 {
		writeRPCError(w, http.StatusBadRequest, codeInvalidRequest, "toolcap: empty request")
		return
	}
	reqs, initialize, err := requestsOf(body)
	if err != nil {
		writeRPCError(w, http.StatusBadRequest, codeParseError, "toolcap: "+err.Error())
		return
	}
	if h.p.opts.Trace != nil && len(reqs) == 1 {
		body = withHeaderTrace(body, r.Header)
	}

	// A request of the stateless revision is served on a lane, initialize
	// included (its server answers that it has no such method): only a
	// 2025 client's initialize, which names no version in a header,
	// starts a session.
	if s == nil && (!initialize || stateless(r.Header.Get(versionHeader))) {
		v := r.Header.Get(versionHeader)
		if v == "" && len(reqs) > 0 {
			v = requestVersion(body)
		}
		if reserved {
			h.unreserve()
			reserved = false
		}
		switch {
		case stateless(v) && h.lanes != nil:
			h.postStateless(w, r, body, reqs, &held)
		case stateless(v):
			h.refuseVersion(w, r, firstID(reqs), v)
		default:
			writeRPCError(w, http.StatusBadRequest, codeInvalidRequest,
				"toolcap: missing "+sessionHeader+": only an initialize request starts a session (or a request of protocol version "+statelessRevision+" or later, which needs none)")
		}
		return
	}
	if s == nil {
		s, err = h.start(r.Header.Get("Authorization"))
		h.unreserve()
		reserved = false
		if err != nil {
			if errors.Is(err, errClosed) {
				writeRPCError(w, http.StatusServiceUnavailable, codeServerBusy, "toolcap: the proxy is shutting down")
				return
			}
			h.p.logger.Error("could not reach the MCP server for a new session", "error", err)
			writeRPCError(w, http.StatusBadGateway, codeInternal, "toolcap: could not reach the MCP server: "+err.Error())
			return
		}
		defer s.leave()
		w.Header().Set(sessionHeader, s.id)
	}

	if len(reqs) == 0 {
		err := s.send(body)
		h.budget.give(held)
		held = 0
		if err != nil {
			writeRPCError(w, http.StatusNotFound, codeInvalidRequest, "toolcap: the session ended")
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	// One request, not in a batch: its response alone may be the answer
	// (a batch's answer is an array, of its responses).
	single := len(reqs) == 1 && body[0] != '['
	st, dup := s.openStream(reqs)
	if st == nil {
		writeRPCError(w, http.StatusBadRequest, codeInvalidRequest,
			fmt.Sprintf("toolcap: a request with id %s is already pending in this session; it was not forwarded", truncID([]byte(dup))))
		return
	}
	err = s.send(body)
	// The relay has taken the body: its bytes go back to the budget while
	// the response is awaited.
	h.budget.give(held)
	held, body = 0, nil
	if err != nil {
		s.drop(st)
		writeRPCError(w, http.StatusNotFound, codeInvalidRequest, "toolcap: the session ended")
		return
	}
	// The stream is served by this POST's connection, its number 1, and
	// when that breaks, by a GET that resumes it (serveGET).
	const conn = 1
	// With ForwardAuth, an upstream's refusal of these requests is the
	// answer itself (its status and headers), not an error in a 200: no
	// priming event may go before it.
	if s.auth == nil {
		s.finished(st, conn, h.answer(w, r, st, conn, single, primes(r.Header.Get(versionHeader))))
		return
	}
	g := s.auth.guard(w, postIDs(reqs), h.meta.challengeRewriter(r))
	complete := h.answer(g, r, st, conn, single, false)
	if g.relayed() {
		s.drop(st) // the answer was the refusal: there is nothing to resume
		if initialize {
			// A session the upstream refused to start holds no slot.
			s.close()
		}
		return
	}
	s.finished(st, conn, complete)
}

// answer writes the answer to a POST whose requests st answers, on its
// connection conn: its response alone as application/json when the POST
// has one request (single) and the response is the server's first message
// about it within h.jsonWait, or else the stream of its events (see
// eventStream.serve), a priming event first with prime. It reports whether
// the stream may be let go: it was delivered, or it was answered as JSON,
// which no client can resume.
func (h *HTTPHandler) answer(w http.ResponseWriter, r *http.Request, st *eventStream, conn uint64, single, prime bool) bool {
	if single && h.jsonWait > 0 {
		if msg, ok := st.awaitResponse(r.Context(), conn, h.jsonWait); ok {
			w.Header().Set("Content-Type", "application/json")
			if _, guarded := w.(*refusalGuard); !guarded {
				// Known, so the client need not read chunks; a refusal
				// relayed in its place has a length of its own.
				w.Header().Set("Content-Length", strconv.Itoa(msg.size()))
			}
			w.WriteHeader(http.StatusOK)
			if err := msg.writeTo(w); err != nil && !errors.Is(err, errRefusedUpstream) {
				h.p.logger.Debug("a client left before its response was written", "session", st.s.id, "error", err)
			}
			return true
		}
	}
	return st.serve(w, r, conn, prime)
}

// Mount registers h on mux at path (the endpoint, "/mcp" for
// toolcap mcp) and, for a proxy with [HTTPOptions.ForwardAuth] and
// [HTTPOptions.UpstreamURL], the endpoints a client authorizes through:
// the proxy's OAuth protected resource metadata (RFC 9728) at
// /.well-known/oauth-protected-resource followed by path and alone, the two
// places a client looks, and the 2025-03-26 authorization discovery and
// fallback endpoints (the two metadata documents, /authorize, /token and
// /register), relayed to the upstream's origin.
func (h *HTTPHandler) Mount(mux *http.ServeMux, path string) {
	mux.Handle(path, h)
	if h.meta == nil {
		return
	}
	mux.Handle(resourceMetadataPath+path, h.bodyBound(h.metadataHandler()))
	mux.Handle(resourceMetadataPath, h.bodyBound(h.metadataHandler()))
	for _, p := range legacyAuthorizationPaths {
		mux.Handle(p, h.bodyBound(h.legacyAuthorizationHandler()))
	}
}

// bodyBound returns next with a request's body bounded in time as the
// endpoint's is (BodyTimeout), for the OAuth endpoints, which read at
// most 64 KiB of one: a request with a body must send it within the
// timeout, and its connection is closed after the answer, so that what
// the handler left unread is not read either (closeAfter).
func (h *HTTPHandler) bodyBound(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			w.Header().Set("Connection", "close")
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.bodyTimeout))
		}
		next.ServeHTTP(w, r)
	})
}

// metadataHandler returns the handler of the proxy's OAuth protected
// resource metadata (RFC 9728), for a proxy with [HTTPOptions.ForwardAuth]
// and [HTTPOptions.UpstreamURL]; it answers 404 otherwise. [HTTPHandler.Mount]
// mounts it at resourceMetadataPath followed by the path the HTTPHandler
// serves at (/.well-known/oauth-protected-resource/mcp for /mcp), and at
// resourceMetadataPath alone, the two places a client looks.
//
// A client that connects to the proxy checks that the metadata names the
// proxy's URL as its resource, so the upstream's cannot be relayed as it
// is: each GET fetches the upstream's document afresh, from where the
// upstream's last refusal said (WWW-Authenticate's resource_metadata) or
// else from its own well-known path, and the resource is rewritten when it
// names the upstream's endpoint (to the proxy's endpoint, as the request
// named the proxy) or the upstream's origin (to the proxy's origin); any
// other resource is left as it is, for the client to refuse as it would
// directly. The rest of the document is the upstream's: the client
// authorizes with the upstream's authorization servers, not through the
// proxy. The resource_metadata of a refusal the proxy relays names the
// proxy's document in turn.
func (h *HTTPHandler) metadataHandler() http.Handler {
	if h.meta == nil {
		return http.NotFoundHandler()
	}
	return h.meta
}

// firstID returns the id of a POST's first request, nil for none.
func firstID(reqs []postRequest) []byte {
	if len(reqs) == 0 {
		return nil
	}
	return []byte(reqs[0].id)
}

// postIDs returns the ids of a POST's requests.
func postIDs(reqs []postRequest) []string {
	ids := make([]string, len(reqs))
	for i, q := range reqs {
		ids[i] = q.id
	}
	return ids
}

// errClosed reports a session that could not start because the handler
// was closed.
var errClosed = errors.New("the proxy is shutting down")

// start begins a new session: a server of its own, relayed through the
// proxy until either side ends. The session is returned active (see
// httpSession.enter).
func (h *HTTPHandler) start(authorization string) (*httpSession, error) {
	// The dial outlives the request that started it (a Conn may keep its
	// context: a client that leaves must not stop the server it started),
	// but not the handler: Close cancels a dial in progress, which
	// http.Server.Shutdown would otherwise wait out.
	ctx := h.base
	var auth *upstreamAuth
	if h.forwardAuth {
		auth = &upstreamAuth{}
		auth.SetAuthorization(authorization)
		ctx = withUpstreamAuth(ctx, auth)
	}
	server, err := h.dial(ctx)
	if err != nil {
		if h.base.Err() != nil {
			return nil, errClosed
		}
		return nil, err
	}
	s := newHTTPSession(h, auth)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		_ = server.Close()
		return nil, errClosed
	}
	h.sessions[s.id] = s
	h.relays.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.relays.Done()
		err := h.p.serve(h.base, s, server, "http:"+s.id)
		switch {
		case errors.Is(err, context.Canceled):
			h.p.logger.Debug("a session ended as the proxy shut down", "session", s.id)
		case err != nil:
			h.p.logger.Warn("a session ended", "session", s.id, "error", err)
		}
		h.mu.Lock()
		delete(h.sessions, s.id)
		h.mu.Unlock()
		s.close()
	}()
	return s, nil
}

// postRequest is a request a POST carries: its id, and the progress token
// its params' _meta names (empty when none), by which the server's
// progress notifications find its stream.
type postRequest struct {
	id    string // as it came
	key   string // idKey of id: what a response's id is matched by
	token string // idKey of the token
}

// newPostRequest returns the postRequest of a request whose id is id and
// whose progress token is token (as JSON; "" for none).
func newPostRequest(id []byte, token string) postRequest {
	r := postRequest{id: string(id), key: idKey(id)}
	if token != "" {
		r.token = idKey([]byte(token))
	}
	return r
}

// requestsOf reads the requests of a POST's body, one message or a batch,
// and whether one of them is initialize.
func requestsOf(body []byte) ([]postRequest, bool, error) {
	if body[0] != '[' {
		env, err := envelopeFitted(body)
		if err != nil {
			return nil, false, fmt.Errorf("not a JSON-RPC message: %w", err)
		}
		if !env.isRequest() {
			return nil, false, nil
		}
		return []postRequest{newPostRequest(env.id, progressTokenOf(body))}, env.method == "initialize", nil
	}
	// The nesting is measured the way the relay measures it, over the
	// whole batch: encoding/json below measures each element on its own,
	// so an element at its bound is one level past the relay's, which
	// then answers the batch with one error whose id is null, and the
	// POST would wait for its elements' ids forever.
	if env, err := envelopeFitted(body); err == nil && env.tooDeep {
		return nil, false, errors.New("the batch is " + deepWhy + "; it was not forwarded")
	}
	// A batch is walked one element at a time, each decoded into the same
	// buffer: what is held beside the body is the requests' ids, however
	// many elements it has.
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		return nil, false, errors.New("a batch that is not valid JSON is an invalid request")
	}
	var (
		reqs       []postRequest
		initialize bool
		elem       json.RawMessage
		n          int
	)
	for dec.More() {
		if err := dec.Decode(&elem); err != nil {
			return nil, false, errors.New("a batch that is not valid JSON is an invalid request")
		}
		n++
		// encoding/json rather than the relay's scanner, whose buffer
		// per message would be allocated again for each of millions of
		// elements: the batch is valid JSON already, and the relay reads
		// each element again with its own rules.
		var env struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		if elem[0] != '{' || json.Unmarshal(elem, &env) != nil {
			return nil, false, errors.New("not a JSON-RPC message: a batch element that is not an object")
		}
		// An id of null is no id, as the relay reads it: the element is a
		// notification, which gets no response to wait for.
		if env.ID != nil && string(env.ID) != "null" && env.Method != nil {
			reqs = append(reqs, newPostRequest(env.ID, progressTokenOf(elem)))
			initialize = initialize || *env.Method == "initialize"
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, false, errors.New("a batch that is not valid JSON is an invalid request")
	}
	if n == 0 {
		// JSON-RPC 2.0: an empty batch is an invalid request; it is not
		// forwarded.
		return nil, false, errors.New("an empty batch is an invalid request")
	}
	return reqs, initialize, nil
}

// progressTokenOf returns the progress token a request's params._meta
// names, as JSON, or "" when it names none.
func progressTokenOf(req []byte) string {
	if !bytes.Contains(req, []byte(`"progressToken"`)) {
		return "" // most requests: not decoded at all
	}
	var m struct {
		Params struct {
			Meta struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(req, &m) != nil {
		return ""
	}
	return string(m.Params.Meta.ProgressToken)
}

// notifiedToken returns the progress token of a progress notification from
// the server, or "".
func notifiedToken(msg []byte) string {
	var n struct {
		Params struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &n) != nil {
		return ""
	}
	return string(n.Params.ProgressToken)
}

// newSessionID returns a fresh, unguessable session id.
func newSessionID() string { return rand.Text() }

var _ Conn = (*httpSession)(nil)
