package rest_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/toolcap/toolcap/internal/rest"
)

// What sharing a directory costs a Put (Create, Write, Commit) of 4 KiB:
// the directory's lock, the count of temp files and, when another store
// changed the directory since, a read of its listing (each file's size
// and time; the header of each new one). "one store" is a process alone
// (its own changes need no read); "two stores" alternate, so that each
// Put reads what the other wrote, the worst case. The quota is never
// reached: eviction is not measured.
//
//	go test -run '^$' -bench DirSharedPut ./internal/rest/
func BenchmarkDirSharedPut(b *testing.B) {
	data := storeBytes(1, 4096)
	for _, entries := range []int{0, 1000} {
		for _, stores := range []int{1, 2} {
			b.Run(fmt.Sprintf("entries=%d/stores=%d", entries, stores), func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "store")
				var ds []*rest.Dir
				for range stores {
					d, err := rest.OpenDir(path, rest.Config{})
					if err != nil {
						b.Fatal(err)
					}
					ds = append(ds, d)
				}
				for range entries {
					storePut(b, ds[0], "fill", data)
				}
				for _, d := range ds {
					d.Usage() // the first use: indexed
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					storePut(b, ds[i%stores], "scope", data)
					i++
				}
			})
		}
	}
}
