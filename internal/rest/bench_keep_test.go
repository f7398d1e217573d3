package rest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
)

// BenchmarkKeep is the cost of keeping the rest, against the same cut
// without a store (shape.Text) and against writing the output's bytes to
// a file (os.WriteFile, the floor of a directory store), in one run:
//
//	go test ./rest -run '^$' -bench Keep -benchmem
func BenchmarkKeep(b *testing.B) {
	fitting := strings.Repeat("x", 1000)
	big := numbered(1<<20, 3)
	p := shape.Policy{MaxBytes: shape.DefaultMaxBytes, KeepRest: true}
	ctx := rest.WithScope(context.Background(), "bench")
	dir := b.TempDir()
	d, err := rest.OpenDir(filepath.Join(dir, "store"), rest.Config{MaxBytes: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	mem, err := rest.NewKeeper(rest.NewMemory(rest.Config{MaxBytes: 64 << 20}))
	if err != nil {
		b.Fatal(err)
	}
	onDisk, err := rest.NewKeeper(d)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fits/shape", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			shape.Text(fitting, p)
		}
	})
	b.Run("fits/keeper", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			onDisk.Text(ctx, fitting, p)
		}
	})
	b.Run("1MiB/shape", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(big)))
		for b.Loop() {
			shape.Text(big, p)
		}
	})
	b.Run("1MiB/writefile", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(big)))
		name := filepath.Join(dir, "plain")
		data := []byte(big)
		for b.Loop() {
			if err := os.WriteFile(name, data, 0o600); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("1MiB/memory", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(big)))
		for b.Loop() {
			mem.Text(ctx, big, p)
		}
	})
	b.Run("1MiB/dir", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(big)))
		for b.Loop() {
			onDisk.Text(ctx, big, p)
		}
	})
}

// BenchmarkReadPage is the cost of a 16 KiB page of a kept 1 MiB output
// through the read tool, against pread of the same bytes from a file:
//
//	go test ./rest -run '^$' -bench ReadPage -benchmem
func BenchmarkReadPage(b *testing.B) {
	big := numbered(1<<20, 3)
	p := shape.Policy{MaxBytes: shape.DefaultMaxBytes, KeepRest: true}
	ctx := rest.WithScope(context.Background(), "bench")
	dir := b.TempDir()
	d, err := rest.OpenDir(filepath.Join(dir, "store"), rest.Config{})
	if err != nil {
		b.Fatal(err)
	}
	k, err := rest.NewKeeper(d)
	if err != nil {
		b.Fatal(err)
	}
	_, t, _ := k.Text(ctx, big, p)
	args, _ := json.Marshal(rest.ReadArgs{Ref: t.Ref, Offset: 500000})
	name := filepath.Join(dir, "plain")
	if err := os.WriteFile(name, []byte(big), 0o600); err != nil {
		b.Fatal(err)
	}
	b.Run("pread", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, p.MaxBytes)
		for b.Loop() {
			f, err := os.Open(name)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.ReadAt(buf, 500000); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := k.Read(ctx, args, p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
