package redisrest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/adapters/redisrest"
	"github.com/toolcap/toolcap/internal/rest"
)

// The store contract of package rest's own tests, against Redis, plus what
// only Redis does: round trips of ChunkBytes, temp keys, the time to live
// of keys, OOM.

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

// put writes data to a new entry of scope in pieces of the sizes given
// (cycled; all at once when none) and commits it.
func put(t testing.TB, s rest.Store, scope string, data []byte, pieces ...int) rest.Info {
	t.Helper()
	e, err := s.Create(context.Background(), scope)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := write(e, data, pieces...); err != nil {
		_ = e.Abort()
		t.Fatalf("Write: %v", err)
	}
	info, err := e.Commit()
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return info
}

func write(w io.Writer, data []byte, pieces ...int) error {
	if len(pieces) == 0 {
		pieces = []int{len(data)}
	}
	for i := 0; len(data) > 0; i++ {
		k := min(pieces[i%len(pieces)], len(data))
		n, err := w.Write(data[:k])
		if err != nil {
			return err
		}
		if n != k {
			return fmt.Errorf("Write(%d bytes) = %d, nil", k, n)
		}
		data = data[k:]
	}
	return nil
}

// readAll opens ref and reads all it holds.
func readAll(s rest.Store, scope, ref string) ([]byte, rest.Info, error) {
	r, err := s.Open(context.Background(), scope, ref)
	if err != nil {
		return nil, rest.Info{}, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.NewSectionReader(r, 0, r.Info().Size))
	return b, r.Info(), err
}

// readable reports whether ref can be opened in scope; an error other than
// ErrUnknown fails the test.
func readable(t *testing.T, s rest.Store, scope, ref string) bool {
	t.Helper()
	r, err := s.Open(context.Background(), scope, ref)
	if errors.Is(err, rest.ErrUnknown) {
		return false
	}
	if err != nil {
		t.Fatalf("Open(%s): %v", ref, err)
	}
	_ = r.Close()
	return true
}

type readAtResult struct {
	N    int
	Data [sha256.Size]byte // of the bytes read: cmp is slow on megabytes
	EOF  bool
	Err  bool // an error other than io.EOF
}

func TestStoreReadAt(t *testing.T) {
	srv := startServer(t)
	s := openStore(t, srv, rest.Config{})
	const chunk = redisrest.ChunkBytes
	sizes := []struct {
		name   string
		size   int
		pieces []int
	}{
		// One SET at Commit.
		{"one round trip", 200_003, []int{1, 7, 4096, 70_000, 3, 100_000}},
		{"exactly a round trip", chunk, nil},
		// Round trips of ChunkBytes, pieces sent from where they are
		// and pieces gathered in the buffer, then the commit script.
		{"several round trips", 2*chunk + chunk/2 + 3, []int{1, 7, 4096, 700_000, 3, 1_500_000}},
	}
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			size := sz.size
			data := testBytes(uint64(size), size)
			info := put(t, s, "scope", data, sz.pieces...)
			if diff := cmp.Diff(rest.Info{Ref: info.Ref, Size: int64(size), Original: int64(size)}, info); diff != "" {
				t.Errorf("Commit() info mismatch (-want +got):\n%s", diff)
			}
			r, err := s.Open(context.Background(), "scope", info.Ref)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer r.Close()
			if diff := cmp.Diff(info, r.Info()); diff != "" {
				t.Errorf("Reader.Info() mismatch (-want +got):\n%s", diff)
			}
			cases := []struct {
				name string
				off  int64
				n    int
			}{
				{"start", 0, 100},
				{"empty at start", 0, 0},
				{"one byte", 1, 1},
				{"a 16 KiB page", 4095, 16384},
				{"across the first round trip", chunk - 10, 20},
				{"a 16 KiB page at the end", int64(size) - 16384, 16384},
				{"whole", 0, size},
				{"last byte", int64(size) - 1, 1},
				{"past the end from inside", int64(size) - 5, 16},
				{"more than the whole", 0, size + 1},
				{"at the end", int64(size), 16},
				{"empty at the end", int64(size), 0},
				{"past the end", int64(size) + 100, 16},
				{"negative offset", -1, 16},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					var want readAtResult
					switch {
					case c.off < 0:
						want = readAtResult{Err: true, Data: sha256.Sum256(nil)}
					default:
						lo := min(c.off, int64(size))
						hi := min(max(c.off+int64(c.n), 0), int64(size))
						lo = min(lo, hi)
						want = readAtResult{N: int(hi - lo), Data: sha256.Sum256(data[lo:hi]), EOF: hi-lo < int64(c.n)}
					}
					p := make([]byte, c.n)
					n, err := r.ReadAt(p, c.off)
					got := readAtResult{N: n, Data: sha256.Sum256(p[:n]), EOF: err == io.EOF, Err: err != nil && err != io.EOF}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("ReadAt(%d bytes, %d) mismatch (-want +got):\n%s (error %v)", c.n, c.off, diff, err)
					}
				})
			}
			// Page after page, as toolcap_read reads: byte for byte.
			var all []byte
			p := make([]byte, 16384)
			for off := int64(0); ; off += int64(len(p)) {
				n, err := r.ReadAt(p, off)
				all = append(all, p[:n]...)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("ReadAt(16384, %d): %v", off, err)
				}
			}
			if !bytes.Equal(all, data) {
				t.Errorf("pages: %d bytes, not the %d written byte for byte", len(all), len(data))
			}
		})
	}
}

func TestStoreReaderClose(t *testing.T) {
	srv := startServer(t)
	s := openStore(t, srv, rest.Config{})
	info := put(t, s, "scope", []byte("hello"))
	r, err := s.Open(context.Background(), "scope", info.Ref)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, off := range []int64{0, 5} {
		if n, err := r.ReadAt(make([]byte, 2), off); err == nil || err == io.EOF {
			t.Errorf("ReadAt(2 bytes, %d) after Close = %d, %v; want an error other than io.EOF", off, n, err)
		}
	}
}

func TestStoreUnknownRefs(t *testing.T) {
	srv := startServer(t)
	s := openStore(t, srv, rest.Config{})
	other := openStore(t, srv, rest.Config{}, redisrest.WithPrefix("other-app:"))
	info := put(t, s, "session-a", []byte("kept"))
	cases := []struct {
		name, scope, ref string
		store            rest.Store
	}{
		{"foreign scope", "session-b", info.Ref, s},
		{"empty scope", "", info.Ref, s},
		{"scope with the ref glued on", "session-a" + info.Ref, info.Ref, s},
		{"never made", "session-a", rest.NewRef(), s},
		{"empty", "session-a", "", s},
		{"too short", "session-a", info.Ref[1:], s},
		{"too long", "session-a", info.Ref + "a", s},
		{"upper case", "session-a", strings.ToUpper(info.Ref), s},
		{"path", "session-a", "../../../../../../etc/passwd", s},
		{"a key pattern", "session-a", "*", s},
		{"another prefix", "session-a", info.Ref, other},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := c.store.Open(context.Background(), c.scope, c.ref)
			if r != nil {
				_ = r.Close()
			}
			if !errors.Is(err, rest.ErrUnknown) {
				t.Fatalf("Open = %v; want ErrUnknown", err)
			}
			// The same text for every case: a ref tells nothing outside
			// its scope.
			if diff := cmp.Diff(rest.ErrUnknown.Error(), err.Error()); diff != "" {
				t.Errorf("Open error text mismatch (-want +got):\n%s", diff)
			}
		})
	}
	got, _, err := readAll(s, "session-a", info.Ref)
	if err != nil || string(got) != "kept" {
		t.Errorf("own scope after the others: %q, %v; want %q", got, err, "kept")
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

func TestStoreContextDone(t *testing.T) {
	srv := startServer(t)
	s := openStore(t, srv, rest.Config{})
	info := put(t, s, "scope", []byte("x"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if e, err := s.Create(ctx, "scope"); !errors.Is(err, context.Canceled) {
		if e != nil {
			_ = e.Abort()
		}
		t.Errorf("Create with a done context = %v; want context.Canceled", err)
	}
	for _, ref := range []string{info.Ref, "malformed"} {
		if r, err := s.Open(ctx, "scope", ref); !errors.Is(err, context.Canceled) {
			if r != nil {
				_ = r.Close()
			}
			t.Errorf("Open(%q) with a done context = %v; want context.Canceled", ref, err)
		}
	}
	// A done context is the caller's, not an outage: the store answers
	// the next call at once.
	if !readable(t, s, "scope", info.Ref) {
		t.Errorf("entry not readable after a call with a done context")
	}
}

func TestStoreUncommittedInvisible(t *testing.T) {
	srv := startServer(t)
	s := openStore(t, srv, rest.Config{})
	for _, n := range []int{10, 2*redisrest.ChunkBytes + 1} {
		t.Run(fmt.Sprint(n, " bytes"), func(t *testing.T) {
			e, err := s.Create(context.Background(), "scope")
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if err := write(e, testBytes(7, n), 256<<10); err != nil {
				t.Fatalf("Write: %v", err)
			}
			var got []bool
			got = append(got, readable(t, s, "scope", e.Ref()))
			if _, err := e.Commit(); err != nil {
				t.Fatalf("Commit: %v", err)
			}
			got = append(got, readable(t, s, "scope", e.Ref()))
			if diff := cmp.Diff([]bool{false, true}, got); diff != "" {
				t.Errorf("readable before, after Commit mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStoreEntryLifecycle(t *testing.T) {
	srv := startServer(t)
	s := openStore(t, srv, rest.Config{})
	for _, n := range []int{3, redisrest.ChunkBytes + 3} {
		t.Run(fmt.Sprint(n, " bytes"), func(t *testing.T) {
			data := testBytes(8, n)
			e, err := s.Create(context.Background(), "scope")
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if !rest.ValidRef(e.Ref()) {
				t.Errorf("Ref() = %q: not a valid ref", e.Ref())
			}
			if err := write(e, data); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if _, err := e.Commit(); err != nil {
				t.Fatalf("Commit: %v", err)
			}
			type step struct {
				Op  string
				Err bool
			}
			var got []step
			_, err = e.Write([]byte("more"))
			got = append(got, step{"Write after Commit", err != nil})
			_, err = e.Commit()
			got = append(got, step{"second Commit", err != nil})
			got = append(got, step{"Abort after Commit", e.Abort() != nil})
			got = append(got, step{"second Abort", e.Abort() != nil})
			want := []step{{"Write after Commit", true}, {"second Commit", true}, {"Abort after Commit", false}, {"second Abort", false}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("lifecycle mismatch (-want +got):\n%s", diff)
			}
			b, _, err := readAll(s, "scope", e.Ref())
			if err != nil || !bytes.Equal(b, data) {
				t.Errorf("entry after Abort-after-Commit: %d bytes, %v; want the %d written", len(b), err, n)
			}
		})
	}
}

func TestStoreAbort(t *testing.T) {
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
			var steps []string
			if _, err := e.Write([]byte("x")); err != nil {
				steps = append(steps, "Write fails")
			}
			if _, err := e.Commit(); err != nil {
				steps = append(steps, "Commit fails")
			}
			if readable(t, s, "scope", e.Ref()) {
				steps = append(steps, "readable")
			}
			keys, err := raw.DBSize(context.Background()).Result()
			if err != nil {
				t.Fatal(err)
			}
			steps = append(steps, fmt.Sprint(keys, " keys"))
			if diff := cmp.Diff([]string{"Write fails", "Commit fails", "0 keys"}, steps); diff != "" {
				t.Errorf("after Abort mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStoreMaxEntryBytes(t *testing.T) {
	const chunk = redisrest.ChunkBytes
	cases := []struct {
		name    string
		cfg     rest.Config
		pieces  []int
		written int
		want    int64
	}{
		{"past the bound in one write", rest.Config{MaxEntryBytes: 100}, []int{250}, 250, 100},
		{"past the bound across writes", rest.Config{MaxEntryBytes: 100}, []int{60}, 250, 100},
		{"a write that ends on the bound", rest.Config{MaxEntryBytes: 100}, []int{50}, 250, 100},
		{"within the bound", rest.Config{MaxEntryBytes: 100}, []int{7}, 100, 100},
		{"past the bound after round trips", rest.Config{MaxEntryBytes: chunk + chunk/2}, []int{300_000}, 3 * chunk, chunk + chunk/2},
		{"bound clamped to MaxBytes", rest.Config{MaxBytes: 1000, MaxEntryBytes: 5000}, []int{300}, 3000, 1000},
	}
	srv := startServer(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t, srv, c.cfg)
			data := testBytes(2, c.written)
			info := put(t, s, "scope", data, c.pieces...)
			if diff := cmp.Diff(rest.Info{Ref: info.Ref, Size: c.want, Original: int64(c.written)}, info); diff != "" {
				t.Errorf("Commit() info mismatch (-want +got):\n%s", diff)
			}
			got, rinfo, err := readAll(s, "scope", info.Ref)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if diff := cmp.Diff(info, rinfo); diff != "" {
				t.Errorf("Reader.Info() mismatch (-want +got):\n%s", diff)
			}
			if !bytes.Equal(got, data[:c.want]) {
				t.Errorf("read %d bytes; want the first %d written", len(got), c.want)
			}
		})
	}
}

// TestStoreTTL runs on Redis's clock: an entry lives its TTL from its
// Commit or its last Open, and no longer.
func TestStoreTTL(t *testing.T) {
	const ttl = time.Second
	srv := startServer(t)
	s := openStore(t, srv, rest.Config{TTL: ttl})
	a := put(t, s, "scope", []byte("read often"))
	b := put(t, s, "scope", testBytes(10, redisrest.ChunkBytes+5)) // committed by the script
	type step struct {
		At   string
		A, B bool
	}
	var got []step
	time.Sleep(600 * time.Millisecond)
	got = append(got, step{"0.6 s: both, A renewed", readable(t, s, "scope", a.Ref), true})
	time.Sleep(600 * time.Millisecond)
	got = append(got, step{"1.2 s: B expired", readable(t, s, "scope", a.Ref), readable(t, s, "scope", b.Ref)})
	time.Sleep(1200 * time.Millisecond)
	got = append(got, step{"2.4 s: A expired", readable(t, s, "scope", a.Ref), false})
	want := []step{
		{"0.6 s: both, A renewed", true, true},
		{"1.2 s: B expired", true, false},
		{"2.4 s: A expired", false, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TTL steps mismatch (-want +got):\n%s", diff)
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
