// Command passthru is the floor of the proxy latency benchmark
// (bench/mcp_test.go): a process between an MCP client and server that
// copies bytes both ways and does nothing else, so that what a hop through
// any proxy process costs on the machine is measured beside toolcap's.
//
//	passthru SERVER_COMMAND [ARGS...]
package main

import (
	"io"
	"log"
	"os"
	"os/exec"
)

func main() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
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
	go func() {
		_, _ = io.Copy(in, os.Stdin)
		in.Close()
	}()
	_, _ = io.Copy(os.Stdout, out)
	_ = cmd.Wait()
}
