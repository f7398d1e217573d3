// Command trajectory plays one scripted agent session of 44 steps on the Go
// source tree ($(go env GOROOT)/src) with real tools (Glob, Grep, Read, and
// Bash running go vet and grep -rn), through the real Anthropic and OpenAI
// Go SDK clients, against fake APIs on 127.0.0.1 that record every request
// body, in three modes:
//
//   - raw: every tool output goes into the history whole;
//   - cap: a toolcap worker caps each result as it enters (16 KiB, the rest
//     kept in a store and named by the marker);
//   - aged: cap, and the history's oldest results aged into stubs before
//     each request (package history: a 30,000-token budget, the last 4
//     kept, at least 10,000 freed at a time).
//
// The model's calls are fixed by the script, so the three modes send the
// same conversation. For each SDK it prints the cumulative input tokens
// (o200k_base, counted on each request body as sent) and bytes of all
// requests in each mode, the requests that are not a byte-for-byte
// extension of the one before (each breaks a provider's prompt cache),
// and, for the aged mode, whether every stub's read (toolcap_read,
// answered by the worker) gives the tool's original output back byte for
// byte. It ends with one line per SDK:
//
//	trajectory anthropic: steps S, tokens raw R, cap C, aged A, prefix breaks B, stubs read back K of N
//
// Run it from this directory: go run . (its go.work builds it from the
// tree).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/history"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/tiktoken"
	"github.com/toolcap/toolcap/tokens"
	"github.com/toolcap/toolcap/worker"
)

// call is one step of the script: the tool the model calls and its
// arguments.
type call struct {
	tool string
	args map[string]string
}

// script is the session: a model exploring a few packages of the standard
// library, as a coding agent does, 44 calls.
func script() []call {
	var s []call
	for _, pkg := range []string{"net/http", "encoding/json", "go/ast", "strings", "bufio", "os/exec", "crypto/tls",
		"runtime/pprof", "text/template", "database/sql", "image/png"} {
		s = append(s,
			call{"Glob", map[string]string{"pattern": "*.go", "path": pkg}},
			call{"Grep", map[string]string{"pattern": `^func \(?[A-Z]`, "path": pkg}},
			call{"Read", map[string]string{"path": pkg + "/" + mainFile(pkg)}},
		)
		switch pkg {
		case "strings", "bufio":
			s = append(s, call{"Bash", map[string]string{"command": "go vet ./" + pkg + " 2>&1; echo exit $?"}})
		default:
			s = append(s, call{"Bash", map[string]string{"command": "grep -rn 'TODO\\|FIXME' " + pkg + " | head -400"}})
		}
	}
	return s
}

// mainFile is the file of pkg the model reads.
func mainFile(pkg string) string {
	return map[string]string{"net/http": "server.go", "encoding/json": "decode.go", "go/ast": "ast.go",
		"strings": "strings.go", "bufio": "bufio.go", "os/exec": "exec.go", "crypto/tls": "conn.go",
		"runtime/pprof": "pprof.go", "text/template": "exec.go", "database/sql": "sql.go", "image/png": "reader.go"}[pkg]
}

// A mode is how the agent treats its tools' outputs.
type mode int

const (
	raw mode = iota
	capped
	aged
)

func (m mode) String() string { return [...]string{"raw", "cap", "aged"}[m] }

// agent is what a run needs: the tools behind a worker (or not), and the
// ager.
type agent struct {
	mode     mode
	tools    map[string]worker.Tool
	worker   *worker.Worker
	ager     *history.Ager
	ctx      context.Context
	original map[string]string // tool call id -> the tool's whole output
}

// budget is the aged mode's history budget, in o200k tokens.
const budget = 30000

func newAgent(m mode, root string, counter tokens.Counter) (*agent, error) {
	ts := []worker.Tool{globTool(root), grepTool(root), readTool(root), bashTool(root)}
	a := &agent{mode: m, tools: map[string]worker.Tool{}, original: map[string]string{},
		ctx: rest.WithScope(context.Background(), "trajectory")}
	for _, t := range ts {
		a.tools[t.Name()] = t
	}
	if m == raw {
		return a, nil
	}
	store := rest.NewMemory(rest.Config{MaxBytes: 1 << 30})
	w, err := worker.New(ts, worker.WithRest(store))
	if err != nil {
		return nil, err
	}
	a.worker = w
	if m == aged {
		k, err := rest.NewKeeper(store)
		if err != nil {
			return nil, err
		}
		if a.ager, err = history.New(k.Store(), history.Config{MaxTokens: budget, KeepRecent: 4, ClearAtLeast: 10000, Counter: counter}); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// run runs one call and returns the result that enters the history.
func (a *agent) run(id, tool string, args json.RawMessage) (string, bool) {
	out, err := a.tools[tool].Run(a.ctx, args)
	whole := ""
	if out.Content != nil {
		whole = *out.Content
	}
	if err != nil {
		whole = err.Error()
	}
	a.original[id] = whole
	if a.worker == nil {
		return whole, err != nil
	}
	r := a.worker.ExecuteTools(a.ctx, []chain.Call{{ID: id, Tool: tool, Args: args}})[0]
	return *r.Content, r.IsError()
}

// readBack follows a stub's read through the worker's toolcap_read, page
// after page, and reports whether it gives the original back.
func (a *agent) readBack(id, stub string) bool {
	i := strings.Index(stub, "toolcap_read {")
	if i < 0 {
		return false
	}
	args := stub[i+len("toolcap_read ") : len(stub)-1]
	var got strings.Builder
	for range 10000 {
		r := a.worker.ExecuteTools(a.ctx, []chain.Call{{ID: "read", Tool: "toolcap_read", Args: json.RawMessage(args)}})[0]
		if r.IsError() {
			return false
		}
		page := *r.Content
		ms := cut.FindMarkers(page)
		if len(ms) == 0 || ms[len(ms)-1].Rest == nil || ms[len(ms)-1].End != len(page) {
			got.WriteString(page)
			return got.String() == a.original[id]
		}
		got.WriteString(page[:ms[len(ms)-1].Start])
		args = ms[len(ms)-1].Rest.Args
	}
	return false
}

// figures is what one run measured.
type figures struct {
	requests, tokens, bytes, breaks int
	batches                         int // ageing passes that aged
	stubs, readBack                 int
}

// measure counts the requests' bodies and their prefix breaks; history
// picks the conversation out of a body (messages, input).
func measure(bodies [][]byte, history func([]byte) []byte, count func(string) int) figures {
	var f figures
	var prev []byte
	for _, b := range bodies {
		f.requests++
		f.bytes += len(b)
		f.tokens += count(string(b))
		h := history(b)
		if prev != nil && !bytes.HasPrefix(h, bytes.TrimSuffix(prev, []byte("]"))) {
			f.breaks++
		}
		prev = h
	}
	return f
}

// member returns the raw JSON of member name of body.
func member(name string) func([]byte) []byte {
	return func(body []byte) []byte {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(body, &m)
		return m[name]
	}
}

// playModes plays the session through sdk in each mode.
func playModes(sdk, root string, steps []call, tok interface{ Count(string) int }) ([3]figures, error) {
	var fs [3]figures
	for _, m := range []mode{raw, capped, aged} {
		a, err := newAgent(m, root, tok)
		if err != nil {
			return fs, err
		}
		var f figures
		switch sdk {
		case "anthropic":
			f, err = playAnthropic(a, steps, tok.Count)
		case "openai":
			f, err = playOpenAI(a, steps, tok.Count)
		default:
			err = fmt.Errorf("unknown SDK %q: want anthropic or openai", sdk)
		}
		if err != nil {
			return fs, fmt.Errorf("%s, %s: %w", sdk, m, err)
		}
		fs[m] = f
	}
	return fs, nil
}

func main() {
	sdks := flag.String("sdk", "anthropic,openai", "the SDKs to play the session through")
	flag.Parse()
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "trajectory: go env GOROOT:", err)
		os.Exit(1)
	}
	root := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		fmt.Fprintln(os.Stderr, "trajectory:", err)
		os.Exit(1)
	}
	steps := script()
	var lines []string
	for _, sdk := range strings.Split(*sdks, ",") {
		fs, err := playModes(sdk, root, steps, tok)
		if err != nil {
			fmt.Fprintln(os.Stderr, "trajectory:", err)
			os.Exit(1)
		}
		for m, f := range fs {
			fmt.Printf("%-9s %-4s  requests %2d  input tokens %9d  bytes %10d  prefix breaks %2d  ageing batches %2d\n", sdk, mode(m), f.requests, f.tokens, f.bytes, f.breaks, f.batches)
		}
		lines = append(lines, fmt.Sprintf("trajectory %s: steps %d, tokens raw %d, cap %d, aged %d, prefix breaks %d, stubs read back %d of %d",
			sdk, len(steps), fs[raw].tokens, fs[capped].tokens, fs[aged].tokens, fs[aged].breaks, fs[aged].readBack, fs[aged].stubs))
		fmt.Printf("%-9s aged/cap %.1f%% of the input tokens\n", sdk, 100*float64(fs[aged].tokens)/float64(fs[capped].tokens))
	}
	for _, l := range lines {
		fmt.Println(l)
	}
}
