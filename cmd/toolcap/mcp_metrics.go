package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
)

// mcpMetrics counts the tool results "toolcap mcp" relays, per tool, and
// serves them in Prometheus' text format at /metrics. The names and their
// meaning are those of the module adapters/metrics (which Go programs use
// with client_golang); the command writes the format itself, so that the
// core module gains no dependency for it.
type mcpMetrics struct {
	mu    sync.Mutex
	tools map[string]*toolCounts
}

type toolCounts struct {
	fits, cut, err int64
	original, kept int64
}

// middleware records each result after the cap, with the cap's figures.
func (m *mcpMetrics) middleware(next chain.Handler) chain.Handler {
	return func(ctx context.Context, call chain.Call) chain.Result {
		res := next(ctx, call)
		size := int64(0)
		if res.Content != nil {
			size = int64(len(*res.Content))
		}
		original, kept := size, size
		t, cut := res.Truncation()
		if cut {
			original, kept = int64(t.OriginalBytes), int64(t.KeptBytes)
		}
		m.mu.Lock()
		c := m.tools[call.Tool]
		if c == nil {
			c = &toolCounts{}
			m.tools[call.Tool] = c
		}
		switch {
		case res.IsError():
			c.err++
		case cut:
			c.cut++
		default:
			c.fits++
		}
		c.original += original
		c.kept += kept
		m.mu.Unlock()
		return res
	}
}

// ServeHTTP writes the counters in Prometheus' text exposition format.
func (m *mcpMetrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	names := make([]string, 0, len(m.tools))
	for name := range m.tools {
		names = append(names, name)
	}
	slices.Sort(names)
	counts := make([]toolCounts, len(names))
	for i, name := range names {
		counts[i] = *m.tools[name]
	}
	m.mu.Unlock()

	var b strings.Builder
	b.WriteString("# HELP toolcap_tool_results_total Tool results that passed the cap, by tool and outcome (fits, cut, error).\n")
	b.WriteString("# TYPE toolcap_tool_results_total counter\n")
	for i, name := range names {
		for _, o := range []struct {
			outcome string
			n       int64
		}{{"cut", counts[i].cut}, {"error", counts[i].err}, {"fits", counts[i].fits}} {
			fmt.Fprintf(&b, "toolcap_tool_results_total{outcome=%q,tool=%s} %d\n", o.outcome, labelValue(name), o.n)
		}
	}
	b.WriteString("# HELP toolcap_tool_result_original_bytes_total Content bytes the tools returned, before the cap.\n")
	b.WriteString("# TYPE toolcap_tool_result_original_bytes_total counter\n")
	for i, name := range names {
		fmt.Fprintf(&b, "toolcap_tool_result_original_bytes_total{tool=%s} %d\n", labelValue(name), counts[i].original)
	}
	b.WriteString("# HELP toolcap_tool_result_kept_bytes_total Content bytes that reached the history, truncation markers excluded.\n")
	b.WriteString("# TYPE toolcap_tool_result_kept_bytes_total counter\n")
	for i, name := range names {
		fmt.Fprintf(&b, "toolcap_tool_result_kept_bytes_total{tool=%s} %d\n", labelValue(name), counts[i].kept)
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

// labelValue quotes a label value as the exposition format escapes it:
// backslash, double quote and newline.
func labelValue(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
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
