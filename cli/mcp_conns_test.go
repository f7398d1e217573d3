//go:build !toolcap_nomcp

package cli

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
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

// acceptQueue returns the number of connections waiting in the backlog of
// the TCP listener on addr (an IPv4 host:port) to be accepted, as
// /proc/net/tcp shows it: a listening socket's rx_queue.
func acceptQueue(t *testing.T, addr string) int {
	t.Helper()
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		t.Fatalf("acceptQueue(%q): want an IPv4 host:port (%v)", addr, err)
	}
	ip := ap.Addr().As4()
	// The address as the kernel prints it: its four bytes as a native
	// uint32, then the port.
	local := fmt.Sprintf("%08X:%04X", binary.NativeEndian.Uint32(ip[:]), ap.Port())
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 5 || f[1] != local || f[3] != "0A" { // 0A: LISTEN
			continue
		}
		_, rx, _ := strings.Cut(f[4], ":")
		n, err := strconv.ParseInt(rx, 16, 64)
		if err != nil {
			t.Fatalf("/proc/net/tcp: %q: %v", line, err)
		}
		return int(n)
	}
	t.Fatalf("/proc/net/tcp has no listener on %s", addr)
	return 0
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
	// The proxy has accepted what it will once it holds at least limit of
	// the connections and every one of them is accounted for: held by the
	// proxy, or waiting in its listener's backlog. Held is read before
	// queued, so that a connection accepted in between is counted in
	// neither and the sum falls short: the two add up only when they
	// describe one moment.
	var got, queued int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		got = sockets(t, cmd.Process.Pid) - base
		queued = acceptQueue(t, addr)
		if got >= limit && got+queued >= len(conns) {
			break
		}
	}
	if got > limit {
		t.Errorf("20 idle connections hold %d of the proxy's sockets, want at most --max-conns %d", got, limit)
	} else if got < limit {
		t.Errorf("20 idle connections hold %d of the proxy's sockets (%d wait in the backlog), want --max-conns %d accepted", got, queued, limit)
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
