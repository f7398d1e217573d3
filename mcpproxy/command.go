package mcpproxy

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"
)

// defaultGrace is how long [Command]'s Close waits at each step of stopping
// the server, unless told otherwise.
const defaultGrace = 2 * time.Second

// Command starts cmd, an MCP server speaking over its standard input and
// output, and returns the connection to it. cmd must not have been started,
// and its Stdin and Stdout must be unset; its Stderr is the caller's (the
// server's logs, typically the proxy's own stderr).
//
// The server runs in a process group of its own (on Unix), so that
// stopping it stops what it started too. Close closes the server's standard
// input, which is how MCP asks a stdio server to exit, waits up to grace for
// it to exit, then sends SIGTERM to its process group, waits up to grace
// again, and sends SIGKILL; once the server has exited, whatever of its
// group remains is killed too. Close returns nil when the server exited with
// status 0 of its own accord, and otherwise an error that says how it ended
// ("exit status 3", or that it had to be killed), wrapping [ErrServerExited]
// when it exited by itself with another status than 0. When the server exits by
// itself, its output is read to the end, and the rest of its group is
// stopped after grace.
//
// A grace of zero or less means [defaultGrace].
func Command(cmd *exec.Cmd, grace time.Duration) (Conn, error) {
	if grace <= 0 {
		grace = defaultGrace
	}
	if cmd.Stdin != nil || cmd.Stdout != nil {
		return nil, errors.New("mcpproxy: Command: cmd.Stdin and cmd.Stdout must be unset")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("mcpproxy: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("mcpproxy: %w", err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	newGroup(cmd)
	if err := cmd.Start(); err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("mcpproxy: starting the MCP server: %w", err)
	}
	// The server holds its ends now.
	inR.Close()
	outW.Close()
	c := &commandConn{cmd: cmd, in: inW, lw: lineWriter{w: inW}, out: outR, grace: grace, exited: make(chan struct{})}
	go c.wait()
	return c, nil
}

type commandConn struct {
	cmd   *exec.Cmd
	in    *os.File
	lw    lineWriter // frames the messages written to in
	out   *os.File
	grace time.Duration

	exited  chan struct{} // closed when the server's process has exited
	waitErr error         // its exit, once exited is closed

	once     sync.Once
	closeErr error
}

func (c *commandConn) Read(p []byte) (int, error) { return c.out.Read(p) }

// WriteMessage writes msg and its newline to the server's standard input.
func (c *commandConn) WriteMessage(msg []byte) error { return c.lw.writeMessage(msg) }

func (c *commandConn) writeMessageFunc(write func(jsonWriter)) error {
	return c.lw.writeMessageFunc(write)
}

// wait reaps the server. When it exits of its own accord, whatever of its
// group still holds its output open is given grace and then stopped, so
// that the reader reaches the end of the output.
func (c *commandConn) wait() {
	awaitExit(c.cmd.Process) // on the poller: no OS thread held while the server runs
	c.waitErr = c.cmd.Wait()
	close(c.exited)
	go func() {
		time.Sleep(c.grace)
		killGroup(c.cmd) // closes the writers the group held: the reader gets to EOF
		// Only a process that left the group (setsid) can still hold the
		// output open; a reader still blocked long after is ended here.
		time.Sleep(10 * c.grace)
		_ = c.out.SetReadDeadline(time.Now())
	}()
}

func (c *commandConn) Close() error {
	c.once.Do(func() { c.closeErr = c.stop() })
	return c.closeErr
}

func (c *commandConn) stop() error {
	_ = c.in.Close()
	how := ""
	select {
	case <-c.exited:
	case <-time.After(c.grace):
		terminateGroup(c.cmd)
		how = "it did not exit when its input was closed and was sent SIGTERM"
		select {
		case <-c.exited:
		case <-time.After(c.grace):
			killGroup(c.cmd)
			how = "it ignored SIGTERM and was killed"
			<-c.exited
		}
	}
	killGroup(c.cmd) // what the server left behind in its group
	_ = c.out.Close()
	err := c.waitErr
	if how != "" {
		return fmt.Errorf("%s (%v)", how, describeExit(err))
	}
	if err != nil {
		// It failed, on its own or when asked to exit (which a server
		// does with status 0).
		return fmt.Errorf("%w: %s", ErrServerExited, describeExit(err))
	}
	return nil
}

// describeExit says how a process ended.
func describeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

var _ Conn = (*commandConn)(nil)
