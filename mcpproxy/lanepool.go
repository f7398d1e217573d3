package mcpproxy

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
)

// DefaultStatelessServers is how many server connections (for a server
// that is a command, processes) the stateless requests of an
// [HTTPHandler] share when [HTTPOptions.StatelessServers] is zero.
const DefaultStatelessServers = 4

// lanePool holds the lanes of an HTTPHandler's stateless requests: at most
// size, each a relay session of its own to a server connection of its
// own, started when the requests in flight on every lane need another. A
// lane whose server ends is replaced by the next request that needs one.
type lanePool struct {
	h    *HTTPHandler
	dial func(ctx context.Context) (Conn, error)
	size int
	next atomic.Int64 // the lanes' ids and progress tokens, unique across them

	mu     sync.Mutex
	lanes  []*lane
	closed bool
	// rt is the transport of the lanes' HTTP requests, when the server
	// is an HTTP one: made at first use (by a dial, under mu), shared by
	// the lanes.
	rtOnce sync.Once
	rt     *http.Transport
}

// transport returns the lanes' transport: http.DefaultTransport's, keeping
// more idle connections to the server (the lanes have many requests in
// flight at once, each on a connection of its own, where the default
// keeps 2, and a connection closed for want of room is a new handshake for
// the next request).
func (lp *lanePool) transport() http.RoundTripper {
	lp.rtOnce.Do(func() {
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			lp.rt = t.Clone()
			lp.rt.MaxIdleConnsPerHost = 64
		}
	})
	if lp.rt == nil {
		return http.DefaultTransport
	}
	return lp.rt
}

// acquire returns the lane for a POST's requests: the least busy, or a new
// one while the pool has room and every lane has a call in flight.
func (lp *lanePool) acquire() (*lane, error) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.closed {
		return nil, errClosed
	}
	var best *lane
	bestLoad := 0
	live := lp.lanes[:0]
	for _, l := range lp.lanes {
		n, dead := l.load()
		if dead {
			continue
		}
		live = append(live, l)
		if best == nil || n < bestLoad {
			best, bestLoad = l, n
		}
	}
	clear(lp.lanes[len(live):])
	lp.lanes = live
	if best != nil && (bestLoad == 0 || len(lp.lanes) >= lp.size) {
		return best, nil
	}
	l, err := lp.start()
	if err != nil {
		if best != nil {
			return best, nil // the lanes there are carry it
		}
		return nil, err
	}
	lp.lanes = append(lp.lanes, l)
	return l, nil
}

// acquireListen returns the lane that carries the stateless listens: the
// oldest running, or a new one when none runs.
func (lp *lanePool) acquireListen() (*lane, error) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.closed {
		return nil, errClosed
	}
	for _, l := range lp.lanes {
		if _, dead := l.load(); !dead {
			return l, nil
		}
	}
	l, err := lp.start()
	if err != nil {
		return nil, err
	}
	lp.lanes = append(lp.lanes, l)
	return l, nil
}

// start dials a server connection and starts a lane's relay over it; it
// requires lp.mu.
func (lp *lanePool) start() (*lane, error) {
	h := lp.h
	l := newLane(lp)
	server, err := lp.dial(withStatelessLink(h.base, l))
	if err != nil {
		if h.base.Err() != nil {
			return nil, errClosed
		}
		return nil, err
	}
	h.relays.Add(1)
	go func() {
		defer h.relays.Done()
		err := h.p.serve(h.base, l, laneServer{server, l}, "stateless")
		switch {
		case err == nil, errors.Is(err, context.Canceled):
		default:
			h.p.logger.Warn("a stateless lane's server ended; the next request starts another", "error", err)
		}
		l.ended(err)
	}()
	return l, nil
}

// close ends every lane: their relays read EOF and close their servers.
func (lp *lanePool) close() {
	lp.mu.Lock()
	lp.closed = true
	lanes := lp.lanes
	lp.lanes = nil
	lp.mu.Unlock()
	for _, l := range lanes {
		_ = l.Close()
	}
	lp.rtOnce.Do(func() {}) // no transport made from here on
	if lp.rt != nil {
		lp.rt.CloseIdleConnections()
	}
}
