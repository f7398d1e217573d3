package gitleaks_test

import (
	"sync"
	"testing"

	"github.com/toolcap/toolcap/internal/redacttest"
	"github.com/toolcap/toolcap/redact"
	"github.com/toolcap/toolcap/redact/gitleaks"
)

// detector is one detector shared by the benchmarks and tests that do
// not test New.
var detector = sync.OnceValue(gitleaks.New)

func mustDetector(tb testing.TB) *gitleaks.Detector {
	tb.Helper()
	return detector()
}

// BenchmarkNew builds a detector: this package's (its rules compiled on
// first use), and gitleaks' own (every rule compiled).
func BenchmarkNew(b *testing.B) {
	b.Run("redact", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			gitleaks.New()
		}
	})
	b.Run("gitleaks", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := newReference(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFind finds in a build log with no secret: with this package's
// detector, and gitleaks' own.
func BenchmarkFind(b *testing.B) {
	ref, err := newReference()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		text string
	}{
		{"16KiB", redacttest.BuildLog(16 << 10)},
		{"1MiB", redacttest.BuildLog(1 << 20)},
	} {
		for _, dc := range []struct {
			name string
			d    redact.Detector
		}{{"redact", mustDetector(b)}, {"gitleaks", ref}} {
			b.Run(bc.name+"/"+dc.name, func(b *testing.B) {
				if f := dc.d.Find(bc.text); len(f) != 0 {
					b.Fatalf("found %v in the build log", f)
				}
				b.SetBytes(int64(len(bc.text)))
				b.ReportAllocs()
				for b.Loop() {
					dc.d.Find(bc.text)
				}
			})
		}
	}
}
