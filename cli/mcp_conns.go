//go:build !toolcap_nomcp

package cli

import (
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
