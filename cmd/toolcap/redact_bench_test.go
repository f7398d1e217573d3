package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolcap/toolcap/cli"
	"github.com/toolcap/toolcap/internal/redacttest"
	"github.com/toolcap/toolcap/redact"
	"github.com/toolcap/toolcap/redact/gitleaks"
)

// The benchmarks of this file measure what redaction with gitleaks'
// rules costs, beside redaction off and the built-in rules, on tool
// outputs with no secret: toolcap cap in process (BenchmarkRedaction),
// and the hook as Claude Code runs it, a process a call
// (BenchmarkHookStartup). Their
// figures are docs/benchmarks.md's "Redaction with gitleaks' rules";
// reproduce them with
//
//	cd cmd/toolcap && go test -run '^$' -bench 'Redaction|HookStartup' -count 6

// goSource returns the first n bytes of net/http's server.go in the Go
// tree that runs the benchmark: a Read of source code, its identifiers
// full of "key", "token" and "auth" and no secret.
func goSource(tb testing.TB, n int) string {
	tb.Helper()
	root, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skipf("go env GOROOT: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(root)), "src", "net", "http", "server.go"))
	if err != nil || len(b) < n {
		tb.Skipf("no Go source to read: %v", err)
	}
	return string(b[:n])
}

// bashPayload is a PostToolUse payload of a Bash call that printed out.
func bashPayload(tb testing.TB, out string) []byte {
	tb.Helper()
	p, err := json.Marshal(map[string]any{
		"session_id": "0b6c6a4e-5a43-4f3e-9d1c-1f2a3b4c5d6e", "hook_event_name": "PostToolUse",
		"cwd": "/home/dev/src", "tool_name": "Bash", "tool_use_id": "toolu_01",
		"tool_input":    map[string]any{"command": "make test"},
		"tool_response": map[string]any{"stdout": out, "stderr": "", "interrupted": false, "isImage": false},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// redactions are the settings the benchmarks compare: redaction off (a
// manifest's redact = false, by its environment variable), the built-in
// rules (the core's commands, with no option), and gitleaks' rules (the
// option the toolcap command passes).
var redactions = []struct {
	name string
	env  []string
	opts func() []cli.Option
}{
	{"off", []string{"TOOLCAP_WORKER__TOOL_OUTPUT__REDACT=false"}, func() []cli.Option { return nil }},
	{"builtin", nil, func() []cli.Option { return nil }},
	{"gitleaks", nil, func() []cli.Option { return []cli.Option{cli.WithRedactor(gitleaks.New())} }},
}

// BenchmarkRedaction runs toolcap cap in process, one detector for every
// call (as in a long-lived process; a hook process builds its own: see
// BenchmarkHookStartup), on a tool output with no secret: 16 KiB of Go
// source, which fits the default limit, and a 1 MiB build log, cut to
// 16 KiB, and cut with the rest kept in a directory store. With
// redaction off, it is the cut alone. Detector is the detector alone on
// the same text, beside it.
func BenchmarkRedaction(b *testing.B) {
	for _, in := range []struct{ name, text string }{
		{"source-16KiB", goSource(b, 16<<10)},
		{"log-1MiB", redacttest.BuildLog(1 << 20)},
	} {
		for _, r := range redactions {
			for _, keep := range []bool{false, true} {
				if keep && len(in.text) <= 16<<10 {
					continue // it fits: nothing to keep
				}
				name := in.name + "/cap/redact=" + r.name
				args := []string{"cap", "--tool", "Bash"}
				if keep {
					name = in.name + "/cap-keep-rest/redact=" + r.name
					args = append(args, "--keep-rest")
				}
				b.Run(name, func(b *testing.B) {
					env := slices.Concat(r.env, []string{"TOOLCAP_WORKER__TOOL_OUTPUT__REST__DIR=" + filepath.Join(b.TempDir(), "rest")})
					benchCap(b, in.text, args, env, r.opts())
				})
			}
		}
		for _, d := range []struct {
			name string
			d    redact.Detector
		}{{"builtin", redact.Default()}, {"gitleaks", gitleaks.New()}} {
			b.Run(in.name+"/detector="+d.name, func(b *testing.B) {
				if f := d.d.Find(in.text); len(f) != 0 {
					b.Fatalf("found %v in a text with no secret", f)
				}
				b.SetBytes(int64(len(in.text)))
				b.ReportAllocs()
				for b.Loop() {
					d.d.Find(in.text)
				}
			})
		}
	}
}

// benchCap times toolcap cap with args, env and opts on text.
func benchCap(b *testing.B, text string, args, env []string, opts []cli.Option) {
	run := func() {
		var out, errb bytes.Buffer
		if code := cli.Run(context.Background(), args, strings.NewReader(text), &out, &errb, env, opts...); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
	}
	run() // the rules a text needs are compiled on first use
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
}

// hookBuilds builds, once, the hook-only toolcap (-tags toolcap_nomcp,
// static, stripped, as docs/adapters/claude-code.md builds it) twice:
// as main builds it, with gitleaks' rules, and with no option, as before
// it had them (the built-in rules), its options laid over with -overlay.
var hookBuilds = sync.OnceValues(func() (dir string, err error) {
	dir, err = os.MkdirTemp("", "toolcap-bench-redact")
	if err != nil {
		return "", err
	}
	here, err := filepath.Abs("nomcp.go")
	if err != nil {
		return "", err
	}
	builtin := filepath.Join(dir, "nomcp.go")
	if err := os.WriteFile(builtin, []byte("//go:build toolcap_nomcp\n\npackage main\n\nimport \"github.com/toolcap/toolcap/cli\"\n\nfunc options() []cli.Option { return nil }\n"), 0o644); err != nil {
		return "", err
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{here: builtin}})
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644); err != nil {
		return "", err
	}
	for _, build := range []struct {
		out   string
		flags []string
	}{
		{"gitleaks", nil},
		{"builtin", []string{"-overlay", filepath.Join(dir, "overlay.json")}},
	} {
		args := slices.Concat([]string{"build", "-o", filepath.Join(dir, build.out), "-tags", "toolcap_nomcp", "-ldflags", "-s -w"}, build.flags, []string{"."})
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "GOFLAGS=", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir, nil
})

// BenchmarkHookStartup times toolcap hook claude-code as Claude Code runs
// it, a process a tool call (started, fed the payload, waited for), built
// for the hook alone with gitleaks' rules and with the built-in ones (and
// that build with redaction off, by the manifest's variable): on
// a small Bash output, where the process's start-up is the cost (and, with
// gitleaks', building its detector and compiling the few rules whose
// keywords the output holds), and on a 1 MiB build log, cut to 16 KiB with
// the rest kept. Beside ns/op it reports the median and the 95th
// percentile.
func BenchmarkHookStartup(b *testing.B) {
	dir, err := hookBuilds()
	if err != nil {
		b.Fatal(err)
	}
	for _, in := range []struct{ name, text string }{
		{"small", "go: downloading github.com/spf13/cobra v1.9.1\nok  \tgithub.com/acme/widget\t0.41s\n--- PASS: TestTokenRefresh (0.00s)\n"},
		{"log-1MiB", redacttest.BuildLog(1 << 20)},
	} {
		payload := bashPayload(b, in.text)
		for _, r := range redactions {
			build := r.name
			if build == "off" {
				build = "builtin"
			}
			b.Run(in.name+"/redact="+r.name, func(b *testing.B) {
				env := slices.Concat([]string{"XDG_CACHE_HOME=" + b.TempDir(), "PATH=" + os.Getenv("PATH")}, r.env)
				var times []time.Duration
				b.ReportAllocs()
				for b.Loop() {
					cmd := exec.Command(filepath.Join(dir, build), "hook", "claude-code")
					cmd.Env = env
					cmd.Stdin = bytes.NewReader(payload)
					var stdout, stderr bytes.Buffer
					cmd.Stdout, cmd.Stderr = &stdout, &stderr
					start := time.Now()
					err := cmd.Run()
					times = append(times, time.Since(start))
					if err != nil {
						b.Fatalf("%s: %v\n%s", build, err, stderr.String())
					}
				}
				slices.Sort(times)
				b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
				b.ReportMetric(float64(times[min(len(times)-1, len(times)*95/100)].Microseconds())/1000, "p95-ms")
			})
		}
	}
}
