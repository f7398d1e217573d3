package rest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// chunkSize is the size of the pieces a memory entry holds its bytes in:
// an entry grows by a piece at a time instead of doubling one slice, so
// that what it allocates stays within a piece of what the quota counts.
const chunkSize = 64 << 10

// Memory is a [Store] in memory, for a program that keeps the rest for its
// own lifetime. It holds at most its quota, entries being written
// included. An entry is released when it expires, as [Dir] removes its
// file: by a timer set to the earliest expiry (no goroutine while it
// waits, none armed while the store is empty), and by every Create,
// Commit and Open, which first release the expired entries. [Memory.Close]
// stops the timer; a store dropped without Close stops it when it is
// collected.
//
// A Reader keeps reading an entry that is evicted while it is open (its
// bytes stay alive until the Reader is dropped), so memory in use may pass
// the quota by what open Readers hold.
type Memory struct {
	lim limits
	q   *quota[*memData]
}

// MaxEntryBytes returns the most one entry keeps ([EntryBound]).
func (m *Memory) MaxEntryBytes() int64 { return m.lim.maxEntryBytes }

// memData is the bytes of a committed memory entry. It never changes once
// committed, so Readers share it without a lock.
type memData struct {
	chunks   [][]byte // every chunk but the last is chunkSize long
	size     int64
	original int64
}

// NewMemory returns an empty memory store bounded by cfg, whose MaxBytes
// defaults to [DefaultMemoryMaxBytes].
func NewMemory(cfg Config) *Memory {
	lim := resolve(cfg, DefaultMemoryMaxBytes, 0)
	m := &Memory{lim: lim, q: newQuota(lim, func(string, *memData) {})}
	// The timer holds the quota, and so the entries, until it fires: a
	// store nobody holds stops it, so that its entries go with it.
	runtime.AddCleanup(m, (*quota[*memData]).close, m.q)
	return m
}

// Close releases the expired entries and stops the timer that releases
// them as they expire. The store stays usable: a use after Close still
// releases the expired entries it meets. Close always returns nil.
func (m *Memory) Close() error {
	m.q.close()
	return nil
}

// Usage returns what m holds.
func (m *Memory) Usage() Usage { return m.q.usage() }

// Create starts a new entry in scope. It fails only when ctx is done.
func (m *Memory) Create(ctx context.Context, scope string) (Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("rest: create: %w", err)
	}
	m.q.sweep()
	ref := NewRef()
	return &memEntry{m: m, ref: ref, key: EntryKey(scope, ref), b: NewBounded(m.lim.maxEntryBytes)}, nil
}

// Open returns the committed entry ref of scope and renews its time to
// live. Every ref it cannot read, whatever the reason, is [ErrUnknown].
func (m *Memory) Open(ctx context.Context, scope, ref string) (Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("rest: open: %w", err)
	}
	if !ValidRef(ref) {
		return nil, ErrUnknown
	}
	d, _, ok := m.q.use(EntryKey(scope, ref))
	if !ok {
		return nil, ErrUnknown
	}
	return &memReader{d: d, info: Info{Ref: ref, Size: d.size, Original: d.original}}, nil
}

// memEntry is a memory entry being written.
type memEntry struct {
	m   *Memory
	ref string
	key string

	mu       sync.Mutex
	b        Bounded
	chunks   [][]byte // every chunk but the last is chunkSize long
	reserved int64    // what the quota holds for it: what it keeps until Commit
}

func (e *memEntry) Ref() string { return e.ref }

// Write keeps p up to the store's MaxEntryBytes and counts the rest.
func (e *memEntry) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.b.Write(p, e.keep)
}

// keep reserves the room of p in the quota and appends it to the chunks,
// filling the last one to chunkSize first.
func (e *memEntry) keep(p []byte) error {
	if err := e.m.q.reserve(int64(len(p))); err != nil {
		return fmt.Errorf("rest: entry %s: %w", e.ref, err)
	}
	e.reserved += int64(len(p))
	for len(p) > 0 {
		n := len(e.chunks)
		if n == 0 || len(e.chunks[n-1]) == chunkSize {
			e.chunks = append(e.chunks, make([]byte, 0, min(len(p), chunkSize)))
			n++
		}
		last := e.chunks[n-1]
		k := min(len(p), chunkSize-len(last))
		e.chunks[n-1] = append(last, p[:k]...)
		p = p[k:]
	}
	return nil
}

func (e *memEntry) Commit() (Info, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.b.Err(); err != nil {
		return Info{}, err
	}
	e.b.Finish()
	d := &memData{chunks: e.chunks, size: e.b.Size(), original: e.b.Original()}
	// The entry may be younger than entries opened while it was written:
	// it is the youngest from its Commit on.
	_ = e.m.q.commit(e.key, e.reserved, e.m.lim.now(), d, nil)
	e.chunks = nil
	return e.b.Info(e.ref), nil
}

func (e *memEntry) Abort() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.b.Finish() {
		return nil
	}
	e.m.q.release(e.reserved)
	e.reserved = 0
	e.chunks = nil
	return nil
}

// errClosed is the error of a ReadAt after Close.
var errClosed = errors.New("rest: reader closed")

// memReader reads a committed memory entry.
type memReader struct {
	d      *memData
	info   Info
	closed atomic.Bool
}

func (r *memReader) Info() Info { return r.info }

func (r *memReader) Close() error {
	r.closed.Store(true)
	return nil
}

// ReadAt follows the io.ReaderAt contract: fewer bytes than len(p) come
// with an error, io.EOF at the end of what the entry holds.
func (r *memReader) ReadAt(p []byte, off int64) (int, error) {
	if r.closed.Load() {
		return 0, errClosed
	}
	if off < 0 {
		return 0, fmt.Errorf("rest: read of entry %s at negative offset %d", r.info.Ref, off)
	}
	if len(p) == 0 {
		return 0, nil
	}
	n := 0
	for n < len(p) && off < r.d.size {
		c := r.d.chunks[off/chunkSize]
		k := copy(p[n:], c[off%chunkSize:])
		n += k
		off += int64(k)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
