package bench

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// defaultBallastMiB is the size of the live heap the benchmark binary keeps.
const defaultBallastMiB = 64

// TestMain keeps a ballast: a live, pointer-free heap object that stands in
// for the rest of an agent program (its history, clients and caches).
//
// Without it the binary's heap is a few MiB, so the garbage collector runs
// every few hundred 16 KiB cuts, and its cadence and the page faults that
// follow the scavenger dominate the timing of every benchmark that
// allocates: on a shared 2-core machine the same benchmark varied by more
// than 2x from one sample to the next, hiding a 20% target. The ballast is
// never written, so it costs address space, not memory, and the collector
// does not scan it. It applies to subjects and baselines alike.
//
// BENCH_BALLAST_MIB sets its size; 0 turns it off.
func TestMain(m *testing.M) {
	mib := defaultBallastMiB
	if s := os.Getenv("BENCH_BALLAST_MIB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "BENCH_BALLAST_MIB=%q: want a number of MiB >= 0\n", s)
			os.Exit(2)
		}
		mib = n
	}
	ballast := make([]byte, mib<<20)
	code := m.Run()
	runtime.KeepAlive(ballast)
	os.Exit(code)
}
