// Command passthru is the floor of the proxy latency benchmark
// (bench/mcp_test.go): a process between an MCP client and server that
// copies bytes both ways and does nothing else, so that what a hop through
// any proxy process costs on the machine is measured beside toolcap's.
//
//	passthru [-hold] SERVER_COMMAND [ARGS...]
//
// With -hold it reads each line the server writes whole before it writes
// it on: the floor of a relay that must see a message's end before it
// knows what to send, as toolcap must for a result it may cut (its
// decision, and the marker's count, depend on the whole text).
package main

import (
	"bytes"
	"io"
	"log"
	"os"
	"os/exec"

	"github.com/toolcap/toolcap/internal/hugepage"
)

func main() {
	args := os.Args[1:]
	hold := len(args) > 0 && args[0] == "-hold"
	if hold {
		args = args[1:]
	}
	cmd := exec.Command(args[0], args[1:]...)
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
	if hold {
		holdLines(os.Stdout, out)
	} else {
		_, _ = io.Copy(os.Stdout, out)
	}
	_ = cmd.Wait()
}

// holdLines copies r to w a whole line at a time, each line held in
// memory before it is written: read into fresh chunks of 8 MiB (a relay's
// message is new memory each time; chunks are never moved, as a buffer
// grown by append would be), advised to huge pages as toolcap advises its
// own (internal/hugepage), then written from them.
func holdLines(w io.Writer, r io.Reader) {
	const chunk = 8 << 20
	var chunks [][]byte
	cur := fresh(chunk)
	flush := func() bool {
		for _, c := range append(chunks, cur) {
			if _, err := w.Write(c); err != nil {
				return false
			}
		}
		chunks, cur = chunks[:0], fresh(chunk)
		return true
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		for p := buf[:n]; len(p) > 0; {
			i := bytes.IndexByte(p, '\n')
			line := p
			if i >= 0 {
				line = p[:i+1]
			}
			p = p[len(line):]
			for len(line) > 0 {
				if len(cur) == cap(cur) {
					chunks = append(chunks, cur)
					cur = fresh(chunk)
				}
				k := copy(cur[len(cur):cap(cur)], line)
				cur, line = cur[:len(cur)+k], line[k:]
			}
			if i >= 0 && !flush() {
				return
			}
		}
		if err != nil {
			flush()
			return
		}
	}
}

// fresh returns an empty buffer of capacity n, advised to huge pages.
func fresh(n int) []byte {
	b := make([]byte, n)
	hugepage.Advise(b)
	return b[:0]
}
