package rest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolcap/toolcap/internal/rest"
)

// The stores' costs against what the same bytes cost the file system
// directly, in one binary and one run: a Put (Create, Write, Commit) of
// 1 MiB against os.WriteFile, and a 16 KiB ReadAt, a page of
// toolcap_read, against pread.

const (
	benchEntry = 1 << 20
	benchPage  = 16 << 10
)

func benchDir(b *testing.B) *rest.Dir {
	b.Helper()
	// A quota of 64 entries: in a long run the store evicts one entry per
	// Put, a cost a full store pays.
	d, err := rest.OpenDir(filepath.Join(b.TempDir(), "store"), rest.Config{MaxBytes: 64 * benchEntry})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func BenchmarkStorePut(b *testing.B) {
	data := storeBytes(1, benchEntry)
	put := func(b *testing.B, s rest.Store) {
		b.ReportAllocs()
		b.SetBytes(benchEntry)
		for b.Loop() {
			storePut(b, s, "scope", data)
		}
	}
	b.Run("dir", func(b *testing.B) { put(b, benchDir(b)) })
	b.Run("os.WriteFile", func(b *testing.B) {
		p := filepath.Join(b.TempDir(), "f")
		b.ReportAllocs()
		b.SetBytes(benchEntry)
		for b.Loop() {
			if err := os.WriteFile(p, data, 0o600); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("memory", func(b *testing.B) { put(b, rest.NewMemory(rest.Config{MaxBytes: 64 * benchEntry})) })
}

func BenchmarkStoreReadAt(b *testing.B) {
	data := storeBytes(2, benchEntry)
	ctx := context.Background()
	// read reads 16 KiB pages at offsets that walk the entry.
	read := func(b *testing.B, r interface {
		ReadAt([]byte, int64) (int, error)
	}) {
		p := make([]byte, benchPage)
		b.ReportAllocs()
		b.SetBytes(benchPage)
		off := int64(0)
		for b.Loop() {
			if _, err := r.ReadAt(p, off); err != nil {
				b.Fatal(err)
			}
			off = (off + benchPage) % (benchEntry - benchPage)
		}
	}
	stores := []struct {
		name string
		s    rest.Store
	}{
		{"dir", benchDir(b)},
		{"memory", rest.NewMemory(rest.Config{})},
	}
	for _, st := range stores {
		ref := storePut(b, st.s, "scope", data).Ref
		b.Run(st.name, func(b *testing.B) {
			r, err := st.s.Open(ctx, "scope", ref)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			read(b, r)
		})
		// What one toolcap_read page costs the store: Open (a lookup, and
		// for a Dir an open, a header read and a utimes), ReadAt, Close.
		b.Run(st.name+"/open-read-close", func(b *testing.B) {
			p := make([]byte, benchPage)
			b.ReportAllocs()
			b.SetBytes(benchPage)
			for b.Loop() {
				r, err := st.s.Open(ctx, "scope", ref)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.ReadAt(p, benchPage); err != nil {
					b.Fatal(err)
				}
				_ = r.Close()
			}
		})
	}
	f := filepath.Join(b.TempDir(), "f")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.Run("pread", func(b *testing.B) {
		file, err := os.Open(f)
		if err != nil {
			b.Fatal(err)
		}
		defer file.Close()
		read(b, file)
	})
	b.Run("pread/open-read-close", func(b *testing.B) {
		p := make([]byte, benchPage)
		b.ReportAllocs()
		b.SetBytes(benchPage)
		for b.Loop() {
			file, err := os.Open(f)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := file.ReadAt(p, benchPage); err != nil {
				b.Fatal(err)
			}
			_ = file.Close()
		}
	})
}
