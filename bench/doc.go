// Package bench measures what toolcap costs per call, with the baselines it
// is judged against compiled into the same test binary, so a subject and its
// baseline always share one run, one machine and one build.
//
// It holds no library code: everything is in its _test.go files and runs
// with
//
//	go test ./bench -run '^$' -bench . -count=10 -benchmem
//
// or the bench/run script, which does that and prints a benchstat summary.
// Every benchmark name ends in impl=<name>, so
//
//	benchstat -col /impl results.txt
//
// puts each subject beside its baselines. docs/benchmarks.md explains each
// baseline, gives the targets and quotes a run, whose raw output is in
// testdata. The test binary keeps a 64 MiB ballast heap (see TestMain) so
// that the garbage collector's cadence on a toy heap does not drown the
// ratios; BENCH_BALLAST_MIB=0 turns it off.
//
// # Benchmarks
//
//   - BenchmarkChain/n=N: a handler behind N no-op middleware composed by
//     [chain.Chain] (impl=chain), against the same closures nested by hand
//     (impl=hand), a grpc-go-style chain that builds the next handler on every
//     call (impl=grpc) and a plain loop over post-processing funcs
//     (impl=loop).
//   - BenchmarkResultShape/n=N: the same N no-op layers over four result
//     shapes: four bare words (impl=words32, the baseline), chain.Result
//     (impl=result), the earlier 48-byte result (impl=wide48) and an in-place
//     func(ctx, *Call, *Result) (impl=inplace).
//   - BenchmarkTruncate/<alphabet>/<size>: [middleware.Truncate] at 16 KiB
//     (impl=truncate) against one 16 KiB allocation and copy, the floor of
//     producing any capped string (impl=clone).
//   - BenchmarkStrategy/<input>/1MiB: [cut.Cut] to 16 KiB with head
//     (impl=head, the baseline: middleware.Truncate's rule), head_tail
//     (impl=head_tail) and head_tail with keep_lines (impl=head_tail_lines).
//   - BenchmarkJSON/lock/<size>: the json strategy on a package-lock.json
//     (impl=json) against [json.Valid] on the same bytes (impl=valid).
//   - BenchmarkExecuteTools/<n>calls/<content>: the whole worker path (cap,
//     four user middleware, ceiling) against calling the tools and
//     [middleware.Truncate] directly, reported per op and per call.
//   - BenchmarkFanout/<n>calls: a batch of instant calls through the direct
//     path one after another (impl=loop), the direct path under an errgroup
//     with SetLimit(8) (impl=errgroup), and the worker with a context that
//     cannot be cancelled (impl=worker) and one that can (impl=worker-cancel).
//   - BenchmarkLoad: [manifest.Load] with two TOML files and an environment.
//
// [chain.Chain]: https://pkg.go.dev/github.com/toolcap/toolcap/chain#Chain
// [middleware.Truncate]: https://pkg.go.dev/github.com/toolcap/toolcap/middleware#Truncate
// [manifest.Load]: https://pkg.go.dev/github.com/toolcap/toolcap/manifest#Load
// [cut.Cut]: https://pkg.go.dev/github.com/toolcap/toolcap/cut#Cut
// [json.Valid]: https://pkg.go.dev/encoding/json#Valid
package bench
