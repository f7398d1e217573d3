package rest_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/rest/storetest"
)

// What the Store contract promises does not depend on where the bytes
// are: the conformance suite (package storetest) checks it for both
// stores, as for the Redis store. The tests of this file and of dir_test,
// memory_test and plain_test check what only one store does.

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(_ *testing.T, cfg rest.Config) rest.Store {
		m := rest.NewMemory(cfg)
		return m
	}, storetest.Traits{Clock: true, Quota: true})
}

func TestDirConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, cfg rest.Config) rest.Store {
		t.Helper()
		d, err := rest.OpenDir(filepath.Join(t.TempDir(), "store"), cfg)
		if err != nil {
			t.Fatalf("OpenDir: %v", err)
		}
		t.Cleanup(func() { _ = d.Close() })
		return d
	}, storetest.Traits{Clock: true, Quota: true, Overhead: rest.DirOverhead, Held: dirHeld})
}

// dirHeld is what a Dir holds on disk: its entry files, and the bytes of
// those and of its temp files.
func dirHeld(t *testing.T, s rest.Store) (int, int64) {
	t.Helper()
	p := s.(*rest.Dir).Path()
	// The entries first, then tmp/: a file renamed from tmp/ in between
	// is counted in neither, never twice.
	n := 0
	des, err := os.ReadDir(p)
	if err != nil {
		t.Fatalf("ReadDir(%s): %v", p, err)
	}
	for _, de := range des {
		if de.Type().IsRegular() && len(de.Name()) == 64 {
			n++
		}
	}
	return n, storeDiskBytes(t, p) + storeDiskBytes(t, filepath.Join(p, "tmp"))
}

// storeDiskBytes sums the sizes of the regular files in dir (not below)
// whose names are entry keys or temp files: not the lock file.
func storeDiskBytes(t *testing.T, dir string) int64 {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Errorf("ReadDir(%s): %v", dir, err)
		return 0
	}
	var n int64
	for _, de := range des {
		if len(de.Name()) != 64 && !strings.HasPrefix(de.Name(), "entry-") {
			continue
		}
		fi, err := de.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue // removed since the listing, or tmp/ itself
		}
		n += fi.Size()
	}
	return n
}

// The helpers the store-specific tests share with the suite.

type storeClock = storetest.Clock

func newStoreClock() *storeClock { return storetest.NewClock() }

func storeBytes(seed uint64, n int) []byte { return storetest.Bytes(seed, n) }

func storePut(tb testing.TB, s rest.Store, scope string, data []byte, pieces ...int) rest.Info {
	tb.Helper()
	return storetest.Put(tb, s, scope, data, pieces...)
}

func storeWrite(e rest.Entry, data []byte, pieces ...int) error {
	return storetest.Write(e, data, pieces...)
}

func storeRead(s rest.Store, scope, ref string) ([]byte, rest.Info, error) {
	return storetest.ReadAll(s, scope, ref)
}

func storeReadable(t *testing.T, s rest.Store, scope, ref string) bool {
	t.Helper()
	return storetest.Readable(t, s, scope, ref)
}

// storeLogger returns a JSON debug logger into a buffer.
func storeLogger() (hclog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, DisableTime: true, Level: hclog.Debug}), &buf
}

// testStore is what both stores offer.
type testStore interface {
	rest.Store
	Usage() rest.Usage
}

// storeKinds are the two stores of this package, for what both do beyond
// the Store contract.
var storeKinds = []struct {
	name string
	open func(t *testing.T, cfg rest.Config) testStore
}{
	{"memory", func(_ *testing.T, cfg rest.Config) testStore { return rest.NewMemory(cfg) }},
	{"dir", func(t *testing.T, cfg rest.Config) testStore {
		t.Helper()
		d, err := rest.OpenDir(filepath.Join(t.TempDir(), "store"), cfg)
		if err != nil {
			t.Fatalf("OpenDir: %v", err)
		}
		return d
	}},
}

func TestStoreReaderOutlivesEviction(t *testing.T) {
	// Documented for both stores: a Reader open when its entry is evicted
	// reads on (unix semantics for a Dir). A Redis Reader does not.
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

// The error of a Write the quota cannot hold names the entry and the
// figures, for the log line of a front end.
func TestStoreFullText(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			s := k.open(t, rest.Config{MaxBytes: 10_000})
			a, err := s.Create(context.Background(), "scope")
			if err != nil {
				t.Fatal(err)
			}
			defer a.Abort()
			if _, err := a.Write(storeBytes(8, 8000)); err != nil {
				t.Fatal(err)
			}
			b, err := s.Create(context.Background(), "scope")
			if err != nil {
				t.Fatal(err)
			}
			defer b.Abort()
			_, err = b.Write(storeBytes(9, 5000))
			if !errors.Is(err, rest.ErrFull) {
				t.Fatalf("Write = %v; want ErrFull", err)
			}
			if want := "rest: entry " + b.Ref() + ": 5000 more bytes do not fit the quota of 10000 bytes ("; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("ErrFull text = %q; want it to start %q", err, want)
			}
		})
	}
}
