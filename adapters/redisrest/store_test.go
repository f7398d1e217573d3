package redisrest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/adapters/redisrest"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/rest/storetest"
)

// The Store contract's conformance suite (package storetest, which runs
// against rest.Memory and rest.Dir too), plus what only Redis does: key
// prefixes, temp keys, the time to live of keys, OOM, an outage.

// openStore returns a store on srv, closed when the test ends.
func openStore(t *testing.T, srv *server, cfg rest.Config, opts ...redisrest.Option) *redisrest.Store {
	t.Helper()
	s, err := redisrest.Open(srv.URL(), cfg, opts...)
	if err != nil {
		t.Fatalf("Open(%s): %v", srv.URL(), err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// The helpers the Redis-only tests share with the suite.

func put(tb testing.TB, s rest.Store, scope string, data []byte, pieces ...int) rest.Info {
	tb.Helper()
	return storetest.Put(tb, s, scope, data, pieces...)
}

func write(w io.Writer, data []byte, pieces ...int) error { return storetest.Write(w, data, pieces...) }

func readable(t *testing.T, s rest.Store, scope, ref string) bool {
	t.Helper()
	return storetest.Readable(t, s, scope, ref)
}

// TestConformance runs the Store contract's suite against Redis: one
// server, a prefix of its own for each store the suite opens. The quota
// and the clock are Redis's (see the package doc); the sizes cross the
// round trips of ChunkBytes.
func TestConformance(t *testing.T) {
	srv := startServer(t)
	var n atomic.Int64
	storetest.Run(t, func(t *testing.T, cfg rest.Config) rest.Store {
		return openStore(t, srv, cfg, redisrest.WithPrefix(fmt.Sprintf("conformance:%d:", n.Add(1))))
	}, storetest.Traits{Sizes: []int{redisrest.ChunkBytes, redisrest.ChunkBytes + 1, 2*redisrest.ChunkBytes + redisrest.ChunkBytes/2 + 3}})
}

// A ref is read only through a store of the prefix that wrote it.
func TestStoreOtherPrefix(t *testing.T) {
	srv := startServer(t)
	s := openStore(t, srv, rest.Config{})
	other := openStore(t, srv, rest.Config{}, redisrest.WithPrefix("other-app:"))
	info := put(t, s, "session-a", []byte("kept"))
	if readable(t, other, "session-a", info.Ref) {
		t.Error("a store of another prefix reads the entry")
	}
	if !readable(t, s, "session-a", info.Ref) {
		t.Error("the entry is not readable through its own prefix")
	}
}

// TestStoreKeys checks what the store leaves in Redis: no scope in a key,
// one key per committed entry with the entry's time to live, a temp key
// with a short one while an entry is written, nothing after an Abort.
func TestStoreKeys(t *testing.T) {
	const scope = "mcp-session-7f3a9c41-secret"
	srv := startServer(t)
	raw := srv.client()
	ctx := context.Background()
	s := openStore(t, srv, rest.Config{TTL: time.Hour})

	// An entry past one round trip: its temp key is in Redis, not its key.
	e, err := s.Create(ctx, scope)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := write(e, testBytes(5, redisrest.ChunkBytes+100), 64<<10); err != nil {
		t.Fatalf("Write: %v", err)
	}
	writing, err := srv.keys(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Abort(); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	aborted, err := srv.keys(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	info := put(t, s, scope, testBytes(6, 3*redisrest.ChunkBytes), 1<<20)
	committed, err := srv.keys(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}

	type keyView struct {
		Prefix   bool // starts with DefaultPrefix
		Temp     bool // ends in the temp key's suffix
		TTLRange string
	}
	view := func(m map[string]time.Duration) []keyView {
		var out []keyView
		for k, d := range m {
			if strings.Contains(k, scope) || strings.Contains(k, info.Ref) || strings.Contains(k, e.Ref()) {
				t.Errorf("key %q shows the scope or a ref", k)
			}
			v := keyView{Prefix: strings.HasPrefix(k, redisrest.DefaultPrefix), Temp: strings.HasSuffix(k, ":w")}
			switch {
			case d > time.Hour-time.Minute && d <= time.Hour:
				v.TTLRange = "the entry's TTL"
			case d > 0 && d <= redisrest.TempTTL:
				v.TTLRange = "TempTTL"
			default:
				v.TTLRange = d.String()
			}
			out = append(out, v)
		}
		return out
	}
	type views struct{ Writing, Aborted, Committed []keyView }
	want := views{
		Writing:   []keyView{{Prefix: true, Temp: true, TTLRange: "TempTTL"}},
		Committed: []keyView{{Prefix: true, TTLRange: "the entry's TTL"}},
	}
	if diff := cmp.Diff(want, views{view(writing), view(aborted), view(committed)}); diff != "" {
		t.Errorf("keys in Redis mismatch (-want +got):\n%s", diff)
	}

	// A value that is not a whole entry (another program's, or one cut
	// short) reads as an unknown ref.
	for k := range committed {
		if err := raw.SetRange(ctx, k, 0, "garbage!").Err(); err != nil {
			t.Fatal(err)
		}
	}
	if readable(t, s, scope, info.Ref) {
		t.Errorf("an entry whose header was overwritten is readable")
	}
}

// An Abort leaves no key in Redis, whether a round trip made a temp key or
// not.
func TestStoreAbortLeavesNoKey(t *testing.T) {
	srv := startServer(t)
	raw := srv.client()
	s := openStore(t, srv, rest.Config{})
	for _, n := range []int{10, 2*redisrest.ChunkBytes + 1} {
		t.Run(fmt.Sprint(n, " bytes"), func(t *testing.T) {
			e, err := s.Create(context.Background(), "scope")
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if err := write(e, testBytes(9, n)); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if err := e.Abort(); err != nil {
				t.Fatalf("Abort: %v", err)
			}
			keys, err := raw.DBSize(context.Background()).Result()
			if err != nil {
				t.Fatal(err)
			}
			if keys != 0 {
				t.Errorf("%d keys in Redis after the Abort; want none", keys)
			}
		})
	}
}

// TestStoreFull runs a Redis that refuses writes past its maxmemory
// (noeviction): a write it refuses is an error wrapping rest.ErrFull.
func TestStoreFull(t *testing.T) {
	srv := startServer(t, "--maxmemory", "3mb", "--maxmemory-policy", "noeviction")
	s := openStore(t, srv, rest.Config{})
	var errs []error
	for i := range 4 {
		e, err := s.Create(context.Background(), "scope")
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		err = write(e, testBytes(uint64(i), 2*redisrest.ChunkBytes), 512<<10)
		if err == nil {
			_, err = e.Commit()
		}
		_ = e.Abort()
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		t.Fatal("8 MiB written to a Redis of maxmemory 3 MiB with noeviction, and no error")
	}
	for _, err := range errs {
		if !errors.Is(err, rest.ErrFull) {
			t.Errorf("error %v does not wrap rest.ErrFull", err)
		}
	}
	// Redis's OOM is not an outage: a small entry still fits.
	put(t, s, "scope", []byte("small"))
}

// TestStoreRedisDown: a store whose Redis does not answer fails each
// operation within its timeout, then, for the Pause, at once.
func TestStoreRedisDown(t *testing.T) {
	srv := startServer(t)
	s := openStore(t, srv, rest.Config{}, redisrest.WithTimeout(300*time.Millisecond))
	info := put(t, s, "scope", []byte("kept"))
	srv.signal(syscall.SIGSTOP) // connections open, nothing answers
	t.Cleanup(func() { srv.signal(syscall.SIGCONT) })

	type step struct {
		Op   string
		Err  bool
		Fast bool // under 100 ms
		Slow bool // over 2 s
	}
	var got []step
	timed := func(op string, f func() error) {
		start := time.Now()
		err := f()
		d := time.Since(start)
		got = append(got, step{op, err != nil, d < 100*time.Millisecond, d > 2*time.Second})
	}
	timed("Open, stuck", func() error {
		_, err := s.Open(context.Background(), "scope", info.Ref)
		if errors.Is(err, rest.ErrUnknown) {
			t.Errorf("Open of a stuck Redis = %v; want an error other than ErrUnknown", err)
		}
		return err
	})
	timed("Create in the pause", func() error {
		_, err := s.Create(context.Background(), "scope")
		return err
	})
	want := []step{
		{"Open, stuck", true, false, false},
		{"Create in the pause", true, true, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps mismatch (-want +got):\n%s", diff)
	}
	srv.signal(syscall.SIGCONT)
	if err := waitFor(5*time.Second, func() bool {
		r, err := s.Open(context.Background(), "scope", info.Ref)
		if err == nil {
			_ = r.Close()
		}
		return err == nil
	}); err != nil {
		t.Errorf("entry not readable again after the Redis answers: %v", err)
	}
}

func TestOpenURL(t *testing.T) {
	cases := []struct {
		name, url, err string
	}{
		{"not redis", "http://localhost:6379", `scheme "http": want redis or rediss`},
		{"no host", "redis:///0", "no host"},
		{"opaque", "redis:localhost", "no host"},
		{"bad database", "redis://:hunter2@localhost:6379/zero", `invalid database number`},
		{"unknown option", "redis://user:hunter2@localhost/0?colour=blue", "unexpected option"},
		{"not a URL", "redis://user:hunter2@local host:6379/%zz", "not a URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := redisrest.Open(c.url, rest.Config{})
			if err == nil {
				_ = s.Close()
				t.Fatalf("Open(%q) = nil error; want one saying %q", c.url, c.err)
			}
			if !strings.Contains(err.Error(), c.err) {
				t.Errorf("Open(%q) = %v; want it to say %q", c.url, err, c.err)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("Open(%q) error shows the password: %v", c.url, err)
			}
		})
	}
}

// TestOpenCredentials: credentials come from the URL, else from the
// environment.
func TestOpenCredentials(t *testing.T) {
	srv := startServer(t, "--requirepass", "hunter2")
	cases := []struct {
		name, url, envPassword string
		ok                     bool
	}{
		{"from the URL", "redis://:hunter2@" + srv.Addr() + "/0", "", true},
		{"from the environment", srv.URL(), "hunter2", true},
		{"the URL's over the environment", "redis://:wrong@" + srv.Addr() + "/0", "hunter2", false},
		{"none", srv.URL(), "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("REDIS_PASSWORD", c.envPassword)
			s, err := redisrest.Open(c.url, rest.Config{})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			t.Cleanup(func() { _ = s.Close() })
			e, err := s.Create(context.Background(), "scope")
			if err == nil {
				_, _ = e.Write([]byte("x"))
				_, err = e.Commit()
			}
			if (err == nil) != c.ok {
				t.Fatalf("Commit = %v; want success %v", err, c.ok)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows the password: %v", err)
			}
			if strings.Contains(s.Where(), "hunter2") || strings.Contains(s.Where(), "wrong") {
				t.Errorf("Where() = %q shows the password", s.Where())
			}
		})
	}
}
