package rest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/rest"
)

// dirOpen opens a Dir at path or fails the test.
func dirOpen(t *testing.T, path string, cfg rest.Config) *rest.Dir {
	t.Helper()
	d, err := rest.OpenDir(path, cfg)
	if err != nil {
		t.Fatalf("OpenDir(%s): %v", path, err)
	}
	return d
}

// dirFiles lists the regular files of dir (not below) with their modes,
// but the lock file of a store's directory.
func dirFiles(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("ReadDir(%s): %v", dir, err)
	}
	m := map[string]fs.FileMode{}
	for _, de := range des {
		if de.Type().IsRegular() && de.Name() != "lock" {
			fi, err := de.Info()
			if err != nil {
				t.Fatalf("stat %s: %v", de.Name(), err)
			}
			m[de.Name()] = fi.Mode().Perm()
		}
	}
	return m
}

func dirPerm(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("Lstat: %v", err)
	}
	return fi.Mode().Perm()
}

func TestDirPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no unix permissions")
	}
	path := filepath.Join(t.TempDir(), "cache", "toolcap", "rest")
	d := dirOpen(t, path, rest.Config{})
	const scope = "session-4471-secret"
	info := storePut(t, d, scope, []byte("some output"))

	got := map[string]fs.FileMode{
		"store":  dirPerm(t, path),
		"parent": dirPerm(t, filepath.Dir(path)),
		"tmp":    dirPerm(t, filepath.Join(path, "tmp")),
		"lock":   dirPerm(t, filepath.Join(path, "lock")),
	}
	files := dirFiles(t, path)
	for name, mode := range files {
		got["entry"] = mode
		// Neither the scope nor the ref shows in a file name.
		if strings.Contains(name, "secret") || strings.Contains(name, info.Ref) {
			t.Errorf("entry file name %q holds the scope or the ref", name)
		}
	}
	want := map[string]fs.FileMode{"store": 0o700, "parent": 0o700, "tmp": 0o700, "lock": 0o600, "entry": 0o600}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modes mismatch (-want +got):\n%s", diff)
	}
	if len(files) != 1 {
		t.Errorf("store holds %d files; want 1 entry", len(files))
	}
}

func TestDirRefusesUnsafeDirectory(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no unix permissions")
	}
	cases := []struct {
		name string
		// setup makes the path to open under root; it may skip.
		setup func(t *testing.T, root string) string
		// want is the error, with %s for the path setup returned.
		want string
	}{
		{
			name: "group and others can read",
			setup: func(t *testing.T, root string) string {
				p := filepath.Join(root, "store")
				dirMust(t, os.Mkdir(p, 0o700))
				dirMust(t, os.Chmod(p, 0o755))
				return p
			},
			want: "rest: directory %s is mode 0755: want 0700 (no access for group or others)",
		},
		{
			name: "others can write",
			setup: func(t *testing.T, root string) string {
				p := filepath.Join(root, "store")
				dirMust(t, os.Mkdir(p, 0o700))
				dirMust(t, os.Chmod(p, 0o702))
				return p
			},
			want: "rest: directory %s is mode 0702: want 0700 (no access for group or others)",
		},
		{
			name: "symlink to a private directory",
			setup: func(t *testing.T, root string) string {
				target := filepath.Join(root, "real")
				dirMust(t, os.Mkdir(target, 0o700))
				p := filepath.Join(root, "store")
				dirMust(t, os.Symlink(target, p))
				return p
			},
			want: "rest: directory %s is a symlink: want a real directory",
		},
		{
			name: "symlink named with a trailing slash",
			setup: func(t *testing.T, root string) string {
				target := filepath.Join(root, "real")
				dirMust(t, os.Mkdir(target, 0o700))
				p := filepath.Join(root, "store")
				dirMust(t, os.Symlink(target, p))
				return p + "/"
			},
			want: "rest: directory %s is a symlink: want a real directory",
		},
		{
			name: "a file",
			setup: func(t *testing.T, root string) string {
				p := filepath.Join(root, "store")
				dirMust(t, os.WriteFile(p, nil, 0o600))
				return p
			},
			want: "rest: %s is not a directory",
		},
		{
			name: "tmp is a symlink",
			setup: func(t *testing.T, root string) string {
				p := filepath.Join(root, "store")
				dirMust(t, os.Mkdir(p, 0o700))
				other := filepath.Join(root, "elsewhere")
				dirMust(t, os.Mkdir(other, 0o700))
				dirMust(t, os.Symlink(other, filepath.Join(p, "tmp")))
				return p
			},
			want: "rest: directory %s/tmp is a symlink: want a real directory",
		},
		{
			name: "owned by another user",
			setup: func(t *testing.T, root string) string {
				if os.Getuid() != 0 {
					t.Skip("only root can give a directory away")
				}
				p := filepath.Join(root, "store")
				dirMust(t, os.Mkdir(p, 0o700))
				dirMust(t, os.Chown(p, 4242, 4242))
				return p
			},
			want: "rest: directory %s is owned by uid 4242: want the current user (uid 0)",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.setup(t, t.TempDir())
			d, err := rest.OpenDir(p, rest.Config{})
			if err == nil {
				t.Fatalf("OpenDir(%s) = %v, nil; want an error", p, d)
			}
			want := fmt.Sprintf(c.want, filepath.Clean(p))
			if diff := cmp.Diff(want, err.Error()); diff != "" {
				t.Errorf("OpenDir error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func dirMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestDirRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	clock := newStoreClock()
	cfg := rest.Config{Now: clock.Now, TTL: time.Hour}
	d1 := dirOpen(t, path, cfg)
	datas := [][]byte{storeBytes(20, 1000), storeBytes(21, 70_000), storeBytes(22, 5)}
	var infos []rest.Info
	for _, data := range datas {
		clock.Advance(time.Minute)
		infos = append(infos, storePut(t, d1, "scope", data))
	}
	clock.Advance(time.Minute)
	if !storeReadable(t, d1, "scope", infos[0].Ref) { // the first is now the youngest
		t.Fatal("first entry not readable")
	}
	clipped := storePut(t, dirOpen(t, path, rest.Config{Now: clock.Now, MaxEntryBytes: 10}), "scope", []byte("0123456789 and the rest"))

	t.Run("entries and index survive", func(t *testing.T) {
		d2 := dirOpen(t, path, cfg)
		u := d2.Usage()
		if diff := cmp.Diff(rest.Usage{Entries: 4, Bytes: storeDiskBytes(t, path), MaxBytes: rest.DefaultDirMaxBytes}, u); diff != "" {
			t.Errorf("Usage() after restart mismatch (-want +got):\n%s", diff)
		}
		// Read one at a time, a second apart: the last-use order is
		// now 0, 1, 2, clipped.
		for i, data := range datas {
			clock.Advance(time.Second)
			got, info, err := storeRead(d2, "scope", infos[i].Ref)
			if err != nil {
				t.Fatalf("entry %d after restart: %v", i, err)
			}
			if diff := cmp.Diff(infos[i], info); diff != "" {
				t.Errorf("entry %d info mismatch (-want +got):\n%s", i, diff)
			}
			if !bytes.Equal(data, got) {
				t.Errorf("entry %d: read %d bytes, not the %d written byte for byte", i, len(got), len(data))
			}
		}
		clock.Advance(time.Second)
		_, info, err := storeRead(d2, "scope", clipped.Ref)
		if err != nil {
			t.Fatalf("clipped entry after restart: %v", err)
		}
		if diff := cmp.Diff(rest.Info{Ref: clipped.Ref, Size: 10, Original: 23}, info); diff != "" {
			t.Errorf("clipped entry: the header keeps Original (-want +got):\n%s", diff)
		}
	})
	var own rest.Info
	t.Run("a smaller quota keeps what a larger one wrote", func(t *testing.T) {
		// The entries keep the quota they were written under (the
		// default): a store with a quota of 1,000 bytes evicts none of
		// them, at its first use or when it writes, and its own entry is
		// bounded by its own quota.
		d3 := dirOpen(t, path, rest.Config{Now: clock.Now, TTL: time.Hour, MaxBytes: 1000})
		if got := d3.MaxEntryBytes(); got != 1000-rest.DirOverhead {
			t.Errorf("MaxEntryBytes() = %d; want the quota less a header", got)
		}
		var got []bool
		for _, info := range append(slices.Clone(infos), clipped) {
			got = append(got, storeReadable(t, d3, "scope", info.Ref))
		}
		clock.Advance(time.Second)
		own = storePut(t, d3, "scope", storeBytes(23, 900))
		got = append(got, storeReadable(t, d3, "scope", own.Ref))
		if diff := cmp.Diff([]bool{true, true, true, true, true}, got); diff != "" {
			t.Errorf("readable after a restart with a smaller quota (-want +got):\n%s", diff)
		}
		if n := len(dirFiles(t, path)); n != 5 {
			t.Errorf("%d files left; want 5", n)
		}
		// Once an entry of a larger quota is read after it, the small
		// quota's entry is past its quota, seen from its last use: it goes.
		clock.Advance(time.Second)
		storeReadable(t, d3, "scope", infos[1].Ref)
		if storeReadable(t, d3, "scope", own.Ref) {
			t.Error("the small quota's entry lives on past its quota")
		}
	})
	t.Run("each entry expires by its own TTL", func(t *testing.T) {
		// An hour on, the entries written with a TTL of an hour are
		// gone at the first use of a store, whatever its TTL; the clipped
		// one, written with the default of a day, lives on.
		clock.Advance(time.Hour)
		d4 := dirOpen(t, path, rest.Config{Now: clock.Now, TTL: time.Second})
		if got := d4.Usage(); got.Entries != 1 {
			t.Errorf("Usage() after the TTL = %+v; want the clipped entry alone", got)
		}
		if files := dirFiles(t, path); len(files) != 1 {
			t.Errorf("files left after the TTL: %v; want the clipped entry's", files)
		}
		if !storeReadable(t, d4, "scope", clipped.Ref) {
			t.Error("the clipped entry, within its own TTL, is not readable")
		}
	})
}

func TestDirLeftoverTempFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	clock := newStoreClock()
	cfg := rest.Config{Now: clock.Now}
	dirOpen(t, path, cfg)
	tmp := filepath.Join(path, "tmp")
	files := map[string]time.Duration{ // age of each temp file
		"entry-crashed":      2 * time.Hour,
		"entry-just-crashed": time.Hour,
		"entry-live":         time.Minute, // another process is writing it
	}
	for name, age := range files {
		p := filepath.Join(tmp, name)
		dirMust(t, os.WriteFile(p, []byte("half an entry"), 0o600))
		at := clock.Now().Add(-age)
		dirMust(t, os.Chtimes(p, at, at))
	}
	dirOpen(t, path, cfg).Usage() // the first use indexes the directory
	var got []string
	for name := range dirFiles(t, tmp) {
		got = append(got, name)
	}
	if diff := cmp.Diff([]string{"entry-live"}, got); diff != "" {
		t.Errorf("temp files left (-want +got):\n%s", diff)
	}
}

func TestDirSharedBetweenStores(t *testing.T) {
	// Two stores on one directory, as toolcap mcp and toolcap read are:
	// an entry one writes after the other opened is readable from both.
	path := filepath.Join(t.TempDir(), "store")
	cfg := rest.Config{MaxBytes: 2*(5000+rest.DirOverhead) + 100}
	a := dirOpen(t, path, cfg)
	b := dirOpen(t, path, cfg)
	data := storeBytes(30, 5000)
	info := storePut(t, a, "scope", data)
	got, rinfo, err := storeRead(b, "scope", info.Ref)
	if err != nil {
		t.Fatalf("read from the other store: %v", err)
	}
	if diff := cmp.Diff(info, rinfo); diff != "" {
		t.Errorf("info mismatch (-want +got):\n%s", diff)
	}
	if !bytes.Equal(data, got) {
		t.Errorf("read %d bytes, not the %d written byte for byte", len(got), len(data))
	}
	if u := b.Usage(); u.Entries != 1 {
		t.Errorf("the other store's Usage() = %+v; want the entry indexed", u)
	}
	if storeReadable(t, b, "other scope", info.Ref) {
		t.Error("the other store reads the entry in another scope")
	}
	// Evicted by one, gone for the other: the quota holds two such
	// entries, and the entry b read is the oldest by last use when a
	// writes a third.
	_ = storePut(t, b, "scope", storeBytes(31, 5000))
	_ = storePut(t, a, "scope", storeBytes(32, 5000))
	if storeReadable(t, b, "scope", info.Ref) {
		t.Error("an entry another store evicted is still readable")
	}
	if u := b.Usage(); u.Entries != 2 {
		t.Errorf("Usage() after the entry went = %+v; want it forgotten", u)
	}
}

func TestDirCorruptEntry(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(t *testing.T, p string)
	}{
		{"cut short", func(t *testing.T, p string) { dirMust(t, os.Truncate(p, 100)) }},
		{"grown", func(t *testing.T, p string) {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			dirMust(t, err)
			_, err = f.Write([]byte("more"))
			dirMust(t, err)
			dirMust(t, f.Close())
		}},
		{"empty", func(t *testing.T, p string) { dirMust(t, os.Truncate(p, 0)) }},
		{"bad magic", func(t *testing.T, p string) {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			dirMust(t, err)
			_, err = f.WriteAt([]byte("XX"), 0)
			dirMust(t, err)
			dirMust(t, f.Close())
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store")
			log, buf := storeLogger()
			d := dirOpen(t, path, rest.Config{Logger: log})
			info := storePut(t, d, "scope", storeBytes(40, 1000))
			for name := range dirFiles(t, path) {
				c.corrupt(t, filepath.Join(path, name))
			}
			r, err := d.Open(context.Background(), "scope", info.Ref)
			if r != nil {
				_ = r.Close()
			}
			if !errors.Is(err, rest.ErrUnknown) {
				t.Errorf("Open of a corrupt entry = %v; want ErrUnknown", err)
			}
			if files := dirFiles(t, path); len(files) != 0 {
				t.Errorf("corrupt entry not removed: %v", files)
			}
			if u := d.Usage(); u.Entries != 0 || u.Bytes != 0 {
				t.Errorf("Usage() = %+v; want empty", u)
			}
			if !strings.Contains(buf.String(), `"@level":"error"`) {
				t.Errorf("no error logged for a corrupt entry:\n%s", buf)
			}
		})
	}
}

func TestDirCommitIsAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	d := dirOpen(t, path, rest.Config{})
	e, err := d.Create(context.Background(), "scope")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := e.Write(storeBytes(50, 200_000)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	type state struct{ Entries, Temp int }
	got := []state{{len(dirFiles(t, path)), len(dirFiles(t, filepath.Join(path, "tmp")))}}
	if _, err := e.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	got = append(got, state{len(dirFiles(t, path)), len(dirFiles(t, filepath.Join(path, "tmp")))})
	e2, err := d.Create(context.Background(), "scope")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := e2.Write([]byte("dropped")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := e2.Abort(); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	got = append(got, state{len(dirFiles(t, path)), len(dirFiles(t, filepath.Join(path, "tmp")))})
	want := []state{{0, 1}, {1, 0}, {1, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files while writing, after Commit, after an Abort (-want +got):\n%s", diff)
	}
}

func TestDirDefaults(t *testing.T) {
	cases := []struct {
		name string
		cfg  rest.Config
		want int64
	}{
		{"zero", rest.Config{}, rest.DefaultDirMaxBytes},
		{"negative", rest.Config{MaxBytes: -1}, rest.DefaultDirMaxBytes},
		{"set", rest.Config{MaxBytes: 1 << 20}, 1 << 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := dirOpen(t, filepath.Join(t.TempDir(), "s"), c.cfg)
			if diff := cmp.Diff(rest.Usage{MaxBytes: c.want}, d.Usage()); diff != "" {
				t.Errorf("Usage() mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := rest.OpenDir("", rest.Config{}); err == nil {
		t.Error("OpenDir(\"\") succeeded")
	}
}
