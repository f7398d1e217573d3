package mcpproxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// httpSession is one client's session: the client's side of a relay.
type httpSession struct {
	id string
	// stateless: it holds the streams of a stateless POST (MCP
	// 2026-07-28), which no client resumes: its events carry no id.
	stateless bool
	h         *HTTPHandler
	auth      *upstreamAuth  // the session's link to its upstream with ForwardAuth; nil without
	in        *io.PipeWriter // the client's messages, to the relay
	inR       *io.PipeReader
	inMu      sync.Mutex

	mu       sync.Mutex
	pending  map[string]*eventStream // POST streams waiting for a response, by request id (idKey)
	progress map[string]*eventStream // the same streams, by the progress token their requests gave (idKey)
	posts    []*eventStream          // the POST streams waiting for a response, oldest first
	streams  map[uint64]*eventStream // the POST streams a client may resume, by number
	streamN  uint64                  // the number of the latest POST stream; the GET stream is 0
	get      *getStream              // the GET stream, when one is open
	log      eventLog                // what goes on the GET stream
	active   int                     // requests being served and streams open
	idle     *time.Timer             // ends the session once it has been idle for h.idle
	done     chan struct{}
	closed   bool
	closing  sync.Once
	// dropWarned: the log's dropping messages while no stream was open
	// was warned about, since the last stream opened.
	dropWarned bool
	// replay is the bytes the session's POST streams hold only for a
	// client that resumes them (events already written): bounded by
	// h.replayMax across them.
	replay atomic.Int64
	// broken counts the POST streams whose connection broke, in order:
	// the oldest of those waiting to be resumed is let go first when they
	// hold more than h.heldMax (boundHeld).
	broken uint64
}

// newHTTPSession returns a session with one request active in it (the
// initialize that starts it: see enter) and auth, its link to the
// upstream with ForwardAuth.
func newHTTPSession(h *HTTPHandler, auth *upstreamAuth) *httpSession {
	inR, inW := io.Pipe()
	s := &httpSession{
		id:       newSessionID(),
		h:        h,
		auth:     auth,
		active:   1,
		in:       inW,
		inR:      inR,
		pending:  map[string]*eventStream{},
		progress: map[string]*eventStream{},
		streams:  map[uint64]*eventStream{},
		done:     make(chan struct{}),
	}
	// A timer, not a goroutine waiting: an idle session holds no thread
	// and no stack of its own here. It is started by the last request to
	// leave; until then it is set so far off that it cannot fire.
	s.idle = time.AfterFunc(math.MaxInt64, s.expire)
	return s
}

// enter counts a request as active in the session, which then does not
// expire until it leaves; it reports false when the session has ended.
func (s *httpSession) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.active++
	s.idle.Stop()
	return true
}

// leave ends what enter began; the last to leave starts the idle clock.
func (s *httpSession) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if s.active == 0 && !s.closed {
		s.idle.Reset(s.h.idle)
	}
}

// expire ends the session when it is still idle. It marks the session
// closed under the same lock as it checks that it is idle, so that a
// request entering at that moment either keeps the session (expire sees it
// active) or is refused by enter as for an ended session: never admitted
// into a session about to close under it.
func (s *httpSession) expire() {
	s.mu.Lock()
	if s.active > 0 || s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true // close, below, ends what it holds
	s.mu.Unlock()
	s.h.p.logger.Info("ended an idle session and stopped its server", "session", s.id, "idle", s.h.idle.String())
	s.close()
}

// Read gives the relay the client's messages.
func (s *httpSession) Read(p []byte) (int, error) { return s.inR.Read(p) }

// send hands one of the client's messages (one line) to the relay. It
// returns once the relay has read all of it. The byte past msg, when its
// capacity has one (a body's buffer has: see readBody), is the caller's
// to lose: the newline is written there.
func (s *httpSession) send(msg []byte) error {
	s.inMu.Lock()
	defer s.inMu.Unlock()
	if len(msg) < cap(msg) {
		// One write: the relay reads the line at once, rather than
		// coming back for its newline while this waits.
		_, err := s.in.Write(append(msg, '\n'))
		return err
	}
	// Two writes rather than msg with its newline appended: that would
	// copy a body that may be as large as the bound.
	if _, err := s.in.Write(msg); err != nil {
		return err
	}
	_, err := s.in.Write([]byte{'\n'})
	return err
}

// WriteMessage takes one of the relay's messages for the client and routes
// it to its stream (see route). The relay reuses msg's bytes once it
// returns: they are copied, once, to wait for their stream.
func (s *httpSession) WriteMessage(msg []byte) error {
	return s.deliver(heldMsg{bytes.Clone(msg)})
}

// writeMessageFunc takes the message write makes, as [piecesConn] says:
// made straight into chunks the session owns, never moved or copied
// again, so that a large result waiting for its stream is held once.
func (s *httpSession) writeMessageFunc(write func(jsonWriter)) error {
	var cw chunkWriter
	write(&cw)
	return s.deliver(cw.message())
}

// ownedConn is a Conn that holds messages for a while (the proxy's HTTP
// sessions, until their streams' clients read them), and takes over a
// message whose bytes its writer will never touch again, rather than
// copying them.
type ownedConn interface {
	// writeOwned takes the message in parts, as WriteMessage takes one
	// in one piece; the parts are the Conn's from then on.
	writeOwned(parts [][]byte) error
}

// writeOwned takes a message the session owns from now on (see
// [ownedConn]).
func (s *httpSession) writeOwned(parts [][]byte) error { return s.deliver(heldMsg(parts)) }

// deliver routes msg, which the session owns.
func (s *httpSession) deliver(msg heldMsg) error {
	env, err := msg.envelope()
	if err != nil {
		env = nil // not a response: it goes where unrelated messages go
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return io.ErrClosedPipe
	}
	s.route(msg, env)
	return nil
}

// relatesToCall reports whether a message of the server's, env, other
// than a response, may belong to a request of the client's being served:
// a request of the server's (roots, sampling, elicitation, made while
// serving one), a log line, progress, a cancellation of a request of the
// server's, the end of an elicitation. Any other notification
// (list_changed, resources/updated, one MCP does not define) is about the
// session, not about a request.
func relatesToCall(env *message) bool {
	if env.isRequest() {
		return true
	}
	switch env.method {
	case "notifications/message", "notifications/progress", "notifications/cancelled",
		"notifications/elicitation/complete":
		return true
	}
	return false
}

// route sends msg, whose envelope is env (nil when unknown), on its way;
// it requires s.mu. A response goes to the POST stream of its request. A
// progress notification goes to the stream of the request that gave its
// token; one whose POST stream is gone is dropped. A notification about
// the session (relatesToCall false) goes on the GET stream when one is
// open. Another message may relate to a pending request without saying so
// (a log line, or a request of the server's, made while serving it): when
// one POST stream is waiting, it goes there, before that request's
// response, as it came; otherwise on the GET stream. When no GET stream is
// open, it goes to the oldest POST stream waiting, or waits in the GET
// stream's log for the next stream to open.
func (s *httpSession) route(msg heldMsg, env *message) {
	response := env != nil && env.isResponse()
	if response {
		id := idKey(env.id)
		if st := s.pending[id]; st != nil {
			delete(s.pending, id)
			if tok := st.tokens[id]; tok != "" && s.progress[tok] == st {
				delete(s.progress, tok)
			}
			if _, finished := st.push(msg, true, false); finished {
				s.unroute(st)
			}
			s.boundHeldAfter(st)
			return
		}
		// Its request's client has left (its POST stream is gone), or it
		// answers no request of this session's: no other stream may carry
		// it (a client would take it for an answer to its own request of
		// that id), and the GET stream carries no responses.
		s.h.p.logger.Debug("dropped a response whose request's POST stream is gone",
			"session", s.id, "id", truncID(env.id))
		return
	}
	if env != nil && env.method == "notifications/progress" {
		if st := s.progress[idKey([]byte(notifiedToken(msg.flat())))]; st != nil {
			// Its own request's stream: a client that does not read it
			// past the bound has it cut off.
			if ok, _ := st.push(msg, false, true); !ok {
				s.unroute(st)
				s.h.p.logger.Warn("a client fell behind on a POST stream by more than the stream buffer; the stream was cut off",
					"session", s.id, "stream_buffer", s.h.streamMax)
			}
			s.boundHeldAfter(st)
			return
		}
		// Its request's stream is gone (answered, cut off, let go), or
		// its token is no request's of this session: no other stream may
		// carry it, as its client would take it for its own request's.
		s.h.p.logger.Debug("dropped a progress notification whose request's POST stream is gone", "session", s.id)
		return
	}
	if env != nil && !relatesToCall(env) && s.get != nil {
		s.logEvent(msg)
		return
	}
	var st *eventStream
	if len(s.posts) == 1 {
		st = s.posts[0]
	}
	if st == nil && s.get == nil && len(s.posts) > 0 {
		st = s.posts[0]
	}
	// A message that may not be the stream's own does not cut it off when
	// it is full (its response would be lost for it): it goes to the GET
	// stream's log, bounded the same way.
	if st != nil {
		if pushed, _ := st.push(msg, false, false); pushed {
			s.boundHeldAfter(st)
			return
		}
	}
	s.logEvent(msg)
}

// boundHeldAfter keeps the session's broken POST streams within their
// bound (boundHeld) once st, which was just given a message, is one of
// them. It requires s.mu.
func (s *httpSession) boundHeldAfter(st *eventStream) {
	if st.brokeAt != 0 {
		s.boundHeld()
	}
}

// boundHeld lets go of the POST streams whose connection broke and that
// wait for their clients to resume them, the oldest broken first, while
// they hold more than h.heldMax bytes in all (their events, written or
// not, responses included): a client that drops many calls with large
// responses pending makes the proxy hold them for the resume grace, and
// without this bound nothing else did (issue 39, item 7: 40 calls dropped
// with 14.4 MB responses pending held 760 MiB). It requires s.mu.
func (s *httpSession) boundHeld() {
	for {
		var total int64
		var oldest *eventStream
		for _, st := range s.streams {
			if st.brokeAt == 0 {
				continue
			}
			n := st.held()
			total += int64(n)
			if n > 0 && (oldest == nil || st.brokeAt < oldest.brokeAt) {
				oldest = st
			}
		}
		if total <= s.h.heldMax || oldest == nil {
			return
		}
		s.h.p.logger.Warn("POST streams waiting to be resumed hold more than the bound; the oldest was let go",
			"session", s.id, "stream", oldest.num, "held_bytes", total, "bound", s.h.heldMax)
		s.forget(oldest)
	}
}

// openStream opens the POST stream of reqs, or returns the id of one of
// them already pending in the session (or twice in reqs), which refuses
// them all: two answers to one id could not be told apart.
func (s *httpSession) openStream(reqs []postRequest) (*eventStream, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range reqs {
		if s.pending[r.key] != nil || slices.ContainsFunc(reqs[:i], func(o postRequest) bool { return o.key == r.key }) {
			return nil, r.id
		}
	}
	s.streamN++
	st := newEventStream(s, s.streamN, len(reqs))
	for _, r := range reqs {
		s.pending[r.key] = st
		st.ids = append(st.ids, r.key)
		if r.token != "" {
			s.progress[r.token] = st
			if st.tokens == nil {
				st.tokens = map[string]string{}
			}
			st.tokens[r.key] = r.token
		}
	}
	s.posts = append(s.posts, st)
	s.streams[st.num] = st
	if s.get == nil {
		// What waited for a stream goes on this one.
		for _, ev := range s.log.after(s.log.delivered) {
			st.push(ev.msg, false, false)
			s.log.delivered = ev.id
		}
	}
	return st, ""
}

// unroute takes a POST stream out of routing: it gets no more messages
// (it has all its responses, or it was cut off or let go). It may still be
// served, or resumed. It requires s.mu.
func (s *httpSession) unroute(st *eventStream) {
	s.posts = slices.DeleteFunc(s.posts, func(x *eventStream) bool { return x == st })
	for _, id := range st.ids {
		if s.pending[id] == st {
			delete(s.pending, id)
		}
	}
	for _, tok := range st.tokens {
		if s.progress[tok] == st {
			delete(s.progress, tok)
		}
	}
}

// forget lets a POST stream go: no more messages, no resumption, and what
// it held is released. It requires s.mu.
func (s *httpSession) forget(st *eventStream) {
	s.unroute(st)
	if s.streams[st.num] == st {
		delete(s.streams, st.num)
	}
	st.end()
}

// finished is called when a connection serving st returns: complete says
// it wrote the stream's last response and ended normally, which lets the
// stream go. Otherwise (the client went away, or a write failed) the
// stream waits h.resumeGrace for its client to resume it (GET with
// Last-Event-ID), still taking its messages, unless a newer connection
// serves it already.
func (s *httpSession) finished(st *eventStream, conn uint64, complete bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	grace := s.h.resumeGrace
	if complete || s.closed {
		grace = 0
	}
	var expire func() // made only when it may run: not for each stream delivered
	if grace > 0 {
		expire = func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if st.abandoned(conn) {
				s.h.p.logger.Info("a POST stream whose connection broke was not resumed in time; it was let go",
					"session", s.id, "stream", st.num, "resume_grace", grace.String())
				s.forget(st)
			}
		}
	}
	if !st.release(conn, grace, expire) {
		return // a newer connection serves it
	}
	if grace == 0 || st.isEnded() {
		s.forget(st)
		return
	}
	s.h.p.logger.Debug("a POST stream's connection broke before its response; it waits for its client to resume it",
		"session", s.id, "stream", st.num, "resume_grace", grace.String())
	s.broken++
	st.brokeAt = s.broken
	s.boundHeld()
}

// drop lets a POST stream go at once.
func (s *httpSession) drop(st *eventStream) {
	s.mu.Lock()
	s.forget(st)
	s.mu.Unlock()
}

// Close ends the client's side: the relay reads EOF.
func (s *httpSession) Close() error {
	s.close()
	return nil
}

func (s *httpSession) close() {
	s.closing.Do(func() {
		s.mu.Lock()
		s.closed = true
		close(s.done)
		s.idle.Stop()
		for _, st := range s.posts {
			st.end()
		}
		for _, st := range s.streams {
			st.end()
		}
		s.posts = nil
		clear(s.streams)
		clear(s.pending)
		clear(s.progress)
		if s.get != nil {
			s.get.end()
		}
		s.log = eventLog{}
		s.mu.Unlock()
		// Not under inMu: a send blocked on a pipe nobody reads any more
		// holds it; closing the pipe ends that send, and the relay reads
		// EOF, the client's end of the session.
		_ = s.in.Close()
	})
}

// eventLog holds what the server sends on the GET stream, each message an
// event with an id, the latest of them kept (up to the stream buffer) so
// that a client can resume the stream from the last event it read.
type eventLog struct {
	events    []logEvent // oldest first, ids consecutive
	bytes     int
	last      uint64 // the id of the latest event; ids start at 1
	delivered uint64 // the id of the latest event written to a stream
}

type logEvent struct {
	id  uint64
	msg heldMsg
}

// after returns the events after id, a copy the caller may keep.
func (l *eventLog) after(id uint64) []logEvent {
	if len(l.events) == 0 || id >= l.last {
		return nil
	}
	first := l.events[0].id
	if id < first {
		return slices.Clone(l.events)
	}
	return slices.Clone(l.events[id-first+1:])
}

// logEvent appends msg to the GET stream's log, and drops the oldest
// events past the bound. A GET stream that had not written an event
// dropped has fallen behind by the bound: it is cut off. It requires s.mu.
func (s *httpSession) logEvent(msg heldMsg) {
	l := &s.log
	l.last++
	l.events = append(l.events, logEvent{id: l.last, msg: msg})
	l.bytes += msg.size()
	lost := 0
	for l.bytes > s.h.streamMax && len(l.events) > 1 {
		old := l.events[0]
		l.events[0] = logEvent{} // released, even before the array is
		l.events = l.events[1:]
		l.bytes -= old.msg.size()
		if old.id > l.delivered || (s.get != nil && old.id > s.get.cursor) {
			lost++
		}
	}
	if lost > 0 {
		if s.get != nil {
			s.get.end()
			s.get = nil
			s.h.p.logger.Warn("a client fell behind on its GET stream by more than the stream buffer; the stream was cut off",
				"session", s.id, "stream_buffer", s.h.streamMax, "dropped_messages", lost)
		} else if !s.dropWarned {
			// Once until a stream opens: a server that keeps sending
			// would otherwise log a line per message.
			s.dropWarned = true
			s.h.p.logger.Warn("messages for a session with no stream open are over the stream buffer; the oldest are dropped",
				"session", s.id, "stream_buffer", s.h.streamMax)
		}
		// Nothing dropped is delivered now.
		l.delivered = max(l.delivered, l.events[0].id-1)
	}
	if s.get != nil {
		s.get.signal()
	}
}

// getStream is the GET stream of a session.
type getStream struct {
	wake   chan struct{}
	cursor uint64 // the id of the last event written; under the session's mu
	ended  bool   // under the session's mu
}

func (g *getStream) end() {
	g.ended = true
	g.signal()
}

func (g *getStream) signal() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// Event ids. Every event of a session has an id unique in the session
// that names its stream: "S_N", the Nth event of stream S, where the GET
// stream is 0 and each POST stream has the next number (1, 2, ...), N
// counting from 1 (a POST stream's priming event, which carries no
// message, is its 0). The go-sdk and the TypeScript SDK write theirs the
// same way; a client treats them as opaque, sends the last it read as
// Last-Event-ID, and gets the events of that stream after it.

// appendEventID appends the id of event n of stream.
func appendEventID(b []byte, stream, n uint64) []byte {
	b = strconv.AppendUint(b, stream, 10)
	b = append(b, '_')
	return strconv.AppendUint(b, n, 10)
}

// parseEventID reads an event id of the proxy's: its stream and number.
func parseEventID(id string) (stream, n uint64, ok bool) {
	a, b, found := strings.Cut(id, "_")
	if !found {
		return 0, 0, false
	}
	stream, err1 := strconv.ParseUint(a, 10, 64)
	n, err2 := strconv.ParseUint(b, 10, 64)
	return stream, n, err1 == nil && err2 == nil
}

// serveGET serves a GET: the session's GET stream, its log's events from
// where the client resumes (Last-Event-ID of stream 0) or from the first
// it was not sent; or, with the Last-Event-ID of a POST stream, the rest of
// that stream.
func (s *httpSession) serveGET(w http.ResponseWriter, r *http.Request) {
	g := &getStream{wake: make(chan struct{}, 1)}
	resume := r.Header.Get("Last-Event-ID")
	var from uint64
	if resume != "" {
		stream, n, ok := parseEventID(resume)
		if !ok {
			writeRPCError(w, http.StatusBadRequest, codeInvalidRequest, "toolcap: malformed Last-Event-ID "+strconv.Quote(resume)+": not an event id of this proxy's")
			return
		}
		if stream != 0 {
			s.resumePOST(w, r, stream, n)
			return
		}
		from = n
	}
	s.mu.Lock()
	if s.get != nil {
		s.mu.Unlock()
		writeRPCError(w, http.StatusConflict, codeInvalidRequest, "toolcap: a GET stream is already open for this session")
		return
	}
	if resume != "" {
		g.cursor = min(from, s.log.last)
		if len(s.log.events) > 0 && g.cursor+1 < s.log.events[0].id {
			s.h.p.logger.Warn("a client resumed its GET stream after events the proxy no longer holds",
				"session", s.id, "last_event_id", resume, "oldest_held", s.log.events[0].id)
		}
	} else {
		g.cursor = s.log.delivered
	}
	s.get = g
	s.dropWarned = false
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.get == g {
			s.get = nil
		}
		s.mu.Unlock()
	}()

	startEvents(w, true)
	flusher, _ := w.(http.Flusher)
	var b []byte
	for {
		s.mu.Lock()
		evs, ended := s.log.after(g.cursor), g.ended
		s.mu.Unlock()
		if ended {
			return
		}
		for _, ev := range evs {
			b = append(b[:0], "id: "...)
			b = appendEventID(b, 0, ev.id)
			b = append(b, "\nevent: message\ndata: "...)
			if _, err := w.Write(b); err != nil {
				return
			}
			if err := ev.msg.writeTo(w); err != nil {
				return
			}
			if _, err := io.WriteString(w, "\n\n"); err != nil {
				return
			}
		}
		if len(evs) > 0 {
			if flusher != nil {
				flusher.Flush()
			}
			last := evs[len(evs)-1].id
			s.mu.Lock()
			g.cursor = max(g.cursor, last)
			s.log.delivered = max(s.log.delivered, last)
			s.mu.Unlock()
			continue
		}
		select {
		case <-g.wake:
		case <-r.Context().Done():
			return
		}
	}
}

// resumePOST serves the rest of POST stream number stream to a client
// that read it up to its event n: the events after n, then the rest as it
// comes, until its last response. A stream the session no longer holds
// (answered and let go, or not resumed within the grace), or events after
// n it no longer holds, is answered 400, as the go-sdk's server answers a
// Last-Event-ID it cannot replay from (404 would tell the client its
// session is gone).
func (s *httpSession) resumePOST(w http.ResponseWriter, r *http.Request, stream, n uint64) {
	s.mu.Lock()
	st := s.streams[stream]
	var conn uint64
	why := "it was answered, or not resumed in time"
	if st != nil {
		if conn, why = st.resume(n); conn != 0 {
			st.brokeAt = 0 // served again: no longer held for its client alone
		}
	}
	s.mu.Unlock()
	if conn == 0 {
		s.h.p.logger.Info("a client could not resume a POST stream", "session", s.id, "stream", stream, "last_event_id", n, "why", why)
		writeRPCError(w, http.StatusBadRequest, codeInvalidRequest, fmt.Sprintf("toolcap: failed to replay events: stream %d after event %d: %s", stream, n, why))
		return
	}
	complete := st.serve(w, r, conn, false)
	s.finished(st, conn, complete)
}

// startEvents begins a response of server-sent events. With flush, its
// headers go out at once; otherwise with what is written next, when it is
// flushed.
func startEvents(w http.ResponseWriter, flush bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok && flush {
		f.Flush()
	}
}

// eventStream is the stream of server-sent events answering one POST. Its
// events are kept, each with its number, until the stream has been
// written whole on a connection that ended normally, so that a client
// whose connection broke can resume it from the last event it read (see
// httpSession.resumePOST): those not written yet (a response always, any
// other message while they are within the bound), and those written
// (within the bound of the stream, and of the session across its streams).
type eventStream struct {
	s      *httpSession
	num    uint64            // its number in the session: the S of its events' ids
	bound  int               // of bytes waiting, and of bytes kept once written
	ids    []string          // the requests it answers, by idKey
	tokens map[string]string // their progress tokens (idKey), by request

	mu      sync.Mutex
	events  []streamEvent // held, oldest first: the first is number first
	first   uint64
	written uint64 // the number of the last event written on the connection serving it
	waiting int    // bytes of the events after written
	kept    int    // bytes of the events up to written, kept for a resumption
	left    int    // responses still to come
	ended   bool   // the session ended, the client fell behind, or the stream was let go
	conn    uint64 // the connection serving it (see serve); 0 when none
	conns   uint64 // the connections it has had
	wake    chan struct{}
	grace   *time.Timer // lets it go when no connection resumes it

	// brokeAt orders the stream among the session's broken ones (the
	// session's broken count when its connection broke); 0 while a
	// connection serves it. Under the session's mu.
	brokeAt uint64
}

type streamEvent struct {
	msg      heldMsg
	response bool
}

// newEventStream returns the stream number num of s for responses
// responses, served by its POST's connection (number 1).
func newEventStream(s *httpSession, num uint64, responses int) *eventStream {
	return &eventStream{
		s: s, num: num, left: responses, bound: s.h.streamMax,
		first: 1, conn: 1, conns: 1, wake: make(chan struct{}, 1),
	}
}

// push queues msg. A response is always taken; another message is not when
// it would put more than the bound waiting for the client, which has then
// fallen behind: push reports false, and with cut the stream ends (its
// client is cut off). finished reports that the stream has all its
// responses (or has ended): it takes no more.
func (st *eventStream) push(msg heldMsg, response, cut bool) (ok, finished bool) {
	size := msg.size()
	st.mu.Lock()
	if st.ended {
		st.mu.Unlock()
		return false, true
	}
	if !response && st.waiting > 0 && st.waiting+size > st.bound {
		if cut {
			st.endLocked()
		}
		finished = st.ended || st.left == 0
		st.mu.Unlock()
		st.signal()
		return false, finished
	}
	st.events = append(st.events, streamEvent{msg: msg, response: response})
	st.waiting += size
	if response && st.left > 0 {
		st.left--
	}
	finished = st.left == 0
	st.mu.Unlock()
	st.signal()
	return true, finished
}

// end lets the stream's events go; a connection serving it returns.
func (st *eventStream) end() {
	st.mu.Lock()
	st.endLocked()
	st.mu.Unlock()
	st.signal()
}

func (st *eventStream) endLocked() {
	st.ended = true
	clear(st.events)
	st.events = nil
	st.s.replay.Add(-int64(st.kept))
	st.waiting, st.kept = 0, 0
	if st.grace != nil {
		st.grace.Stop()
	}
}

func (st *eventStream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// last is the number of the latest event; it requires st.mu.
func (st *eventStream) last() uint64 { return st.first + uint64(len(st.events)) - 1 }

// wrote records that the connection conn has written the events up to
// number n: they are kept only for a resumption from now on, within the
// bounds (the oldest let go first).
func (st *eventStream) wrote(conn, n uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.conn != conn || st.ended || n <= st.written {
		return
	}
	st.setWritten(n)
}

// setWritten moves the stream's mark of what its client has to n: the
// events up to n are kept only for a resumption from now on, within the
// bounds (the oldest let go first), and those after it wait to be written
// (again). It requires st.mu.
func (st *eventStream) setWritten(n uint64) {
	bytes := func(from, to uint64) (sum int) {
		for i := from; i <= to; i++ {
			sum += st.events[i-st.first].msg.size()
		}
		return sum
	}
	if n > st.written {
		moved := bytes(st.written+1, n)
		st.written = n
		st.waiting -= moved
		st.kept += moved
		st.trimKept(st.s.replay.Add(int64(moved)))
		return
	}
	moved := bytes(n+1, st.written)
	st.written = n
	st.kept -= moved
	st.waiting += moved
	st.s.replay.Add(-int64(moved))
}

// trimKept lets go of the oldest events written while those kept for a
// resumption pass the stream's bound, or replay (the session's total of
// them) the session's. It requires st.mu.
func (st *eventStream) trimKept(replay int64) {
	limit := int64(st.s.h.replayMax)
	for st.first <= st.written && (st.kept > st.bound || replay > limit) {
		size := st.events[0].msg.size()
		st.events[0] = streamEvent{} // released, even before the array is
		st.events = st.events[1:]
		st.first++
		st.kept -= size
		replay = st.s.replay.Add(-int64(size))
	}
}

// resume attaches a new connection to the stream for a client that read
// it up to event n, superseding any connection serving it (the client
// knows where it is; an older connection of its own may not have been
// seen to break yet). It returns the connection's number, or 0 and why
// when the events after n are not held. It requires the session's mu.
func (st *eventStream) resume(n uint64) (uint64, string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case st.ended:
		return 0, "it was cut off or let go"
	case n+1 < st.first:
		return 0, fmt.Sprintf("the events after it are no longer held (the oldest held is %d_%d)", st.num, st.first)
	case n > st.last():
		return 0, "no such event was sent"
	}
	if st.grace != nil {
		st.grace.Stop()
		st.grace = nil
	}
	// The client's Last-Event-ID says what it has: what it did not read
	// waits again, and events it read that its connection had not recorded
	// as written (a write that failed part way through a batch, or a
	// connection superseded while writing) are not sent again.
	st.setWritten(n)
	st.conns++
	st.conn = st.conns
	st.signal() // the superseded connection returns
	return st.conn, ""
}

// release detaches the connection conn when it still serves the stream,
// and then, with a grace, starts the clock after which expire lets the
// stream go unless a connection resumed it. It reports whether conn was
// serving it, and whether the stream has ended.
func (st *eventStream) release(conn uint64, grace time.Duration, expire func()) (current bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.conn != conn {
		return false
	}
	st.conn = 0
	if grace > 0 && !st.ended {
		st.grace = time.AfterFunc(grace, expire)
	}
	return true
}

// held returns the bytes of the events the stream holds, written or not.
func (st *eventStream) held() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.waiting + st.kept
}

func (st *eventStream) isEnded() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ended
}

// abandoned reports that no connection has served the stream since conn
// was released: its grace has passed unused.
func (st *eventStream) abandoned(conn uint64) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.conn == 0 && st.conns == conn
}

// awaitResponse waits for the stream's first event, at most wait, and
// returns it when it is the stream's last response: then the stream holds
// that response alone, and takes nothing more (route let it go), so that
// the response is the whole answer. It reports false when another message
// comes first, when wait passes first, and when the stream ended, the
// connection conn no longer serves it or ctx (its client's) ended: serve
// then writes what there is, or finds out why there is nothing.
func (st *eventStream) awaitResponse(ctx context.Context, conn uint64, wait time.Duration) (heldMsg, bool) {
	var timeout <-chan time.Time
	for {
		st.mu.Lock()
		if st.conn != conn || st.ended {
			st.mu.Unlock()
			return nil, false
		}
		if len(st.events) > 0 {
			first := st.events[0]
			answered := st.written == 0 && first.response && st.left == 0 && len(st.events) == 1
			st.mu.Unlock()
			if !answered {
				return nil, false
			}
			return first.msg, true
		}
		st.mu.Unlock()
		if timeout == nil {
			// Made only once the response has been found not to be
			// there already.
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-st.wake:
		case <-timeout:
			return nil, false
		case <-ctx.Done():
			return nil, false
		}
	}
}

// primes reports whether the POST streams of protocol version begin
// with a priming event (an id and no data, 2025-11-25's SEP-1699), as the
// go-sdk's server sends them: a client can then resume a stream that
// breaks before its first message. Before 2025-11-25 clients do not
// expect it; from 2026-07-28 streams are no longer resumed this way.
func primes(version string) bool { return version >= "2025-11-25" && version < "2026-07-28" }

// serve writes the stream's events after the last the connection conn's
// client read (none when it opens the stream) until its last response,
// the end of the stream or the session, the client's going away or a
// newer connection's taking the stream over. With prime, it first writes a
// priming event. It reports whether it wrote the last response and
// nothing failed: the stream was delivered.
func (st *eventStream) serve(w http.ResponseWriter, r *http.Request, conn uint64, prime bool) bool {
	// The headers and the priming event go out with the first events
	// when there are some already (a message came before the response),
	// in one write; else before the stream waits (see below).
	startEvents(w, false)
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	var b []byte
	if prime {
		b = append(b[:0], "id: "...)
		b = appendEventID(b, st.num, 0)
		b = append(b, "\ndata: \n\n"...)
		if _, err := w.Write(b); err != nil {
			return false
		}
	}
	var evs []streamEvent
	for {
		st.mu.Lock()
		if st.conn != conn || st.ended {
			st.mu.Unlock()
			return false
		}
		from := st.written + 1
		evs = append(evs[:0], st.events[from-st.first:]...)
		done := st.left == 0
		st.mu.Unlock()
		for i, ev := range evs {
			b = b[:0]
			if !st.s.stateless {
				// An id a client can resume the stream from; the
				// stateless revision resumes none (SEP-2575), and an id
				// would promise it.
				b = append(b, "id: "...)
				b = appendEventID(b, st.num, from+uint64(i))
				b = append(b, '\n')
			}
			b = append(b, "event: message\ndata: "...)
			if _, err := w.Write(b); err != nil {
				return false
			}
			if err := ev.msg.writeTo(w); err != nil {
				return false
			}
			if _, err := io.WriteString(w, "\n\n"); err != nil {
				return false
			}
		}
		clear(evs) // the stream holds them; this copy of the list does not
		if len(evs) > 0 {
			flush()
			st.wrote(conn, from+uint64(len(evs))-1)
		}
		if done {
			// A client seen to have gone while the last events were
			// written may not have them: it can resume.
			return r.Context().Err() == nil
		}
		if len(evs) > 0 {
			continue
		}
		// What was written goes out before the wait: the headers and the
		// priming event of a stream with no events yet (a flush of
		// nothing writes nothing).
		flush()
		select {
		case <-st.wake:
		case <-r.Context().Done():
			return false
		}
	}
}

// heldMsg is one message of the server's held for a stream: its bytes, in
// chunks that are never moved.
type heldMsg [][]byte

func (m heldMsg) size() int {
	n := 0
	for _, c := range m {
		n += len(c)
	}
	return n
}

func (m heldMsg) writeTo(w io.Writer) error {
	for _, c := range m {
		if _, err := w.Write(c); err != nil {
			return err
		}
	}
	return nil
}

// flat returns the message in one slice: its only chunk, or a copy.
func (m heldMsg) flat() []byte {
	if len(m) == 1 {
		return m[0]
	}
	return bytes.Join(m, nil)
}

// envelope reads the message's envelope (see envelopeOfMessage), through
// its chunks where they lie.
func (m heldMsg) envelope() (*message, error) {
	if len(m) == 1 {
		return envelopeFitted(m[0])
	}
	rs := make([]io.Reader, len(m))
	for i, c := range m {
		rs[i] = bytes.NewReader(c)
	}
	r := newReader(io.MultiReader(rs...), 0, envelopeScan)
	r.idMax = m.size() // the id is in the message, held whole already
	env, err := r.next(nil)
	if err != nil {
		return nil, err
	}
	env.raw, env.tooLarge = nil, false
	return env, nil
}

// envelopeFitted reads the envelope of msg, one whole message or batch, as
// envelopeOfMessage does, through a read buffer no larger than msg: the
// HTTP side reads the envelope of every message it routes (a POST's, and
// each of the server's), most of them far smaller than envelopeScan, whose
// buffer for each was half the bytes a small call allocated.
func envelopeFitted(msg []byte) (*message, error) {
	return envelopeIn(msg, min(len(msg), envelopeScan))
}

// chunkWriter is the [jsonWriter] a message is made into for a stream:
// chunks that double in size from 4 KiB up to 1 MiB, never moved once
// written (a bytes.Buffer would copy a large message each time it grows,
// and hold twice its size meanwhile).
type chunkWriter struct {
	full [][]byte
	cur  []byte
}

const (
	firstChunk = 4 << 10
	chunkMax   = 1 << 20
)

func (c *chunkWriter) room() {
	if len(c.cur) < cap(c.cur) {
		return
	}
	size := firstChunk
	if c.cur != nil {
		c.full = append(c.full, c.cur)
		size = min(2*cap(c.cur), chunkMax)
	}
	c.cur = make([]byte, 0, size)
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		c.room()
		k := copy(c.cur[len(c.cur):cap(c.cur)], p)
		c.cur = c.cur[:len(c.cur)+k]
		p = p[k:]
	}
	return n, nil
}

func (c *chunkWriter) WriteString(p string) (int, error) {
	n := len(p)
	for len(p) > 0 {
		c.room()
		k := copy(c.cur[len(c.cur):cap(c.cur)], p)
		c.cur = c.cur[:len(c.cur)+k]
		p = p[k:]
	}
	return n, nil
}

func (c *chunkWriter) WriteByte(b byte) error {
	c.room()
	c.cur = append(c.cur, b)
	return nil
}

// message returns what was written.
func (c *chunkWriter) message() heldMsg {
	if len(c.cur) > 0 {
		return append(c.full, c.cur)
	}
	return c.full
}

var (
	_ piecesConn = (*httpSession)(nil)
	_ ownedConn  = (*httpSession)(nil)
)
