// Command vialisten runs an MCP client through `toolcap mcp --listen
// --forward-auth --url`, for the client scenarios of the official MCP
// conformance suite: the suite plays the server and runs this command with
// its server's URL as the last argument; vialisten starts toolcap on a
// loopback port of its own, relaying to that URL, runs the client with
// toolcap's URL in its place, and stops toolcap when the client is done.
// The suite then checks what reached its server through toolcap: OAuth
// included, as the client speaks HTTP to toolcap and toolcap forwards its
// Authorization and relays the server's refusals and protected resource
// metadata. cli/conformance_e2e_test.go and cli/conformance2026_e2e_test.go
// run the Go SDK's conformance client this way.
//
// The client's exit status is vialisten's; toolcap not starting, or not
// exiting cleanly once stopped, is a failure too (1). toolcap's log goes to
// stderr, which the suite saves with the scenario's checks.
//
// Usage:
//
//	vialisten -toolcap TOOLCAP CLIENT [ARG...] URL
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"syscall"
	"time"
)

// serving is the line toolcap prints on stderr once it serves, with its URL.
var serving = regexp.MustCompile(`serving (http://\S+/mcp)$`)

func main() {
	toolcap := flag.String("toolcap", "", "the toolcap `binary` to relay through")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: vialisten -toolcap TOOLCAP CLIENT [ARG...] URL")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *toolcap == "" || flag.NArg() < 2 {
		flag.Usage()
		os.Exit(2)
	}
	args := flag.Args()
	client, url := args[:len(args)-1], args[len(args)-1]
	code, err := run(*toolcap, client, url)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vialisten: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// run starts toolcap relaying to url, runs client with toolcap's URL and
// stops toolcap; it returns the client's exit status, and an error when
// toolcap did not start or stop as it should.
func run(toolcap string, client []string, url string) (int, error) {
	proxy := exec.Command(toolcap, "mcp", "--listen", "127.0.0.1:0", "--forward-auth", "--url", url)
	proxy.Stdout = os.Stderr
	pipe, err := proxy.StderrPipe()
	if err != nil {
		return 1, err
	}
	if err := proxy.Start(); err != nil {
		return 1, fmt.Errorf("starting %s: %w", toolcap, err)
	}
	// The suite ends a client that overstays with a signal: toolcap must
	// not outlive it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	announced := make(chan string, 1)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			fmt.Fprintln(os.Stderr, sc.Text())
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case announced <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(os.Stderr, pipe)
		// Wait only once the pipe is drained, as os/exec asks.
		exited <- proxy.Wait()
	}()

	var proxyURL string
	select {
	case proxyURL = <-announced:
	case err := <-exited:
		return 1, fmt.Errorf("toolcap exited before serving: %v", err)
	case sig := <-sigs:
		_ = stop(proxy, exited)
		return 1, fmt.Errorf("%v before toolcap served", sig)
	case <-time.After(20 * time.Second):
		_ = stop(proxy, exited)
		return 1, errors.New("toolcap did not say where it serves within 20 s")
	}

	cmd := exec.Command(client[0], append(client[1:], proxyURL)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		_ = stop(proxy, exited)
		return 1, fmt.Errorf("starting the client %s: %w", client[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	code := 0
	select {
	case err = <-done:
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			code = exit.ExitCode()
		case err != nil:
			code = 1
		}
	case sig := <-sigs:
		_ = cmd.Process.Signal(sig)
		<-done
		code = 1
	case err := <-exited:
		_ = cmd.Process.Kill()
		<-done
		return 1, fmt.Errorf("toolcap exited while the client ran: %v", err)
	}
	return code, stop(proxy, exited)
}

// stop sends toolcap SIGTERM and waits for its exit, which must be clean;
// it kills it if it has not exited 10 s later.
func stop(proxy *exec.Cmd, exited <-chan error) error {
	_ = proxy.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("toolcap, stopped with SIGTERM: %v", err)
		}
		return nil
	case <-time.After(10 * time.Second):
		_ = proxy.Process.Kill()
		<-exited
		return errors.New("toolcap did not exit 10 s after SIGTERM; killed")
	}
}
