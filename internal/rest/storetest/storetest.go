// Package storetest checks that a [rest.Store] keeps the promises of the
// Store, Entry and Reader interfaces, in the spirit of testing/fstest: a
// store's tests call [Run] with a func that opens an empty store, and the
// suite runs every promise against it as subtests.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, cfg rest.Config) rest.Store {
//			return rest.NewMemory(cfg)
//		}, storetest.Traits{Clock: true, Quota: true})
//	}
//
// What every store promises is checked for every store: scopes and refs,
// [rest.ErrUnknown] for every ref that reads nothing (unknown, malformed,
// foreign, expired, evicted, aborted, not yet committed), atomic Commit,
// the entry's life cycle (Abort after Commit), MaxEntryBytes keeping the
// first bytes and counting Original, the time to live renewed by Open,
// done contexts, io.ReaderAt, concurrent use. What a store may leave to
// another (a quota that Redis keeps itself, a clock that Redis keeps) is
// said by [Traits].
package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
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

// Opener opens an empty store bounded by cfg for the test t, fails t when
// it cannot, and releases the store when t ends (t.Cleanup). Every call is
// a store of its own: what one holds, another does not see.
type Opener func(t *testing.T, cfg rest.Config) rest.Store

// Traits say which optional parts of the contract a store keeps itself.
type Traits struct {
	// Clock: the store takes its time from Config.Now, and the suite runs
	// time on a fake clock. Otherwise it runs on the real clock, with a
	// time to live of a second.
	Clock bool
	// Quota: the store keeps Config.MaxBytes: its entries, committed and
	// being written, never hold more; the oldest by last use are evicted
	// to make room; a Write that no eviction can make room for (entries
	// being written hold the rest) fails with [rest.ErrFull]. Otherwise
	// MaxBytes only bounds MaxEntryBytes.
	Quota bool
	// Overhead is what the store counts of each entry past its bytes (a
	// file's header): MaxEntryBytes is clamped to MaxBytes less it.
	Overhead int64
	// Sizes are lengths of entries that cross the store's own boundaries
	// (a buffer, a round trip): the suite writes and reads entries of each
	// beside its own.
	Sizes []int
	// Held, when set, returns the number of committed entries the store
	// holds and the bytes it holds, entries being written included, from
	// where it keeps them and without using the store (a directory's
	// files). When nil, a store with a Usage method ([rest.Memory],
	// [rest.Dir]) is asked; a store with neither skips the checks that
	// need it.
	Held func(t *testing.T, s rest.Store) (entries int, bytes int64)
}

// usager is a store that says what it holds.
type usager interface{ Usage() rest.Usage }

// suite is one run of the suite.
type suite struct {
	open Opener
	tr   Traits
}

// held returns what s holds, and false when the suite cannot tell.
func (s suite) held(t *testing.T, st rest.Store) (int, int64, bool) {
	t.Helper()
	if s.tr.Held != nil {
		n, b := s.tr.Held(t, st)
		return n, b, true
	}
	if u, ok := st.(usager); ok {
		us := u.Usage()
		return us.Entries, us.Bytes + us.Writing, true
	}
	return 0, 0, false
}

// Run runs the conformance suite against the stores open opens, as
// subtests of t.
func Run(t *testing.T, open Opener, tr Traits) {
	s := suite{open: open, tr: tr}
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"Refs", s.testRefs},
		{"ReadAt", s.testReadAt},
		{"ReaderClose", s.testReaderClose},
		{"UnknownRefs", s.testUnknownRefs},
		{"ContextDone", s.testContextDone},
		{"UncommittedInvisible", s.testUncommittedInvisible},
		{"CommitAtomic", s.testCommitAtomic},
		{"Lifecycle", s.testLifecycle},
		{"Abort", s.testAbort},
		{"MaxEntryBytes", s.testMaxEntryBytes},
		{"TTL", s.testTTL},
		{"ExpiredRemoved", s.testExpiredRemoved},
		{"Quota", s.testQuota},
		{"Concurrent", s.testConcurrent},
	} {
		t.Run(c.name, c.run)
	}
}

// sizes returns the lengths of entries every size-driven test writes:
// empty, one byte, several 64 KiB pieces, and the store's own.
func (s suite) sizes() []int {
	return append([]int{0, 1, 200_003}, s.tr.Sizes...)
}

// Clock is a clock a test moves by hand, for Config.Now.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at a fixed time.
func NewClock() *Clock { return &Clock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Bytes returns n pseudo-random bytes, the same for the same seed.
func Bytes(seed uint64, n int) []byte {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(s).Read(b) // never fails
	return b
}

// Write writes data to w in pieces of the sizes given (cycled; all of it
// at once when none), each of which must be written whole.
func Write(w io.Writer, data []byte, pieces ...int) error {
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

// Put writes data to a new entry of scope in pieces (see [Write]) and
// commits it, failing tb on an error.
func Put(tb testing.TB, s rest.Store, scope string, data []byte, pieces ...int) rest.Info {
	tb.Helper()
	e, err := s.Create(context.Background(), scope)
	if err != nil {
		tb.Fatalf("Create: %v", err)
	}
	if err := Write(e, data, pieces...); err != nil {
		_ = e.Abort()
		tb.Fatalf("Write: %v", err)
	}
	info, err := e.Commit()
	if err != nil {
		tb.Fatalf("Commit: %v", err)
	}
	return info
}

// ReadAll opens ref of scope and reads all it holds; the error of Open is
// returned as it is.
func ReadAll(s rest.Store, scope, ref string) ([]byte, rest.Info, error) {
	r, err := s.Open(context.Background(), scope, ref)
	if err != nil {
		return nil, rest.Info{}, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.NewSectionReader(r, 0, r.Info().Size))
	return b, r.Info(), err
}

// Readable reports whether ref can be opened in scope (which renews it).
// An error that is not [rest.ErrUnknown], or one whose text is not
// exactly ErrUnknown's (a ref tells nothing outside its scope), fails tb.
func Readable(tb testing.TB, s rest.Store, scope, ref string) bool {
	tb.Helper()
	r, err := s.Open(context.Background(), scope, ref)
	if errors.Is(err, rest.ErrUnknown) {
		if err.Error() != rest.ErrUnknown.Error() {
			tb.Errorf("Open(%s) = %q; want the text of ErrUnknown alone", ref, err)
		}
		return false
	}
	if err != nil {
		tb.Fatalf("Open(%s): %v", ref, err)
	}
	_ = r.Close()
	return true
}

// logger returns a debug logger into a buffer, for a check that no line
// names a scope or a ref.
func logger() (hclog.Logger, *syncBuffer) {
	buf := new(syncBuffer)
	return hclog.New(&hclog.LoggerOptions{Output: buf, JSONFormat: true, DisableTime: true, Level: hclog.Trace}), buf
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// checkLog fails t when the log names one of the secrets.
func checkLog(t *testing.T, log string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(log, s) {
			t.Errorf("the log names %q:\n%s", s, log)
		}
	}
}

// Create returns an entry with a fresh, valid ref, the one its Commit
// reports.
func (s suite) testRefs(t *testing.T) {
	st := s.open(t, rest.Config{})
	seen := map[string]bool{}
	for range 64 {
		e, err := st.Create(context.Background(), "scope")
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		ref := e.Ref()
		if !rest.ValidRef(ref) {
			t.Errorf("Ref() = %q: not a valid ref", ref)
		}
		if seen[ref] {
			t.Errorf("Ref() = %q twice", ref)
		}
		seen[ref] = true
		if e.Ref() != ref {
			t.Errorf("Ref() changed from %q to %q", ref, e.Ref())
		}
		_ = e.Abort()
	}
	e, err := st.Create(context.Background(), "scope")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	ref := e.Ref()
	if _, err := e.Write([]byte("x")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	info, err := e.Commit()
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if diff := cmp.Diff(rest.Info{Ref: ref, Size: 1, Original: 1}, info); diff != "" {
		t.Errorf("Commit() info mismatch (-want +got):\n%s", diff)
	}
}

// readAtResult is what one ReadAt did.
type readAtResult struct {
	N    int
	Data [sha256.Size]byte // of the bytes read: cmp is slow on megabytes
	EOF  bool
	Err  bool // an error other than io.EOF
}

// Reader follows io.ReaderAt: fewer bytes than asked come with an error,
// io.EOF at the end of the entry; a negative offset is an error; the
// entry reads back byte for byte, page after page.
func (s suite) testReadAt(t *testing.T) {
	st := s.open(t, rest.Config{})
	for _, size := range s.sizes() {
		t.Run(fmt.Sprint(size, " bytes"), func(t *testing.T) {
			data := Bytes(uint64(size), size)
			// Pieces of odd sizes: single bytes, small writes that a
			// buffer gathers, long ones that go straight through.
			info := Put(t, st, "scope", data, 1, 7, 4096, 70_000, 3, 1_500_000)
			if diff := cmp.Diff(rest.Info{Ref: info.Ref, Size: int64(size), Original: int64(size)}, info); diff != "" {
				t.Errorf("Commit() info mismatch (-want +got):\n%s", diff)
			}
			r, err := st.Open(context.Background(), "scope", info.Ref)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer r.Close()
			if diff := cmp.Diff(info, r.Info()); diff != "" {
				t.Errorf("Reader.Info() mismatch (-want +got):\n%s", diff)
			}
			n := int64(size)
			cases := []struct {
				name string
				off  int64
				n    int
			}{
				{"start", 0, 100},
				{"empty at start", 0, 0},
				{"one byte", 1, 1},
				{"across a 64 KiB boundary", 65536 - 10, 20},
				{"a 16 KiB page", 4095, 16384},
				{"a 16 KiB page at the end", n - 16384, 16384},
				{"whole", 0, size},
				{"last byte", n - 1, 1},
				{"past the end from inside", n - 5, 16},
				{"more than the whole", 0, size + 1},
				{"at the end", n, 16},
				{"empty at the end", n, 0},
				{"past the end", n + 100, 16},
				{"negative offset", -1, 16},
			}
			for _, c := range cases {
				if c.off < 0 && c.name != "negative offset" {
					continue // an entry too short for the case
				}
				t.Run(c.name, func(t *testing.T) {
					var want readAtResult
					switch {
					case c.off < 0:
						want = readAtResult{Err: true, Data: sha256.Sum256(nil)}
					default:
						lo := min(c.off, n)
						hi := min(c.off+int64(c.n), n)
						want = readAtResult{N: int(hi - lo), Data: sha256.Sum256(data[lo:hi]), EOF: hi-lo < int64(c.n)}
					}
					p := make([]byte, c.n)
					got, err := r.ReadAt(p, c.off)
					res := readAtResult{N: got, Data: sha256.Sum256(p[:max(got, 0)]), EOF: err == io.EOF, Err: err != nil && err != io.EOF}
					if diff := cmp.Diff(want, res); diff != "" {
						t.Errorf("ReadAt(%d bytes, %d) mismatch (-want +got):\n%s (error %v)", c.n, c.off, diff, err)
					}
				})
			}
			// Page after page, as toolcap_read reads: byte for byte.
			var all []byte
			p := make([]byte, 16384)
			for off := int64(0); ; off += int64(len(p)) {
				k, err := r.ReadAt(p, off)
				all = append(all, p[:k]...)
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

// A Reader reads nothing after its Close: an error other than io.EOF.
func (s suite) testReaderClose(t *testing.T) {
	st := s.open(t, rest.Config{})
	info := Put(t, st, "scope", []byte("hello"))
	r, err := st.Open(context.Background(), "scope", info.Ref)
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

// Every ref that names no readable entry of the scope asked is
// ErrUnknown, with ErrUnknown's text alone: a ref tells nothing outside
// its scope.
func (s suite) testUnknownRefs(t *testing.T) {
	st := s.open(t, rest.Config{})
	info := Put(t, st, "session-a", []byte("kept"))
	aborted, err := st.Create(context.Background(), "session-a")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	_, _ = aborted.Write([]byte("dropped"))
	_ = aborted.Abort()
	pending, err := st.Create(context.Background(), "session-a")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { _ = pending.Abort() })
	_, _ = pending.Write([]byte("not yet"))
	cases := []struct {
		name, scope, ref string
	}{
		{"foreign scope", "session-b", info.Ref},
		{"empty scope", "", info.Ref},
		{"scope with the ref glued on", "session-a" + info.Ref, info.Ref},
		{"scope glued to the ref", "session-", "a" + info.Ref[:rest.RefLen-1]},
		{"never made", "session-a", rest.NewRef()},
		{"aborted", "session-a", aborted.Ref()},
		{"not committed", "session-a", pending.Ref()},
		{"empty", "session-a", ""},
		{"too short", "session-a", info.Ref[1:]},
		{"too long", "session-a", info.Ref + "a"},
		{"upper case", "session-a", strings.ToUpper(info.Ref)},
		{"path", "session-a", "../../../../../../etc/passwd"},
		{"path of ref length", "session-a", "../" + info.Ref[3:]},
		{"a key pattern", "session-a", "*"},
		{"a NUL", "session-a", info.Ref[:rest.RefLen-1] + "\x00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := st.Open(context.Background(), c.scope, c.ref)
			if r != nil {
				_ = r.Close()
			}
			if !errors.Is(err, rest.ErrUnknown) {
				t.Fatalf("Open = %v; want ErrUnknown", err)
			}
			if diff := cmp.Diff(rest.ErrUnknown.Error(), err.Error()); diff != "" {
				t.Errorf("Open error text mismatch (-want +got):\n%s", diff)
			}
		})
	}
	got, _, err := ReadAll(st, "session-a", info.Ref)
	if err != nil || string(got) != "kept" {
		t.Errorf("own scope after the others: %q, %v; want %q", got, err, "kept")
	}
}

// A done context fails Create and Open with its error, even for a
// malformed ref; the store answers the next call as before.
func (s suite) testContextDone(t *testing.T) {
	st := s.open(t, rest.Config{})
	info := Put(t, st, "scope", []byte("x"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if e, err := st.Create(ctx, "scope"); !errors.Is(err, context.Canceled) {
		if e != nil {
			_ = e.Abort()
		}
		t.Errorf("Create with a done context = %v; want context.Canceled", err)
	}
	for _, ref := range []string{info.Ref, "malformed"} {
		if r, err := st.Open(ctx, "scope", ref); !errors.Is(err, context.Canceled) {
			if r != nil {
				_ = r.Close()
			}
			t.Errorf("Open(%q) with a done context = %v; want context.Canceled", ref, err)
		}
	}
	if !Readable(t, st, "scope", info.Ref) {
		t.Errorf("entry not readable after a call with a done context")
	}
}

// Nothing of an entry is readable until its Commit.
func (s suite) testUncommittedInvisible(t *testing.T) {
	st := s.open(t, rest.Config{})
	for _, size := range s.sizes() {
		t.Run(fmt.Sprint(size, " bytes"), func(t *testing.T) {
			e, err := st.Create(context.Background(), "scope")
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if err := Write(e, Bytes(7, size), 256<<10); err != nil {
				t.Fatalf("Write: %v", err)
			}
			got := []bool{Readable(t, st, "scope", e.Ref())}
			if _, err := e.Commit(); err != nil {
				t.Fatalf("Commit: %v", err)
			}
			got = append(got, Readable(t, st, "scope", e.Ref()))
			if diff := cmp.Diff([]bool{false, true}, got); diff != "" {
				t.Errorf("readable before, after Commit mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A reader sees all of an entry or nothing: readers that open its ref
// while it is written and committed find it unknown, or whole.
func (s suite) testCommitAtomic(t *testing.T) {
	st := s.open(t, rest.Config{})
	size := max(300_000, slicesMax(s.tr.Sizes))
	for round := range 3 {
		data := Bytes(uint64(100+round), size)
		e, err := st.Create(context.Background(), "scope")
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		var (
			done        atomic.Bool
			seen, whole atomic.Int64
			wg          sync.WaitGroup
		)
		for range 4 {
			wg.Go(func() {
				for stop := false; !stop; {
					stop = done.Load() // one more look after the Commit
					r, err := st.Open(context.Background(), "scope", e.Ref())
					if errors.Is(err, rest.ErrUnknown) {
						if stop {
							t.Errorf("not readable after its Commit")
						}
						continue
					}
					if err != nil {
						t.Errorf("Open: %v", err)
						return
					}
					seen.Add(1)
					b, err := io.ReadAll(io.NewSectionReader(r, 0, r.Info().Size))
					_ = r.Close()
					if err != nil || !bytes.Equal(b, data) || r.Info() != (rest.Info{Ref: e.Ref(), Size: int64(size), Original: int64(size)}) {
						t.Errorf("a reader saw %d bytes (%+v, %v); want all %d or nothing", len(b), r.Info(), err, size)
						return
					}
					whole.Add(1)
				}
			})
		}
		if err := Write(e, data, 4096, 65536, 1); err != nil {
			t.Fatalf("Write: %v", err)
		}
		if _, err := e.Commit(); err != nil {
			t.Fatalf("Commit: %v", err)
		}
		done.Store(true)
		wg.Wait()
		if seen.Load() != whole.Load() || whole.Load() == 0 {
			t.Errorf("round %d: %d opens, %d whole", round, seen.Load(), whole.Load())
		}
	}
}

func slicesMax(s []int) int {
	m := 0
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

// After Commit, Write and Commit fail, Abort is a no-op (more than once)
// and the entry stays readable.
func (s suite) testLifecycle(t *testing.T) {
	st := s.open(t, rest.Config{})
	for _, size := range s.sizes() {
		t.Run(fmt.Sprint(size, " bytes"), func(t *testing.T) {
			data := Bytes(8, size)
			e, err := st.Create(context.Background(), "scope")
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if err := Write(e, data); err != nil {
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
			b, _, err := ReadAll(st, "scope", e.Ref())
			if err != nil || !bytes.Equal(b, data) {
				t.Errorf("entry after Abort-after-Commit: %d bytes, %v; want the %d written", len(b), err, size)
			}
		})
	}
}

// Abort discards an entry: nothing is readable, Write and Commit fail, a
// second Abort is a no-op, and what it held is given back.
func (s suite) testAbort(t *testing.T) {
	st := s.open(t, rest.Config{})
	for _, size := range s.sizes() {
		t.Run(fmt.Sprint(size, " bytes"), func(t *testing.T) {
			n0, b0, canTell := s.held(t, st)
			e, err := st.Create(context.Background(), "scope")
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if err := Write(e, Bytes(9, size), 100_000); err != nil {
				t.Fatalf("Write: %v", err)
			}
			var steps []string
			if err := e.Abort(); err != nil {
				steps = append(steps, "Abort fails")
			}
			if _, err := e.Write([]byte("x")); err != nil {
				steps = append(steps, "Write fails")
			}
			if _, err := e.Commit(); err != nil {
				steps = append(steps, "Commit fails")
			}
			if e.Abort() != nil {
				steps = append(steps, "second Abort fails")
			}
			if Readable(t, st, "scope", e.Ref()) {
				steps = append(steps, "readable")
			}
			if diff := cmp.Diff([]string{"Write fails", "Commit fails"}, steps); diff != "" {
				t.Errorf("after Abort mismatch (-want +got):\n%s", diff)
			}
			if n, b, _ := s.held(t, st); canTell && (n != n0 || b != b0) {
				t.Errorf("held %d entries, %d bytes after the Abort; %d, %d before the Create", n, b, n0, b0)
			}
		})
	}
}

// Write keeps the first MaxEntryBytes and counts the rest (Original), and
// returns len(p), nil past the bound; MaxEntryBytes is clamped to
// MaxBytes (less the store's overhead); a store that tells its bound
// (rest.EntryBound) tells this one.
func (s suite) testMaxEntryBytes(t *testing.T) {
	quota := 1000 - s.tr.Overhead
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
		{"one byte", rest.Config{MaxEntryBytes: 1}, []int{1, 3}, 10, 1},
		{"bound clamped to the quota", rest.Config{MaxBytes: 1000, MaxEntryBytes: 5000}, []int{300}, 3000, quota},
	}
	for _, size := range s.tr.Sizes {
		cases = append(cases, struct {
			name    string
			cfg     rest.Config
			pieces  []int
			written int
			want    int64
		}{fmt.Sprintf("past a bound of %d bytes", size), rest.Config{MaxEntryBytes: int64(size)}, []int{300_000}, size + size/2 + 7, int64(size)})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := s.open(t, c.cfg)
			if b, ok := st.(rest.EntryBound); ok && b.MaxEntryBytes() != c.want {
				t.Errorf("MaxEntryBytes() = %d; want %d", b.MaxEntryBytes(), c.want)
			}
			data := Bytes(2, c.written)
			e, err := st.Create(context.Background(), "scope")
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			for i, rest := 0, data; len(rest) > 0; i++ {
				k := min(c.pieces[i%len(c.pieces)], len(rest))
				if n, err := e.Write(rest[:k]); n != k || err != nil {
					t.Fatalf("Write(%d bytes) = %d, %v; want %d, nil", k, n, err, k)
				}
				rest = rest[k:]
			}
			if n, err := e.Write(nil); n != 0 || err != nil {
				t.Errorf("Write(nil) = %d, %v; want 0, nil", n, err)
			}
			info, err := e.Commit()
			if err != nil {
				t.Fatalf("Commit: %v", err)
			}
			if diff := cmp.Diff(rest.Info{Ref: info.Ref, Size: c.want, Original: int64(c.written)}, info); diff != "" {
				t.Errorf("Commit() info mismatch (-want +got):\n%s", diff)
			}
			got, rinfo, err := ReadAll(st, "scope", info.Ref)
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

// An entry lives TTL from its Commit or its last Open, and not a moment
// longer; an expired ref is ErrUnknown.
func (s suite) testTTL(t *testing.T) {
	if !s.tr.Clock {
		s.testTTLRealTime(t)
		return
	}
	t.Run("renewed by Open", func(t *testing.T) {
		const ttl = time.Hour
		clock := NewClock()
		st := s.open(t, rest.Config{TTL: ttl, Now: clock.Now})
		a := Put(t, st, "scope", []byte("read often"))
		b := Put(t, st, "scope", Bytes(10, max(10, slicesMax(s.tr.Sizes))))
		type step struct {
			At      time.Duration // since the two commits
			A       bool          // A could be opened (and so renewed)
			Entries int           // committed entries held after the Open; -1: cannot tell
		}
		entries := func() int {
			n, _, ok := s.held(t, st)
			if !ok {
				return -1
			}
			return n
		}
		var got []step
		var at time.Duration
		for _, d := range []time.Duration{ttl - time.Second, ttl - time.Second, ttl - time.Second, ttl} {
			clock.Advance(d)
			at += d
			got = append(got, step{At: at, A: Readable(t, st, "scope", a.Ref), Entries: entries()})
		}
		bVisible := Readable(t, st, "scope", b.Ref)
		want := []step{
			// B expires at 1h, A lives on while it is read within its TTL.
			{At: ttl - time.Second, A: true, Entries: 2},
			{At: 2*ttl - 2*time.Second, A: true, Entries: 1},
			{At: 3*ttl - 3*time.Second, A: true, Entries: 1},
			{At: 4*ttl - 3*time.Second, A: false, Entries: 0},
		}
		if entries() < 0 {
			for i := range want {
				want[i].Entries = -1
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("TTL steps mismatch (-want +got):\n%s", diff)
		}
		if bVisible {
			t.Errorf("B readable past its TTL")
		}
		if _, b, ok := s.held(t, st); ok && b != 0 {
			t.Errorf("%d bytes held after every entry expired", b)
		}
	})
	t.Run("exact boundary", func(t *testing.T) {
		clock := NewClock()
		st := s.open(t, rest.Config{TTL: time.Minute, Now: clock.Now})
		a := Put(t, st, "scope", []byte("a"))
		b := Put(t, st, "scope", []byte("b"))
		clock.Advance(time.Minute - time.Nanosecond)
		gotA := Readable(t, st, "scope", a.Ref)
		clock.Advance(time.Nanosecond)
		gotB := Readable(t, st, "scope", b.Ref)
		if diff := cmp.Diff([]bool{true, false}, []bool{gotA, gotB}); diff != "" {
			t.Errorf("readable just before, at TTL mismatch (-want +got):\n%s", diff)
		}
	})
}

// testTTLRealTime is testTTL on the real clock, for a store that keeps
// its own time: a TTL of a second, looked at with 200 ms to spare.
func (s suite) testTTLRealTime(t *testing.T) {
	const ttl = time.Second
	st := s.open(t, rest.Config{TTL: ttl})
	a := Put(t, st, "scope", []byte("read often"))
	b := Put(t, st, "scope", Bytes(10, max(10, slicesMax(s.tr.Sizes))))
	type step struct {
		At   string
		A, B bool
	}
	var got []step
	time.Sleep(600 * time.Millisecond)
	got = append(got, step{"0.6 s: both, A renewed", Readable(t, st, "scope", a.Ref), true})
	time.Sleep(600 * time.Millisecond)
	got = append(got, step{"1.2 s: B expired", Readable(t, st, "scope", a.Ref), Readable(t, st, "scope", b.Ref)})
	time.Sleep(1200 * time.Millisecond)
	got = append(got, step{"2.4 s: A expired", Readable(t, st, "scope", a.Ref), false})
	want := []step{
		{"0.6 s: both, A renewed", true, true},
		{"1.2 s: B expired", true, false},
		{"2.4 s: A expired", false, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TTL steps mismatch (-want +got):\n%s", diff)
	}
}

// An expired entry is removed when it expires, not when a use meets it:
// gone after any one more use, gone without any use within a short bound
// of its expiry, and gone after the store's Close (for a store whose
// holdings the suite can tell).
func (s suite) testExpiredRemoved(t *testing.T) {
	if !s.tr.Clock {
		t.Skip("the store keeps its own time (Traits.Clock)")
	}
	if _, _, ok := s.held(t, s.open(t, rest.Config{})); !ok {
		t.Skip("the suite cannot tell what the store holds (Traits.Held)")
	}
	const ttl = 3 * time.Second
	ctx := context.Background()
	uses := []struct {
		name string
		// use uses the store once; pending is an entry written before A
		// expired, not committed; live is B's ref.
		use       func(t *testing.T, st rest.Store, pending rest.Entry, live string)
		committed bool // the use committed pending
	}{
		{"Create", func(t *testing.T, st rest.Store, _ rest.Entry, _ string) {
			e, err := st.Create(ctx, "scope")
			if err != nil {
				t.Fatal(err)
			}
			_ = e.Abort()
		}, false},
		{"Commit", func(t *testing.T, _ rest.Store, pending rest.Entry, _ string) {
			if _, err := pending.Commit(); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"Open of another entry", func(t *testing.T, st rest.Store, _ rest.Entry, live string) {
			if !Readable(t, st, "scope", live) {
				t.Fatal("the live entry is not readable")
			}
		}, false},
		{"Open of an unknown ref", func(t *testing.T, st rest.Store, _ rest.Entry, _ string) {
			if Readable(t, st, "scope", rest.NewRef()) {
				t.Fatal("an unknown ref is readable")
			}
		}, false},
	}
	for _, u := range uses {
		t.Run("after one "+u.name, func(t *testing.T) {
			clock := NewClock()
			st := s.open(t, rest.Config{TTL: ttl, Now: clock.Now})
			Put(t, st, "scope", Bytes(1, 5000))
			clock.Advance(2 * time.Second)
			b := Put(t, st, "scope", Bytes(2, 5000))
			pending, err := st.Create(ctx, "scope")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = pending.Abort() })
			if err := Write(pending, Bytes(3, 5000)); err != nil {
				t.Fatal(err)
			}
			clock.Advance(ttl - 2*time.Second + 500*time.Millisecond) // A expired 0.5 s ago, B lives
			before, _, _ := s.held(t, st)
			u.use(t, st, pending, b.Ref)
			after, _, _ := s.held(t, st)
			want := []int{2, 1}
			if u.committed {
				want[1] = 2
			}
			if diff := cmp.Diff(want, []int{before, after}); diff != "" {
				t.Errorf("entries held before and after the %s (-want +got):\n%s", u.name, diff)
			}
		})
	}
	t.Run("without use", func(t *testing.T) {
		const ttl = 50 * time.Millisecond
		st := s.open(t, rest.Config{TTL: ttl})
		start := time.Now() // no later than the entry's last use
		Put(t, st, "scope", Bytes(4, 1000))
		if n, _, _ := s.held(t, st); n != 1 {
			t.Fatalf("held %d entries after the commit; want 1", n)
		}
		for deadline := start.Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if n, _, _ := s.held(t, st); n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("still held %v after the commit, TTL %v", time.Since(start), ttl)
			}
		}
		if gone := time.Since(start); gone < ttl {
			t.Errorf("removed %v after the commit: before its TTL of %v", gone, ttl)
		} else {
			t.Logf("removed at most %v after its expiry", gone-ttl)
		}
	})
	t.Run("after Close", func(t *testing.T) {
		clock := NewClock()
		st := s.open(t, rest.Config{TTL: time.Minute, Now: clock.Now})
		c := st
		Put(t, st, "scope", Bytes(5, 100))
		clock.Advance(30 * time.Second)
		Put(t, st, "scope", Bytes(6, 100))
		clock.Advance(45 * time.Second)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if n, _, _ := s.held(t, st); n != 1 {
			t.Errorf("held %d entries after Close; want the 1 that lives on", n)
		}
	})
}

// testQuota checks a store that keeps its quota (Traits.Quota).
func (s suite) testQuota(t *testing.T) {
	if !s.tr.Quota {
		t.Skip("the store leaves its quota to another (Traits.Quota)")
	}
	t.Run("evicts the oldest by last use", s.testEvictionOrder)
	t.Run("a hopeless Write is ErrFull", s.testFull)
	t.Run("concurrent writers", s.testQuotaConcurrentWriters)
}

func (s suite) testEvictionOrder(t *testing.T) {
	const scope = "mcp-session-7f3a9c41-secret"
	clock := NewClock()
	log, buf := logger()
	// Room for three entries of 1,000 bytes and their overhead, not four.
	st := s.open(t, rest.Config{MaxBytes: 3*(1000+s.tr.Overhead) + 500, Now: clock.Now, Logger: log})
	refs := map[string]string{}
	put := func(name string) {
		clock.Advance(time.Second)
		refs[name] = Put(t, st, scope, Bytes(3, 1000)).Ref
	}
	// readable opens the named entries in the order given, which leaves
	// that last-use order.
	readable := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, name := range names {
			clock.Advance(time.Millisecond)
			m[name] = Readable(t, st, scope, refs[name])
		}
		return m
	}
	put("a")
	put("b")
	put("c")
	clock.Advance(time.Second)
	if !Readable(t, st, scope, refs["a"]) { // a becomes the youngest
		t.Fatal("a not readable before any eviction")
	}
	put("d") // evicts b, the oldest by last use
	if diff := cmp.Diff(map[string]bool{"a": true, "b": false, "c": true, "d": true}, readable("b", "a", "c", "d")); diff != "" {
		t.Errorf("after d mismatch (-want +got):\n%s", diff)
	}
	put("e") // evicts a, now the oldest by last use
	if diff := cmp.Diff(map[string]bool{"a": false, "b": false, "c": true, "d": true, "e": true}, readable("a", "b", "c", "d", "e")); diff != "" {
		t.Errorf("after e mismatch (-want +got):\n%s", diff)
	}
	if n, b, ok := s.held(t, st); ok && (n != 3 || b != 3*(1000+s.tr.Overhead)) {
		t.Errorf("held %d entries, %d bytes; want 3 of 1000 bytes and their overhead", n, b)
	}
	secrets := []string{scope, "secret"}
	for _, ref := range refs {
		secrets = append(secrets, ref)
	}
	checkLog(t, buf.String(), secrets...)
}

// Entries being written count: a Write that cannot fit even after every
// committed entry went fails with ErrFull and evicts nothing; an Abort
// gives the room back.
func (s suite) testFull(t *testing.T) {
	const quota = 10_000
	st := s.open(t, rest.Config{MaxBytes: quota})
	ctx := context.Background()
	kept := Put(t, st, "scope", Bytes(7, 1000))
	a, err := st.Create(ctx, "scope")
	if err != nil {
		t.Fatalf("Create a: %v", err)
	}
	if _, err := a.Write(Bytes(8, 8000)); err != nil {
		t.Fatalf("Write 8000 bytes to a: %v", err)
	}
	if _, b, ok := s.held(t, st); ok && b < 9000 {
		t.Errorf("held %d bytes while a holds 8,000 beside 1,000 committed", b)
	}
	b, err := st.Create(ctx, "scope")
	if err != nil {
		t.Fatalf("Create b: %v", err)
	}
	// b cannot have 5,000 bytes while a holds 8,000: no eviction can
	// help, so none happens.
	if _, err := b.Write(Bytes(9, 5000)); !errors.Is(err, rest.ErrFull) {
		t.Fatalf("Write 5000 bytes to b = %v; want ErrFull", err)
	}
	if !Readable(t, st, "scope", kept.Ref) {
		t.Error("a hopeless Write evicted a committed entry")
	}
	if _, err := b.Write([]byte("x")); err == nil {
		t.Error("Write after a failed Write succeeded")
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
	if n, held, ok := s.held(t, st); ok && (n != 1 || held != 1000+s.tr.Overhead) {
		t.Errorf("held %d entries, %d bytes after the Aborts; want the kept one alone", n, held)
	}
	// The room is back: 8,000 more bytes fit beside the kept entry.
	if c := Put(t, st, "scope", Bytes(10, 8000), 1024); c.Size != 8000 {
		t.Errorf("entry after Abort keeps %d bytes; want 8000", c.Size)
	}
	if !Readable(t, st, "scope", kept.Ref) {
		t.Error("the kept entry was evicted for room the quota had")
	}
}

// writer writes entries of size bytes, one step at a time, as one of
// several concurrent writers.
type writer struct {
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
func (w *writer) step(t *testing.T, s rest.Store) bool {
	switch {
	case w.e == nil && w.left == 0:
		return true
	case w.e == nil:
		e, err := s.Create(context.Background(), "scope")
		w.left--
		if errors.Is(err, rest.ErrFull) { // a store may reserve its overhead
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
		w.data = Bytes(w.seed, w.size)
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

// Writers at once never take the store past its quota, counted by the
// store (sampled as they run) and where it keeps its bytes (between
// steps, when nothing moves); after them, the quota still holds the
// newest entries that fit, and no more.
func (s suite) testQuotaConcurrentWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("writes about 100 MB")
	}
	const (
		quota   = 8 << 20
		size    = 2_000_000 // four fit the quota with their overhead, five do not
		writers = 8
		each    = 3
	)
	for _, stepped := range []bool{false, true} {
		name := "free"
		if stepped {
			name = "stepped"
		}
		t.Run(name, func(t *testing.T) {
			st := s.open(t, rest.Config{MaxBytes: quota})
			var (
				done    = make(chan struct{})
				sampled = make(chan struct{})
				maxSeen atomic.Int64
				maxHeld int64
				rounds  int
			)
			go func() { // samples the store's own accounting
				defer close(sampled)
				u, ok := st.(usager)
				for ok {
					us := u.Usage()
					maxSeen.Store(max(maxSeen.Load(), us.Bytes+us.Writing))
					select {
					case <-done:
						return
					default:
						runtime.Gosched()
					}
				}
			}()
			ws := make([]*writer, writers)
			for i := range ws {
				ws[i] = &writer{seed: uint64(1000 * i), size: size, left: each}
			}
			if stepped {
				for busy := true; busy; rounds++ {
					var wg sync.WaitGroup
					var active atomic.Int64
					for _, w := range ws {
						wg.Go(func() {
							if !w.step(t, st) {
								active.Add(1)
							}
						})
					}
					wg.Wait()
					busy = active.Load() > 0
					if _, b, ok := s.held(t, st); ok {
						maxHeld = max(maxHeld, b)
					}
				}
			} else {
				var wg sync.WaitGroup
				for _, w := range ws {
					wg.Go(func() {
						for !w.step(t, st) {
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
			t.Logf("%d committed, %d full, most accounted %d, %d rounds, most held %d",
				len(committed), full, maxSeen.Load(), rounds, maxHeld)
			if got := maxSeen.Load(); got > quota {
				t.Errorf("accounted bytes reached %d; quota %d", got, quota)
			}
			if maxHeld > quota {
				t.Errorf("held bytes reached %d between rounds; quota %d", maxHeld, quota)
			}
			if _, b, ok := s.held(t, st); ok && b > quota {
				t.Errorf("held %d bytes after the writers; quota %d", b, quota)
			}

			// Six more, one after the other: the four newest are kept,
			// everything older is gone.
			var refs []string
			var datas [][]byte
			for i := range 6 {
				data := Bytes(uint64(100_000+i), size)
				refs = append(refs, Put(t, st, "scope", data, 64<<10).Ref)
				datas = append(datas, data)
				if _, b, ok := s.held(t, st); ok && b > quota {
					t.Errorf("held %d bytes after entry %d; quota %d", b, i, quota)
				}
			}
			var got []bool
			for _, ref := range refs {
				got = append(got, Readable(t, st, "scope", ref))
			}
			if diff := cmp.Diff([]bool{false, false, true, true, true, true}, got); diff != "" {
				t.Errorf("readable, oldest first, mismatch (-want +got):\n%s", diff)
			}
			for i := 2; i < 6; i++ {
				b, _, err := ReadAll(st, "scope", refs[i])
				if err != nil || !bytes.Equal(b, datas[i]) {
					t.Errorf("entry %d: %d bytes, %v; want the %d written", i, len(b), err, size)
				}
			}
			for _, ref := range committed {
				if Readable(t, st, "scope", ref) {
					t.Errorf("entry %s of the concurrent writers outlived four newer ones", ref)
				}
			}
		})
	}
}

// Goroutines writing and reading at once, each in its scope, read back
// what each wrote, and nothing of another scope; nothing is logged that
// names a scope or a ref.
func (s suite) testConcurrent(t *testing.T) {
	log, buf := logger()
	st := s.open(t, rest.Config{Logger: log})
	const (
		workers = 8
		each    = 6
	)
	type kept struct {
		scope string
		info  rest.Info
		data  []byte
	}
	var (
		mu   sync.Mutex
		all  []kept
		wg   sync.WaitGroup
		refs []string
	)
	for w := range workers {
		wg.Go(func() {
			scope := fmt.Sprintf("session-%d-secret", w)
			for i := range each {
				size := (w*each + i) * 7919 % 150_000
				data := Bytes(uint64(w*each+i), size)
				info := Put(t, st, scope, data, (i+1)*977)
				mu.Lock()
				all = append(all, kept{scope, info, data})
				refs = append(refs, info.Ref)
				others := append([]kept(nil), all...)
				mu.Unlock()
				// Read everything written so far: own scope whole, every
				// other scope unknown.
				for _, k := range others {
					got, info, err := ReadAll(st, scope, k.info.Ref)
					if k.scope != scope {
						if !errors.Is(err, rest.ErrUnknown) {
							t.Errorf("Open of another scope's ref = %v; want ErrUnknown", err)
						}
						continue
					}
					if err != nil || info != k.info || !bytes.Equal(got, k.data) {
						t.Errorf("entry %s: %d bytes, %+v, %v; want the %d written", k.info.Ref, len(got), info, err, len(k.data))
					}
				}
			}
		})
	}
	wg.Wait()
	if len(all) != workers*each {
		t.Fatalf("%d entries written; want %d", len(all), workers*each)
	}
	secrets := refs
	for w := range workers {
		secrets = append(secrets, fmt.Sprintf("session-%d-secret", w))
	}
	checkLog(t, buf.String(), secrets...)
}
