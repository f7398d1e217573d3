package redisrest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/adapters/redisrest"
	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/worker"
)

// The tests in this file run workers (worker.WithRest) on the store, two of
// them in two processes: the test binary runs itself again as a child
// whose mode childEnv names.

// childEnv selects the child's mode: "make" runs the tool through a worker
// and prints the result; "read" follows a read through a worker and prints
// the text. childURL, childScope and childArgs are its inputs.
const (
	childEnv   = "TOOLCAP_REDISREST_CHILD"
	childURL   = "TOOLCAP_REDISREST_URL"
	childScope = "TOOLCAP_REDISREST_SCOPE"
	childArgs  = "TOOLCAP_REDISREST_ARGS"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// childOut is what a child prints.
type childOut struct {
	Content string // "make": the result's content; "read": the text read
	Ref     string // "make": the ref its figures carry
	Error   string // the error of a failed call or read
}

// child runs a child's mode and prints its childOut as JSON.
func child(mode string) int {
	s, err := redisrest.Open(os.Getenv(childURL), rest.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer s.Close()
	w, err := worker.New([]worker.Tool{globTool()}, worker.WithRest(s))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := rest.WithScope(context.Background(), os.Getenv(childScope))
	var out childOut
	switch mode {
	case "make":
		res := w.ExecuteTools(ctx, []chain.Call{{ID: "1", Tool: "Glob", Args: json.RawMessage(`{"seed":1}`)}})[0]
		out.Content = *res.Content
		if res.IsError() {
			out.Error = out.Content
		}
		if tr, ok := res.Truncation(); ok {
			out.Ref = tr.Ref
		}
	case "read":
		out.Content, err = follow(ctx, w, os.Getenv(childArgs))
		if err != nil {
			out.Error = err.Error()
		}
	default:
		fmt.Fprintf(os.Stderr, "unknown child mode %q\n", mode)
		return 2
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// runChild runs the test binary as a child in mode, with Redis at url and
// scope, and returns what it printed.
func runChild(t *testing.T, mode, url, scope, args string) childOut {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childURL+"="+url, childScope+"="+scope, childArgs+"="+args)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", mode, err, stderr.Bytes())
	}
	var out childOut
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("child %s printed %q: %v", mode, b, err)
	}
	return out
}

// globOutput returns the output of the Glob tool for seed: about 300 KB of
// paths, with characters of two to four bytes, so that pages end on
// character boundaries.
func globOutput(seed int) string {
	var b strings.Builder
	for i := 0; b.Len() < 300_000; i++ {
		fmt.Fprintf(&b, "internal/service-%d/%05d/naïve_日本_🦀_handler_test.go\n", seed, i)
	}
	return b.String()
}

// globTool returns a tool named Glob whose content is globOutput of the
// seed in its arguments.
func globTool() worker.Tool {
	return worker.Func("Glob", func(_ context.Context, args json.RawMessage) (worker.ToolOutput, error) {
		var a struct{ Seed int }
		if err := json.Unmarshal(args, &a); err != nil {
			return worker.ToolOutput{}, err
		}
		s := globOutput(a.Seed)
		return worker.ToolOutput{Summary: "paths", Content: &s}, nil
	})
}

// follow reads a kept output through w, from the read args, following each
// page's marker, and returns the pages without their markers.
func follow(ctx context.Context, w *worker.Worker, args string) (string, error) {
	const tool = rest.DefaultTool
	var b strings.Builder
	for i := 0; ; i++ {
		if i > 1000 {
			return "", errors.New("no end after 1000 pages")
		}
		res := w.ExecuteTools(ctx, []chain.Call{{ID: fmt.Sprint("r", i), Tool: tool, Args: json.RawMessage(args)}})[0]
		page := *res.Content
		if res.IsError() {
			return b.String(), fmt.Errorf("%s %s: %s", tool, args, page)
		}
		if len(page) > w.Limit(tool) {
			return "", fmt.Errorf("page of %d bytes over the read tool's limit %d", len(page), w.Limit(tool))
		}
		ms := cut.FindMarkers(page)
		if len(ms) == 0 {
			b.WriteString(page)
			return b.String(), nil
		}
		if len(ms) != 1 || ms[0].Rest == nil || ms[0].Rest.Tool != tool {
			return "", fmt.Errorf("page ends in %+v, want one marker naming %s", ms, tool)
		}
		b.WriteString(page[:ms[0].Start])
		args = ms[0].Rest.Args
	}
}

// lastMarker returns the last marker of a cut result's content.
func lastMarker(t *testing.T, content string) cut.Found {
	t.Helper()
	ms := cut.FindMarkers(content)
	if len(ms) == 0 {
		t.Fatalf("no marker in a cut result of %d bytes", len(content))
	}
	return ms[len(ms)-1]
}

// newWorker returns a worker of the Glob tool keeping the rest in s.
func newWorker(t *testing.T, s rest.Store, opts ...worker.Option) *worker.Worker {
	t.Helper()
	w, err := worker.New([]worker.Tool{globTool()}, append([]worker.Option{worker.WithRest(s)}, opts...)...)
	if err != nil {
		t.Fatalf("worker.New: %v", err)
	}
	return w
}

// glob runs the Glob tool of seed through w.
func glob(ctx context.Context, w *worker.Worker, seed int) chain.Result {
	args := json.RawMessage(fmt.Sprintf(`{"seed":%d}`, seed))
	return w.ExecuteTools(ctx, []chain.Call{{ID: "g", Tool: "Glob", Args: args}})[0]
}

// readErr returns the error text of a read of ref from offset 0, and ""
// when the read succeeds.
func readErr(ctx context.Context, w *worker.Worker, ref string) string {
	_, err := follow(ctx, w, `{"ref":"`+ref+`"}`)
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestTwoWorkersTwoProcesses: a ref made by a worker in one process is read
// by a worker in another, page by page, byte for byte, in its scope only;
// both ways.
func TestTwoWorkersTwoProcesses(t *testing.T) {
	srv := startServer(t)
	full := globOutput(1)
	s := openStore(t, srv, rest.Config{})
	w := newWorker(t, s)

	t.Run("made by the child, read here", func(t *testing.T) {
		made := runChild(t, "make", srv.URL(), "conversation-7", "")
		if made.Error != "" || made.Ref == "" {
			t.Fatalf("child's cut: ref %q, error %q", made.Ref, made.Error)
		}
		if len(made.Content) > manifest.DefaultMaxBytes {
			t.Errorf("child's cut: %d bytes, over the limit", len(made.Content))
		}
		m := lastMarker(t, made.Content)
		if m.Rest == nil {
			t.Fatalf("child's cut ends in a plain marker: %q", made.Content[m.Start:])
		}
		ctx := rest.WithScope(context.Background(), "conversation-7")
		rest1, err := follow(ctx, w, m.Rest.Args)
		if err != nil {
			t.Fatal(err)
		}
		if got := made.Content[:m.Start] + rest1; got != full {
			t.Errorf("head and pages read on: %d bytes, not the %d of the output byte for byte", len(got), len(full))
		}
		all, err := follow(ctx, w, `{"ref":"`+made.Ref+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		if all != full {
			t.Errorf("pages from offset 0: %d bytes, not the %d of the output byte for byte", len(all), len(full))
		}
		foreign := readErr(rest.WithScope(context.Background(), "conversation-8"), w, made.Ref)
		if !strings.Contains(foreign, "expired or unknown; run the tool again") {
			t.Errorf("read from another scope: %q; want the unknown-ref error", foreign)
		}
	})

	t.Run("made here, read by the child", func(t *testing.T) {
		res := glob(rest.WithScope(context.Background(), "conversation-9"), w, 1)
		tr, _ := res.Truncation()
		m := lastMarker(t, *res.Content)
		if res.IsError() || tr.Ref == "" || m.Rest == nil {
			t.Fatalf("cut: error %v, figures %+v, marker %+v", res.IsError(), tr, m)
		}
		read := runChild(t, "read", srv.URL(), "conversation-9", m.Rest.Args)
		if read.Error != "" {
			t.Fatalf("child's read: %s", read.Error)
		}
		if got := (*res.Content)[:m.Start] + read.Content; got != full {
			t.Errorf("head and the child's pages: %d bytes, not the %d of the output byte for byte", len(got), len(full))
		}
		foreign := runChild(t, "read", srv.URL(), "conversation-7", m.Rest.Args)
		if !strings.Contains(foreign.Error, "expired or unknown; run the tool again") || foreign.Content != "" {
			t.Errorf("child's read from another scope: %+v; want the unknown-ref error", foreign)
		}
	})
}

// syncBuffer is a bytes.Buffer safe for a logger and a test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.b.String(), s)
}

var _ io.Writer = (*syncBuffer)(nil)

// TestRedisKilledAndRestarted: while Redis is down, cuts keep working with
// the plain marker, never an error result, and the outage is logged once;
// after a restart, new refs are readable and the old ones, lost with
// Redis's memory, are the unknown-ref error.
func TestRedisKilledAndRestarted(t *testing.T) {
	srv := startServer(t)
	full := globOutput(1)
	s := openStore(t, srv, rest.Config{}, redisrest.WithTimeout(500*time.Millisecond))
	logs := new(syncBuffer)
	w := newWorker(t, s, worker.WithLogger(hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info})))
	ctx := rest.WithScope(context.Background(), "conversation-1")

	before := glob(ctx, w, 1)
	old, _ := before.Truncation()
	if old.Ref == "" {
		t.Fatalf("cut before the kill keeps nothing: %+v", old)
	}

	srv.kill()
	for i := range 5 {
		start := time.Now()
		res := glob(ctx, w, 1)
		took := time.Since(start)
		tr, _ := res.Truncation()
		m := lastMarker(t, *res.Content)
		if res.IsError() || tr.Ref != "" || m.Rest != nil || len(*res.Content) > manifest.DefaultMaxBytes || took > 3*time.Second {
			t.Errorf("cut %d with Redis down: error %v, ref %q, marker %+v, %d bytes, took %v; want a plain cut at once",
				i, res.IsError(), tr.Ref, m, len(*res.Content), took)
		}
		if got := (*res.Content)[:m.Start]; !strings.HasPrefix(full, got) {
			t.Errorf("cut %d with Redis down does not show the output's head", i)
		}
	}
	if msg := readErr(ctx, w, old.Ref); msg == "" || strings.Contains(msg, "expired or unknown") {
		t.Errorf("read with Redis down: %q; want the store's failure, not the unknown-ref error", msg)
	}
	if n := logs.count("rest store failing"); n != 1 {
		t.Errorf("outage logged %d times; want once\n%s", n, logs.b.String())
	}

	srv.start()
	var ref string
	if err := waitFor(10*time.Second, func() bool {
		tr, _ := glob(ctx, w, 1).Truncation()
		ref = tr.Ref
		return ref != ""
	}); err != nil {
		t.Fatalf("no cut keeps the rest after the restart: %v", err)
	}
	got, err := follow(ctx, w, `{"ref":"`+ref+`"}`)
	if err != nil || got != full {
		t.Errorf("ref made after the restart: %d bytes, %v; want the %d of the output", len(got), err, len(full))
	}
	if msg := readErr(ctx, w, old.Ref); !strings.Contains(msg, "expired or unknown; run the tool again") {
		t.Errorf("ref made before the restart: %q; want the unknown-ref error", msg)
	}
	if n := logs.count("rest store recovered"); n != 1 {
		t.Errorf("recovery logged %d times; want once\n%s", n, logs.b.String())
	}
}

// TestRedisStuck: a Redis that takes connections and answers nothing
// (stopped) costs a cut the store's timeout at most, and the cut is plain.
func TestRedisStuck(t *testing.T) {
	srv := startServer(t)
	s := openStore(t, srv, rest.Config{}, redisrest.WithTimeout(300*time.Millisecond))
	w := newWorker(t, s)
	ctx := rest.WithScope(context.Background(), "conversation-1")
	if tr, _ := glob(ctx, w, 1).Truncation(); tr.Ref == "" {
		t.Fatal("cut keeps nothing before Redis stops")
	}
	srv.signal(syscall.SIGSTOP)
	t.Cleanup(func() { srv.signal(syscall.SIGCONT) })
	for i := range 3 {
		start := time.Now()
		res := glob(ctx, w, 1)
		took := time.Since(start)
		tr, _ := res.Truncation()
		if res.IsError() || tr.Ref != "" || took > 2*time.Second {
			t.Errorf("cut %d with Redis stuck: error %v, ref %q, took %v; want a plain cut within the timeout", i, res.IsError(), tr.Ref, took)
		}
	}
	srv.signal(syscall.SIGCONT)
	if err := waitFor(5*time.Second, func() bool {
		tr, _ := glob(ctx, w, 1).Truncation()
		return tr.Ref != ""
	}); err != nil {
		t.Errorf("no cut keeps the rest once Redis runs again: %v", err)
	}
}

// TestRedisEviction: with a small maxmemory and an LRU policy, Redis evicts
// old entries (most of the oldest: its LRU samples): their refs are the
// unknown-ref error, the newest are read byte for byte.
func TestRedisEviction(t *testing.T) {
	for _, policy := range []string{"allkeys-lru", "volatile-lru"} {
		t.Run(policy, func(t *testing.T) {
			srv := startServer(t, "--maxmemory", "8mb", "--maxmemory-policy", policy, "--maxmemory-samples", "10")
			s := openStore(t, srv, rest.Config{})
			w := newWorker(t, s)
			ctx := rest.WithScope(context.Background(), "conversation-1")
			const cuts = 50 // of 300 KB: 15 MB into 8 MiB
			var refs []string
			for i := range cuts {
				res := glob(ctx, w, i)
				tr, _ := res.Truncation()
				if res.IsError() || tr.Ref == "" {
					t.Fatalf("cut %d: error %v, ref %q", i, res.IsError(), tr.Ref)
				}
				refs = append(refs, tr.Ref)
			}
			// Redis's LRU is approximate (it samples keys): most, not all,
			// of the oldest refs are gone, and each gone one reads as the
			// unknown-ref error.
			gone := 0
			for _, ref := range refs[:10] {
				if msg := readErr(ctx, w, ref); strings.Contains(msg, "expired or unknown; run the tool again") {
					gone++
				}
			}
			if gone < 5 {
				t.Errorf("%d of the 10 oldest refs are the unknown-ref error; want most of them", gone)
			}
			kept := 0
			for i, ref := range refs {
				r, err := s.Open(ctx, "conversation-1", ref)
				if errors.Is(err, rest.ErrUnknown) {
					continue
				}
				if err != nil {
					t.Fatalf("Open ref %d: %v", i, err)
				}
				_ = r.Close()
				kept++
			}
			if kept == 0 || kept >= cuts/2 {
				t.Errorf("%d of %d entries of 300 KB kept in 8 MiB", kept, cuts)
			}
			for _, i := range []int{cuts - 2, cuts - 1} {
				got, err := follow(ctx, w, `{"ref":"`+refs[i]+`"}`)
				if want := globOutput(i); err != nil || got != want {
					t.Errorf("ref %d of %d: %d bytes, %v; want the %d of its output", i, cuts, len(got), err, len(want))
				}
			}
		})
	}
}
