package gitleaks_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolcap/toolcap/redact"
	"github.com/toolcap/toolcap/redact/gitleaks"
)

// buildLog returns n bytes of text like a CI build's log (go, npm and
// docker steps, test results, digests, URLs, the words "key", "token"
// and "auth" in passing), holding no secret, the same on every call.
func buildLog(n int) string {
	lines := []string{
		"go: downloading github.com/spf13/cobra v1.9.1",
		"go: downloading golang.org/x/sys v0.30.0",
		"ok  \tgithub.com/acme/widget/internal/store\t0.412s\tcoverage: 81.3% of statements",
		"--- PASS: TestTokenRefresh/expired (0.00s)",
		"npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory.",
		"added 1187 packages, and audited 1188 packages in 14s",
		"Step 7/12 : RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates",
		" ---> Using cache",
		" ---> 3f2a9c1d7e4b",
		"#12 writing image sha256:9c4f1e2b7d3a8f6e5c0b1a2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f done",
		"[INFO] Downloading from central: https://repo.maven.apache.org/maven2/org/slf4j/slf4j-api/2.0.9/slf4j-api-2.0.9.pom",
		"warning: unused variable `key` in src/cache.rs:112:9",
		"INFO  auth: refreshing session for user 4411 (provider=github)",
		"DEBUG http: GET /api/v2/items?page=3 200 12.4ms",
		"compiling 214 files with tsc --project tsconfig.build.json",
		"  at Object.<anonymous> (/home/runner/work/app/app/src/server.ts:88:13)",
	}
	var b strings.Builder
	b.Grow(n + 200)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "2025-06-01T12:%02d:%02d.%03dZ %s\n", i/60%60, i%60, i%1000, lines[i%len(lines)])
	}
	return b.String()[:n]
}

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
		{"16KiB", buildLog(16 << 10)},
		{"1MiB", buildLog(1 << 20)},
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
