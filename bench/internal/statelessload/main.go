// Command statelessload drives many clients of MCP's stateless revision
// (2026-07-28: no initialize, no session) at once against "toolcap mcp
// --listen" in front of a server over stdio, and measures what the proxy
// holds: it starts
//
//	TOOLCAP mcp --listen 127.0.0.1:0 [--stateless-servers N] -- SERVER_COMMAND [ARGS...]
//
// (always on loopback), or with -url UPSTREAM "TOOLCAP mcp --listen
// 127.0.0.1:0 --url UPSTREAM" (an HTTP server of the revision, such as
// mcpserver -http ADDR -stateless), connects -clients go-sdk clients at once, each with
// a connection pool of its own, each negotiating 2026-07-28 with
// server/discover (it fails otherwise), then making -calls tools/call of
// the server's "text" tool (bench/internal/mcpserver) for -bytes bytes, one
// after the other. Once every client is done it reads the proxy's peak RSS
// (VmHWM of /proc/PID/status) and counts the server processes it started:
// the distinct children of the proxy seen running a program by sampling
// /proc every 5 ms, and,
// with -pids FILE, the lines of FILE, where the server records its pid as it
// starts (mcpserver -pids FILE; the driver empties it first). Then it stops
// the proxy (SIGTERM) and prints the figures. Everything is bounded by
// -timeout; any error of a client, or more server processes than the pool
// (-servers, or mcpproxy.DefaultStatelessServers), fails the run (exit 1).
// With -url it also counts the upstream connections the proxy closed
// (those left in TIME-WAIT on its side).
//
//	statelessload [-clients 200] [-calls 20] [-bytes 64] [-servers 0] [-timeout 2m] [-pids FILE] TOOLCAP SERVER_COMMAND [ARGS...]
//	statelessload [-clients 200] [-calls 20] [-bytes 64] [-timeout 2m] -url UPSTREAM TOOLCAP
//
// Linux only (it reads /proc).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcap/toolcap/mcpproxy"
)

// serving is the line toolcap prints on stderr once it serves.
var serving = regexp.MustCompile(`serving (http://\S+/mcp)`)

func main() {
	clients := flag.Int("clients", 200, "clients at once")
	calls := flag.Int("calls", 20, "tools/call of each client, one after the other")
	size := flag.Int("bytes", 64, "the text tool's result, in bytes")
	servers := flag.Int("servers", 0, "--stateless-servers of the proxy (0: its default)")
	timeout := flag.Duration("timeout", 2*time.Minute, "the bound of the whole run")
	pids := flag.String("pids", "", "the `FILE` the server appends its pid to (mcpserver -pids FILE): emptied first, its lines counted")
	upstream := flag.String("url", "", "relay to the stateless HTTP server at `UPSTREAM` (--url) instead of a command")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("statelessload: ")
	if (*upstream == "") != (flag.NArg() >= 2) || flag.NArg() < 1 || *clients < 1 || *calls < 0 {
		fmt.Fprintln(os.Stderr, "usage: statelessload [-clients 200] [-calls 20] [-bytes 64] [-servers 0] [-timeout 2m] [-pids FILE] TOOLCAP SERVER_COMMAND [ARGS...]")
		fmt.Fprintln(os.Stderr, "       statelessload [-clients 200] [-calls 20] [-bytes 64] [-timeout 2m] -url UPSTREAM TOOLCAP")
		os.Exit(2)
	}
	if *pids != "" {
		if err := os.WriteFile(*pids, nil, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	args := []string{"mcp", "--listen", "127.0.0.1:0"}
	if *servers > 0 {
		args = append(args, "--stateless-servers", strconv.Itoa(*servers))
	}
	if *upstream != "" {
		args = append(args, "--url", *upstream)
	} else {
		args = append(append(args, "--"), flag.Args()[1:]...)
	}
	proxy := exec.Command(flag.Arg(0), args...)
	// The rest of a cut result goes to a store of the run's own.
	cache, err := os.MkdirTemp("", "statelessload-cache-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(cache)
	proxy.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	endpoint, stderr, err := start(ctx, proxy)
	if err != nil {
		log.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = proxy.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = proxy.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = proxy.Process.Kill()
			<-done
		}
	}
	defer stop()
	pid := proxy.Process.Pid
	idle, _ := procStatus(pid, "VmRSS")
	upPort := 0
	if *upstream != "" {
		if u, err := url.Parse(*upstream); err == nil {
			upPort, _ = strconv.Atoi(u.Port())
		}
	}
	waitsBefore := timeWaits(upPort)

	// The children of the proxy, sampled until the clients are done. A
	// child counts as a server once it runs another program than the
	// proxy: the Go runtime's first process start probes clone(CLONE_PIDFD)
	// with a child that exits without exec (os.checkPidfd), a child of the
	// proxy that never runs anything.
	self := cmdline(pid)
	seen := map[int]string{} // pid: the program it runs
	probes := map[int]bool{} // children seen only as the proxy's copy
	note := func(kids []int) {
		for _, k := range kids {
			if _, ok := seen[k]; ok {
				continue
			}
			if c := cmdline(k); c != self && c != "?" {
				seen[k] = c
				delete(probes, k)
			} else {
				probes[k] = true
			}
		}
	}
	var seenMu sync.Mutex
	sampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			kids := children(pid)
			seenMu.Lock()
			note(kids)
			seenMu.Unlock()
			select {
			case <-sampling:
				return
			case <-tick.C:
			}
		}
	}()

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		errs     []error
		connects []time.Duration
		lat      []time.Duration
	)
	began := time.Now()
	for i := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, l, err := client(ctx, endpoint, i, *calls, *size)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("client %d: %w", i, err))
			}
			if c > 0 {
				connects = append(connects, c)
			}
			lat = append(lat, l...)
		}()
	}
	wg.Wait()
	wall := time.Since(began)
	close(sampling)
	<-sampled
	note(children(pid))
	if st, err := procState(pid); err != nil || st == "Z" {
		errs = append(errs, fmt.Errorf("the proxy exited before the clients were done (%s)", st))
	}
	peak, perr := procStatus(pid, "VmHWM")
	rss, _ := procStatus(pid, "VmRSS")
	waits := 0
	for k := range timeWaits(upPort) {
		if !waitsBefore[k] {
			waits++
		}
	}
	recorded := -1
	var unrecorded []string // children seen whose pid the file lacks
	if *pids != "" {
		if b, err := os.ReadFile(*pids); err == nil {
			f := strings.Fields(string(b))
			recorded = len(f)
			for k, cmd := range seen {
				if !slices.Contains(f, strconv.Itoa(k)) {
					unrecorded = append(unrecorded, fmt.Sprintf("%d (%s)", k, cmd))
				}
			}
		}
	}
	stop()
	if perr != nil {
		log.Fatalf("reading the proxy's peak RSS: %v", perr)
	}

	slices.Sort(lat)
	slices.Sort(connects)
	fmt.Printf("clients %d x calls %d (%d bytes): %d calls in %.2f s (%.0f calls/s), %d errors\n",
		*clients, *calls, *size, len(lat), wall.Seconds(), float64(len(lat))/wall.Seconds(), len(errs))
	fmt.Printf("connect (server/discover) p50 %s p99 %s; call p50 %s p90 %s p99 %s max %s\n",
		pct(connects, 50), pct(connects, 99), pct(lat, 50), pct(lat, 90), pct(lat, 99), pct(lat, 100))
	fmt.Printf("proxy peak RSS (VmHWM) %.1f MiB; RSS idle before %.1f MiB, after %.1f MiB\n", mib(peak), mib(idle), mib(rss))
	pool := *servers
	if pool == 0 {
		pool = mcpproxy.DefaultStatelessServers
	}
	fmt.Printf("server processes: %d children of the proxy ran a program", len(seen))
	if recorded >= 0 {
		fmt.Printf(", %d pids recorded in %s", recorded, *pids)
	}
	if *upstream == "" {
		fmt.Printf(" (the pool: %d)", pool)
	}
	if len(unrecorded) > 0 {
		fmt.Printf("; seen, not recorded: %s", strings.Join(unrecorded, ", "))
	}
	if len(probes) > 0 {
		fmt.Printf("; %d other children that never ran a program (Go's pidfd probe)", len(probes))
	}
	fmt.Println()
	if *upstream == "" && max(len(seen), recorded) > pool {
		errs = append(errs, fmt.Errorf("%d server processes started, more than the pool's %d", max(len(seen), recorded), pool))
	}
	if upPort > 0 {
		fmt.Printf("upstream connections the proxy closed (TIME-WAIT to port %d, new): %d\n", upPort, waits)
	}
	if len(errs) > 0 {
		for _, e := range errs[:min(len(errs), 5)] {
			log.Print(e)
		}
		if s := stderr.String(); s != "" {
			log.Printf("the proxy's stderr (last 2 KB): %s", s[max(0, len(s)-2048):])
		}
		os.RemoveAll(cache)
		os.Exit(1)
	}
}

// client is one stateless client: its connect (discover) time and the
// time of each call.
func client(ctx context.Context, endpoint string, i, calls, size int) (time.Duration, []time.Duration, error) {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	t0 := time.Now()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "statelessload-" + strconv.Itoa(i), Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: tr}}, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	connect := time.Since(t0)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		return connect, nil, fmt.Errorf("negotiated %q, not the stateless 2026-07-28", v)
	}
	lat := make([]time.Duration, 0, calls)
	params := &mcp.CallToolParams{Name: "text", Arguments: map[string]any{"bytes": size}}
	for range calls {
		t := time.Now()
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			return connect, lat, fmt.Errorf("call %d: %w", len(lat), err)
		}
		lat = append(lat, time.Since(t))
		if res.IsError {
			return connect, lat, fmt.Errorf("call %d: an error result: %v", len(lat), res.Content)
		}
	}
	return connect, lat, nil
}

// start starts the proxy and returns its endpoint, once it says it serves
// on a loopback address, and its stderr so far and to come (written by
// the process itself, so that Wait leaves none of it unread).
func start(ctx context.Context, cmd *exec.Cmd) (string, *lockedBuffer, error) {
	logs := &lockedBuffer{served: make(chan struct{})}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	exited := make(chan struct{})
	go func() {
		// Only to notice an exit before serving; stop waits for good.
		for {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err != nil {
				close(exited)
				return
			}
			if s, _ := procState(cmd.Process.Pid); s == "Z" {
				close(exited)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-logs.served:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	select {
	case <-logs.served:
		u := logs.url
		parsed, err := url.Parse(u)
		if err != nil {
			return "", logs, err
		}
		if ip := net.ParseIP(parsed.Hostname()); ip == nil || !ip.IsLoopback() {
			return "", logs, fmt.Errorf("%s serves %s, not on loopback", cmd.Path, u)
		}
		return u, logs, nil
	case <-exited:
		return "", logs, fmt.Errorf("%s exited without serving:\n%s", cmd.Path, logs)
	case <-ctx.Done():
		return "", logs, errors.New("the proxy did not say where it serves in time")
	}
}

// procState returns the state letter of process pid (R, S, Z...).
func procState(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+3 > len(b) {
		return "", fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	return string(b[i+2 : i+3]), nil
}

// children returns the ids of the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// timeWaits returns the TCP connections to port in TIME-WAIT on this side
// (closed here first), by their local and remote addresses, from
// /proc/net/tcp and tcp6; none for port 0. Those of a run are the ones not
// there before it (older ones may expire meanwhile).
func timeWaits(port int) map[string]bool {
	conns := map[string]bool{}
	if port == 0 {
		return conns
	}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			// sl local_address rem_address st ...; addresses are
			// HEXIP:HEXPORT, TIME-WAIT is state 06.
			fields := strings.Fields(line)
			if len(fields) < 4 || fields[3] != "06" {
				continue
			}
			_, rp, ok := strings.Cut(fields[2], ":")
			if p, err := strconv.ParseInt(rp, 16, 32); ok && err == nil && int(p) == port {
				conns[fields[1]+" "+fields[2]] = true
			}
		}
	}
	return conns
}

// cmdline returns the command line of process pid, its arguments joined
// by spaces; "?" when it cannot be read.
func cmdline(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return "?"
	}
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// procStatus returns a field of /proc/PID/status in kB, as bytes.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// pct returns the p-th percentile of sorted durations.
func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := min(len(d)-1, (len(d)*p+99)/100-1)
	return d[max(0, i)].Round(10 * time.Microsecond)
}

// lockedBuffer is the proxy's stderr, written and read at once; served
// is closed once a line names where it serves, url.
type lockedBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	served chan struct{}
	url    string // set before served is closed
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.b.Write(p)
	if l.url == "" {
		if m := serving.FindStringSubmatch(l.b.String()); m != nil {
			l.url = m[1]
			close(l.served)
		}
	}
	return n, err
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
