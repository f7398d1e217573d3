//go:build linux

package mcpproxy_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/mcpproxy"
)

// testWriter logs through t.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// osThreads returns the process's OS threads, from /proc/self/status.
func osThreads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no Threads line in /proc/self/status")
	return 0
}

// TestHTTPSessionsHoldNoThreadAndCloseStopsServers: 16 idle sessions, each
// with a server process of its own, hold no OS thread each; Close stops
// every server (none is left running) and refuses new sessions.
func TestHTTPSessionsHoldNoThreadAndCloseStopsServers(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	// A server that answers initialize, then waits for its input to end.
	script := `read l; printf '%s\n' '` + hsResult("1") + `'; while read l; do :; done`
	var (
		mu   sync.Mutex
		pids []int
	)
	dial := func(context.Context) (mcpproxy.Conn, error) {
		cmd := exec.Command("sh", "-c", script)
		c, err := mcpproxy.Command(cmd, 200*time.Millisecond)
		if err == nil {
			mu.Lock()
			pids = append(pids, cmd.Process.Pid)
			mu.Unlock()
		}
		return c, err
	}
	p := hsProxy(t, hclog.New(&hclog.LoggerOptions{Output: testWriter{t}, Level: hclog.Warn}))
	h, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: dial})
	hsInitialize(t, hs.URL, nil) // the runtime's threads for starting processes, once
	time.Sleep(100 * time.Millisecond)
	before := osThreads(t)
	const n = 16
	for range n {
		hsInitialize(t, hs.URL, nil)
	}
	time.Sleep(200 * time.Millisecond)
	after := osThreads(t)
	if got := h.Sessions(); got != n+1 {
		t.Fatalf("%d sessions open, want %d", got, n+1)
	}
	t.Logf("OS threads: %d before %d idle sessions, %d after", before, n, after)
	if after-before > n/2 {
		t.Errorf("%d idle sessions added %d OS threads, want none held per session", n, after-before)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	t.Logf("Close stopped %d servers in %s", n+1, time.Since(start).Round(time.Millisecond))
	mu.Lock()
	defer mu.Unlock()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("server %d is still there after Close (kill 0: %v)", pid, err)
		}
	}
	if got := h.Sessions(); got != 0 {
		t.Errorf("%d sessions after Close", got)
	}
	if resp := hsPost(t, hs.URL, "", hsInit, nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("initialize after Close: %s, want 503", resp.Status)
	}
}
