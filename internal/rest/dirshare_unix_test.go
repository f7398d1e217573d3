//go:build unix

package rest_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/rest"
)

// The stores sharing one directory, as processes do (toolcap mcp, toolcap
// cap --keep-rest, toolcap read): two Dir values on one path are two
// processes to each other, each with its own index, its own open lock
// file and its own temp files (issue 39, items 3, 5 and 6).

// lockedDiskBytes sums what the directory holds, entry files and temp
// files, under the directory's lock, when no store changes it.
func lockedDiskBytes(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(path, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck
	return storeDiskBytes(t, path) + storeDiskBytes(t, filepath.Join(path, "tmp"))
}

// sharedWriters has each of the stores write entries of size bytes, all
// at once, each store in a goroutine of its own, and returns the most the
// directory held after any Commit (summed under the directory's lock) and
// the refs of each store's entries in commit order.
func sharedWriters(t *testing.T, path string, stores []*rest.Dir, each, size int) (int64, [][]string) {
	t.Helper()
	var (
		mu   sync.Mutex
		most int64
		refs = make([][]string, len(stores))
		wg   sync.WaitGroup
	)
	for i, s := range stores {
		wg.Go(func() {
			for j := range each {
				info := storePut(t, s, "scope", storeBytes(uint64(100*i+j), size), 64<<10)
				n := lockedDiskBytes(t, path)
				mu.Lock()
				most = max(most, n)
				refs[i] = append(refs[i], info.Ref)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return most, refs
}

// Two stores at max_bytes = 1,000,000 held 1,800,144 bytes on disk: each
// kept its quota by its own index alone. Both now hold the directory to
// it, and the newest entries that fit are the ones kept.
func TestDirSharedQuotaTwoStores(t *testing.T) {
	const quota, size = 1_000_000, 100_000
	path := filepath.Join(t.TempDir(), "store")
	cfg := rest.Config{MaxBytes: quota}
	a, b := dirOpen(t, path, cfg), dirOpen(t, path, cfg)
	var refs []string
	most := int64(0)
	for i := range 20 { // one after the other, alternately
		s := []*rest.Dir{a, b}[i%2]
		refs = append(refs, storePut(t, s, "scope", storeBytes(uint64(i), size), 64<<10).Ref)
		most = max(most, lockedDiskBytes(t, path))
	}
	t.Logf("two stores at a quota of %d: at most %d bytes on disk", quota, most)
	if most > quota {
		t.Errorf("the directory held %d bytes; quota %d", most, quota)
	}
	// Nine entries and their headers fit 1,000,000 bytes, ten do not.
	var got []bool
	for i, ref := range refs {
		got = append(got, storeReadable(t, []*rest.Dir{b, a}[i%2], "scope", ref))
	}
	want := make([]bool, 20)
	for i := 11; i < 20; i++ {
		want[i] = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readable, oldest first (-want +got):\n%s", diff)
	}
}

// Three stores at a quota of 2 MB held 4.2 MB. Writing at once, they hold
// the directory to it.
func TestDirSharedQuotaThreeStoresAtOnce(t *testing.T) {
	const quota, size = 2_000_000, 150_000
	path := filepath.Join(t.TempDir(), "store")
	cfg := rest.Config{MaxBytes: quota}
	stores := []*rest.Dir{dirOpen(t, path, cfg), dirOpen(t, path, cfg), dirOpen(t, path, cfg)}
	most, _ := sharedWriters(t, path, stores, 12, size)
	t.Logf("three stores at a quota of %d, writing at once: at most %d bytes on disk", quota, most)
	if most > quota {
		t.Errorf("the directory held %d bytes; quota %d", most, quota)
	}
	for _, s := range stores {
		if u := s.Usage(); u.Bytes+u.Writing > quota || u.Writing != 0 {
			t.Errorf("Usage() = %+v after the writers; want at most the quota, nothing being written", u)
		}
	}
}

// toolcap cap --keep-rest with max_bytes = 200000 beside a live proxy made
// the proxy's refs unknown. The cap's small quota now bounds the entries
// it writes, not the proxy's.
func TestDirSmallQuotaBesideLargeOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	clock := newStoreClock()
	proxy := dirOpen(t, path, rest.Config{MaxBytes: 1_000_000, Now: clock.Now})
	var proxyRefs []string
	for i := range 3 {
		clock.Advance(time.Second)
		proxyRefs = append(proxyRefs, storePut(t, proxy, "session", storeBytes(uint64(i), 150_000)).Ref)
	}
	var capRefs []string
	for i := range 3 { // a cap run each: a store of its own
		clock.Advance(time.Second)
		capStore := dirOpen(t, path, rest.Config{MaxBytes: 200_000, Now: clock.Now})
		capRefs = append(capRefs, storePut(t, capStore, "cap", storeBytes(uint64(10+i), 150_000)).Ref)
	}
	type view struct{ Cap, Proxy []bool }
	var got view
	reader := dirOpen(t, path, rest.Config{MaxBytes: 200_000, Now: clock.Now}) // toolcap read
	for _, ref := range capRefs {
		got.Cap = append(got.Cap, storeReadable(t, reader, "cap", ref))
	}
	for _, ref := range proxyRefs {
		clock.Advance(time.Second)
		got.Proxy = append(got.Proxy, storeReadable(t, proxy, "session", ref))
	}
	// Each cap entry is evicted by the next: 200,000 bytes hold one. (And
	// the last once the proxy reads 150,000 bytes after it: it is no
	// longer among the 200,000 bytes used last, which is all its quota
	// promised it.)
	want := view{Cap: []bool{false, false, true}, Proxy: []bool{true, true, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readable after three cap runs at a quota of 200,000 (-want +got):\n%s", diff)
	}
	if n := lockedDiskBytes(t, path); n > 1_000_000 {
		t.Errorf("the directory holds %d bytes, past the largest quota", n)
	}
}

// toolcap read of a made-up ref with ttl = "1s" removed every entry older
// than a second, the live proxy's included. Each entry now lives by the
// TTL it was written with.
func TestDirShortTTLBesideLongOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	clock := newStoreClock()
	proxy := dirOpen(t, path, rest.Config{TTL: 24 * time.Hour, Now: clock.Now})
	var refs []string
	for i := range 3 {
		refs = append(refs, storePut(t, proxy, "session", storeBytes(uint64(i), 1000)).Ref)
	}
	short := dirOpen(t, path, rest.Config{TTL: time.Second, Now: clock.Now})
	brief := storePut(t, short, "cap", []byte("lives a second"))
	clock.Advance(2 * time.Second)
	reader := dirOpen(t, path, rest.Config{TTL: time.Second, Now: clock.Now})
	if storeReadable(t, reader, "session", rest.NewRef()) {
		t.Fatal("a made-up ref is readable")
	}
	type view struct {
		Proxy []bool
		Brief bool
		Files int
	}
	got := view{Files: len(dirFiles(t, path))}
	for _, ref := range refs {
		got.Proxy = append(got.Proxy, storeReadable(t, proxy, "session", ref))
	}
	// The long-lived store removes the short-lived entry by its own TTL.
	got.Brief = storeReadable(t, proxy, "cap", brief.Ref)
	want := view{Proxy: []bool{true, true, true}, Brief: false, Files: 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after a read with a TTL of a second (-want +got):\n%s", diff)
	}
	if n := len(dirFiles(t, path)); n != 3 {
		t.Errorf("%d entry files; want the proxy's 3", n)
	}
}

// An entry being written counts for every store: another store cannot
// write past the quota beside it, and sees it in Usage.
func TestDirTempFilesCountForEveryStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	cfg := rest.Config{MaxBytes: 1_000_000}
	a, b := dirOpen(t, path, cfg), dirOpen(t, path, cfg)
	e, err := a.Create(context.Background(), "scope")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Write(storeBytes(1, 600_000)); err != nil {
		t.Fatal(err)
	}
	if w := b.Usage().Writing; w < 600_000 {
		t.Errorf("the other store's Usage().Writing = %d while an entry of 600,000 bytes is written", w)
	}
	f, err := b.Create(context.Background(), "scope")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(storeBytes(2, 600_000)); !errors.Is(err, rest.ErrFull) {
		t.Errorf("Write of 600,000 bytes beside 600,000 being written = %v; want ErrFull", err)
	}
	_ = f.Abort()
	if err := e.Abort(); err != nil {
		t.Fatal(err)
	}
	storePut(t, b, "scope", storeBytes(3, 600_000))
	if n := lockedDiskBytes(t, path); n != 600_000+rest.DirOverhead {
		t.Errorf("the directory holds %d bytes; want the one entry", n)
	}
}

// Close removes the temp files of the entries still being written: a
// clean shutdown in the middle of a cut leaves nothing in tmp/.
func TestDirCloseRemovesTempFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	d := dirOpen(t, path, rest.Config{})
	e, err := d.Create(context.Background(), "scope")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Write(storeBytes(1, 300_000)); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(path, "tmp")
	before := len(dirFiles(t, tmp))
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	type view struct {
		Before, After   int
		Write, Commit   bool // failed
		Readable, Abort bool
	}
	got := view{Before: before, After: len(dirFiles(t, tmp))}
	_, err = e.Write([]byte("more"))
	got.Write = err != nil
	_, err = e.Commit()
	got.Commit = err != nil
	got.Readable = storeReadable(t, d, "scope", e.Ref())
	got.Abort = e.Abort() != nil
	if diff := cmp.Diff(view{Before: 1, After: 0, Write: true, Commit: true}, got); diff != "" {
		t.Errorf("temp files before and after Close, the entry after it (-want +got):\n%s", diff)
	}
}

// A temp file whose writer is gone is removed by the next store's first
// use whatever its age; one whose writer lives is kept whatever its age.
func TestDirTempFileOfDeadWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	clock := newStoreClock()
	writer := dirOpen(t, path, rest.Config{Now: clock.Now})
	live, err := writer.Create(context.Background(), "scope")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Abort()
	if _, err := live.Write(storeBytes(1, 1000)); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(path, "tmp")
	var liveName string
	for name := range dirFiles(t, tmp) {
		liveName = name
	}
	// The live writer's file, unwritten for two hours; a crashed
	// writer's, just written (pid 1 is alive, and not a toolcap: the lock
	// tells, not the pid).
	old := clock.Now().Add(-2 * time.Hour)
	dirMust(t, os.Chtimes(filepath.Join(tmp, liveName), old, old))
	crashed := filepath.Join(tmp, "entry-1-123456")
	dirMust(t, os.WriteFile(crashed, []byte("half an entry"), 0o600))

	dirOpen(t, path, rest.Config{Now: clock.Now}).Usage() // the first use cleans tmp/
	var got []string
	for name := range dirFiles(t, tmp) {
		got = append(got, name)
	}
	if diff := cmp.Diff([]string{liveName}, got); diff != "" {
		t.Errorf("temp files left (-want +got):\n%s", diff)
	}
	if _, err := live.Commit(); err != nil {
		t.Errorf("Commit of the live writer's entry: %v", err)
	}
}

// TestDirHelperWriter is the writer process of TestDirTempFileOfKilledWriter:
// it starts an entry, says so, and waits to be killed.
func TestDirHelperWriter(t *testing.T) {
	path := os.Getenv("TOOLCAP_REST_HELPER_DIR")
	if path == "" {
		t.Skip("the writer process of TestDirTempFileOfKilledWriter")
	}
	d := dirOpen(t, path, rest.Config{})
	e, err := d.Create(context.Background(), "scope")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Write(storeBytes(1, 2<<20)); err != nil {
		t.Fatal(err)
	}
	fmt.Println("writing")
	time.Sleep(time.Minute)
}

// A writer killed (SIGKILL) leaves its temp file; the next store to use
// the directory removes it at once, not an hour later.
func TestDirTempFileOfKilledWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	dirOpen(t, path, rest.Config{})
	cmd := exec.Command(os.Args[0], "-test.run=^TestDirHelperWriter$", "-test.v")
	cmd.Env = append(os.Environ(), "TOOLCAP_REST_HELPER_DIR="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "writing" {
	}
	tmp := filepath.Join(path, "tmp")
	names := func() []string {
		var n []string
		for name := range dirFiles(t, tmp) {
			n = append(n, name)
		}
		return n
	}
	writing := names()
	want := "entry-" + strconv.Itoa(cmd.Process.Pid) + "-"
	if len(writing) != 1 || !strings.HasPrefix(writing[0], want) {
		t.Fatalf("temp files while the writer writes: %v; want one named %s…", writing, want)
	}
	// Alive: the first use of another store keeps it, and counts it.
	if u := dirOpen(t, path, rest.Config{}).Usage(); u.Writing < 2<<20 || len(names()) != 1 {
		t.Errorf("while the writer lives: Usage() = %+v, temp files %v; want the file kept and counted", u, names())
	}
	dirMust(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	if got := names(); len(got) != 1 {
		t.Fatalf("temp files after the kill: %v; want the leftover", got)
	}
	if u := dirOpen(t, path, rest.Config{}).Usage(); u.Writing != 0 || len(names()) != 0 {
		t.Errorf("after the writer was killed: Usage() = %+v, temp files %v; want none", u, names())
	}
}

// A store directory removed while a store runs is created again (mode
// 0700) at the next use, which keeps working.
func TestDirRemovedWhileInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	log, buf := storeLogger()
	d := dirOpen(t, path, rest.Config{Logger: log})
	other := dirOpen(t, path, rest.Config{})
	before := storePut(t, d, "scope", []byte("before"))
	dirMust(t, os.RemoveAll(path))
	type view struct {
		Before, After, Other bool
		Mode                 os.FileMode
	}
	after := storePut(t, d, "scope", []byte("after"))
	got := view{Before: storeReadable(t, d, "scope", before.Ref), After: storeReadable(t, d, "scope", after.Ref), Mode: dirPerm(t, path)}
	// The other store finds the directory this one created again, and
	// takes it: the one it opened is gone.
	got.Other = storeReadable(t, other, "scope", after.Ref)
	if diff := cmp.Diff(view{After: true, Other: true, Mode: 0o700}, got); diff != "" {
		t.Errorf("after the directory was removed (-want +got):\n%s", diff)
	}
	if !strings.Contains(buf.String(), "created again") {
		t.Errorf("no line logged for the directory created again:\n%s", buf)
	}
}

// A store directory swapped for another while a store runs (renamed
// away, another put in its place, as another user could under a
// world-writable parent without the sticky bit) is refused: the store
// reads and writes nothing through it.
func TestDirSwappedWhileInUse(t *testing.T) {
	parent := t.TempDir()
	path := filepath.Join(parent, "store")
	d := dirOpen(t, path, rest.Config{})
	info := storePut(t, d, "scope", []byte("the store's own output"))
	key := rest.EntryKey("scope", info.Ref)
	real, err := os.ReadFile(filepath.Join(path, key))
	dirMust(t, err)

	dirMust(t, os.Rename(path, filepath.Join(parent, "moved")))
	dirMust(t, os.Mkdir(path, 0o700))
	dirMust(t, os.Mkdir(filepath.Join(path, "tmp"), 0o700))
	forged := bytes.Replace(real, []byte("the store's own"), []byte("someone else's!"), 1)
	dirMust(t, os.WriteFile(filepath.Join(path, key), forged, 0o600))

	type view struct {
		Open, Create, Usage string
		Files               int
	}
	var got view
	if r, err := d.Open(context.Background(), "scope", info.Ref); err != nil {
		got.Open = errKind(err)
	} else {
		p := make([]byte, 64)
		n, _ := r.ReadAt(p, 0)
		got.Open = "read " + string(p[:n])
		_ = r.Close()
	}
	if e, err := d.Create(context.Background(), "scope"); err != nil {
		got.Create = errKind(err)
	} else {
		_ = e.Abort()
		got.Create = "created"
	}
	if u := d.Usage(); u.Entries != 0 {
		got.Usage = fmt.Sprint(u.Entries, " entries")
	}
	got.Files = len(dirFiles(t, path)) + len(dirFiles(t, filepath.Join(path, "tmp")))
	want := view{Open: "replaced", Create: "replaced", Files: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("through the swapped directory (-want +got):\n%s", diff)
	}
	// A store opened on the path now takes the directory there.
	fresh := dirOpen(t, path, rest.Config{})
	if _, err := fresh.Open(context.Background(), "scope", info.Ref); err != nil {
		t.Errorf("a new store on the path: Open = %v", err)
	}
}

// errKind names the error of a use of a swapped directory.
func errKind(err error) string {
	switch {
	case errors.Is(err, rest.ErrUnknown):
		return "unknown"
	case strings.Contains(err.Error(), "was replaced since the store opened it"):
		return "replaced"
	}
	return err.Error()
}

// A store reads the changes of another from the lock file's journal, or,
// past what the journal holds, the directory whole: either way it counts
// what is there.
func TestDirSeesChangesOfAnother(t *testing.T) {
	for _, n := range []int{3, 300} { // within the journal's 256 records, past them
		t.Run(fmt.Sprint(n, " changes"), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store")
			a, b := dirOpen(t, path, rest.Config{}), dirOpen(t, path, rest.Config{})
			kept := storePut(t, a, "scope", []byte("a's"))
			var last rest.Info
			for i := range n {
				last = storePut(t, b, "scope", storeBytes(uint64(i), 100))
			}
			if u := a.Usage(); u.Entries != n+1 || u.Bytes != int64(n)*(100+rest.DirOverhead)+3+rest.DirOverhead {
				t.Errorf("a's Usage() after %d entries of b = %+v", n, u)
			}
			if !storeReadable(t, a, "scope", last.Ref) || !storeReadable(t, b, "scope", kept.Ref) {
				t.Error("an entry of one store is not readable through the other")
			}
		})
	}
}
