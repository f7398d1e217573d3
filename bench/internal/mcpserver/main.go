// Command mcpserver is the MCP server of toolcap's proxy latency benchmark
// (bench/mcp_test.go): a server of the official Go SDK, with one tool,
// "text", whose result is a text of the number of bytes its "bytes"
// argument asks for. It serves over stdio, or with -http ADDR over the
// SDK's streamable HTTP handler at http://ADDR/mcp, which it names on its
// standard error ("serving http://127.0.0.1:PORT/mcp") once it listens;
// -stateless makes that handler stateless (StreamableHTTPOptions{Stateless:
// true}: MCP 2026-07-28, no session). Over stdio it serves both revisions,
// as the SDK does. -pids FILE appends the process's id to FILE, a line, as
// it starts, so that a benchmark can count the servers a proxy started.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type args struct {
	Bytes int `json:"bytes"`
}

func main() {
	addr := flag.String("http", "", "serve streamable HTTP on `ADDR` (host:port) instead of stdio")
	statelessHTTP := flag.Bool("stateless", false, "with -http: serve statelessly (no sessions: MCP 2026-07-28)")
	pids := flag.String("pids", "", "append the process's id to `FILE`, a line, at start")
	flag.Parse()
	if *pids != "" {
		f, err := os.OpenFile(*pids, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			log.Fatal(err)
		}
		// One write of one short line under O_APPEND: lines of servers
		// started at once do not interleave.
		if _, err := fmt.Fprintf(f, "%d\n", os.Getpid()); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-server", Version: "1"}, nil)
	unit := strings.Repeat("0123456789abcdef", 4) + "\n"
	mcp.AddTool(s, &mcp.Tool{Name: "text"}, func(ctx context.Context, req *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		text := strings.Repeat(unit, a.Bytes/len(unit)+1)[:a.Bytes]
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	if *addr == "" {
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: *statelessHTTP}))
	fmt.Fprintf(os.Stderr, "serving http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
