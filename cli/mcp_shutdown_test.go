//go:build !toolcap_nomcp

package cli

// Shutdown of "toolcap mcp" (issue 21): SIGINT and SIGTERM, with sessions
// open, calls in flight and event streams held, end every session and stop
// every server the proxy started, and what those servers started in their
// process groups, in stdio mode and with --listen: no process is left.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// shutdownBound is the longest a shutdown may take: the stop sequence of a
// server busy with a call (stdin closed, SIGTERM after the grace), with
// slack for a loaded machine.
const shutdownBound = 2*mcpGrace + 10*time.Second

func TestMCPShutdown(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc and process groups")
	}
	bin, server := buildBinary(t), buildFaultServer(t)
	for _, tt := range []struct {
		mode     string
		sig      syscall.Signal
		sessions int
		wantExit int
	}{
		{"stdio", syscall.SIGINT, 1, exitFailed},
		{"stdio", syscall.SIGTERM, 1, exitFailed},
		{"listen", syscall.SIGINT, 3, exitOK},
		{"listen", syscall.SIGTERM, 3, exitOK},
	} {
		t.Run(fmt.Sprintf("%s %v", tt.mode, tt.sig), func(t *testing.T) {
			var (
				cmd    *exec.Cmd
				stderr *lockedBuffer
				spawns []int // the grandchildren, which ignore SIGTERM
			)
			if tt.mode == "stdio" {
				s := startFault(t, bin, server)
				cmd, stderr = s.cmd, s.stderr
				spawns = append(spawns, spawnPid(t, s.result("spawn", first(s.call("spawn", nil, nil))).text()))
				// A call in flight: the server waits for an answer to its
				// roots/list that never comes, and does not exit when its
				// stdin closes; SIGTERM ends it.
				s.request("tools/call", map[string]any{"name": "ask", "arguments": map[string]any{}})
			} else {
				cmd, stderr, spawns = listenSessions(t, bin, server, tt.sessions)
			}
			children := childrenOf(cmd.Process.Pid)
			want := tt.sessions
			if tt.mode == "listen" {
				want++ // the server the stateless requests share
			}
			if len(children) != want {
				t.Fatalf("the proxy has %d children %v, want %d (one server per session, one for the stateless requests)", len(children), children, want)
			}

			start := time.Now()
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			exit := waitProcess(t, cmd, shutdownBound, stderr)
			took := time.Since(start)
			t.Logf("%s: %v with %d sessions: exited %d after %v", tt.mode, tt.sig, tt.sessions, exit, took.Round(time.Millisecond))
			if exit != tt.wantExit {
				t.Errorf("exit status %d, want %d; stderr:\n%s", exit, tt.wantExit, tail(stderr.String()))
			}
			// A process the proxy SIGKILLed as it exited is gone once the
			// kernel has torn it down: on a loaded machine that can take
			// a moment past the proxy's exit.
			var left []int
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				left = left[:0]
				for _, pid := range append(children, spawns...) {
					if alive(pid) {
						left = append(left, pid)
					}
				}
				if len(left) == 0 || time.Now().After(deadline) {
					break
				}
			}
			if len(left) == 0 {
				left = nil
			}
			if diff := cmp.Diff([]int(nil), left); diff != "" {
				t.Errorf("processes left after the proxy exited (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]int(nil), runningExe(server)); diff != "" {
				t.Errorf("processes of the server's binary still running, orphans (-want +got):\n%s", diff)
			}
		})
	}
}

// first is a call's response, without the frames before it.
func first(resp *frame, _ []*frame) *frame { return resp }

// spawnPid parses the spawn tool's text: the grandchild's pid.
func spawnPid(t *testing.T, text string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil || !alive(pid) {
		t.Fatalf("spawn answered %q: not a running pid (%v)", text, err)
	}
	return pid
}

var servingURL = regexp.MustCompile(`serving (http://\S+/mcp)`)

// startListen starts `toolcap mcp --listen 127.0.0.1:0` with args, and
// returns the URL it serves; the proxy is killed when the test ends.
func startListen(t *testing.T, bin string, args ...string) string {
	t.Helper()
	_, _, url := startProxy(t, bin, append([]string{"--listen", "127.0.0.1:0"}, args...)...)
	return url
}

// startProxy starts `toolcap mcp` with args, which listen, and waits for
// the URL it says it serves. It returns the process, its stderr and that
// URL; a process the test has not waited for is killed when the test ends.
func startProxy(t *testing.T, bin string, args ...string) (*exec.Cmd, *lockedBuffer, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Env = cleanEnv()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m := servingURL.FindStringSubmatch(stderr.String()); m != nil {
			return cmd, stderr, m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy did not say where it serves; stderr:\n%s", stderr)
		}
	}
}

// listenSessions starts the proxy with --listen in front of server, and
// opens n sessions, each of which spawns a grandchild; the first holds its
// GET stream open, the second has a call in flight that waits for the
// client. A stateless client (2026-07-28) then spawns one more on the
// server its requests share, and leaves a call in flight there. It returns
// the proxy, its stderr and the grandchildren's pids.
func listenSessions(t *testing.T, bin, server string, n int) (*exec.Cmd, *lockedBuffer, []int) {
	t.Helper()
	cmd, stderr, url := startProxy(t, bin, "--listen", "127.0.0.1:0", "--", server)
	var spawns []int
	for i := range n {
		c := &httpMCPClient{t: t, url: url}
		c.initialize()
		spawns = append(spawns, spawnPid(t, c.callText("spawn")))
		switch i {
		case 0:
			c.openGET()
		case 1:
			c.post(c.requestBody("tools/call", map[string]any{"name": "ask", "arguments": map[string]any{}}), false)
		}
	}
	sc := &httpMCPClient{t: t, url: url, stateless: true}
	spawns = append(spawns, spawnPid(t, sc.callText("spawn")))
	sc.post(sc.requestBody("tools/call", map[string]any{"name": "ask", "arguments": map[string]any{}}), false)
	return cmd, stderr, spawns
}

// httpMCPClient is a raw streamable HTTP client of one session.
type httpMCPClient struct {
	t       *testing.T
	url     string
	session string
	nextID  int
	// stateless makes it a client of MCP 2026-07-28: no session, each
	// request with its version and capabilities in _meta and the headers
	// that mirror them.
	stateless bool
}

const testProtocolVersion = "2025-06-18"

func (c *httpMCPClient) requestBody(method string, params any) []byte {
	c.nextID++
	if p, ok := params.(map[string]any); ok && c.stateless {
		p["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

func (c *httpMCPClient) newRequest(method string, body []byte) *http.Request {
	req, err := http.NewRequest(method, c.url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", testProtocolVersion)
	}
	if c.stateless {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", m.Method)
		if m.Params.Name != "" {
			req.Header.Set("Mcp-Name", m.Params.Name)
		}
	}
	return req
}

// post sends body and, when wait is set, returns the response to the
// request it carries (the data of the SSE event that has its id); without
// wait it returns nil once the response's headers came, the stream left
// open.
func (c *httpMCPClient) post(body []byte, wait bool) *frame {
	c.t.Helper()
	id := c.nextID
	resp, err := http.DefaultClient.Do(c.newRequest(http.MethodPost, body))
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode/100 != 2 {
		b, _ := bufioRead(resp)
		c.t.Fatalf("POST %s: %s: %s", body, resp.Status, b)
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	if !wait {
		c.t.Cleanup(func() { resp.Body.Close() })
		return nil
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var f frame
		if err := json.NewDecoder(resp.Body).Decode(&f); err != nil {
			c.t.Fatal(err)
		}
		return &f
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var f frame
		if json.Unmarshal([]byte(strings.TrimSpace(data)), &f) == nil && f.isResponse() && string(f.ID) == strconv.Itoa(id) {
			return &f
		}
	}
	c.t.Fatalf("POST %s: the stream ended without the response (%v)", body, sc.Err())
	return nil
}

func bufioRead(resp *http.Response) (string, error) {
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err := b.ReadFrom(resp.Body)
	return b.String(), err
}

func (c *httpMCPClient) initialize() {
	c.t.Helper()
	resp := c.post(c.requestBody("initialize", map[string]any{
		"protocolVersion": testProtocolVersion,
		"capabilities":    map[string]any{"roots": map[string]any{}},
		"clientInfo":      map[string]any{"name": "toolcap-shutdown-test", "version": "1"},
	}), true)
	if resp.Error != nil || c.session == "" {
		c.t.Fatalf("initialize: %s, session %q", resp.raw, c.session)
	}
	req := c.newRequest(http.MethodPost, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized: %s", r.Status)
	}
}

// callText calls tool and returns its text.
func (c *httpMCPClient) callText(tool string) string {
	c.t.Helper()
	resp := c.post(c.requestBody("tools/call", map[string]any{"name": tool, "arguments": map[string]any{}}), true)
	var r toolResult
	if resp.Error != nil || json.Unmarshal(resp.Result, &r) != nil {
		c.t.Fatalf("%s: %s", tool, resp.raw)
	}
	return r.text()
}

// openGET opens the session's GET stream and leaves it open.
func (c *httpMCPClient) openGET() {
	c.t.Helper()
	resp, err := http.DefaultClient.Do(c.newRequest(http.MethodGet, nil))
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := bufioRead(resp)
		c.t.Fatalf("GET: %s: %s", resp.Status, b)
	}
	c.t.Cleanup(func() { resp.Body.Close() })
}

// childrenOf returns the pids whose parent is pid.
func childrenOf(pid int) []int {
	var out []int
	for _, p := range procPids() {
		if ppidOf(p) == pid {
			out = append(out, p)
		}
	}
	return out
}

// runningExe returns the pids of the running processes whose executable is
// exe.
func runningExe(exe string) []int {
	var out []int
	for _, p := range procPids() {
		if path, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p)); err == nil && filepath.Clean(path) == filepath.Clean(exe) && alive(p) {
			out = append(out, p)
		}
	}
	return out
}

func procPids() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// ppidOf reads a process's parent from /proc, -1 when it is gone.
func ppidOf(pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(stat[i+1:])) // state, ppid, ...
	if len(f) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return ppid
}

// waitProcess waits up to d for cmd to exit and returns its exit status.
func waitProcess(t *testing.T, cmd *exec.Cmd, d time.Duration, stderr *lockedBuffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("the proxy did not exit within %v; stderr:\n%s", d, tail(stderr.String()))
	}
	return cmd.ProcessState.ExitCode()
}
