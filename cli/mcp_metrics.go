package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/resultstats"
)

// mcpMetrics counts the tool results "toolcap mcp" relays, per tool, and
// serves them in Prometheus' text format at /metrics. The counting, the
// names and the text are package resultstats', which the module
// adapters/metrics shares with client_golang; the command writes the text
// itself so that the core module gains no dependency for it. The zero value
// is ready to use.
type mcpMetrics struct {
	counters resultstats.Counters
}

// middleware records each result after the cap, with the cap's figures.
func (m *mcpMetrics) middleware(next chain.Handler) chain.Handler {
	return func(ctx context.Context, call chain.Call) chain.Result {
		res := next(ctx, call)
		m.counters.Record(call.Tool, res)
		return res
	}
}

// ServeHTTP writes the counters in Prometheus' text exposition format.
func (m *mcpMetrics) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", resultstats.ContentType)
	// A failed write is the scraper gone; the next scrape asks again.
	_ = m.counters.WriteText(w)
}

// serveMetrics serves m at http://addr/metrics until ctx ends.
func serveMetrics(ctx context.Context, m *mcpMetrics, addr string, logger hclog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--metrics %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	logger.Info("serving metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return nil
}
