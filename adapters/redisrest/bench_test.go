package redisrest_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/toolcap/toolcap/adapters/redisrest"
	"github.com/toolcap/toolcap/internal/rest"
)

// The store's costs beside the directory store's and a plain go-redis
// SET or GETRANGE of the same bytes (the floor), in one binary and one
// run: a Put (Create, Write, Commit) of a 1 MiB rest, and a 16 KiB
// ReadAt, a page of toolcap_read.
//
//	go test -run '^$' -bench . -benchtime 2s ./

const (
	benchEntry = 1 << 20
	benchPage  = 16 << 10
)

// benchServer starts a Redis that evicts (allkeys-lru) at 256 MiB: a long
// run of Puts pays what a full store pays, as the directory store's
// benchmark does.
func benchServer(b *testing.B) *server {
	b.Helper()
	return startServer(b, "--maxmemory", "256mb", "--maxmemory-policy", "allkeys-lru")
}

func benchRedisStore(b *testing.B, srv *server) *redisrest.Store {
	b.Helper()
	s, err := redisrest.Open(srv.URL(), rest.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

func benchDir(b *testing.B) *rest.Dir {
	b.Helper()
	d, err := rest.OpenDir(filepath.Join(b.TempDir(), "store"), rest.Config{MaxBytes: 64 * benchEntry})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func BenchmarkPut(b *testing.B) {
	data := testBytes(1, benchEntry)
	srv := benchServer(b)
	putAll := func(b *testing.B, s rest.Store) {
		b.ReportAllocs()
		b.SetBytes(benchEntry)
		for b.Loop() {
			put(b, s, "scope", data)
		}
	}
	b.Run("redisrest", func(b *testing.B) { putAll(b, benchRedisStore(b, srv)) })
	b.Run("SET", func(b *testing.B) {
		// A new key each time, with a time to live, as an entry is.
		c := srv.client()
		ctx := context.Background()
		b.ReportAllocs()
		b.SetBytes(benchEntry)
		for i := 0; b.Loop(); i++ {
			if err := c.Set(ctx, "bench:set:"+strconv.Itoa(i), data, rest.DefaultTTL).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dir", func(b *testing.B) { putAll(b, benchDir(b)) })
}

func BenchmarkReadAt(b *testing.B) {
	data := testBytes(2, benchEntry)
	srv := benchServer(b)
	ctx := context.Background()
	// walk reads 16 KiB pages at offsets that walk the entry.
	walk := func(b *testing.B, read func(p []byte, off int64) error) {
		p := make([]byte, benchPage)
		b.ReportAllocs()
		b.SetBytes(benchPage)
		off := int64(0)
		for b.Loop() {
			if err := read(p, off); err != nil {
				b.Fatal(err)
			}
			off = (off + benchPage) % (benchEntry - benchPage)
		}
	}
	readStore := func(b *testing.B, s rest.Store) {
		info := put(b, s, "scope", data)
		r, err := s.Open(ctx, "scope", info.Ref)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		walk(b, func(p []byte, off int64) error {
			_, err := r.ReadAt(p, off)
			return err
		})
	}
	b.Run("redisrest", func(b *testing.B) { readStore(b, benchRedisStore(b, srv)) })
	b.Run("GETRANGE", func(b *testing.B) {
		c := srv.client()
		if err := c.Set(ctx, "bench:getrange", data, 0).Err(); err != nil {
			b.Fatal(err)
		}
		walk(b, func(p []byte, off int64) error {
			got, err := c.GetRange(ctx, "bench:getrange", off, off+int64(len(p))-1).Result()
			copy(p, got)
			return err
		})
	})
	b.Run("dir", func(b *testing.B) { readStore(b, benchDir(b)) })
}
