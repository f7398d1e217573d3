// Command bareloop times small tools/calls from a bare JSON-RPC client
// (one line out, one line in, nothing decoded) through the MCP server
// command it is given, over stdio: the measure of a small call through
// "toolcap mcp" that the go-sdk client's own cost does not blur
// (docs/benchmarks.md, BenchmarkMCPRoundTrip). It calls the server's
// "text" tool (bench/internal/mcpserver) for 64 bytes, 100 times to warm
// up and then -n times, and prints the mean time of those.
//
//	bareloop [-n 3000] [-label NAME] SERVER_COMMAND [ARGS...]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/toolcap/toolcap/bench/internal/rawclient"
)

func main() {
	n := flag.Int("n", 3000, "calls timed, after 100 of warm-up")
	label := flag.String("label", "", "name printed before the figure")
	flag.Parse()
	if flag.NArg() == 0 || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: bareloop [-n 3000] [-label NAME] SERVER_COMMAND [ARGS...]")
		os.Exit(2)
	}
	log.SetFlags(0)
	c, err := rawclient.Start(flag.Args())
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Initialize("bareloop"); err != nil {
		log.Fatal(err)
	}
	// The benchmark's server answers each request with one line and
	// sends nothing else.
	call := func(id int) {
		if err := c.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"text","arguments":{"bytes":64}}}`, id)); err != nil {
			log.Fatal(err)
		}
		if _, err := c.Receive(); err != nil {
			log.Fatalf("reading the server's answer: %v", err)
		}
	}
	for id := 1; id <= 100; id++ {
		call(id)
	}
	start := time.Now()
	for id := 101; id <= 100+*n; id++ {
		call(id)
	}
	d := time.Since(start)
	c.Close()
	fmt.Printf("%s %.1f µs/call over %d calls\n", *label, float64(d.Nanoseconds())/1e3/float64(*n), *n)
}
