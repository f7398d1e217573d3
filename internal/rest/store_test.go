package rest_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/rest"
)

// The tests in this file run against both stores: what the Store contract
// promises does not depend on where the bytes are.

// testStore is what both stores offer.
type testStore interface {
	rest.Store
	Usage() rest.Usage
}

// storeKind opens one kind of store for a test.
type storeKind struct {
	name string
	open func(t *testing.T, cfg rest.Config) testStore
	// disk sums the files the store has on disk, temp files included; nil
	// for a store in memory.
	disk func(t *testing.T, s testStore) int64
}

var storeKinds = []storeKind{
	{
		name: "memory",
		open: func(_ *testing.T, cfg rest.Config) testStore { return rest.NewMemory(cfg) },
	},
	{
		name: "dir",
		open: func(t *testing.T, cfg rest.Config) testStore {
			t.Helper()
			d, err := rest.OpenDir(filepath.Join(t.TempDir(), "store"), cfg)
			if err != nil {
				t.Fatalf("OpenDir: %v", err)
			}
			return d
		},
		disk: func(t *testing.T, s testStore) int64 {
			t.Helper()
			p := s.(*rest.Dir).Path()
			// The entries first, then tmp/: a file renamed from tmp/ in
			// between is counted in neither, never twice.
			return storeDiskBytes(t, p) + storeDiskBytes(t, filepath.Join(p, "tmp"))
		},
	},
}

// storeDiskBytes sums the sizes of the regular files in dir (not below).
func storeDiskBytes(t *testing.T, dir string) int64 {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Errorf("ReadDir(%s): %v", dir, err)
		return 0
	}
	var n int64
	for _, de := range des {
		fi, err := de.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue // removed since the listing, or tmp/ itself
		}
		n += fi.Size()
	}
	return n
}

// storeClock is a clock a test moves by hand.
type storeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newStoreClock() *storeClock {
	return &storeClock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *storeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *storeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// storeBytes returns n pseudo-random bytes, the same for the same seed.
func storeBytes(seed uint64, n int) []byte {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(s).Read(b) // never fails
	return b
}

// storePut writes data to a new entry of scope in pieces of the sizes
// given (cycled; all of it at once when none) and commits it.
func storePut(t testing.TB, s rest.Store, scope string, data []byte, pieces ...int) rest.Info {
	t.Helper()
	e, err := s.Create(context.Background(), scope)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := storeWrite(e, data, pieces...); err != nil {
		_ = e.Abort()
		t.Fatalf("Write: %v", err)
	}
	info, err := e.Commit()
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return info
}

func storeWrite(w io.Writer, data []byte, pieces ...int) error {
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

// storeRead opens ref and reads all it holds; an Open error is returned.
func storeRead(s rest.Store, scope, ref string) ([]byte, rest.Info, error) {
	r, err := s.Open(context.Background(), scope, ref)
	if err != nil {
		return nil, rest.Info{}, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.NewSectionReader(r, 0, r.Info().Size))
	return b, r.Info(), err
}

// storeReadable reports whether ref can be opened in scope; any error
// other than ErrUnknown fails the test.
func storeReadable(t *testing.T, s rest.Store, scope, ref string) bool {
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

// readAtResult is what one ReadAt did.
type readAtResult struct {
	N    int
	Data []byte
	EOF  bool
	Err  bool // an error other than io.EOF
}

func TestStoreReadAt(t *testing.T) {
	const size = 200_003 // past several 64 KiB chunks, not a multiple of any
	data := storeBytes(1, size)
	cases := []struct {
		name string
		off  int64
		n    int
	}{
		{"start", 0, 100},
		{"empty at start", 0, 0},
		{"one byte", 1, 1},
		{"across a 64 KiB boundary", 65536 - 10, 20},
		{"exactly one 64 KiB piece", 65536, 65536},
		{"a 16 KiB page", 4095, 16384},
		{"whole", 0, size},
		{"last byte", size - 1, 1},
		{"past the end from inside", size - 5, 16},
		{"more than the whole", 0, size + 1},
		{"at the end", size, 16},
		{"empty at the end", size, 0},
		{"past the end", size + 100, 16},
		{"negative offset", -1, 16},
	}
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			s := k.open(t, rest.Config{})
			// Pieces of odd sizes: single bytes, small writes that a
			// buffer gathers, long ones that go straight through.
			info := storePut(t, s, "scope", data, 1, 7, 4096, 70_000, 3, 100_000)
			if diff := cmp.Diff(rest.Info{Ref: info.Ref, Size: size, Original: size}, info); diff != "" {
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
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					var want readAtResult
					switch {
					case c.off < 0:
						want = readAtResult{Err: true, Data: []byte{}}
					default:
						lo := min(c.off, size)
						hi := min(c.off+int64(c.n), size)
						want = readAtResult{N: int(hi - lo), Data: data[lo:hi], EOF: hi-lo < int64(c.n)}
					}
					p := make([]byte, c.n)
					n, err := r.ReadAt(p, c.off)
					got := readAtResult{N: n, Data: p[:n], EOF: err == io.EOF, Err: err != nil && err != io.EOF}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("ReadAt(%d bytes, %d) mismatch (-want +got):\n%s (error %v)", c.n, c.off, diff, err)
					}
				})
			}
			all, _, err := storeRead(s, "scope", info.Ref)
			if err != nil {
				t.Fatalf("read all: %v", err)
			}
			if !bytes.Equal(all, data) {
				t.Errorf("read all: %d bytes, not the %d written byte for byte", len(all), len(data))
			}
		})
	}
}

func TestStoreReaderClose(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			s := k.open(t, rest.Config{})
			info := storePut(t, s, "scope", []byte("hello"))
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
		})
	}
}

func TestStoreUnknownRefs(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			s := k.open(t, rest.Config{})
			info := storePut(t, s, "session-a", []byte("kept"))
			cases := []struct {
				name, scope, ref string
			}{
				{"foreign scope", "session-b", info.Ref},
				{"empty scope", "", info.Ref},
				{"scope with the ref glued on", "session-a" + info.Ref, info.Ref},
				{"never made", "session-a", rest.NewRef()},
				{"empty", "session-a", ""},
				{"too short", "session-a", info.Ref[1:]},
				{"too long", "session-a", info.Ref + "a"},
				{"upper case", "session-a", strings.ToUpper(info.Ref)},
				{"path", "session-a", "../../../../../../etc/passwd"},
				{"path of ref length", "session-a", "../" + info.Ref[3:]},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					r, err := s.Open(context.Background(), c.scope, c.ref)
					if r != nil {
						_ = r.Close()
					}
					if !errors.Is(err, rest.ErrUnknown) {
						t.Fatalf("Open = %v; want ErrUnknown", err)
					}
					// The same text for every case: a ref tells nothing
					// outside its scope.
					if diff := cmp.Diff(rest.ErrUnknown.Error(), err.Error()); diff != "" {
						t.Errorf("Open error text mismatch (-want +got):\n%s", diff)
					}
				})
			}
			got, _, err := storeRead(s, "session-a", info.Ref)
			if err != nil || string(got) != "kept" {
				t.Errorf("own scope after the others: %q, %v; want %q", got, err, "kept")
			}
		})
	}
}

func TestStoreContextDone(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			s := k.open(t, rest.Config{})
			info := storePut(t, s, "scope", []byte("x"))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if e, err := s.Create(ctx, "scope"); !errors.Is(err, context.Canceled) {
				if e != nil {
					_ = e.Abort()
				}
				t.Errorf("Create with a done context = %v; want context.Canceled", err)
			}
			if r, err := s.Open(ctx, "scope", info.Ref); !errors.Is(err, context.Canceled) {
				if r != nil {
					_ = r.Close()
				}
				t.Errorf("Open with a done context = %v; want context.Canceled", err)
			}
		})
	}
}

func TestStoreUncommittedInvisible(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			s := k.open(t, rest.Config{})
			e, err := s.Create(context.Background(), "scope")
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if _, err := e.Write([]byte("half of it")); err != nil {
				t.Fatalf("Write: %v", err)
			}
			var got []bool
			got = append(got, storeReadable(t, s, "scope", e.Ref()))
			if _, err := e.Commit(); err != nil {
				t.Fatalf("Commit: %v", err)
			}
			got = append(got, storeReadable(t, s, "scope", e.Ref()))
			if diff := cmp.Diff([]bool{false, true}, got); diff != "" {
				t.Errorf("readable before, after Commit mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStoreEntryLifecycle(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			s := k.open(t, rest.Config{})
			e, err := s.Create(context.Background(), "scope")
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if !rest.ValidRef(e.Ref()) {
				t.Errorf("Ref() = %q: not a valid ref", e.Ref())
			}
			if _, err := e.Write([]byte("abc")); err != nil {
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
			b, _, err := storeRead(s, "scope", e.Ref())
			if err != nil || string(b) != "abc" {
				t.Errorf("entry after Abort-after-Commit: %q, %v; want %q", b, err, "abc")
			}
		})
	}
}

func TestStoreMaxEntryBytes(t *testing.T) {
	cases := []struct {
		name    string
		cfg     rest.Config
		pieces  []int
		written int
		// want is the Size kept; -1: whatever the quota leaves (the bound
		// is clamped to it, less a Dir's header).
		want int64
	}{
		{"past the bound in one write", rest.Config{MaxEntryBytes: 100}, []int{250}, 250, 100},
		{"past the bound across writes", rest.Config{MaxEntryBytes: 100}, []int{60}, 250, 100},
		{"a write that ends on the bound", rest.Config{MaxEntryBytes: 100}, []int{50}, 250, 100},
		{"within the bound", rest.Config{MaxEntryBytes: 100}, []int{7}, 100, 100},
		{"bound clamped to the quota", rest.Config{MaxBytes: 1000, MaxEntryBytes: 5000}, []int{300}, 3000, -1},
	}
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					s := k.open(t, c.cfg)
					data := storeBytes(2, c.written)
					info := storePut(t, s, "scope", data, c.pieces...)
					want := c.want
					if want < 0 {
						want = info.Size
						if info.Size < 1000-64 || info.Size > 1000 {
							t.Errorf("Size = %d; want the quota of 1000 bytes less at most a header", info.Size)
						}
					}
					if diff := cmp.Diff(rest.Info{Ref: info.Ref, Size: want, Original: int64(c.written)}, info); diff != "" {
						t.Errorf("Commit() info mismatch (-want +got):\n%s", diff)
					}
					got, rinfo, err := storeRead(s, "scope", info.Ref)
					if err != nil {
						t.Fatalf("read: %v", err)
					}
					if diff := cmp.Diff(info, rinfo); diff != "" {
						t.Errorf("Reader.Info() mismatch (-want +got):\n%s", diff)
					}
					if !bytes.Equal(got, data[:want]) {
						t.Errorf("read %d bytes; want the first %d written", len(got), want)
					}
					r, err := s.Open(context.Background(), "scope", info.Ref)
					if err != nil {
						t.Fatalf("Open: %v", err)
					}
					defer r.Close()
					if n, err := r.ReadAt(make([]byte, 1), want); n != 0 || err != io.EOF {
						t.Errorf("ReadAt(1 byte, %d) past what is kept = %d, %v; want 0, io.EOF", want, n, err)
					}
				})
			}
		})
	}
}

func TestStoreTTL(t *testing.T) {
	const ttl = time.Hour
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			clock := newStoreClock()
			s := k.open(t, rest.Config{TTL: ttl, Now: clock.Now})
			a := storePut(t, s, "scope", []byte("read often"))
			b := storePut(t, s, "scope", []byte("never read"))
			type step struct {
				At       time.Duration // since the two commits
				A        bool          // A could be opened (and so renewed)
				Entries  int           // committed entries left after the Open
				BVisible bool
			}
			var got []step
			var at time.Duration
			for _, d := range []time.Duration{ttl - time.Second, ttl - time.Second, ttl - time.Second, ttl} {
				clock.Advance(d)
				at += d
				st := step{At: at, A: storeReadable(t, s, "scope", a.Ref)}
				st.Entries = s.Usage().Entries
				got = append(got, st)
			}
			got = append(got, step{At: at, BVisible: storeReadable(t, s, "scope", b.Ref)})
			want := []step{
				// B expires at 1h and is removed by the next Open that
				// meets it, A lives on while it is read within its TTL.
				{At: ttl - time.Second, A: true, Entries: 2},
				{At: 2*ttl - 2*time.Second, A: true, Entries: 1},
				{At: 3*ttl - 3*time.Second, A: true, Entries: 1},
				{At: 4*ttl - 3*time.Second, A: false, Entries: 0},
				{At: 4*ttl - 3*time.Second, BVisible: false},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("TTL steps mismatch (-want +got):\n%s", diff)
			}
			if u := s.Usage(); u.Bytes != 0 || u.Writing != 0 {
				t.Errorf("Usage() after expiry = %+v; want no bytes", u)
			}
		})
	}
}

func TestStoreTTLExactBoundary(t *testing.T) {
	// An entry lives for TTL, not a moment longer.
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			clock := newStoreClock()
			s := k.open(t, rest.Config{TTL: time.Minute, Now: clock.Now})
			a := storePut(t, s, "scope", []byte("a"))
			b := storePut(t, s, "scope", []byte("b"))
			clock.Advance(time.Minute - time.Nanosecond)
			gotA := storeReadable(t, s, "scope", a.Ref)
			clock.Advance(time.Nanosecond)
			gotB := storeReadable(t, s, "scope", b.Ref)
			if diff := cmp.Diff([]bool{true, false}, []bool{gotA, gotB}); diff != "" {
				t.Errorf("readable just before, at TTL mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// storeLogger returns a JSON debug logger into a buffer.
func storeLogger() (hclog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, DisableTime: true, Level: hclog.Debug}), &buf
}

func TestStoreEvictionOrder(t *testing.T) {
	const scope = "mcp-session-7f3a9c41-secret"
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			clock := newStoreClock()
			log, buf := storeLogger()
			// Room for three entries of 1,000 bytes (and a header each),
			// not four.
			s := k.open(t, rest.Config{MaxBytes: 3500, Now: clock.Now, Logger: log})
			refs := map[string]string{}
			put := func(name string) {
				clock.Advance(time.Second)
				refs[name] = storePut(t, s, scope, storeBytes(3, 1000)).Ref
			}
			readable := func() map[string]bool {
				m := map[string]bool{}
				for name, ref := range refs {
					m[name] = storeReadable(t, s, scope, ref)
				}
				return m
			}
			put("a")
			put("b")
			put("c")
			clock.Advance(time.Second)
			if !storeReadable(t, s, scope, refs["a"]) { // a becomes the youngest
				t.Fatal("a not readable before any eviction")
			}
			put("d") // evicts b, the oldest by last use
			// Open every entry in a fixed order so that "readable" itself
			// leaves a known last-use order: a, c, d (the map order is
			// random, so check one at a time).
			got := map[string]bool{}
			for _, name := range []string{"b", "a", "c", "d"} {
				got[name] = storeReadable(t, s, scope, refs[name])
			}
			if diff := cmp.Diff(map[string]bool{"a": true, "b": false, "c": true, "d": true}, got); diff != "" {
				t.Errorf("after d mismatch (-want +got):\n%s", diff)
			}
			put("e") // evicts a, now the oldest by last use
			if diff := cmp.Diff(map[string]bool{"a": false, "b": false, "c": true, "d": true, "e": true}, readable()); diff != "" {
				t.Errorf("after e mismatch (-want +got):\n%s", diff)
			}
			logs := buf.String()
			if n := strings.Count(logs, `"reason":"quota"`); n != 2 {
				t.Errorf("log has %d quota evictions; want 2:\n%s", n, logs)
			}
			if strings.Contains(logs, "secret") {
				t.Errorf("log holds the scope:\n%s", logs)
			}
			for name, ref := range refs {
				if strings.Contains(logs, ref) {
					t.Errorf("log holds the ref of %s:\n%s", name, logs)
				}
			}
		})
	}
}

func TestStoreReaderOutlivesEviction(t *testing.T) {
	// Documented for both stores: a Reader open when its entry is evicted
	// reads on (unix semantics for a Dir).
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			s := k.open(t, rest.Config{MaxBytes: 2500})
			data := storeBytes(4, 1000)
			a := storePut(t, s, "scope", data)
			r, err := s.Open(context.Background(), "scope", a.Ref)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer r.Close()
			storePut(t, s, "scope", storeBytes(5, 1000))
			storePut(t, s, "scope", storeBytes(6, 1000))
			if storeReadable(t, s, "scope", a.Ref) {
				t.Fatal("a still readable: the test did not evict it")
			}
			p := make([]byte, 1000)
			n, err := r.ReadAt(p, 0)
			if err != nil || !bytes.Equal(p[:n], data) {
				t.Errorf("ReadAt after eviction = %d, %v; want the %d bytes written", n, err, len(data))
			}
		})
	}
}

func TestStoreAbortFreesReservation(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			s := k.open(t, rest.Config{MaxBytes: 10_000})
			ctx := context.Background()
			kept := storePut(t, s, "scope", storeBytes(7, 1000))

			a, err := s.Create(ctx, "scope")
			if err != nil {
				t.Fatalf("Create a: %v", err)
			}
			if _, err := a.Write(storeBytes(8, 8000)); err != nil {
				t.Fatalf("Write 8000 bytes to a: %v", err)
			}
			if w := s.Usage().Writing; w < 8000 {
				t.Errorf("Usage().Writing = %d while a holds 8,000 bytes", w)
			}
			b, err := s.Create(ctx, "scope")
			if err != nil {
				t.Fatalf("Create b: %v", err)
			}
			// b cannot have 5,000 bytes while a holds 8,000: no eviction
			// can help, so none happens.
			_, err = b.Write(storeBytes(9, 5000))
			if !errors.Is(err, rest.ErrFull) {
				t.Fatalf("Write 5000 bytes to b = %v; want ErrFull", err)
			}
			if want := "rest: entry " + b.Ref() + ": 5000 more bytes do not fit the quota of 10000 bytes ("; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("ErrFull text = %q; want it to start %q", err, want)
			}
			if !storeReadable(t, s, "scope", kept.Ref) {
				t.Error("a hopeless Write evicted a committed entry")
			}
			if _, err := b.Commit(); err == nil {
				t.Error("Commit after a failed Write succeeded")
			}
			if err := b.Abort(); err != nil {
				t.Errorf("Abort b: %v", err)
			}
			if err := a.Abort(); err != nil {
				t.Errorf("Abort a: %v", err)
			}
			if storeReadable(t, s, "scope", a.Ref()) {
				t.Error("an aborted entry is readable")
			}
			u := s.Usage()
			if diff := cmp.Diff(rest.Usage{Entries: 1, Bytes: u.Bytes, Writing: 0, MaxBytes: 10_000}, u); diff != "" {
				t.Errorf("Usage() after Abort mismatch (-want +got):\n%s", diff)
			}
			// The room is back: 8,000 more bytes fit beside the kept entry.
			c := storePut(t, s, "scope", storeBytes(10, 8000), 1024)
			if c.Size != 8000 {
				t.Errorf("entry after Abort keeps %d bytes; want 8000", c.Size)
			}
		})
	}
}

// storeWriter writes entries of size bytes, one piece per step, as one of
// several concurrent writers.
type storeWriter struct {
	seed      uint64
	size      int
	left      int // entries still to write
	e         rest.Entry
	data      []byte
	committed []string
	full      int
}

// step does one thing: Create, Write a 64 KiB piece, or Commit. It reports
// whether the writer has nothing left to do. A full store (ErrFull) aborts
// the entry and moves on to the next; any other error fails the test.
func (w *storeWriter) step(t *testing.T, s rest.Store) bool {
	switch {
	case w.e == nil && w.left == 0:
		return true
	case w.e == nil:
		e, err := s.Create(context.Background(), "scope")
		w.left--
		if errors.Is(err, rest.ErrFull) { // a Dir reserves its header
			w.full++
			return false
		}
		if err != nil {
			t.Errorf("Create: %v", err)
			w.left = 0
			return true
		}
		w.e = e
		w.seed++
		w.data = storeBytes(w.seed, w.size)
	case len(w.data) > 0:
		k := min(64<<10, len(w.data))
		if _, err := w.e.Write(w.data[:k]); err != nil {
			if !errors.Is(err, rest.ErrFull) {
				t.Errorf("Write: %v; want nil or ErrFull", err)
			}
			w.full++
			_ = w.e.Abort()
			w.e = nil
			return false
		}
		w.data = w.data[k:]
	default:
		if _, err := w.e.Commit(); err != nil {
			t.Errorf("Commit: %v", err)
		} else {
			w.committed = append(w.committed, w.e.Ref())
		}
		w.e = nil
	}
	return false
}

func TestStoreQuotaConcurrentWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("writes about 100 MB")
	}
	const (
		quota   = 8 << 20
		size    = 2_000_000 // four fit the quota with their headers, five do not
		writers = 8
		each    = 3
	)
	modes := []struct {
		name string
		// stepped: every writer takes one step per round, concurrently, and
		// the files on disk are summed between rounds, when no file moves
		// (a sum taken while files move can count a file's bytes twice).
		// Otherwise the writers run free and only the store's own
		// accounting is sampled, by a goroutine of its own.
		stepped bool
	}{{"free", false}, {"stepped", true}}
	for _, k := range storeKinds {
		for _, m := range modes {
			t.Run(k.name+"/"+m.name, func(t *testing.T) {
				s := k.open(t, rest.Config{MaxBytes: quota})
				var (
					done    = make(chan struct{})
					sampled = make(chan struct{})
					maxSeen atomic.Int64
					samples atomic.Int64
					maxDisk int64
					rounds  int
				)
				go func() { // samples the accounting while the writers run
					defer close(sampled)
					for {
						u := s.Usage()
						maxSeen.Store(max(maxSeen.Load(), u.Bytes+u.Writing))
						samples.Add(1)
						select {
						case <-done:
							return
						default:
							runtime.Gosched()
						}
					}
				}()
				ws := make([]*storeWriter, writers)
				for i := range ws {
					ws[i] = &storeWriter{seed: uint64(1000 * i), size: size, left: each}
				}
				if m.stepped {
					for busy := true; busy; rounds++ {
						var wg sync.WaitGroup
						var active atomic.Int64
						for _, w := range ws {
							wg.Go(func() {
								if !w.step(t, s) {
									active.Add(1)
								}
							})
						}
						wg.Wait()
						busy = active.Load() > 0
						if k.disk != nil {
							maxDisk = max(maxDisk, k.disk(t, s))
						}
					}
				} else {
					var wg sync.WaitGroup
					for _, w := range ws {
						wg.Go(func() {
							for !w.step(t, s) {
							}
						})
					}
					wg.Wait()
				}
				close(done)
				<-sampled
				var committed []string
				full := 0
				for _, w := range ws {
					committed = append(committed, w.committed...)
					full += w.full
				}
				t.Logf("%d committed, %d full, %d samples, most accounted %d, %d rounds, most on disk %d",
					len(committed), full, samples.Load(), maxSeen.Load(), rounds, maxDisk)
				if got := maxSeen.Load(); got > quota {
					t.Errorf("accounted bytes reached %d; quota %d", got, quota)
				}
				if maxDisk > quota {
					t.Errorf("files on disk reached %d bytes between rounds; quota %d", maxDisk, quota)
				}
				u := s.Usage()
				if u.Writing != 0 || u.Bytes > quota {
					t.Errorf("Usage() after the writers = %+v", u)
				}
				if k.disk != nil {
					if got := k.disk(t, s); got != u.Bytes {
						t.Errorf("files on disk hold %d bytes; the index %d", got, u.Bytes)
					}
				}

				// Six more, one after the other: the four newest are kept,
				// everything older is gone.
				var refs []string
				var datas [][]byte
				for i := range 6 {
					data := storeBytes(uint64(100_000+i), size)
					refs = append(refs, storePut(t, s, "scope", data, 64<<10).Ref)
					datas = append(datas, data)
					if k.disk != nil {
						if got := k.disk(t, s); got > quota {
							t.Errorf("files on disk hold %d bytes after entry %d; quota %d", got, i, quota)
						}
					}
				}
				var got []bool
				for _, ref := range refs {
					got = append(got, storeReadable(t, s, "scope", ref))
				}
				if diff := cmp.Diff([]bool{false, false, true, true, true, true}, got); diff != "" {
					t.Errorf("readable, oldest first, mismatch (-want +got):\n%s", diff)
				}
				for i := 2; i < 6; i++ {
					b, _, err := storeRead(s, "scope", refs[i])
					if err != nil || !bytes.Equal(b, datas[i]) {
						t.Errorf("entry %d: %d bytes, %v; want the %d written", i, len(b), err, size)
					}
				}
				for _, ref := range committed {
					if storeReadable(t, s, "scope", ref) {
						t.Errorf("entry %s of the concurrent writers outlived four newer ones", ref)
					}
				}
			})
		}
	}
}
