package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// serveHTTP serves streamable HTTP at http://addr/mcp until ctx ends (an
// interrupt), each session relayed to a server of its own.
func serveHTTP(ctx context.Context, proxy *mcpproxy.Proxy, addr, token string, dial func(context.Context) (mcpproxy.Conn, error), stderr io.Writer, logger hclog.Logger) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "toolcap mcp: --listen %s: %s\n", addr, oneLine(err.Error()))
		return exitFailed
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", proxy.HTTPHandler(mcpproxy.HTTPOptions{Token: token, Dial: dial}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	logger.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp")
	fmt.Fprintf(stderr, "toolcap mcp: serving http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "toolcap mcp: %s\n", oneLine(err.Error()))
			return exitFailed
		}
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}
	return exitOK
}
