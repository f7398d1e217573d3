//go:build !toolcap_nomcp

package cli

import (
	"fmt"
	"net"
	"sync"
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
// listener, its logs, the manifests it watches, the store).
const (
	fdsPerSession = 4
	fdsReserved   = 32
)

// fitConns returns the --max-conns to serve with under an open-file limit
// of nofile (0: unknown), and a warning when the limit cannot hold conns
// client connections beside sessions sessions' servers: conns itself
// when it fits; lowered to fit when it is the default (set is false),
// never below 16; as given, with the warning, when it was set. The proxy
// that ran out of descriptors could not start a session's server, nor
// accept, while connections waited (a limit of 256, as `ulimit -n 256`
// leaves it, took 256 connections and nothing else).
func fitConns(conns, sessions int, set bool, nofile uint64) (int, string) {
	need := uint64(conns) + uint64(sessions)*fdsPerSession + fdsReserved
	if nofile == 0 || need <= nofile {
		return conns, ""
	}
	room := int64(nofile) - int64(sessions)*fdsPerSession - fdsReserved
	if set {
		return conns, fmt.Sprintf("the open-file limit is %d: --max-conns %d and --max-sessions %d need about %d descriptors; raise the limit (ulimit -n) or lower them", nofile, conns, sessions, need)
	}
	fitted := int(max(room, 16))
	return fitted, fmt.Sprintf("the open-file limit is %d: --max-conns lowered from %d to %d so that %d sessions' servers keep their descriptors; raise the limit (ulimit -n) or set --max-conns and --max-sessions", nofile, conns, fitted, sessions)
}
