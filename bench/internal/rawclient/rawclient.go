// Package rawclient drives an MCP server command over stdio as a bare
// JSON-RPC client: it writes lines and reads lines, and decodes nothing,
// so that what a benchmark times is the server (or what stands in front
// of it), not a client library. The measuring commands bareloop and
// bigcall use it.
package rawclient

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// A Client is one server process and the two ends of its stdio.
type Client struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	w   *bufio.Writer
	r   *bufio.Reader
}

// Start starts the command args (its stderr discarded) and returns a
// Client connected to its stdin and stdout.
func Start(args []string) (*Client, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("rawclient: no server command")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Client{cmd: cmd, in: in, w: bufio.NewWriter(in), r: bufio.NewReaderSize(out, 1<<20)}, nil
}

// Send writes line and its newline, and flushes them.
func (c *Client) Send(line string) error {
	if _, err := c.w.WriteString(line + "\n"); err != nil {
		return err
	}
	return c.w.Flush()
}

// Receive reads one line of any length and returns its length without the
// newline, holding none of it.
func (c *Client) Receive() (int64, error) {
	var n int64
	for {
		b, more, err := c.r.ReadLine()
		n += int64(len(b))
		if err != nil {
			return n, err
		}
		if !more {
			return n, nil
		}
	}
}

// Initialize sends initialize as name, reads its answer, and sends
// notifications/initialized.
func (c *Client) Initialize(name string) error {
	if err := c.Send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` + name + `","version":"1"}}}`); err != nil {
		return err
	}
	if _, err := c.Receive(); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	return c.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// Close closes the server's stdin, waits for it to exit, and returns its
// state (nil when it could not be waited for).
func (c *Client) Close() *os.ProcessState {
	_ = c.in.Close()
	_ = c.cmd.Wait()
	return c.cmd.ProcessState
}
