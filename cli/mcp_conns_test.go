//go:build !toolcap_nomcp

package cli

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sockets counts the sockets process pid holds open.
func sockets(t *testing.T, pid int) int {
	t.Helper()
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n
}

// With --max-conns N, a crowd of idle connections costs the proxy at most N
// descriptors: the others wait in the kernel's backlog. Once they close,
// a real client gets its session, so the slots are given back.
func TestMCPListenMaxConns(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc")
	}
	bin := buildBinary(t)
	server := buildFaultServer(t)
	const limit = 3
	cmd, stderr, url := startProxy(t, bin, "--listen", "127.0.0.1:0", "--max-conns", strconv.Itoa(limit), "--", server)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	base := sockets(t, cmd.Process.Pid)

	var conns []net.Conn
	for range 20 {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial %d: %v", len(conns), err)
		}
		conns = append(conns, c)
	}
	time.Sleep(300 * time.Millisecond) // let the proxy accept what it will
	if got := sockets(t, cmd.Process.Pid) - base; got > limit {
		t.Errorf("20 idle connections hold %d of the proxy's sockets, want at most --max-conns %d", got, limit)
	} else if got < limit {
		t.Errorf("20 idle connections hold %d of the proxy's sockets, want --max-conns %d accepted", got, limit)
	}
	for _, c := range conns {
		_ = c.Close()
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		c := &httpMCPClient{t: t, url: url}
		c.initialize()
		c.callText("echo")
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("no session within 20 s once the idle connections closed: the slots were not given back; stderr:\n%s", stderr)
	}
}
