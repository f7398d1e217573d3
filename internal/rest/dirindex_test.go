package rest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/rest"
)

// dirWithEntries fills a store at path with n entries of 100 bytes on
// disk (a header and 60 bytes), a minute apart in last use, written with a
// TTL of a day under the quota given (0: the default), and a temp file a
// crashed process left two hours before the last: it returns the entries'
// refs, oldest first, and the clock.
func dirWithEntries(t *testing.T, path string, n int, quota int64) ([]string, *storeClock) {
	t.Helper()
	clock := newStoreClock()
	d := dirOpen(t, path, rest.Config{Now: clock.Now, TTL: 24 * time.Hour, MaxBytes: quota})
	refs := make([]string, n)
	for i := range refs {
		clock.Advance(time.Minute)
		refs[i] = storePut(t, d, "scope", storeBytes(uint64(i), 100-rest.DirOverhead)).Ref
	}
	leftover := filepath.Join(path, "tmp", "entry-crashed")
	dirMust(t, os.WriteFile(leftover, []byte("half an entry"), 0o600))
	at := clock.Now().Add(-2 * time.Hour)
	dirMust(t, os.Chtimes(leftover, at, at))
	return refs, clock
}

// entryFiles returns the names of the files of the entries refs of scope.
func entryFiles(scope string, refs []string) []string {
	var names []string
	for _, ref := range refs {
		names = append(names, rest.EntryKey(scope, ref))
	}
	slices.Sort(names)
	return names
}

// sortedNames returns the names of files, sorted.
func sortedNames(files map[string]os.FileMode) []string {
	var names []string
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// OpenDir reads none of the directory's entries, which a process that
// keeps nothing (a hook whose output fit, toolcap mcp until a cut) paid
// for at its start: the first use of the store indexes them, removing the
// leftover temp file and the expired entries as OpenDir did.
func TestDirIndexedAtFirstUse(t *testing.T) {
	const entries = 300
	for _, tc := range []struct {
		name string
		use  func(*rest.Dir) error
		kept int // entries of the 300 left: the youngest 10 have not expired
	}{
		{"Usage", func(d *rest.Dir) error { d.Usage(); return nil }, 10},
		{"Open", func(d *rest.Dir) error {
			if _, err := d.Open(context.Background(), "scope", rest.NewRef()); !errors.Is(err, rest.ErrUnknown) {
				return err
			}
			return nil
		}, 10},
		{"Create", func(d *rest.Dir) error {
			e, err := d.Create(context.Background(), "scope")
			if err != nil {
				return err
			}
			return e.Abort()
		}, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store")
			refs, clock := dirWithEntries(t, path, entries, 0)
			tmp := filepath.Join(path, "tmp")
			// The entries were committed a minute apart, the last one now:
			// 9.5 minutes short of a day on, the youngest 10 live.
			clock.Advance(24*time.Hour - 9*time.Minute - 30*time.Second)

			d := dirOpen(t, path, rest.Config{Now: clock.Now, TTL: time.Second, MaxBytes: 1000})
			if diff := cmp.Diff(entryFiles("scope", refs), sortedNames(dirFiles(t, path))); diff != "" {
				t.Errorf("entry files after OpenDir, before any use (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"entry-crashed"}, sortedNames(dirFiles(t, tmp))); diff != "" {
				t.Errorf("temp files after OpenDir, before any use (-want +got):\n%s", diff)
			}

			if err := tc.use(d); err != nil {
				t.Fatalf("the first use: %v", err)
			}
			if diff := cmp.Diff(entryFiles("scope", refs[entries-tc.kept:]), sortedNames(dirFiles(t, path))); diff != "" {
				t.Errorf("entry files after the first use: want the youngest %d (-want +got):\n%s", tc.kept, diff)
			}
			if files := dirFiles(t, tmp); len(files) != 0 {
				t.Errorf("temp files after the first use: %v; want the leftover removed", sortedNames(files))
			}
			if diff := cmp.Diff(rest.Usage{Entries: tc.kept, Bytes: 100 * int64(tc.kept), MaxBytes: 1000}, d.Usage()); diff != "" {
				t.Errorf("Usage() after the first use (-want +got):\n%s", diff)
			}
		})
	}
}

// Uses that come at once build the index once, and every one of them
// waits for it: the quota counts each file once, and holds.
func TestDirIndexedOnceUnderConcurrentUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	const maxBytes = 5000
	_, clock := dirWithEntries(t, path, 100, maxBytes)
	d := dirOpen(t, path, rest.Config{Now: clock.Now, TTL: 24 * time.Hour, MaxBytes: maxBytes})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if i%2 == 0 {
				d.Usage()
			}
			storePut(t, d, "writer", storeBytes(uint64(1000+i), 100-rest.DirOverhead))
		})
	}
	wg.Wait()
	u := d.Usage()
	if want := (rest.Usage{Entries: maxBytes / 100, Bytes: storeDiskBytes(t, path), MaxBytes: maxBytes}); u != want {
		t.Errorf("Usage() after 8 concurrent first uses = %+v; want %+v (each file counted once, the quota full)", u, want)
	}
}

// A directory that cannot be read when the index is built fails the use
// that builds it, with the words OpenDir used to fail with; the next use
// tries again.
func TestDirIndexErrorAtFirstUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	tmp := filepath.Join(path, "tmp")
	d := dirOpen(t, path, rest.Config{})
	// tmp/ is checked at open; replaced by a file after it, it cannot be
	// listed (which a mode takes away from every user but root).
	dirMust(t, os.Remove(tmp))
	dirMust(t, os.WriteFile(tmp, nil, 0o600))
	_, err := d.Create(context.Background(), "scope")
	if err == nil || !strings.HasPrefix(err.Error(), "rest: read store directory: ") {
		t.Fatalf("Create with tmp/ a file = %v; want the error of reading the store directory", err)
	}
	if _, err := d.Open(context.Background(), "scope", rest.NewRef()); err == nil || errors.Is(err, rest.ErrUnknown) {
		t.Errorf("Open with tmp/ a file = %v; want the error of reading the store directory", err)
	}
	dirMust(t, os.Remove(tmp))
	dirMust(t, os.Mkdir(tmp, 0o700))
	info := storePut(t, d, "scope", []byte("after"))
	if diff := cmp.Diff(rest.Usage{Entries: 1, Bytes: storeDiskBytes(t, path), MaxBytes: rest.DefaultDirMaxBytes}, d.Usage()); diff != "" {
		t.Errorf("Usage() once the directory reads (-want +got):\n%s", diff)
	}
	if !storeReadable(t, d, "scope", info.Ref) {
		t.Error("the entry written once the directory reads is not readable")
	}
}
