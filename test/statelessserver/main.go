// Command statelessserver is the MCP server of the stateless end-to-end
// test (cli/stateless_e2e_test.go): a server of the official Go SDK, which
// serves MCP 2026-07-28 (no initialize, no session) over stdio, and over
// streamable HTTP with StreamableHTTPOptions{Stateless: true}. It has one
// tool:
//
//	big {bytes}   a text of `bytes` bytes (default 200000): the
//	              deterministic text of package fault (internal/fault),
//	              with JSON escapes and multi-byte UTF-8 in every unit, so
//	              that a test can tell each byte of what it reads back.
//
// Usage:
//
//	statelessserver                     serve stdin/stdout
//	statelessserver -http 127.0.0.1:0   serve stateless streamable HTTP at
//	                                    http://ADDR/mcp; the address it
//	                                    bound is printed on stdout as
//	                                    "listening on ADDR"
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/internal/fault"
)

// Name is the server's name in its serverInfo: a test reads it in the
// answer to server/discover to know that the answer is this server's.
const Name = "toolcap-statelessserver"

// DefaultBytes is the length of big's text when the call names none.
const DefaultBytes = 200_000

type bigArgs struct {
	Bytes int64 `json:"bytes,omitempty" jsonschema:"the text's length in bytes (default 200000)"`
}

func main() {
	addr := flag.String("http", "", "serve stateless streamable HTTP on `ADDR` (host:port) instead of stdin/stdout")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("statelessserver: ")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "A deterministic text of the bytes asked (default 200000)"},
		func(_ context.Context, _ *mcp.CallToolRequest, a bigArgs) (*mcp.CallToolResult, any, error) {
			n := a.Bytes
			if n <= 0 {
				n = DefaultBytes
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fault.Prefix(n, n)}}}, nil, nil
		})

	if *addr == "" {
		if err := s.Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	// The test reads this line to learn the port of -http 127.0.0.1:0.
	fmt.Printf("listening on %s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
