//go:build !toolcap_nomcp

package cli

import (
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
)

// defaultMaxConns is --max-conns's default: four connections for each of
// the default 64 sessions (its event stream and a few requests at once),
// well inside the usual limit of 1,024 descriptors, which the sessions'
// server processes share (three pipes each).
const defaultMaxConns = 256

// limitListener accepts at most n connections open at once. Past them,
// Accept waits for one to close, and the connections that come meanwhile
// wait in the kernel's backlog, holding no descriptor of the proxy's: a
// crowd of idle or slow clients cannot run the proxy out of descriptors,
// which its sessions' servers need too.
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

// Close closes the listener and ends an Accept waiting for a slot.
func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when it is closed, once.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// Descriptors a session may hold besides its client connections: its
// server's pipes (three) and the handle the proxy waits on it by, or a
// --url session's connections; and those of the proxy itself (its
// listener, its logs, the manifests it watches). The store's are counted
// apart (storeDescriptors).
const (
	fdsPerSession = 4
	fdsReserved   = 32
	// minConns is the fewest --max-conns a fitting lowers it to.
	minConns = 16
)

// descriptorPlan is what the proxy's descriptors go to under --listen:
// the client connections, the sessions' servers and the stateless
// revision's, each with what it holds of the store, and the store's own.
type descriptorPlan struct {
	conns, sessions, stateless int
	connsSet, sessionsSet      bool // given, not their defaults
	// storeFixed is what the store holds whatever the sessions (a
	// directory's directory and lock, a Redis pool); storePer what it may
	// hold for each server relaying a result (a directory's entry file).
	storeFixed, storePer int
}

// perServer is the descriptors of one session's or stateless lane's
// server, the store's share included.
func (p descriptorPlan) perServer() int { return fdsPerSession + p.storePer }

// need is the descriptors conns connections and sessions sessions take,
// with the plan's stateless servers and store.
func (p descriptorPlan) need(conns, sessions int) int {
	return conns + (sessions+p.stateless)*p.perServer() + fdsReserved + p.storeFixed
}

// fitDescriptors returns the --max-conns and --max-sessions to serve with
// under an open-file limit of nofile (0: unknown), and a warning when the
// plan's do not fit it. What was given is kept, with the warning; what
// was left at its default is lowered to fit: --max-conns to what the
// sessions leave (never below 16), --max-sessions to what the connections
// leave, and both, when neither was given, in the ratio of their defaults
// (four connections a session), the connections taking what the sessions
// leave. The proxy that ran out of descriptors could not start a
// session's server, nor accept: at `ulimit -n 256` the default
// --max-conns was lowered to 16 while --max-sessions stayed 64, the store
// was not counted, and the 61st session got "too many open files" (issue
// 39, item 8).
func fitDescriptors(p descriptorPlan, nofile uint64) (conns, sessions int, warning string) {
	conns, sessions = p.conns, p.sessions
	if nofile == 0 || uint64(p.need(conns, sessions)) <= nofile {
		return conns, sessions, ""
	}
	limit := int(min(nofile, 1<<30))
	per := p.perServer()
	// What the connections and the sessions share.
	room := limit - fdsReserved - p.storeFixed - p.stateless*per
	switch {
	case p.connsSet && p.sessionsSet:
	case p.sessionsSet:
		conns = max(room-sessions*per, minConns)
	case p.connsSet:
		sessions = max((room-conns)/per, 1)
	default:
		sessions = max(room/(4+per), 1)
		conns = max(room-sessions*per, minConns)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the open-file limit is %d: ", nofile)
	var lowered []string
	if conns != p.conns {
		lowered = append(lowered, fmt.Sprintf("--max-conns from %d to %d", p.conns, conns))
	}
	if sessions != p.sessions {
		lowered = append(lowered, fmt.Sprintf("--max-sessions from %d to %d", p.sessions, sessions))
	}
	if len(lowered) > 0 {
		fmt.Fprintf(&b, "lowered %s; ", strings.Join(lowered, " and "))
	}
	need := p.need(conns, sessions)
	fmt.Fprintf(&b, "%d connections, %d servers (%d sessions, %d stateless) at %d descriptors each and %d of the proxy's own (the store's %d included) need about %d",
		conns, sessions+p.stateless, sessions, p.stateless, per, fdsReserved+p.storeFixed, p.storeFixed, need)
	if uint64(need) > nofile {
		b.WriteString(", over the limit; raise it (ulimit -n) or lower --max-conns, --max-sessions and --stateless-servers")
	} else {
		b.WriteString("; raise the limit (ulimit -n) for more, or set --max-conns and --max-sessions")
	}
	return conns, sessions, b.String()
}

// storeDescriptors returns what the store of c holds (see descriptorPlan):
// none for memory or no store; for a directory the directory and its lock,
// and the file of an entry being written for each server; for Redis its
// connection pool (go-redis's pool_size, by default 10 for each CPU).
func storeDescriptors(c manifest.RestConfig, kept bool) (fixed, per int) {
	switch {
	case !kept || c.Store == settings.RestStoreMemory:
		return 0, 0
	case settings.IsRedisStore(c.Store):
		if u, err := url.Parse(c.Store); err == nil {
			if n, err := strconv.Atoi(u.Query().Get("pool_size")); err == nil && n > 0 {
				return n, 0
			}
		}
		return 10 * runtime.GOMAXPROCS(0), 0
	}
	return 2, 1
}
