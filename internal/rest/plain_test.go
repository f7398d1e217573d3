package rest_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/rest"
)

// plainPut writes body to a new entry of scope in d and commits it.
func plainPut(t *testing.T, d *rest.Dir, scope, body string) rest.Info {
	t.Helper()
	e, err := d.Create(context.Background(), scope)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := io.WriteString(e, body); err != nil {
		t.Fatalf("Write: %v", err)
	}
	info, err := e.Commit()
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return info
}

// A plain entry is the output's bytes alone, in a 0600 file
// <dir>/<hash>/<ref>.txt inside 0700 directories, readable through the
// store as any entry and named by EntryPath; another scope names another
// file and reads nothing.
func TestPlainDirEntry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	d, err := rest.OpenPlainDir(dir, rest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const body = "line 1\nline 2\nline 3\n"
	info := plainPut(t, d, "session-a", body)
	p, ok := d.EntryPath("session-a", info.Ref)
	if !ok {
		t.Fatal("EntryPath() = false for a plain store")
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(body, string(got)); diff != "" {
		t.Errorf("file mismatch (-want +got):\n%s", diff)
	}
	if filepath.Base(p) != info.Ref+".txt" || filepath.Dir(filepath.Dir(p)) != dir {
		t.Errorf("EntryPath() = %s, want %s/<hash>/%s.txt", p, dir, info.Ref)
	}
	for path, want := range map[string]os.FileMode{p: 0o600, filepath.Dir(p): 0o700, dir: 0o700} {
		if got := dirPerm(t, path); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}
	if !d.IsEntryPath(p) {
		t.Errorf("IsEntryPath(%s) = false", p)
	}
	for _, other := range []string{filepath.Join(dir, "x.txt"), "/etc/passwd", filepath.Join(filepath.Dir(p), "short.txt")} {
		if d.IsEntryPath(other) {
			t.Errorf("IsEntryPath(%s) = true", other)
		}
	}

	r, err := d.Open(context.Background(), "session-a", info.Ref)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	buf := make([]byte, len(body))
	if n, err := r.ReadAt(buf, 0); n != len(body) || err != nil && !errors.Is(err, io.EOF) {
		t.Errorf("ReadAt = %d, %v", n, err)
	}
	if diff := cmp.Diff(rest.Info{Ref: info.Ref, Size: int64(len(body)), Original: int64(len(body))}, r.Info()); diff != "" {
		t.Errorf("Info mismatch (-want +got):\n%s", diff)
	}
	if _, err := d.Open(context.Background(), "session-b", info.Ref); !errors.Is(err, rest.ErrUnknown) {
		t.Errorf("Open from another scope: %v, want ErrUnknown", err)
	}
	if q, _ := d.EntryPath("session-b", info.Ref); q == p {
		t.Errorf("two scopes share the path %s", q)
	}
	if _, ok := d.EntryPath("session-a", "../../etc/passwd"); ok {
		t.Error("EntryPath accepted a malformed ref")
	}
	plainDefault, err := rest.OpenDir(filepath.Join(t.TempDir(), "headers"), rest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plainDefault.EntryPath("s", info.Ref); ok {
		t.Error("EntryPath() = true for a store with headers")
	}
}

// The quota holds over plain entries and survives a reopen: the entries
// are indexed from their scope directories, the oldest evicted first, the
// expired removed.
func TestPlainDirQuotaAndReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	cfg := rest.Config{MaxBytes: 250, TTL: time.Hour, Now: clock}
	d, err := rest.OpenPlainDir(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for i := range 3 {
		now = now.Add(time.Second)
		refs = append(refs, plainPut(t, d, "s", strings.Repeat(string(rune('a'+i)), 100)).Ref)
	}
	if u := d.Usage(); u.Entries != 2 || u.Bytes != 200 {
		t.Errorf("Usage() = %+v, want 2 entries of 200 bytes", u)
	}
	if p, _ := d.EntryPath("s", refs[0]); fileExists(p) {
		t.Errorf("the oldest entry %s was not evicted", p)
	}
	reopened, err := rest.OpenPlainDir(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if u := reopened.Usage(); u.Entries != 2 || u.Bytes != 200 {
		t.Errorf("reopened Usage() = %+v, want the 2 entries", u)
	}
	now = now.Add(2 * time.Hour)
	expired, err := rest.OpenPlainDir(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if u := expired.Usage(); u.Entries != 0 {
		t.Errorf("after the TTL Usage() = %+v, want none", u)
	}
	for _, ref := range refs[1:] {
		if p, _ := d.EntryPath("s", ref); fileExists(p) {
			t.Errorf("expired entry %s is still there", p)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// A plain entry keeps the time to live it was written with in its meta
// file: a store with a TTL of a second leaves the entries of a store with
// a TTL of a day, which removes the former's after their second.
func TestPlainDirEntryKeepsItsTTL(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	long, err := rest.OpenPlainDir(dir, rest.Config{TTL: 24 * time.Hour, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	short, err := rest.OpenPlainDir(dir, rest.Config{TTL: time.Second, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	day := plainPut(t, long, "s", "lives a day")
	second := plainPut(t, short, "s", "lives a second")
	now = now.Add(2 * time.Second)
	if _, err := short.Open(context.Background(), "s", rest.NewRef()); !errors.Is(err, rest.ErrUnknown) {
		t.Fatalf("Open of a made-up ref = %v", err)
	}
	dayPath, _ := long.EntryPath("s", day.Ref)
	secondPath, _ := long.EntryPath("s", second.Ref)
	type view struct{ Day, DayMeta, Second, SecondMeta bool }
	meta := func(p string) string { return strings.TrimSuffix(p, ".txt") + ".meta" }
	got := view{fileExists(dayPath), fileExists(meta(dayPath)), fileExists(secondPath), fileExists(meta(secondPath))}
	if diff := cmp.Diff(view{true, true, false, false}, got); diff != "" {
		t.Errorf("files after the short TTL passed (-want +got):\n%s", diff)
	}
	if _, err := long.Open(context.Background(), "s", day.Ref); err != nil {
		t.Errorf("the day-long entry: %v", err)
	}
}
