package rest_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/rest"
)

// held returns what a store holds of scope's entries refs, by where their
// bytes are: for a directory its files (listed, not asked of the store),
// for memory the entries its index holds, as "entry N". Neither is a use
// of the store.
func held(t *testing.T, s testStore, scope string, refs ...string) []string {
	t.Helper()
	var got []string
	d, ok := s.(*rest.Dir)
	if !ok {
		for range s.Usage().Entries {
			got = append(got, "entry")
		}
		return got
	}
	files := dirFiles(t, d.Path())
	for i, ref := range refs {
		if _, ok := files[rest.EntryKey(scope, ref)]; ok {
			got = append(got, "file of entry "+string(rune('A'+i)))
			delete(files, rest.EntryKey(scope, ref))
		}
	}
	for name := range files {
		got = append(got, "file "+name)
	}
	slices.Sort(got)
	return got
}

// An expired entry is gone after one more use of the store, whatever the
// use: no file of it is left in the directory, and a memory store holds
// it no more (issue 39: with ttl = "3s" an expired entry was on disk after
// 4 s, after another cut, until a read of it).
func TestExpiredGoneAfterOneMoreUse(t *testing.T) {
	const ttl = 3 * time.Second
	ctx := context.Background()
	uses := []struct {
		name string
		// use uses the store once; pending is an entry written before
		// A expired, not committed.
		use func(t *testing.T, s testStore, pending rest.Entry, live string)
		// committed says whether the use committed pending.
		committed bool
	}{
		{"Create", func(t *testing.T, s testStore, _ rest.Entry, _ string) {
			e, err := s.Create(ctx, "scope")
			if err != nil {
				t.Fatal(err)
			}
			_ = e.Abort()
		}, false},
		{"Commit", func(t *testing.T, _ testStore, pending rest.Entry, _ string) {
			if _, err := pending.Commit(); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"Open of another entry", func(t *testing.T, s testStore, _ rest.Entry, live string) {
			if !storeReadable(t, s, "scope", live) {
				t.Fatal("the live entry is not readable")
			}
		}, false},
		{"Open of an unknown ref", func(t *testing.T, s testStore, _ rest.Entry, _ string) {
			if storeReadable(t, s, "scope", rest.NewRef()) {
				t.Fatal("an unknown ref is readable")
			}
		}, false},
	}
	for _, k := range storeKinds {
		for _, u := range uses {
			t.Run(k.name+"/"+u.name, func(t *testing.T) {
				clock := newStoreClock()
				s := k.open(t, rest.Config{TTL: ttl, Now: clock.Now})
				a := storePut(t, s, "scope", storeBytes(1, 5000))
				clock.Advance(2 * time.Second)
				b := storePut(t, s, "scope", storeBytes(2, 5000))
				pending, err := s.Create(ctx, "scope")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = pending.Abort() })
				if err := storeWrite(pending, storeBytes(3, 5000)); err != nil {
					t.Fatal(err)
				}
				clock.Advance(ttl - 2*time.Second + 500*time.Millisecond) // A expired 0.5 s ago, B lives

				got := [][]string{held(t, s, "scope", a.Ref, b.Ref)}
				u.use(t, s, pending, b.Ref)
				got = append(got, held(t, s, "scope", a.Ref, b.Ref, pending.Ref()))

				want := [][]string{{"file of entry A", "file of entry B"}, {"file of entry B"}}
				if u.committed {
					want[1] = append(want[1], "file of entry C")
				}
				if k.disk == nil {
					want = [][]string{{"entry", "entry"}, {"entry"}}
					if u.committed {
						want[1] = append(want[1], "entry")
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("held before and after the %s (-want +got):\n%s", u.name, diff)
				}
			})
		}
	}
}

// With no use at all, the store's timer removes an expired entry: within
// a bound of its TTL, and not before it.
func TestExpiredGoneWithoutUse(t *testing.T) {
	const ttl = 50 * time.Millisecond
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			s := k.open(t, rest.Config{TTL: ttl})
			t.Cleanup(func() { _ = s.(io.Closer).Close() })
			start := time.Now() // no later than the entry's last use
			info := storePut(t, s, "scope", storeBytes(4, 1000))
			if got := held(t, s, "scope", info.Ref); len(got) != 1 {
				t.Fatalf("held after the commit: %v; want the entry", got)
			}
			deadline := start.Add(10 * time.Second)
			for len(held(t, s, "scope", info.Ref)) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("held %v after the commit, TTL %v: %v", time.Since(start), ttl, held(t, s, "scope", info.Ref))
				}
				time.Sleep(time.Millisecond)
			}
			gone := time.Since(start)
			if gone < ttl {
				t.Errorf("removed %v after the commit: before its TTL of %v", gone, ttl)
			}
			t.Logf("removed at most %v after its expiry", gone-ttl)
		})
	}
}

// Close removes what has expired; what lives on stays for the next
// process.
func TestCloseRemovesExpired(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			clock := newStoreClock()
			s := k.open(t, rest.Config{TTL: time.Minute, Now: clock.Now})
			a := storePut(t, s, "scope", storeBytes(5, 100))
			clock.Advance(30 * time.Second)
			b := storePut(t, s, "scope", storeBytes(6, 100))
			clock.Advance(45 * time.Second)
			if err := s.(io.Closer).Close(); err != nil {
				t.Fatal(err)
			}
			want := []string{"file of entry B"}
			if k.disk == nil {
				want = []string{"entry"}
			}
			if diff := cmp.Diff(want, held(t, s, "scope", a.Ref, b.Ref)); diff != "" {
				t.Errorf("held after Close (-want +got):\n%s", diff)
			}
		})
	}
}

// An entry another process read since (its Open renews the file's
// modification time) is not removed when this store's index says it
// expired: it lives TTL from that read.
func TestDirRenewedByAnotherProcess(t *testing.T) {
	const ttl = 3 * time.Second
	path := filepath.Join(t.TempDir(), "store")
	clock := newStoreClock()
	cfg := rest.Config{TTL: ttl, Now: clock.Now}
	writer, reader := dirOpen(t, path, cfg), dirOpen(t, path, cfg)
	info := storePut(t, writer, "scope", storeBytes(7, 100))
	clock.Advance(2 * time.Second)
	if !storeReadable(t, reader, "scope", info.Ref) {
		t.Fatal("the other store cannot read the entry")
	}
	file := filepath.Join(path, rest.EntryKey("scope", info.Ref))
	exists := func() bool {
		_, err := os.Lstat(file)
		return err == nil
	}
	var got []bool
	for _, step := range []time.Duration{1500 * time.Millisecond, 2 * time.Second} {
		clock.Advance(step) // 3.5 s after the commit, 1.5 s after the read; then 3.5 s after it
		e, err := writer.Create(context.Background(), "scope")
		if err != nil {
			t.Fatal(err)
		}
		_ = e.Abort()
		got = append(got, exists())
	}
	if diff := cmp.Diff([]bool{true, false}, got); diff != "" {
		t.Errorf("the file after the writer's Create, past its TTL from the commit, then from the read (-want +got):\n%s", diff)
	}
}
