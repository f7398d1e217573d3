package cli_test

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolcap/toolcap/cli"
	"github.com/toolcap/toolcap/internal/rest"
)

// closingStore is a store that counts its Close calls and names itself.
type closingStore struct {
	rest.Store
	closed *atomic.Int32
}

func (s closingStore) Close() error  { s.closed.Add(1); return nil }
func (s closingStore) Where() string { return "test store" }

// run runs the command line args with env and stdin, and the options.
func run(t *testing.T, env []string, stdin string, opts []cli.Option, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Run(context.Background(), args, strings.NewReader(stdin), &out, &errb, env, opts...)
	return code, out.String(), errb.String()
}

var refArgs = regexp.MustCompile(`toolcap_read (\{"ref":"[a-z2-7]+","offset":\d+(?:,"length":\d+)?\})\]$`)

// A store URL opens through the program's StoreOpener, with the manifest's
// bounds; the commands share refs through it and close it as they end.
func TestWithStoreOpener(t *testing.T) {
	mem := rest.NewMemory(rest.Config{})
	var closed atomic.Int32
	var urls []string
	opener := cli.WithStoreOpener(func(url string, cfg rest.Config) (rest.Store, error) {
		urls = append(urls, url)
		if cfg.TTL.String() != "1h0m0s" {
			t.Errorf("the opener got TTL %v, want the manifest's 1h", cfg.TTL)
		}
		return closingStore{mem, &closed}, nil
	})
	env := []string{
		"TOOLCAP_WORKER__TOOL_OUTPUT__REST__STORE=redis://127.0.0.1:1/0",
		"TOOLCAP_WORKER__TOOL_OUTPUT__REST__TTL=1h",
		"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=1000",
	}
	input := strings.Repeat("0123456789\n", 300)
	code, head, stderr := run(t, env, input, []cli.Option{opener}, "cap", "--tool", "Read", "--keep-rest")
	if code != 0 || len(head) > 1000 {
		t.Fatalf("cap: exit %d, %d bytes; stderr %s", code, len(head), stderr)
	}
	m := refArgs.FindStringSubmatch(head)
	if m == nil {
		t.Fatalf("cap kept nothing: ...%q", head[max(0, len(head)-120):])
	}
	code, all, stderr := run(t, env, "", []cli.Option{opener}, "read", m[1], "--all")
	if code != 0 {
		t.Fatalf("read: exit %d; stderr %s", code, stderr)
	}
	if got, want := head[:strings.LastIndex(head, "\n[truncated: ")]+all, input; got != want {
		t.Errorf("head and rest are %d bytes, want the input's %d", len(got), len(want))
	}
	if diff := strings.Join(urls, " "); diff != "redis://127.0.0.1:1/0 redis://127.0.0.1:1/0" {
		t.Errorf("the opener got %q, want the manifest's URL twice", diff)
	}
	if n := closed.Load(); n != 2 {
		t.Errorf("the store was closed %d times, want once per command (2)", n)
	}
}

// Without a StoreOpener, a store URL is refused with the binary to use,
// and cap still cuts, with the plain marker; an opener that fails does the
// same, and neither message shows the URL's password.
func TestStoreURLRefused(t *testing.T) {
	env := []string{
		"TOOLCAP_WORKER__TOOL_OUTPUT__REST__STORE=redis://u:hunter2@127.0.0.1:1/0",
		"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=200",
	}
	failing := cli.WithStoreOpener(func(string, rest.Config) (rest.Store, error) {
		return nil, errors.New("connection refused")
	})
	tests := []struct {
		name string
		opts []cli.Option
		want string
	}{
		{"no opener", nil, "go install github.com/toolcap/toolcap/cmd/toolcap@latest"},
		{"failing opener", []cli.Option{failing}, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, env, strings.Repeat("x", 500), tt.opts, "cap", "--tool", "Read", "--keep-rest")
			if code != 0 || !strings.HasSuffix(out, "bytes dropped, refine your query]") || len(out) > 200 {
				t.Errorf("cap: exit %d, output %q; want 0 and the plain marker", code, out)
			}
			if !strings.Contains(stderr, tt.want) || strings.Contains(stderr, "hunter2") {
				t.Errorf("cap's stderr %q: want %q and no password", stderr, tt.want)
			}
			code, _, stderr = run(t, env, "", tt.opts, "read", "abcdefghijklmnopqrstuvwxyz")
			if code != 1 || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, "hunter2") {
				t.Errorf("read: exit %d, stderr %q; want 1, %q and no password", code, stderr, tt.want)
			}
		})
	}
}
