// Package redisrest keeps the rest of cut tool results in Redis, so that
// a ref made by one replica of a front end is readable from any other.
//
// [Store] implements [rest.Store]. A program passes it to a worker
// (worker.WithRest) or a proxy as it would a [rest.Memory]; toolcap
// selects it with a URL in the manifest:
//
//	[worker.tool_output.rest]
//	store = "redis://redis.internal:6379/0"
//
// # Keys
//
// Each entry is one Redis string, named by a hash of its scope and ref
// (never the scope itself) under a prefix ([DefaultPrefix]): a 24-byte
// header (what the entry holds and the length of the whole output)
// followed by the output's first bytes. An entry is written to a temp key
// of its own, in round trips of at most [ChunkBytes], so a large output
// is never held whole; the temp key lives [TempTTL] past its last write,
// so that an abandoned write disappears. Commit writes the header and
// renames the temp key into place with the entry's time to live, in one
// script, so that a reader sees all of an entry or nothing; an entry that
// fits one round trip is written by one SET at Commit. Open renews the
// time to live (PEXPIRE) and reads the header; ReadAt is a GETRANGE of
// just the page asked.
//
// Both keys of an entry carry the same hash tag, so the store works on a
// Redis Cluster (redis.UniversalClient) as on a single server.
//
// # Bounds
//
// The quota is Redis's own: run it with maxmemory and an eviction policy
// (allkeys-lru, or volatile-lru: every key of this store has a time to
// live). An evicted entry is a ref that fails as an unknown one
// ([rest.ErrUnknown]), and a write that Redis refuses for want of memory
// (an OOM error: maxmemory with noeviction) fails with an error wrapping
// [rest.ErrFull]. Config.MaxEntryBytes holds as in every store (past it,
// bytes are counted, not sent), and at most [MaxEntryBytes], what one
// Redis string holds; Config.MaxBytes only bounds MaxEntryBytes, and
// Config.Now is not used (Redis keeps the time).
//
// # Faults
//
// A store that fails never fails a cut: the front end cuts with the plain
// marker. Every operation has a deadline ([DefaultTimeout]); after an
// error that is not Redis's answer (a refused connection, a timeout), the
// store fails at once, without a round trip, for [Pause], so that an
// outage costs one wait, not one per cut. Reconnection is go-redis's own.
package redisrest
