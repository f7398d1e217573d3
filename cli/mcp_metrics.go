//go:build !toolcap_nomcp

package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/httpauth"
	"github.com/toolcap/toolcap/internal/resultstats"
)

// unlistedTool is the tool label of every result of a tool the server did
// not list: tool names come from clients, and a label per name would let
// them grow /metrics, and the proxy's memory, without bound.
const unlistedTool = "(unlisted)"

// mcpMetrics counts the tool results "toolcap mcp" relays, per tool, and
// serves them in Prometheus' text format at /metrics. The counting, the
// names and the text are package resultstats', which the module
// adapters/metrics shares with client_golang; the command writes the text
// itself so that the core module gains no dependency for it.
//
// Only the tools the server listed get a label of their own (and the read
// tool the proxy lists beside them); the others are counted together under
// [unlistedTool]. The zero value counts every result under it until tools
// is set.
type mcpMetrics struct {
	counters resultstats.Counters
	// tools returns the server's tools as its last tools/list gave them
	// (mcpproxy.Proxy.Tools); nil lists none.
	tools func() []string
	// readTool is the name of the read tool the proxy adds to the list,
	// "" when it adds none.
	readTool atomic.Pointer[string]
}

// setReadTool records the read tool the proxy lists, "" for none.
func (m *mcpMetrics) setReadTool(name string) { m.readTool.Store(&name) }

// label returns the tool label a result of tool is counted under.
func (m *mcpMetrics) label(tool string) string {
	if rt := m.readTool.Load(); rt != nil && *rt != "" && tool == *rt {
		return tool
	}
	if m.tools != nil && slices.Contains(m.tools(), tool) {
		return tool
	}
	return unlistedTool
}

// middleware records each result after the cap, with the cap's figures.
func (m *mcpMetrics) middleware(next chain.Handler) chain.Handler {
	return func(ctx context.Context, call chain.Call) chain.Result {
		res := next(ctx, call)
		m.counters.Record(m.label(call.Tool), res)
		return res
	}
}

// ServeHTTP writes the counters in Prometheus' text exposition format.
func (m *mcpMetrics) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", resultstats.ContentType)
	// A failed write is the scraper gone; the next scrape asks again.
	_ = m.counters.WriteText(w)
}

// serveMetrics serves m at http://addr/metrics until ctx ends. With a
// token, every scrape must carry it as a bearer token, as every request to
// --listen does.
func serveMetrics(ctx context.Context, m *mcpMetrics, addr, token string, logger hclog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--metrics %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	var h http.Handler = m
	if token != "" {
		h = requireBearer(token, m)
	}
	mux.Handle("/metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	logger.Info("serving metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return nil
}

// requireBearer answers 401 to a request whose Authorization header does
// not carry token as a bearer token, checked as the HTTP server checks its
// own ([httpauth.BearerOK]: the scheme in any case, the token hashed and
// compared in constant time).
func requireBearer(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpauth.BearerOK(r.Header.Get("Authorization"), token) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "toolcap: a bearer token is required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
