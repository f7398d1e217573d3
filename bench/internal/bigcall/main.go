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
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"syscall"
	"time"
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
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		log.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	r := bufio.NewReaderSize(out, 1<<20)
	send(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bigcall","version":"1"}}}`)
	if _, err := lineLen(r); err != nil {
		log.Fatalf("initialize: %v", err)
	}
	send(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	start := time.Now()
	send(in, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{"bytes":%d}}}`, *size))
	n, err := lineLen(r)
	took := time.Since(start)
	if err != nil {
		log.Fatalf("tools/call: %v", err)
	}
	in.Close()
	_ = cmd.Wait()
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var cpu time.Duration
	var rss float64
	if ru != nil {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		rss = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	fmt.Printf("%-12s call %6.3f s  cpu %6.3f s  rss %7.1f MiB  response %d B\n", *label, took.Seconds(), cpu.Seconds(), rss, n)
}

// send writes line and its newline to w, or exits.
func send(w io.Writer, line string) {
	if _, err := io.WriteString(w, line+"\n"); err != nil {
		log.Fatal(err)
	}
}

// lineLen reads one line from r and returns its length without the
// newline, holding none of it.
func lineLen(r *bufio.Reader) (int64, error) {
	var n int64
	for {
		b, more, err := r.ReadLine()
		n += int64(len(b))
		if err != nil {
			return n, err
		}
		if !more {
			return n, nil
		}
	}
}
