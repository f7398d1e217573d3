// Command mcpserver is the MCP server of toolcap's proxy latency benchmark
// (bench/mcp_test.go): a server of the official Go SDK, with one tool,
// "text", whose result is a text of the number of bytes its "bytes"
// argument asks for. It serves over stdio, or with -http ADDR over the
// SDK's streamable HTTP handler at http://ADDR/mcp, which it names on its
// standard error ("serving http://127.0.0.1:PORT/mcp") once it listens.
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
	flag.Parse()
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
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	fmt.Fprintf(os.Stderr, "serving http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
