//go:build !toolcap_nomcp

package cli

// End-to-end tests of "toolcap mcp" against the fault server in
// test/faultserver (issue 9): the built binary in front of the built fault
// server, driven as a raw JSON-RPC client over pipes, so that the tests see
// every frame the proxy writes, in order, byte for byte.
//
//	go test ./cli -run '^TestMCPFault' -v          # all, 1 GiB included
//	go test ./cli -run '^TestMCPFault' -short -v   # without the 1 GiB result
//
// TOOLCAP_MCP_FAULT_PROXY=PATH runs them against another build of toolcap
// (or, to check the harness, a script that runs the command after "--").
// TestMCPFault/results logs the table of the proxy's peak RSS against the
// result size that docs/mcp.md shows.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
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

	"github.com/toolcap/toolcap/internal/fault"
)

const (
	// defaultLimit is the limit of a tool the manifest does not name.
	defaultLimit = 16384
	// rssBound is the most peak RSS the proxy may reach for any result
	// (issue 9: at most 64 MiB for 200 MB, not growing with the result).
	rssBound = 64 << 20
	mib      = 1 << 20
)

// buildFaultServer builds test/faultserver into a temporary directory.
func buildFaultServer(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the fault server with")
	}
	bin := filepath.Join(t.TempDir(), "faultserver")
	build := exec.Command(goTool, "build", "-o", bin, "../test/faultserver")
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build faultserver: %v\n%s", err, out)
	}
	return bin
}

// frame is one JSON-RPC message as the client received it.
type frame struct {
	raw    []byte
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (f *frame) isResponse() bool { return f.Method == "" && len(f.ID) > 0 }

// toolResult is a tools/call result.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage            `json:"structuredContent"`
	IsError           bool                       `json:"isError"`
	Meta              map[string]json.RawMessage `json:"_meta"`
}

func (r *toolResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// truncation is _meta["toolcap/truncation"] of a cut result.
type truncation struct {
	Unit     string `json:"unit"`
	Limit    int64  `json:"limit"`
	Original int64  `json:"original"`
	Kept     int64  `json:"kept"`
	Dropped  int64  `json:"dropped"`
}

// rawSession is toolcap mcp as a subprocess, with the test as its client.
type rawSession struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	frames chan *frame
	stderr *lockedBuffer
	nextID int
}

// startRaw starts bin mcp args... and reads its stdout, frame by frame, with
// no limit on a frame's size.
func startRaw(t *testing.T, bin string, args ...string) *rawSession {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Env = cleanEnv()
	s := &rawSession{t: t, cmd: cmd, frames: make(chan *frame, 4096), stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	cmd.WaitDelay = 10 * time.Second
	var err error
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.frames)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				f := &frame{raw: bytes.TrimRight(line, "\r\n")}
				if jerr := json.Unmarshal(f.raw, f); jerr != nil {
					f.Method = "<not JSON: " + jerr.Error() + ">"
				}
				s.frames <- f
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return s
}

// startFault starts the proxy in front of the fault server and initializes
// the session.
func startFault(t *testing.T, bin, server string, flags ...string) *rawSession {
	t.Helper()
	s := startRaw(t, bin, append(flags, "--", server)...)
	s.initialize()
	return s
}

func (s *rawSession) write(v any) {
	s.t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := s.stdin.Write(append(data, '\n')); err != nil {
		s.t.Fatalf("writing to the proxy: %v; stderr:\n%s", err, s.stderr)
	}
}

// request sends a request and returns its id.
func (s *rawSession) request(method string, params any) int {
	s.t.Helper()
	s.nextID++
	s.write(map[string]any{"jsonrpc": "2.0", "id": s.nextID, "method": method, "params": params})
	return s.nextID
}

// next returns the next frame, or nil when the proxy closed its stdout.
func (s *rawSession) next(timeout time.Duration) *frame {
	s.t.Helper()
	select {
	case f, ok := <-s.frames:
		if !ok {
			return nil
		}
		return f
	case <-time.After(timeout):
		s.t.Fatalf("no frame from the proxy in %s; stderr:\n%s", timeout, s.stderr)
		return nil
	}
}

// await returns the response to request id and the frames that came before
// it, which it hands to other first when other is not nil. It returns a nil
// response when the proxy closed its stdout first.
func (s *rawSession) await(id int, timeout time.Duration, other func(*frame)) (*frame, []*frame) {
	s.t.Helper()
	want := strconv.Itoa(id)
	var before []*frame
	for {
		f := s.next(timeout)
		if f == nil {
			return nil, before
		}
		if f.isResponse() && string(f.ID) == want {
			return f, before
		}
		if other != nil {
			other(f)
		}
		before = append(before, f)
	}
}

func (s *rawSession) initialize() {
	s.t.Helper()
	id := s.request("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"roots": map[string]any{"listChanged": true}, "sampling": map[string]any{}, "elicitation": map[string]any{}},
		"clientInfo":      map[string]any{"name": "toolcap-fault-test", "version": "1"},
	})
	resp, _ := s.await(id, 30*time.Second, nil)
	switch {
	case resp == nil:
		s.t.Fatalf("the proxy ended the session before answering initialize; stderr:\n%s", s.stderr)
	case resp.Error != nil:
		s.t.Fatalf("initialize: %s; stderr:\n%s", resp.raw, s.stderr)
	}
	s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
}

// call calls a tool and returns the response (nil when the session ended
// first) and the frames before it.
func (s *rawSession) call(name string, args map[string]any, meta map[string]any) (*frame, []*frame) {
	s.t.Helper()
	params := map[string]any{"name": name, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	return s.await(s.request("tools/call", params), time.Minute, nil)
}

// result decodes the tool result of resp, failing the test when there is
// none.
func (s *rawSession) result(what string, resp *frame) *toolResult {
	s.t.Helper()
	if resp == nil {
		s.t.Fatalf("%s: the proxy ended the session before answering; stderr:\n%s", what, tail(s.stderr.String()))
	}
	if resp.Error != nil {
		s.t.Fatalf("%s: JSON-RPC error %d %.300q; stderr:\n%s", what, resp.Error.Code, resp.Error.Message, tail(s.stderr.String()))
	}
	var r toolResult
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		s.t.Fatalf("%s: result %.300s: %v", what, resp.Result, err)
	}
	return &r
}

// echo checks that the session still works: a small call round-trips.
func (s *rawSession) echo(what string) {
	s.t.Helper()
	resp, _ := s.call("echo", map[string]any{"text": "still here"}, nil)
	if got := s.result("echo after "+what, resp).text(); got != "still here" {
		s.t.Errorf("echo after %s = %q", what, got)
	}
}

// peakRSS reads the proxy's VmHWM.
func (s *rawSession) peakRSS() int64 {
	s.t.Helper()
	return vmHWM(s.t, s.cmd.Process.Pid)
}

func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	hwm := tryVmHWM(pid)
	if hwm == 0 {
		t.Fatalf("no VmHWM in /proc/%d/status", pid)
	}
	return hwm
}

// tryVmHWM is the peak RSS of a running process, 0 when it cannot be read.
func tryVmHWM(pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	_, after, _ := strings.Cut(string(status), "VmHWM:")
	line, _, _ := strings.Cut(after, "\n")
	kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), "kB")), 10, 64)
	if err != nil {
		return 0
	}
	return kib << 10
}

// close closes the proxy's stdin, as a client that is done does, drains its
// stdout and returns its exit code.
func (s *rawSession) close() int {
	s.t.Helper()
	_ = s.stdin.Close()
	deadline := time.After(20 * time.Second)
	for open := true; open; {
		select {
		case _, open = <-s.frames:
		case <-deadline:
			s.t.Fatalf("the proxy did not close its stdout after its stdin closed; stderr:\n%s", tail(s.stderr.String()))
		}
	}
	err := s.cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		s.t.Fatalf("waiting for the proxy: %v", err)
		return -1
	}
}

// tail is the end of a long stderr.
func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

// checkCut checks that text is the fault text of original bytes cut to
// limit by toolcap's rule: the longest prefix that fits with the marker, and
// the marker's exact count. It returns the kept bytes.
func checkCut(t *testing.T, what, text string, original, limit int64) int64 {
	t.Helper()
	m := mcpMarker.FindStringSubmatch(text)
	if m == nil {
		t.Errorf("%s: %d bytes that do not end in the marker: …%q", what, len(text), text[max(0, len(text)-120):])
		return -1
	}
	kept := int64(len(text) - len(m[0]))
	dropped, _ := strconv.ParseInt(m[1], 10, 64)
	if n := int64(len(text)); n > limit || n < limit-4 {
		t.Errorf("%s: %d bytes, want the limit %d (at most 3 less, for a character that does not fit)", what, n, limit)
	}
	if dropped != original-kept {
		t.Errorf("%s: the marker says %d bytes dropped; %d - %d kept = %d", what, dropped, original, kept, original-kept)
	}
	if want := fault.Prefix(original, kept); text[:kept] != want {
		i := 0
		for i < len(want) && want[i] == text[i] {
			i++
		}
		t.Errorf("%s: the kept text differs from the server's at byte %d: got %q, want %q", what, i,
			text[i:min(len(text), i+40)], want[i:min(len(want), i+40)])
	}
	return kept
}

// rssRow is one line of the RSS table.
type rssRow struct {
	name    string
	bytes   int64
	rss     int64
	elapsed time.Duration
	outcome string
}

func TestMCPFault(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc and process groups")
	}
	bin := os.Getenv("TOOLCAP_MCP_FAULT_PROXY")
	if bin == "" {
		bin = buildBinary(t)
	}
	server := buildFaultServer(t)

	t.Run("results", func(t *testing.T) {
		tests := []struct {
			name       string
			bytes      int64
			blocks     int
			idLast     bool
			structured bool
			isError    bool
			long       bool // skipped with -short
		}{
			{name: "1 MB", bytes: 1_000_000},
			{name: "16 MiB+1", bytes: 16*mib + 1},
			{name: "200 MB", bytes: 200_000_000},
			{name: "1 GiB", bytes: 1 << 30, long: true},
			{name: "16 MiB+1 id_last", bytes: 16*mib + 1, idLast: true},
			{name: "200 MB id_last", bytes: 200_000_000, idLast: true},
			{name: "16 MiB+1 structured", bytes: 16*mib + 1, structured: true},
			{name: "20 MB error", bytes: 20_000_000, isError: true},
			{name: "20 MB in 100000 blocks", bytes: 20_000_000, blocks: 100000},
		}
		var rows []rssRow
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if tt.long && testing.Short() {
					t.Skip("-short: the 1 GiB result takes seconds")
				}
				start := time.Now()
				s := startFault(t, bin, server)
				args := map[string]any{"bytes": tt.bytes, "id_last": tt.idLast, "structured": tt.structured, "error": tt.isError}
				if tt.blocks > 0 {
					args["blocks"] = tt.blocks
				}
				resp, _ := s.call("big", args, nil)
				row := rssRow{name: tt.name, bytes: tt.bytes, outcome: "capped, session goes on"}
				defer func() {
					row.elapsed = time.Since(start)
					if t.Failed() && row.outcome == "capped, session goes on" {
						row.outcome = "capped, but see the test's errors"
					}
					rows = append(rows, row)
				}()
				if resp == nil {
					row.outcome = "session ended"
					row.rss = vmHWMAfterExit(s)
					t.Fatalf("the proxy ended the session instead of capping %d bytes; stderr:\n%s", tt.bytes, tail(s.stderr.String()))
				}
				// Read now: a failure below stops the test.
				row.rss = tryVmHWM(s.cmd.Process.Pid)
				if resp.Error != nil && !tt.isError {
					row.outcome = fmt.Sprintf("JSON-RPC error %.60q", resp.Error.Message)
				}
				switch {
				case tt.isError:
					if resp.Error == nil {
						t.Fatalf("want a JSON-RPC error, got %.300s", resp.raw)
					}
					if resp.Error.Code != -32000 {
						t.Errorf("error code %d, want the server's -32000", resp.Error.Code)
					}
					checkCut(t, "error message", resp.Error.Message, tt.bytes, defaultLimit)
				case tt.blocks > 1:
					r := s.result("big", resp)
					var total int
					for _, c := range r.Content {
						total += len(c.Text)
					}
					if total > defaultLimit {
						t.Errorf("%d blocks of %d text bytes together, over %d", len(r.Content), total, defaultLimit)
					}
					per := tt.bytes / int64(tt.blocks)
					if len(r.Content) == 0 {
						t.Fatalf("no content blocks")
					}
					first := mcpMarker.ReplaceAllString(r.Content[0].Text, "")
					if !strings.HasPrefix(fault.Prefix(per, per), first) {
						t.Errorf("the first block is not the server's: %.100q", r.Content[0].Text)
					}
					got := metaTruncation(t, r)
					if got == nil {
						break
					}
					if got.Limit != defaultLimit || got.Original != tt.bytes || got.Kept+got.Dropped != got.Original || got.Unit != "bytes" {
						t.Errorf("_meta toolcap/truncation = %+v; want limit %d, original %d, kept + dropped = original, unit bytes", *got, defaultLimit, tt.bytes)
					}
				default:
					r := s.result("big", resp)
					if len(r.Content) != 1 || r.Content[0].Type != "text" || r.IsError {
						t.Fatalf("want one text block, not an error: %d blocks, isError %v", len(r.Content), r.IsError)
					}
					kept := checkCut(t, "text", r.Content[0].Text, tt.bytes, defaultLimit)
					want := &truncation{Unit: "bytes", Limit: defaultLimit, Original: tt.bytes, Kept: kept, Dropped: tt.bytes - kept}
					if diff := cmp.Diff(want, metaTruncation(t, r)); diff != "" {
						t.Errorf("_meta[\"toolcap/truncation\"] mismatch (-want +got):\n%s", diff)
					}
					if tt.structured {
						checkStructured(t, r.StructuredContent, tt.bytes)
					}
				}
				s.echo("the big result")
				row.rss = s.peakRSS()
				if code := s.close(); code != exitOK {
					t.Errorf("exit %d after the client closed; stderr:\n%s", code, tail(s.stderr.String()))
				}
				t.Logf("%s: peak RSS %.1f MiB in %s", tt.name, float64(row.rss)/mib, time.Since(start).Round(time.Millisecond))
				if row.rss > rssBound {
					t.Errorf("the proxy's peak RSS is %.1f MiB for a %d-byte result; want at most %d MiB", float64(row.rss)/mib, tt.bytes, rssBound/mib)
				}
			})
		}
		var table strings.Builder
		table.WriteString("proxy peak RSS (VmHWM) against the result size, default limit 16384:\n")
		table.WriteString("| result | text bytes | outcome | proxy peak RSS | time |\n| --- | ---: | --- | ---: | ---: |\n")
		for _, r := range rows {
			rss := fmt.Sprintf("%.1f MiB", float64(r.rss)/mib)
			if r.rss == 0 {
				rss = "n/a"
			}
			fmt.Fprintf(&table, "| %s | %d | %s | %s | %s |\n", r.name, r.bytes, r.outcome, rss, r.elapsed.Round(10*time.Millisecond))
		}
		t.Log(table.String())
	})

	t.Run("stray lines are skipped", func(t *testing.T) {
		s := startFault(t, bin, server)
		resp, _ := s.call("stray", nil, nil)
		if got := s.result("stray", resp).text(); got != "stray done" {
			t.Errorf("stray = %q", got)
		}
		s.echo("stray lines")
		if !strings.Contains(s.stderr.String(), "debug: hello") {
			t.Errorf("stderr does not mention the stray line %q:\n%s", "debug: hello", s.stderr)
		}
		if code := s.close(); code != exitOK {
			t.Errorf("exit %d; stderr:\n%s", code, s.stderr)
		}
	})

	t.Run("progress flood keeps its order", func(t *testing.T) {
		const n = 50000
		s := startFault(t, bin, server)
		resp, before := s.call("flood", map[string]any{"progress": n}, map[string]any{"progressToken": "flood-1"})
		if got := s.result("flood", resp).text(); got != "flood done 50000" {
			t.Errorf("flood = %q", got)
		}
		var progress, logs []int
		for _, f := range before {
			switch f.Method {
			case "notifications/progress":
				var p struct {
					Token    json.RawMessage `json:"progressToken"`
					Progress int             `json:"progress"`
				}
				_ = json.Unmarshal(f.Params, &p)
				if string(p.Token) != `"flood-1"` {
					t.Fatalf("progress token %s, want the client's \"flood-1\"", p.Token)
				}
				progress = append(progress, p.Progress)
			case "notifications/message":
				var p struct {
					Data string `json:"data"`
				}
				_ = json.Unmarshal(f.Params, &p)
				k, _ := strconv.Atoi(strings.TrimPrefix(p.Data, "log "))
				logs = append(logs, k)
			}
		}
		// Stragglers: what came after the result, up to the answer of a ping.
		_, after := s.await(s.request("ping", map[string]any{}), 30*time.Second, nil)
		late := 0
		for _, f := range after {
			if f.Method == "notifications/progress" {
				late++
			}
		}
		if late > 0 {
			t.Errorf("%d progress notifications reached the client after the result", late)
		}
		want := make([]int, n)
		for i := range want {
			want[i] = i + 1
		}
		if diff := cmp.Diff(want, progress); diff != "" {
			t.Errorf("%d progress notifications before the result, want all %d in order (-want +got):\n%.2000s", len(progress), n, diff)
		}
		wantLogs := make([]int, n/100)
		for i := range wantLogs {
			wantLogs[i] = i + 1
		}
		if diff := cmp.Diff(wantLogs, logs); diff != "" {
			t.Errorf("%d log notifications before the result, want all %d in order (-want +got):\n%.2000s", len(logs), n/100, diff)
		}
		t.Logf("peak RSS %.1f MiB", float64(s.peakRSS())/mib)
		s.close()
	})

	t.Run("server crashes mid-call", func(t *testing.T) {
		s := startFault(t, bin, server)
		resp, before := s.call("crash", nil, nil)
		msg := s.stderr.String()
		for _, f := range before {
			t.Logf("frame before the end: %.300s", f.raw)
		}
		if resp != nil {
			if resp.Error == nil {
				t.Errorf("the call the server died in got a result: %.300s", resp.raw)
			} else {
				msg += "\n" + resp.Error.Message
			}
		}
		code := s.close()
		msg += s.stderr.String()
		if code != exitFailed {
			t.Errorf("exit %d, want %d", code, exitFailed)
		}
		if !regexp.MustCompile(`(exit )?status 3\b`).MatchString(msg) || strings.Contains(msg, "terminated") {
			t.Errorf("the messages do not say that the server exited with status 3 (or say terminated):\n%s", msg)
		}
	})

	t.Run("grandchild that ignores SIGTERM is stopped", func(t *testing.T) {
		s := startFault(t, bin, server)
		resp, _ := s.call("spawn", nil, nil)
		r := s.result("spawn", resp)
		pid, err := strconv.Atoi(r.text())
		if err != nil || r.IsError {
			t.Fatalf("spawn = %q, isError %v", r.text(), r.IsError)
		}
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
		if !alive(pid) {
			t.Fatalf("the grandchild %d is not running", pid)
		}
		s.close()
		deadline := time.Now().Add(5 * time.Second)
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("the grandchild %d outlived the proxy by 5 s; stderr:\n%s", pid, s.stderr)
		}
	})

	t.Run("list_changed flood", func(t *testing.T) {
		const n = 100000
		s := startFault(t, bin, server)
		start := time.Now()
		resp, before := s.call("listchanged", map[string]any{"n": n}, nil)
		if got := s.result("listchanged", resp).text(); got != "listchanged done 100000" {
			t.Errorf("listchanged = %q", got)
		}
		var got int
		for _, f := range before {
			if f.Method == "notifications/tools/list_changed" {
				got++
			}
		}
		if got != n {
			t.Errorf("%d list_changed notifications reached the client before the result, want %d", got, n)
		}
		stats, _ := s.call("stats", nil, nil)
		rss := s.peakRSS()
		t.Logf("%d list_changed: peak RSS %.1f MiB, %s; requests the server got: %s", n, float64(rss)/mib,
			time.Since(start).Round(time.Millisecond), s.result("stats", stats).text())
		if rss > rssBound {
			t.Errorf("peak RSS %.1f MiB after %d list_changed, want at most %d MiB", float64(rss)/mib, n, rssBound/mib)
		}
		s.close()
	})

	t.Run("message over --max-message", func(t *testing.T) {
		tests := []struct {
			name  string
			flags []string
			size  int64
			fits  bool
		}{
			{"20 MB at the default 16 MiB", nil, 20_000_000, false},
			{"200 kB at 100000", []string{"--max-message", "100000"}, 200_000, false},
			{"50 kB at 100000", []string{"--max-message", "100000"}, 50_000, true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := startFault(t, bin, server, tt.flags...)
				uri := fmt.Sprintf("big://%d", tt.size)
				resp, _ := s.await(s.request("resources/read", map[string]any{"uri": uri}), time.Minute, nil)
				if resp == nil {
					t.Fatalf("the session ended; stderr:\n%s", tail(s.stderr.String()))
				}
				if tt.fits {
					var r struct {
						Contents []struct{ URI, Text string }
					}
					if err := json.Unmarshal(resp.Result, &r); err != nil || len(r.Contents) != 1 || r.Contents[0].Text != fault.Prefix(tt.size, tt.size) {
						t.Errorf("resources/read %s within the bound is not forwarded whole: %v, %.200s", uri, err, resp.raw)
					}
				} else if resp.Error == nil || resp.Error.Message == "" {
					t.Errorf("resources/read %s: want a JSON-RPC error for its id, got %.200s", uri, resp.raw)
				} else {
					t.Logf("error %d: %s", resp.Error.Code, resp.Error.Message)
				}
				s.echo("resources/read")
				if code := s.close(); code != exitOK {
					t.Errorf("exit %d; stderr:\n%s", code, tail(s.stderr.String()))
				}
			})
		}
		t.Run("tools/call is capped, not refused", func(t *testing.T) {
			s := startFault(t, bin, server, "--max-message", "100000")
			resp, _ := s.call("big", map[string]any{"bytes": 200_000}, nil)
			r := s.result("big", resp)
			checkCut(t, "text", r.text(), 200_000, defaultLimit)
			s.close()
		})
	})

	t.Run("uncut result is byte-identical", func(t *testing.T) {
		s := startFault(t, bin, server)
		resp, _ := s.call("nonmcp", nil, nil)
		if resp == nil || resp.Error != nil {
			t.Fatalf("nonmcp: %v", resp)
		}
		if diff := cmp.Diff(fault.NonMCPResult, string(resp.Result)); diff != "" {
			t.Errorf("the uncut result differs from what the server wrote (-want +got):\n%s", diff)
		}
		s.close()
	})

	t.Run("server-to-client requests", func(t *testing.T) {
		tests := []struct{ method, answer string }{
			{"roots/list", `{"roots":[{"uri":"file:///tmp/toolcap-e2e","name":"e2e"}]}`},
			{"sampling/createMessage", `{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"fixed-model","stopReason":"endTurn"}`},
			{"elicitation/create", `{"action":"accept","content":{"name":"Ada"}}`},
			{"vendor.example/unknown", `{"whatever":[1,2,3]}`},
		}
		s := startFault(t, bin, server)
		for _, tt := range tests {
			t.Run(tt.method, func(t *testing.T) {
				var asked []string
				answer := func(f *frame) {
					if f.Method == "" || len(f.ID) == 0 {
						return
					}
					asked = append(asked, f.Method)
					if _, err := fmt.Fprintf(s.stdin, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", f.ID, tt.answer); err != nil {
						t.Fatal(err)
					}
				}
				resp, _ := s.await(s.request("tools/call", map[string]any{"name": "ask", "arguments": map[string]any{"method": tt.method}}), time.Minute, answer)
				r := s.result("ask", resp)
				if diff := cmp.Diff([]string{tt.method}, asked); diff != "" {
					t.Errorf("requests the client was sent (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.answer, r.text()); diff != "" {
					t.Errorf("what the server received as the client's answer (-want +got):\n%s", diff)
				}
			})
		}
		s.close()
	})

	t.Run("live reload", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "toolcap.toml")
		write := func(limit string) {
			t.Helper()
			if err := os.WriteFile(path, []byte("[worker.tool_output.per_tool]\nbig = "+limit+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// replace writes the file as editors do: a new file renamed over it.
		replace := func(limit string) {
			t.Helper()
			tmp := filepath.Join(dir, ".toolcap.toml.new")
			if err := os.WriteFile(tmp, []byte("[worker.tool_output.per_tool]\nbig = "+limit+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}
		write("4096")
		s := startFault(t, bin, server, "--manifest", path)
		const size = 100_000
		limitNow := func() int64 {
			t.Helper()
			resp, _ := s.call("big", map[string]any{"bytes": size}, nil)
			r := s.result("big", resp)
			n := int64(len(r.text()))
			var m truncation
			if raw, ok := r.Meta["toolcap/truncation"]; ok && json.Unmarshal(raw, &m) == nil && m.Limit < n {
				t.Errorf("_meta says limit %d, the text is %d bytes", m.Limit, n)
			}
			return n
		}
		// within polls until a call is capped at limit, for at most 1 s
		// after the change.
		within := func(what string, limit int64) {
			t.Helper()
			changed := time.Now()
			for {
				n := limitNow()
				if n <= limit && n >= limit-4 {
					t.Logf("%s: capped at %d after %s", what, limit, time.Since(changed).Round(time.Millisecond))
					return
				}
				if time.Since(changed) > time.Second {
					t.Fatalf("%s: 1 s after the change a call is still %d bytes, want %d; stderr:\n%s", what, n, limit, tail(s.stderr.String()))
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		if n := limitNow(); n > 4096 || n < 4092 {
			t.Fatalf("big = %d bytes with per_tool big = 4096", n)
		}
		write("2048")
		within("file rewritten in place", 2048)
		replace("3000")
		within("file replaced by rename", 3000)

		// notReloaded counts the reloads the proxy refused, with why
		// (a manifest changed, SIGHUP) in their log lines.
		notReloaded := func(why string) int {
			n := 0
			for _, l := range strings.Split(s.stderr.String(), "\n") {
				if strings.Contains(l, "the limits were not reloaded") && strings.Contains(l, why) {
					n++
				}
			}
			return n
		}
		stderrTail := func() string { return tail(s.stderr.String()) }

		// The invalid edit is checked once the proxy has read and refused
		// it, as it logs.
		refused := notReloaded("a manifest changed")
		write("-7")
		eventually(t, 10*time.Second, "the invalid edit refused", func() bool { return notReloaded("a manifest changed") > refused }, stderrTail)
		if n := limitNow(); n > 3000 || n < 2996 {
			t.Errorf("after an invalid edit a call is %d bytes, want the old limit 3000", n)
		}
		if e := s.stderr.String(); !strings.Contains(e, path) || !strings.Contains(e, "big") || !strings.Contains(e, "-7") {
			t.Errorf("stderr does not name the file, key and value of the invalid edit:\n%s", tail(e))
		}

		// SIGHUP with no change: the proxy stays, the limit too.
		// It is checked once the proxy has re-read the file and refused it.
		refused = notReloaded("SIGHUP")
		if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "SIGHUP's reload refused", func() bool { return notReloaded("SIGHUP") > refused }, stderrTail)
		if n := limitNow(); n > 3000 || n < 2996 {
			t.Errorf("after SIGHUP on an invalid file a call is %d bytes, want 3000", n)
		}
		write("1500")
		if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		within("SIGHUP after a valid edit", 1500)
		s.echo("reloads")
		if code := s.close(); code != exitOK {
			t.Errorf("exit %d; stderr:\n%s", code, tail(s.stderr.String()))
		}
	})
}

// metaTruncation decodes _meta["toolcap/truncation"], reporting an error and
// returning nil when it is missing.
func metaTruncation(t *testing.T, r *toolResult) *truncation {
	t.Helper()
	raw, ok := r.Meta["toolcap/truncation"]
	if !ok {
		t.Errorf("a cut result has no _meta[\"toolcap/truncation\"]; _meta = %v", r.Meta)
		return nil
	}
	var got truncation
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Errorf("_meta[\"toolcap/truncation\"] = %s: %v", raw, err)
		return nil
	}
	return &got
}

// checkStructured checks a cut structuredContent {"content": text}: cut by
// the same rule, with no toolcap figures inside.
func checkStructured(t *testing.T, raw json.RawMessage, original int64) {
	t.Helper()
	if bytes.Contains(raw, []byte("toolcap/truncation")) {
		t.Errorf("structuredContent holds toolcap's figures: %.300s", raw)
	}
	// structuredContent is cut as JSON (issue 10): its serialization within
	// the limit, the string's start kept as the server wrote it and the
	// marker inside it counting the string's bytes as written, or, when it
	// names the read of the kept text, what that read returns (issue 41).
	if len(raw) > defaultLimit || !json.Valid(raw) {
		t.Errorf("structuredContent is %d bytes of JSON (valid: %v), want valid within %d", len(raw), json.Valid(raw), defaultLimit)
	}
	var written bytes.Buffer
	if err := fault.WriteJSON(&written, original); err != nil {
		t.Fatal(err)
	}
	const open = `{"content":"`
	// The marker names the read of the text's rest when the proxy kept it
	// (rest.Keeper.JSONKept), as it does by default.
	m := regexp.MustCompile(`\\n\[truncated: (\d+) bytes dropped, refine your query( or read the rest: toolcap_read \{\\"ref\\":\\"[a-z0-9]+\\",\\"offset\\":(\d+)(?:,\\"length\\":\d+)?\})?\]"\}$`).FindSubmatchIndex(raw)
	if !bytes.HasPrefix(raw, []byte(open)) || m == nil {
		t.Fatalf("structuredContent = %.100s … %.100s, want {\"content\": a cut string}", raw, raw[max(0, len(raw)-100):])
	}
	kept := raw[len(open):m[0]]
	if !bytes.HasPrefix(written.Bytes(), kept) {
		t.Errorf("the kept string is not the start of the server's")
	}
	n, _ := strconv.Atoi(string(raw[m[2]:m[3]]))
	if m[6] >= 0 {
		offset, _ := strconv.Atoi(string(raw[m[6]:m[7]]))
		if want := int(original) - offset; n != want {
			t.Errorf("the marker says %d bytes dropped; a read from its offset %d returns %d (the text is %d)", n, offset, want, original)
		}
	} else if want := written.Len() - len(kept); n != want {
		t.Errorf("the marker says %d bytes dropped, want %d (%d written, %d kept)", n, want, written.Len(), len(kept))
	}
}

// vmHWMAfterExit is the proxy's peak RSS when it may have exited already:
// from its rusage once it has, 0 when that is unknown.
func vmHWMAfterExit(s *rawSession) int64 {
	_ = s.close()
	if s.cmd.ProcessState == nil {
		return 0
	}
	if ru, ok := s.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10
	}
	return 0
}

// alive reports whether pid is a process that has not exited (a zombie
// counts as exited).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X')
}

// TestMCPMetrics: --metrics serves the counters of the results relayed.
func TestMCPMetrics(t *testing.T) {
	bin, server := buildBinary(t), buildFaultServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := startFault(t, bin, server, "--metrics", addr)
	// Only the tools the server listed are labelled by name.
	s.await(s.request("tools/list", map[string]any{}), 30*time.Second, nil)
	s.call("big", map[string]any{"bytes": 100000}, nil)
	s.echo("the metrics")
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`toolcap_tool_results_total{outcome="cut",tool="big"} 1`,
		`toolcap_tool_results_total{outcome="fits",tool="echo"} 1`,
		`toolcap_tool_result_original_bytes_total{tool="big"} 100000`,
		"# TYPE toolcap_tool_result_kept_bytes_total counter",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	if code := s.close(); code != exitOK {
		t.Errorf("exit %d", code)
	}
}
