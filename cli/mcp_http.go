//go:build !toolcap_nomcp

package cli

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/mcpproxy"
)

// httpHeaders turns the --header flags into a header.
func httpHeaders(flags []string) http.Header {
	h := http.Header{}
	for _, f := range flags {
		name, value, _ := strings.Cut(f, ":")
		h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return h
}

// httpShutdownWait bounds the shutdown after the sessions' servers have
// had their stop sequence (stdin closed, SIGTERM, SIGKILL, each after the
// grace): what is still running then is left to the process's exit.
const httpShutdownWait = 2*mcpGrace + 3*time.Second

// closeUnserved answers a request mux does not serve as mux does (404),
// but when it has a body, closes its connection after the answer without
// reading the body: net/http would otherwise read up to 256 KiB of it,
// with no deadline, from a client that may send a byte a second (issue
// 39, item 9).
func closeUnserved(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern == "" && r.ContentLength != 0 {
			w.Header().Set("Connection", "close")
			_ = http.NewResponseController(w).SetReadDeadline(time.Unix(1, 0))
		}
		mux.ServeHTTP(w, r)
	})
}

// serveHTTP serves streamable HTTP at http://addr/mcp until ctx ends (an
// interrupt or SIGTERM), each session relayed to a server of its own, with
// at most maxConns client connections open at once. When
// it ends, it stops taking connections, ends every session and stops its
// server (for a command: stdin closed, SIGTERM, SIGKILL, each after the
// grace), and returns once every server has exited: none outlives the
// proxy.
func serveHTTP(ctx context.Context, proxy *mcpproxy.Proxy, addr string, opts mcpproxy.HTTPOptions, maxConns int, status, logger hclog.Logger) int {
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		status.Error("--listen " + addr + ": " + oneLine(err.Error()))
		return exitFailed
	}
	ln := newLimitListener(tcp, maxConns)
	handler := proxy.HTTPHandler(opts)
	mux := http.NewServeMux()
	// With --forward-auth, also where a client that the upstream refused
	// looks for how to authorize.
	handler.Mount(mux, "/mcp")
	// The handler bounds the reading of bodies itself; a read timeout here
	// would end the long-lived event streams too. IdleTimeout closes
	// kept-alive connections nobody uses.
	srv := &http.Server{Handler: closeUnserved(mux), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	// One line, shown at the default level: scripts wait for it.
	status.Info("serving http://" + ln.Addr().String() + "/mcp")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	code := exitOK
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			status.Error(oneLine(err.Error()))
			code = exitFailed
		}
	case <-ctx.Done():
	}
	// Shutdown closes the listener at once, then waits for the handlers;
	// those of the event streams return only when their session ends,
	// which the handler's Close does meanwhile, stopping every server.
	sctx, cancel := context.WithTimeout(context.Background(), httpShutdownWait)
	defer cancel()
	shut := make(chan struct{})
	go func() {
		_ = srv.Shutdown(sctx)
		close(shut)
	}()
	n := handler.Sessions()
	if err := handler.Close(sctx); err != nil {
		logger.Error("shutting down: some sessions' servers did not stop in time", "sessions", n, "error", oneLine(err.Error()))
	} else if n > 0 {
		logger.Info("shut down: every session ended and its server stopped", "sessions", n)
	}
	select {
	case <-shut:
	case <-sctx.Done():
	}
	_ = srv.Close() // the connections a handler still holds
	return code
}
