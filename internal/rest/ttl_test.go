package rest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/rest"
)

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
