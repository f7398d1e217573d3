//go:build !toolcap_nomcp

package cli

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The defaults of --max-conns and --max-sessions are lowered to fit a low
// open-file limit beside the stateless servers and the store; what was
// given is kept, with a warning whose figures add up (issue 39, item 8).
func TestFitDescriptors(t *testing.T) {
	type result struct {
		Conns, Sessions int
		Warning         string
	}
	dir := descriptorPlan{conns: 256, sessions: 64, stateless: 4, storeFixed: 2, storePer: 1}
	with := func(p descriptorPlan, edit func(*descriptorPlan)) descriptorPlan {
		edit(&p)
		return p
	}
	for _, tt := range []struct {
		name   string
		plan   descriptorPlan
		nofile uint64
		want   result
	}{
		{"unknown limit", dir, 0, result{256, 64, ""}},
		{"the usual 1,024", dir, 1024, result{256, 64, ""}},
		{"exactly enough", dir, 256 + 68*5 + 34, result{256, 64, ""}},
		{"ulimit -n 256, defaults: both lowered", dir, 256, result{92, 22,
			"the open-file limit is 256: lowered --max-conns from 256 to 92 and --max-sessions from 64 to 22; 92 connections, 26 servers (22 sessions, 4 stateless) at 5 descriptors each and 34 of the proxy's own (the store's 2 included) need about 256; raise the limit (ulimit -n) for more, or set --max-conns and --max-sessions"}},
		{"ulimit -n 128, defaults", dir, 128, result{34, 8,
			"the open-file limit is 128: lowered --max-conns from 256 to 34 and --max-sessions from 64 to 8; 34 connections, 12 servers (8 sessions, 4 stateless) at 5 descriptors each and 34 of the proxy's own (the store's 2 included) need about 128; raise the limit (ulimit -n) for more, or set --max-conns and --max-sessions"}},
		{"no store", with(dir, func(p *descriptorPlan) { p.storeFixed, p.storePer = 0, 0 }), 256, result{104, 26,
			"the open-file limit is 256: lowered --max-conns from 256 to 104 and --max-sessions from 64 to 26; 104 connections, 30 servers (26 sessions, 4 stateless) at 4 descriptors each and 32 of the proxy's own (the store's 0 included) need about 256; raise the limit (ulimit -n) for more, or set --max-conns and --max-sessions"}},
		{"a Redis pool of 20", with(dir, func(p *descriptorPlan) { p.storeFixed, p.storePer = 20, 0 }), 256, result{96, 23,
			"the open-file limit is 256: lowered --max-conns from 256 to 96 and --max-sessions from 64 to 23; 96 connections, 27 servers (23 sessions, 4 stateless) at 4 descriptors each and 52 of the proxy's own (the store's 20 included) need about 256; raise the limit (ulimit -n) for more, or set --max-conns and --max-sessions"}},
		{"--max-conns given: the sessions fit beside it", with(dir, func(p *descriptorPlan) { p.conns, p.connsSet = 100, true }), 256, result{100, 20,
			"the open-file limit is 256: lowered --max-sessions from 64 to 20; 100 connections, 24 servers (20 sessions, 4 stateless) at 5 descriptors each and 34 of the proxy's own (the store's 2 included) need about 254; raise the limit (ulimit -n) for more, or set --max-conns and --max-sessions"}},
		{"--max-sessions given: the connections fit beside it", with(dir, func(p *descriptorPlan) { p.sessions, p.sessionsSet = 10, true }), 256, result{152, 10,
			"the open-file limit is 256: lowered --max-conns from 256 to 152; 152 connections, 14 servers (10 sessions, 4 stateless) at 5 descriptors each and 34 of the proxy's own (the store's 2 included) need about 256; raise the limit (ulimit -n) for more, or set --max-conns and --max-sessions"}},
		{"both given: kept", with(dir, func(p *descriptorPlan) { p.conns, p.connsSet, p.sessionsSet = 200, true, true }), 256, result{200, 64,
			"the open-file limit is 256: 200 connections, 68 servers (64 sessions, 4 stateless) at 5 descriptors each and 34 of the proxy's own (the store's 2 included) need about 574, over the limit; raise it (ulimit -n) or lower --max-conns, --max-sessions and --stateless-servers"}},
		{"both given, and they fit", with(dir, func(p *descriptorPlan) { p.conns, p.sessions, p.connsSet, p.sessionsSet = 100, 10, true, true }), 256, result{100, 10, ""}},
		{"a limit too low for the least", dir, 64, result{16, 1,
			"the open-file limit is 64: lowered --max-conns from 256 to 16 and --max-sessions from 64 to 1; 16 connections, 5 servers (1 sessions, 4 stateless) at 5 descriptors each and 34 of the proxy's own (the store's 2 included) need about 75, over the limit; raise it (ulimit -n) or lower --max-conns, --max-sessions and --stateless-servers"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conns, sessions, warning := fitDescriptors(tt.plan, tt.nofile)
			if diff := cmp.Diff(tt.want, result{conns, sessions, warning}); diff != "" {
				t.Errorf("fitDescriptors(%+v, %d) (-want +got):\n%s", tt.plan, tt.nofile, diff)
			}
			if tt.want.Warning != "" && tt.plan.need(conns, sessions) <= int(tt.nofile) && !tt.plan.connsSet && !tt.plan.sessionsSet {
				// Lowered to fit: nothing more would.
				if tt.plan.need(conns+1, sessions) <= int(tt.nofile) && tt.plan.need(conns, sessions+1) <= int(tt.nofile) {
					t.Errorf("fitDescriptors(%+v, %d) leaves room: %d connections, %d sessions", tt.plan, tt.nofile, conns, sessions)
				}
			}
		})
	}
}

// openFDs counts the descriptors process pid holds.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// fittedTo reads the --max-conns and --max-sessions of the warning that
// lowered them.
var fittedTo = regexp.MustCompile(`--max-conns from \d+ to (\d+) and --max-sessions from \d+ to (\d+)`)

// Under `ulimit -n 128` (soft and hard, in the child: Go raises the soft
// limit to the hard one), toolcap mcp --listen lowers --max-conns and
// --max-sessions to fit, beside the directory store and the stateless
// servers: every session it admits starts its server, the next is refused
// 503, and with every connection slot held as well the proxy stays within
// the limit, with no "too many open files" (issue 39, item 8: at 256, the
// 61st of 64 sessions failed so).
func TestMCPListenFitsOpenFileLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc")
	}
	const limit = 128
	bin := buildBinary(t)
	server := buildFaultServer(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // a directory store of the test's own
	cmd := exec.Command("sh", "-c", `ulimit -n `+strconv.Itoa(limit)+` && exec "$0" "$@"`, bin, "mcp", "--listen", "127.0.0.1:0", "--", server)
	cmd.Env = append(cleanEnv(), "XDG_CACHE_HOME="+os.Getenv("XDG_CACHE_HOME"))
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == ""; time.Sleep(20 * time.Millisecond) {
		if m := servingURL.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the proxy did not say where it serves; stderr:\n%s", stderr)
		}
	}
	m := fittedTo.FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no warning that lowered --max-conns and --max-sessions; stderr:\n%s", stderr)
	}
	conns, _ := strconv.Atoi(m[1])
	sessions, _ := strconv.Atoi(m[2])
	if diff := cmp.Diff([]int{34, 8}, []int{conns, sessions}); diff != "" {
		t.Errorf("--max-conns and --max-sessions under a limit of %d (-want +got):\n%s", limit, diff)
	}

	// Every session admitted, then 503.
	initialize := func() int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	var statuses []int
	for range sessions + 1 {
		statuses = append(statuses, initialize())
	}
	want := make([]int, sessions+1)
	for i := range want {
		want[i] = http.StatusOK
	}
	want[sessions] = http.StatusServiceUnavailable
	if diff := cmp.Diff(want, statuses); diff != "" {
		t.Errorf("initialize statuses (-want +got):\n%s", diff)
	}
	http.DefaultClient.CloseIdleConnections()

	// And every connection slot held beside them.
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	for range conns + 5 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for sockets(t, pid) < conns+1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := openFDs(t, pid); n > limit {
		t.Errorf("the proxy holds %d descriptors, over the limit of %d", n, limit)
	}
	if strings.Contains(stderr.String(), "too many open files") {
		t.Errorf("the proxy ran out of descriptors:\n%s", stderr)
	}
}
