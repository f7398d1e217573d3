//go:build !toolcap_nomcp

package cli

// The --manifest watcher of "toolcap mcp" (issue 21): it reads a manifest
// with startup's bound and only when it is a regular file, so that a FIFO,
// a device or a symlink to /dev/zero is an error logged once while the old
// limits stay, and a later valid edit, or SIGHUP, applies.

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

func manifestText(limit string) string {
	return "[worker.tool_output.per_tool]\nRead = " + limit + "\n"
}

func TestMCPReloadOnlyRegularFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs mkfifo and /dev/zero")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "m.toml")
	writeManifest := func(limit string) {
		t.Helper()
		// Replaced, not written in place: the path may be a FIFO or a
		// symlink by then.
		tmp := filepath.Join(dir, "next.toml")
		if err := os.WriteFile(tmp, []byte(manifestText(limit)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	replace := func(make func(string) error) {
		t.Helper()
		tmp := filepath.Join(dir, "next.toml")
		_ = os.Remove(tmp)
		if err := make(tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	fifo := func(p string) error { return syscall.Mkfifo(p, 0o600) }
	zero := func(p string) error { return os.Symlink("/dev/zero", p) }

	writeManifest("5000")
	layers := layerFlags{manifests: stringsFlag{path}}
	res, err := layers.resolve(context.Background(), nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := mcpproxy.New(mcpproxy.Options{Policies: policytest.Of(t, res.Manifest)})
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	logger := (&logFlags{format: "text"}).newLogger(&logs, hclog.Info)
	var applied []int

	// watch runs a watcher until t ends and returns the limits it applies
	// and the one it applied first. The watcher is running, its SIGHUP
	// handler in place, once it has applied an edit; one made before its
	// first read is no change to it.
	watch := func(t *testing.T) (<-chan int, int) {
		t.Helper()
		appliedc := make(chan int, 16)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			new(options).watchManifests(ctx, &layers, nil, logger, proxy, nil, func(m *manifest.WorkerManifest) {
				appliedc <- m.Limits().For("Read")
			})
		}()
		t.Cleanup(func() {
			cancel()
			<-done
		})
		var base int
		for i := 1; base == 0; i++ {
			if i > 20 {
				t.Fatalf("no edit applied; logs:\n%s", logs.String())
			}
			writeManifest(strconv.Itoa(5000 + i))
			select {
			case base = <-appliedc:
			case <-time.After(time.Second):
			}
		}
		if got := proxy.Limit("Read"); got != base {
			t.Fatalf("Limit(Read) = %d, want %d", got, base)
		}
		return appliedc, base
	}
	notLoaded := func() int { return strings.Count(logs.String(), "the limits were not reloaded") }

	// The FIFO and /dev/zero run in a synctest bubble, the watcher's ticker
	// on its fake clock: "logged once, several polls later" is checked
	// once the polls have happened, not after a pause. SIGHUP cannot reach
	// a watcher in a bubble (the signal comes from outside it), so the
	// SIGHUP part below has a watcher of its own, outside. The first
	// signal.Notify of the process starts the runtime's signal goroutines
	// and makes their channels, which live on: made in the bubble, they
	// would be its own, and the runtime's use of them from outside it is a
	// fatal error. So the first Notify is made here.
	started := make(chan os.Signal, 1)
	signal.Notify(started, syscall.SIGHUP)
	signal.Stop(started)
	synctest.Test(t, func(t *testing.T) {
		appliedc, base := watch(t)
		for _, tt := range []struct {
			name string
			make func(string) error
			want string
		}{
			{"a FIFO", fifo, "not a regular file (it is a named pipe (FIFO))"},
			{"a symlink to /dev/zero", zero, "not a regular file (it is a device)"},
		} {
			before := notLoaded()
			replace(tt.make)
			eventually(t, 10*time.Second, tt.name+": the error logged", func() bool { return notLoaded() > before }, logs.String)
			// Several polls later the error is still logged once, and the
			// watcher still runs: the old limits stay. Wait returns once
			// the watcher has handled every poll due by then.
			time.Sleep(4 * reloadPoll)
			synctest.Wait()
			if got := notLoaded() - before; got != 1 {
				t.Errorf("%s: logged %d times, want once; logs:\n%s", tt.name, got, logs.String())
			}
			if !strings.Contains(logs.String(), tt.want) {
				t.Errorf("%s: the logs lack %q:\n%s", tt.name, tt.want, logs.String())
			}
			if got := proxy.Limit("Read"); got != base {
				t.Errorf("%s: Limit(Read) = %d, want the old %d", tt.name, got, base)
			}
		}

		// A valid file again applies.
		writeManifest("6000")
		applied = append(applied, waitApplied(t, appliedc, &logs))
		if got := proxy.Limit("Read"); got != 6000 {
			t.Errorf("after a valid edit: Limit(Read) = %d, want 6000", got)
		}
	})

	// SIGHUP with a FIFO in place neither blocks nor applies; with the
	// file back, it applies.
	appliedc, _ := watch(t)
	pipes := strings.Count(logs.String(), "named pipe")
	replace(fifo)
	eventually(t, 10*time.Second, "the FIFO's error logged", func() bool { return strings.Count(logs.String(), "named pipe") > pipes }, logs.String)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "SIGHUP read the FIFO", func() bool { return strings.Contains(logs.String(), "why=SIGHUP") }, logs.String)
	writeManifest("7000")
	applied = append(applied, waitApplied(t, appliedc, &logs))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	applied = append(applied, waitApplied(t, appliedc, &logs))
	if got := proxy.Limit("Read"); got != 7000 {
		t.Errorf("after SIGHUP: Limit(Read) = %d, want 7000", got)
	}
	if diff := cmp.Diff([]int{6000, 7000, 7000}, applied); diff != "" {
		t.Errorf("limits applied (-want +got):\n%s", diff)
	}
	if !strings.Contains(logs.String(), `limits reloaded: why=SIGHUP`) {
		t.Errorf("no reload by SIGHUP logged:\n%s", logs.String())
	}
}

// TestMCPReloadBound: a manifest over settings.MaxManifestBytes is refused
// as at startup, having read one byte past the bound only.
func TestMCPReloadBound(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		size int
		want string
	}{
		{"at the bound", settings.MaxManifestBytes, ""},
		{"one over", settings.MaxManifestBytes + 1, "larger than the limit of 1048576 bytes"},
		{"far over", 8 * settings.MaxManifestBytes, "larger than the limit of 1048576 bytes"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".toml")
		text := manifestText("5000")
		text += "#" + strings.Repeat("x", tt.size-len(text)-2) + "\n"
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		data, err := readManifest(path)
		if err != nil {
			t.Fatalf("%s: readManifest: %v", tt.name, err)
		}
		if len(data) > settings.MaxManifestBytes+1 {
			t.Errorf("%s: read %d bytes, want at most %d", tt.name, len(data), settings.MaxManifestBytes+1)
		}
		_, err = resolveRead([]manifestRead{{path: path, data: data}}, nil, hclog.NewNullLogger())
		got := ""
		if err != nil {
			got = err.Error()
		}
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) || (got != "" && !strings.Contains(got, path)) {
			t.Errorf("%s: resolve error %q, want one naming the file and containing %q", tt.name, got, tt.want)
		}
	}
}

func waitApplied(t *testing.T, c <-chan int, logs *lockedBuffer) int {
	t.Helper()
	select {
	case n := <-c:
		return n
	case <-time.After(10 * time.Second):
		t.Fatalf("no reload applied within 10s; logs:\n%s", logs.String())
		return 0
	}
}
