package mcpproxy

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// httpSession is one client's session: the client's side of a relay.
type httpSession struct {
	id   string
	h    *HTTPHandler
	auth *UpstreamAuth  // the session's link to its upstream with ForwardAuth; nil without
	in   *io.PipeWriter // the client's messages, to the relay
	inR  *io.PipeReader
	inMu sync.Mutex

	mu       sync.Mutex
	pending  map[string]*eventStream // POST streams waiting for a response, by request id
	progress map[string]*eventStream // the same streams, by the progress token their requests gave
	posts    []*eventStream          // the POST streams waiting for a response, oldest first
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
}

// newHTTPSession returns a session with one request active in it (the
// initialize that starts it: see enter) and auth, its link to the
// upstream with ForwardAuth.
func newHTTPSession(h *HTTPHandler, auth *UpstreamAuth) *httpSession {
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
// returns once the relay has read all of it.
func (s *httpSession) send(msg []byte) error {
	s.inMu.Lock()
	defer s.inMu.Unlock()
	// Two writes rather than msg with its newline appended: that would
	// copy a body that may be as large as the bound.
	if _, err := s.in.Write(msg); err != nil {
		return err
	}
	_, err := s.in.Write([]byte{'\n'})
	return err
}

// WriteMessage takes one of the relay's messages for the client and routes
// it to its stream (see route).
func (s *httpSession) WriteMessage(msg []byte) error {
	env, err := envelopeOfMessage(msg)
	if err != nil {
		env = nil // not a response: it goes where unrelated messages go
	}
	msg = bytes.Clone(msg) // it waits for its stream
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return io.ErrClosedPipe
	}
	s.route(msg, env)
	return nil
}

// route sends msg, whose envelope is env (nil when unknown), on its way;
// it requires s.mu. A response goes to the POST stream of its request. A
// progress notification goes to the stream of the request that gave its
// token; one whose POST stream is gone is dropped. Another message may relate to a pending request without saying so
// (a log line, or a request of the server's, made while serving it): when
// one POST stream is waiting, it goes there, before that request's
// response, as it came; otherwise on the GET stream. When no GET stream is
// open, it goes to the oldest POST stream waiting, or waits in the GET
// stream's log for the next stream to open.
func (s *httpSession) route(msg []byte, env *message) {
	response := env != nil && env.isResponse()
	if response {
		id := string(env.id)
		if st := s.pending[id]; st != nil {
			delete(s.pending, id)
			if tok := st.tokens[id]; tok != "" && s.progress[tok] == st {
				delete(s.progress, tok)
			}
			if _, finished := st.push(msg, true, false); finished {
				s.detach(st)
			}
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
	if env != nil && env.method == "notifications/progress" && len(s.progress) > 0 {
		if st := s.progress[notifiedToken(msg)]; st != nil {
			// Its own request's stream: a client that does not read it
			// past the bound has it cut off.
			if ok, _ := st.push(msg, false, true); !ok {
				s.detach(st)
				s.h.p.logger.Warn("a client fell behind on a POST stream by more than the stream buffer; the stream was cut off",
					"session", s.id, "stream_buffer", s.h.streamMax)
			}
			return
		}
	}
	var st *eventStream
	if !response && len(s.posts) == 1 {
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
			return
		}
	}
	s.logEvent(msg)
}

// openStream opens the POST stream of reqs, or returns the id of one of
// them already pending in the session (or twice in reqs), which refuses
// them all: two answers to one id could not be told apart.
func (s *httpSession) openStream(reqs []postRequest) (*eventStream, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range reqs {
		if s.pending[r.id] != nil || slices.ContainsFunc(reqs[:i], func(o postRequest) bool { return o.id == r.id }) {
			return nil, r.id
		}
	}
	st := newEventStream(len(reqs), s.h.streamMax)
	for _, r := range reqs {
		s.pending[r.id] = st
		st.ids = append(st.ids, r.id)
		if r.token != "" {
			s.progress[r.token] = st
			if st.tokens == nil {
				st.tokens = map[string]string{}
			}
			st.tokens[r.id] = r.token
		}
	}
	s.posts = append(s.posts, st)
	if s.get == nil {
		// What waited for a stream goes on this one.
		for _, ev := range s.log.after(s.log.delivered) {
			st.push(ev.msg, false, false)
			s.log.delivered = ev.id
		}
	}
	return st, ""
}

// closeStream forgets a POST stream whose handler returns.
func (s *httpSession) closeStream(st *eventStream) {
	s.mu.Lock()
	s.detach(st)
	s.mu.Unlock()
}

// detach forgets a POST stream: it gets no more messages. It requires s.mu.
func (s *httpSession) detach(st *eventStream) {
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
		s.posts = nil
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
	msg []byte
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
func (s *httpSession) logEvent(msg []byte) {
	l := &s.log
	l.last++
	l.events = append(l.events, logEvent{id: l.last, msg: msg})
	l.bytes += len(msg)
	lost := 0
	for l.bytes > s.h.streamMax && len(l.events) > 1 {
		old := l.events[0]
		l.events[0] = logEvent{} // released, even before the array is
		l.events = l.events[1:]
		l.bytes -= len(old.msg)
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

// serveGET serves the GET stream: the log's events from where the client
// resumes (Last-Event-ID) or from the first it was not sent.
func (s *httpSession) serveGET(w http.ResponseWriter, r *http.Request) {
	g := &getStream{wake: make(chan struct{}, 1)}
	resume := r.Header.Get("Last-Event-ID")
	var from uint64
	if resume != "" {
		n, err := strconv.ParseUint(resume, 10, 64)
		if err != nil {
			http.Error(w, "toolcap: Last-Event-ID is not an event id of this proxy's", http.StatusBadRequest)
			return
		}
		from = n
	}
	s.mu.Lock()
	if s.get != nil {
		s.mu.Unlock()
		http.Error(w, "toolcap: a GET stream is already open for this session", http.StatusConflict)
		return
	}
	if resume != "" {
		g.cursor = min(from, s.log.last)
		if len(s.log.events) > 0 && g.cursor+1 < s.log.events[0].id {
			s.h.p.logger.Warn("a client resumed its GET stream after events the proxy no longer holds",
				"session", s.id, "last_event_id", from, "oldest_held", s.log.events[0].id)
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

	startEvents(w)
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
			b = strconv.AppendUint(b, ev.id, 10)
			b = append(b, "\nevent: message\ndata: "...)
			if _, err := w.Write(b); err != nil {
				return
			}
			if _, err := w.Write(ev.msg); err != nil {
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

// startEvents begins a response of server-sent events.
func startEvents(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// eventStream is the stream of server-sent events answering one POST.
type eventStream struct {
	bound  int
	ids    []string          // the requests it answers
	tokens map[string]string // their progress tokens, by request id

	mu    sync.Mutex
	msgs  [][]byte
	bytes int  // of msgs
	left  int  // responses still to come
	ended bool // the session ended, or the client fell behind
	wake  chan struct{}
}

func newEventStream(responses, bound int) *eventStream {
	return &eventStream{left: responses, bound: bound, wake: make(chan struct{}, 1)}
}

// push queues msg. A response is always taken; another message is not when
// it would put more than the bound waiting for the client, which has then
// fallen behind: push reports false, and with cut the stream ends (its
// client is cut off). finished reports that the stream has all its
// responses (or has ended): it takes no more.
func (st *eventStream) push(msg []byte, response, cut bool) (ok, finished bool) {
	st.mu.Lock()
	if st.ended {
		st.mu.Unlock()
		return false, true
	}
	if !response && st.bytes > 0 && st.bytes+len(msg) > st.bound {
		if cut {
			st.ended, st.msgs, st.bytes = true, nil, 0
		}
		finished = st.ended || st.left == 0
		st.mu.Unlock()
		st.signal()
		return false, finished
	}
	st.msgs = append(st.msgs, msg)
	st.bytes += len(msg)
	if response && st.left > 0 {
		st.left--
	}
	finished = st.left == 0
	st.mu.Unlock()
	st.signal()
	return true, finished
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
	startEvents(w)
	flusher, _ := w.(http.Flusher)
	for {
		st.mu.Lock()
		msgs := st.msgs
		st.msgs, st.bytes = nil, 0
		done := st.left == 0 || st.ended
		st.mu.Unlock()
		for _, m := range msgs {
			if _, err := io.WriteString(w, "event: message\ndata: "); err != nil {
				return
			}
			if _, err := w.Write(m); err != nil {
				return
			}
			if _, err := io.WriteString(w, "\n\n"); err != nil {
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
