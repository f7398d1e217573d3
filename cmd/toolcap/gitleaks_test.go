package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/toolcap/toolcap/cli"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
	"github.com/toolcap/toolcap/redact"
	"github.com/toolcap/toolcap/redact/gitleaks"
)

// The tests in this file run the samples of gitleaks' own rule tests (the
// true and false positives of each rule of its default config, which
// redact/gitleaks's TestRuleSamples scores) through the toolcap command,
// in process, with the options its main passes: cap, mcp and the Claude
// Code hook each give what package gitleaks' detector gives, sample by
// sample, so that every true positive it redacts is redacted through
// each of them and every false positive it leaves is left; and what a
// cut keeps, in the directory store and in Redis, holds none of the
// secrets.

// ruleCase and ruleSample are package ruletest's Case and Sample (an
// internal package of module redact/gitleaks), as its dump command
// prints them.
type ruleCase struct {
	Rule     string
	PathOnly bool
	TPs, FPs []ruleSample
}

type ruleSample struct {
	Text    string
	Secrets []string
}

// samples returns the true and false positives of gitleaks' rule tests,
// but those of rules that match only a file path, and the detector the
// command redacts with.
var samples = sync.OnceValues(func() (s struct{ tps, fps []ruleSample }, err error) {
	cmd := exec.Command("go", "run", "github.com/toolcap/toolcap/redact/gitleaks/internal/ruletest/dump")
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOTOOLCHAIN=local")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return s, fmt.Errorf("go run ruletest/dump: %v\n%s", err, stderr.Bytes())
	}
	var cases []ruleCase
	if err := json.Unmarshal(out, &cases); err != nil {
		return s, err
	}
	for _, c := range cases {
		if !c.PathOnly {
			s.tps = append(s.tps, c.TPs...)
			s.fps = append(s.fps, c.FPs...)
		}
	}
	return s, nil
})

// raceEnabled reports a test binary built with -race: the tests then
// take one sample in 8, the race detector slows redaction tenfold.
var raceEnabled bool

// loadSamples returns the samples, skipping a short test.
func loadSamples(t *testing.T) (tps, fps []ruleSample) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs a copy of gitleaks' rules package")
	}
	s, err := samples()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.tps) < 6000 || len(s.fps) < 300 {
		t.Fatalf("%d true and %d false positives: too few", len(s.tps), len(s.fps))
	}
	if raceEnabled {
		return every(s.tps, 8), every(s.fps, 8)
	}
	return s.tps, s.fps
}

// every returns every nth of s.
func every(s []ruleSample, n int) []ruleSample {
	var out []ruleSample
	for i := 0; i < len(s); i += n {
		out = append(out, s[i])
	}
	return out
}

// detector is the detector the tests compare the command with.
var detector = sync.OnceValue(gitleaks.New)

// wants holds what the detector makes of each text, once.
var wants sync.Map

// want returns what the detector makes of text.
func want(text string) string {
	if w, ok := wants.Load(text); ok {
		return w.(string)
	}
	w, _ := redact.Text(text, detector())
	wants.Store(text, w)
	return w
}

// restDir is the environment that puts the directory store in dir/rest
// (which the store makes, as only its user may read it), so that tests
// that set no process environment can run in parallel.
func restDir(dir string) []string {
	return []string{"TOOLCAP_WORKER__TOOL_OUTPUT__REST__DIR=" + filepath.Join(dir, "rest")}
}

// score compares what a front end made of each sample, got[i], with what
// the detector makes of it, and counts the true positives with none of
// their secrets left and the false positives left as they were.
func score(t *testing.T, front string, tps, fps []ruleSample, got func(i int, text string) string) {
	t.Helper()
	redacted, unchanged, differ := 0, 0, 0
	all := slices.Concat(tps, fps)
	for i, s := range all {
		g, w := got(i, s.Text), want(s.Text)
		if g != w {
			if differ++; differ <= 5 {
				t.Errorf("%s: sample %d %q: got %q, want %q", front, i, s.Text, g, w)
			}
			continue
		}
		if i < len(tps) && g != s.Text && !slices.ContainsFunc(s.Secrets, func(sec string) bool { return strings.Contains(g, sec) }) {
			redacted++
		}
		if i >= len(tps) && g == s.Text {
			unchanged++
		}
	}
	if differ > 0 {
		t.Errorf("%s: %d of %d samples differ from the detector's redaction", front, differ, len(all))
	}
	// redact/gitleaks's TestRuleSamples holds the detector to gitleaks'
	// own outcomes, rule by rule.
	t.Logf("%s: true positives %d, redacted %d; false positives %d, unchanged %d", front, len(tps), redacted, len(fps), unchanged)
}

// runCommand runs toolcap in process, as main does, with the options
// opts (main's, built once: a detector compiles its rules as it meets
// them).
func runCommand(t *testing.T, opts []cli.Option, env []string, stdin string, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Run(context.Background(), args, strings.NewReader(stdin), &out, &errb, env, opts...); code != 0 {
		t.Fatalf("toolcap %q: exit %d\n%s", args, code, errb.String())
	}
	return out.String(), errb.String()
}

func TestGitleaksCap(t *testing.T) {
	t.Parallel()
	tps, fps := loadSamples(t)
	opts, env := options(), restDir(t.TempDir())
	score(t, "cap", tps, fps, func(_ int, text string) string {
		out, _ := runCommand(t, opts, env, text, "cap", "--tool", "Bash")
		return out
	})
}

func TestGitleaksHook(t *testing.T) {
	t.Parallel()
	tps, fps := loadSamples(t)
	opts, env := options(), restDir(t.TempDir())
	score(t, "hook", tps, fps, func(_ int, text string) string {
		payload, err := json.Marshal(map[string]any{
			"session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "toolu_01",
			"tool_input":    map[string]any{"command": "cat .env"},
			"tool_response": map[string]any{"stdout": text, "stderr": "", "interrupted": false, "isImage": false},
		})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := runCommand(t, opts, env, string(payload), "hook", "claude-code")
		if out == "" {
			return text // the output left as it is
		}
		var reply struct {
			HookSpecificOutput struct {
				UpdatedToolOutput struct{ Stdout string }
			}
		}
		if err := json.Unmarshal([]byte(out), &reply); err != nil {
			t.Fatalf("the hook's reply: %v: %s", err, out)
		}
		return reply.HookSpecificOutput.UpdatedToolOutput.Stdout
	})
}

// samplesEnv names the file of sample texts TestHelperSampleServer serves.
const samplesEnv = "TOOLCAP_TEST_GITLEAKS_SAMPLES"

// TestHelperSampleServer is not a test: run by TestGitleaksMCP as the
// server toolcap mcp relays (the test binary itself, with samplesEnv set
// to a JSON file of texts), it answers each tools/call of {"i": N} with
// text N, in a text block and in structuredContent, on stdio.
func TestHelperSampleServer(t *testing.T) {
	file := os.Getenv(samplesEnv)
	if file == "" {
		t.Skip("helper process for TestGitleaksMCP")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		panic(err)
	}
	var texts []string
	if err := json.Unmarshal(b, &texts); err != nil {
		panic(err)
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			os.Exit(0)
		}
		var req struct {
			ID     json.RawMessage
			Method string
			Params struct{ Arguments struct{ I int } }
		}
		if json.Unmarshal(line, &req) != nil || req.ID == nil {
			continue // a notification
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "samples", "version": "1"}}
		case "tools/call":
			text := texts[req.Params.Arguments.I]
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": text}},
				"structuredContent": map[string]any{"text": text}}
		default:
			result = map[string]any{}
		}
		out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
		os.Stdout.Write(append(out, '\n'))
	}
}

// callResult is what the client reads of a tools/call's answer.
type callResult struct {
	Result struct {
		Content           []struct{ Text string }
		StructuredContent struct{ Text string }
	}
	Error json.RawMessage
}

func TestGitleaksMCP(t *testing.T) {
	t.Parallel()
	tps, fps := loadSamples(t)
	all := slices.Concat(tps, fps)
	texts := make([]string, len(all))
	for i, s := range all {
		texts[i] = s.Text
	}
	b, err := json.Marshal(texts)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "samples.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := slices.Concat(os.Environ(), restDir(t.TempDir()), []string{samplesEnv + "=" + file})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := cli.Run(context.Background(), []string{"mcp", "--", exe, "-test.run=^TestHelperSampleServer$"}, inR, outW, &stderr, env, options()...)
		outW.Close()
		done <- code
	}()
	defer func() {
		inW.Close()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("toolcap mcp: exit %d\n%s", code, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Errorf("toolcap mcp did not end when its client left")
		}
	}()
	answers := bufio.NewReaderSize(outR, 1<<20)
	call := func(i int) callResult {
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sample","arguments":{"i":%d}}}`+"\n", i+1, i)
		line, err := answers.ReadBytes('\n')
		if err != nil {
			t.Fatalf("sample %d: reading the answer: %v\n%s", i, err, stderr.String())
		}
		var r callResult
		if err := json.Unmarshal(line, &r); err != nil || r.Error != nil || len(r.Result.Content) != 1 {
			t.Fatalf("sample %d: the answer: %v: %s", i, err, line)
		}
		return r
	}
	var structured []string
	score(t, "mcp, text block", tps, fps, func(i int, _ string) string {
		r := call(i)
		structured = append(structured, r.Result.StructuredContent.Text)
		return r.Result.Content[0].Text
	})
	score(t, "mcp, structuredContent", tps, fps, func(i int, _ string) string { return structured[i] })
}

// TestGitleaksMCPSplitReads relays a sample, the server's message split
// in two writes at every offset, so that the relay reads it in two: what
// the client gets is redacted as the whole sample is, in the text block
// and in structuredContent, wherever the split falls in a secret.
func TestGitleaksMCPSplitReads(t *testing.T) {
	t.Parallel()
	tps, _ := loadSamples(t)
	// A private key block, which spans lines, and a password after
	// "password = ", which generic-api-key finds around its keyword.
	var picked []ruleSample
	for _, holding := range []string{"-----BEGIN", "password"} {
		for _, s := range tps {
			if strings.Contains(s.Text, holding) && len(s.Text) < 4096 {
				if want(s.Text) != s.Text {
					picked = append(picked, s)
					break
				}
			}
		}
	}
	if len(picked) != 2 {
		t.Fatalf("found %d of the 2 samples", len(picked))
	}
	policies, err := (*manifest.ToolOutputLimits)(nil).Policies()
	if err != nil {
		t.Fatal(err)
	}
	p, err := mcpproxy.New(mcpproxy.Options{Policies: policies.WithRedactor(detector())})
	if err != nil {
		t.Fatal(err)
	}
	clientR, toProxy := io.Pipe()    // the client writes, the proxy reads
	fromProxy, clientW := io.Pipe()  // the proxy writes, the client reads
	serverR, toServer := io.Pipe()   // the proxy writes, the server reads
	fromServer, serverW := io.Pipe() // the server writes, the proxy reads
	done := make(chan error, 1)
	go func() {
		done <- p.Serve(context.Background(), mcpproxy.StreamConn(rwc{clientR, clientW}), mcpproxy.StreamConn(rwc{fromServer, toServer}))
	}()
	defer func() {
		toProxy.Close()
		serverW.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return")
		}
	}()
	atServer := bufio.NewReader(serverR)
	atClient := bufio.NewReaderSize(fromProxy, 1<<20)
	id, splits := 0, 0
	for _, s := range picked {
		redacted := want(s.Text)
		text, _ := json.Marshal(s.Text)
		frame := `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":{"text":` + string(text) + `}}}`
		for k := 1; k < len(frame); k++ {
			id++
			splits++
			go fmt.Fprintf(toProxy, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t"}}`+"\n", id)
			if _, err := atServer.ReadBytes('\n'); err != nil {
				t.Fatal(err)
			}
			msg := fmt.Sprintf(frame, id)
			at := min(k+len(fmt.Sprint(id))-2, len(msg)-1) // %d took 2 bytes of frame
			go func() {
				io.WriteString(serverW, msg[:at])
				io.WriteString(serverW, msg[at:]+"\n")
			}()
			line, err := atClient.ReadBytes('\n')
			if err != nil {
				t.Fatal(err)
			}
			var r callResult
			if err := json.Unmarshal(line, &r); err != nil || len(r.Result.Content) != 1 {
				t.Fatalf("split at %d: %v: %s", k, err, line)
			}
			if r.Result.Content[0].Text != redacted || r.Result.StructuredContent.Text != redacted {
				t.Fatalf("split at %d: text %q and structuredContent %q, want %q", k, r.Result.Content[0].Text, r.Result.StructuredContent.Text, redacted)
			}
			for _, sec := range s.Secrets {
				if bytes.Contains(line, []byte(sec)) {
					t.Fatalf("split at %d: the answer holds a secret: %s", k, line)
				}
			}
		}
	}
	t.Logf("%d samples, split at each of %d offsets", len(picked), splits)
}

// rwc is a reader and a writer as one io.ReadWriteCloser.
type rwc struct {
	r *io.PipeReader
	w *io.PipeWriter
}

func (c rwc) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c rwc) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c rwc) Close() error {
	c.w.Close()
	return c.r.Close()
}

// keptInput returns the true positives the detector redacts, one after
// another, as one tool output of hundreds of kilobytes, and the secrets
// that its redaction of the whole leaves out.
func keptInput(t *testing.T) (input string, secrets []string) {
	t.Helper()
	tps, _ := loadSamples(t)
	k := kept(tps)
	if len(k.secrets) < len(tps)*9/10 {
		t.Fatalf("%d secrets redacted in %d samples joined, want about one a sample", len(k.secrets), len(tps))
	}
	return k.input, k.secrets
}

// kept is keptInput's, worked out once.
var kept = onceFunc(func(tps []ruleSample) (k struct {
	input   string
	secrets []string
}) {
	var texts []string
	for _, smp := range tps {
		if want(smp.Text) != smp.Text {
			texts = append(texts, smp.Text)
			k.secrets = append(k.secrets, smp.Secrets...)
		}
	}
	k.input = strings.Join(texts, "\n") + "\n"
	redacted := want(k.input)
	k.secrets = slices.DeleteFunc(k.secrets, func(s string) bool { return s == "" || strings.Contains(redacted, s) })
	return k
})

// onceFunc returns a function that calls f the first time it is called,
// and returns what it returned then every time.
func onceFunc[A, R any](f func(A) R) func(A) R {
	var (
		once sync.Once
		r    R
	)
	return func(a A) R {
		once.Do(func() { r = f(a) })
		return r
	}
}

// holds fails t when kept, what a store keeps, holds one of secrets.
func holds(t *testing.T, where string, kept []byte, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if bytes.Contains(kept, []byte(s)) {
			t.Errorf("%s holds the secret %q", where, s)
		}
	}
}

// TestGitleaksKeptRest cuts the true positives joined with the rest kept
// in the directory store: no file of the store holds a secret.
func TestGitleaksKeptRest(t *testing.T) {
	t.Parallel()
	input, secrets := keptInput(t)
	cache := t.TempDir()
	out, _ := runCommand(t, options(), restDir(cache), input, "cap", "--tool", "Bash", "--keep-rest")
	if !strings.Contains(out, "toolcap_read") {
		t.Fatalf("cap did not keep the rest of %d bytes: ...%s", len(input), out[max(0, len(out)-300):])
	}
	var kept []byte
	files := 0
	err := filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files++
		kept = append(kept, b...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) < len(input)/2 {
		t.Fatalf("the store holds %d bytes in %d files, want the rest of %d", len(kept), files, len(input))
	}
	holds(t, "the directory store", kept, secrets)
	holds(t, "cap's output", []byte(out), secrets)
	t.Logf("%d secrets in %d bytes of input, none in %d bytes of %d files", len(secrets), len(input), len(kept), files)
}

// TestGitleaksKeptRestRedis cuts the true positives joined with the rest
// kept in Redis (a redis-server of the test's own, as the Redis store's
// tests start theirs): no value of the database holds a secret.
func TestGitleaksKeptRestRedis(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("TOOLCAP_REDIS_E2E") == "1" {
			t.Fatalf("redis-server not found and TOOLCAP_REDIS_E2E=1: %v", err)
		}
		t.Skipf("redis-server not found (TOOLCAP_REDIS_E2E=1 makes this a failure): %v", err)
	}
	input, secrets := keptInput(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--daemonize", "no", "--loglevel", "warning")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	ctx := context.Background()
	for deadline := time.Now().Add(5 * time.Second); rdb.Ping(ctx).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s does not answer", addr)
		}
	}

	env := []string{"TOOLCAP_WORKER__TOOL_OUTPUT__REST__STORE=redis://" + addr + "/0"}
	out, _ := runCommand(t, options(), env, input, "cap", "--tool", "Bash", "--keep-rest")
	if !strings.Contains(out, "toolcap_read") {
		t.Fatalf("cap did not keep the rest of %d bytes: ...%s", len(input), out[max(0, len(out)-300):])
	}
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var kept []byte
	for _, k := range keys {
		v, err := rdb.Get(ctx, k).Bytes()
		if err != nil {
			t.Fatalf("GET %s: %v", k, err)
		}
		kept = append(kept, v...)
	}
	if len(kept) < len(input)/2 {
		t.Fatalf("Redis holds %d bytes in %d keys, want the rest of %d", len(kept), len(keys), len(input))
	}
	holds(t, "Redis", kept, secrets)
	t.Logf("%d secrets in %d bytes of input, none in %d bytes of %d keys", len(secrets), len(input), len(kept), len(keys))
}
