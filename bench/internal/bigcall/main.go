// Command bigcall times one large tools/call through an MCP server command
// over stdio, as a client sees it: it sends initialize and
// notifications/initialized, then tools/call big {"bytes": N} (the fault
// server's tool, test/faultserver), and times the call from the request to
// the response's newline. It prints that time, the CPU time and peak RSS
// of the command once it has exited (with the children it waited for: the
// peak is the largest of them), and the response's size: the measure of a large result through "toolcap mcp"
// beside a process that only copies bytes (bench/internal/passthru) in
// docs/benchmarks.md.
//
//	bigcall [-bytes 60000000] [-label NAME] SERVER_COMMAND [ARGS...]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"syscall"
	"time"

	"github.com/toolcap/toolcap/bench/internal/rawclient"
)

func main() {
	size := flag.Int64("bytes", 60_000_000, "the text's length, as the big tool's bytes argument")
	label := flag.String("label", "", "name printed before the figures")
	flag.Parse()
	if flag.NArg() == 0 || *size < 0 {
		fmt.Fprintln(os.Stderr, "usage: bigcall [-bytes 60000000] [-label NAME] SERVER_COMMAND [ARGS...]")
		os.Exit(2)
	}
	log.SetFlags(0)
	log.SetPrefix("bigcall: ")
	c, err := rawclient.Start(flag.Args())
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Initialize("bigcall"); err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	if err := c.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{"bytes":%d}}}`, *size)); err != nil {
		log.Fatal(err)
	}
	n, err := c.Receive()
	took := time.Since(start)
	if err != nil {
		log.Fatalf("tools/call: %v", err)
	}
	var cpu time.Duration
	var rss float64
	if st := c.Close(); st != nil {
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			rss = float64(ru.Maxrss) / 1024 // KiB on Linux
		}
	}
	fmt.Printf("%-12s call %6.3f s  cpu %6.3f s  rss %7.1f MiB  response %d B\n", *label, took.Seconds(), cpu.Seconds(), rss, n)
}
