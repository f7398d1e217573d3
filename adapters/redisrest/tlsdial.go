package redisrest

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"
)

// probeShare is the share of a dial's time kept back from the TLS
// handshake for the look, when it fails, at whether the port speaks plain
// Redis: a quarter, at most probeMost.
const (
	probeShare = 4
	probeMost  = 500 * time.Millisecond
)

// errPlainPort is the error of a rediss:// URL that names a port of plain
// Redis.
var errPlainPort = errors.New("it speaks plain Redis, not TLS: use redis:// for this port, or rediss:// with the port Redis serves TLS on (its tls-port)")

// tlsDialer returns the dialer of a rediss:// URL: go-redis's own (a TCP
// dial and the TLS handshake, within timeout), but a handshake that fails
// is looked into. A Redis without TLS reads the ClientHello as the start
// of a command and waits for its end, so the handshake only times out, and
// the error said "context deadline exceeded" (issue 39, item 11). When a
// PING sent in plain text on a connection of its own gets a Redis answer,
// the error says that the port speaks plain Redis. The handshake has the
// dial's time less a share kept for that look, so that the error is the
// dialer's, not the operation's deadline; and for a while after, a dial
// fails with it at once, since go-redis dials again for the same command
// (a pipeline retries dial errors) with what is left of its time.
func tlsDialer(timeout time.Duration, cfg *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	type seen struct {
		err   error
		until time.Time
	}
	var plain atomic.Pointer[seen]
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if p := plain.Load(); p != nil && time.Now().Before(p.until) {
			return nil, p.err
		}
		deadline := time.Now().Add(timeout)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		probe := min(probeMost, time.Until(deadline)/probeShare)
		hctx, cancel := context.WithDeadline(ctx, deadline.Add(-probe))
		defer cancel()
		nd := &net.Dialer{}
		c, err := (&tls.Dialer{NetDialer: nd, Config: cfg}).DialContext(hctx, network, addr)
		if err == nil {
			return c, nil
		}
		var op *net.OpError
		if ctx.Err() != nil || errors.As(err, &op) && op.Op == "dial" {
			return nil, err // the caller gave up, or no TCP connection at all
		}
		pctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		if plainRedis(pctx, nd, network, addr) {
			err = fmt.Errorf("TLS handshake with %s failed: %w (%v)", addr, errPlainPort, err)
			plain.Store(&seen{err: err, until: time.Now().Add(timeout)})
		}
		return nil, err
	}
}

// plainRedis reports whether the server at addr answers a PING sent in
// plain text as a Redis does (+PONG, or an error such as -NOAUTH) before
// ctx's deadline.
func plainRedis(ctx context.Context, nd *net.Dialer, network, addr string) bool {
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return false
	}
	defer c.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(deadline)
	}
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReaderSize(c, 64).ReadSlice('\n')
	if err != nil || len(line) < 3 || line[len(line)-2] != '\r' {
		return false
	}
	return line[0] == '+' || line[0] == '-'
}
