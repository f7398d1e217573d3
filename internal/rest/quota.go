package rest

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Usage is what a store holds, for a status line and for tests.
type Usage struct {
	// Entries is the number of committed entries.
	Entries int
	// Bytes is what the committed entries hold.
	Bytes int64
	// Writing is what entries being written have reserved so far.
	Writing int64
	// MaxBytes is the quota: Bytes + Writing never passes it.
	MaxBytes int64
}

// limits is a [Config] with its defaults applied.
type limits struct {
	maxBytes      int64
	maxEntryBytes int64
	ttl           time.Duration
	log           hclog.Logger
	now           func() time.Time
}

// resolve applies the defaults to cfg. A negative field is taken as zero:
// the manifest validates values before they reach a store, and a
// constructor without an error result has nothing better to do with one.
// overhead is what a store adds to each entry (the header of a file): the
// per-entry bound leaves room for it inside the quota.
func resolve(cfg Config, defaultMaxBytes, overhead int64) limits {
	l := limits{
		maxBytes:      cfg.MaxBytes,
		maxEntryBytes: cfg.MaxEntryBytes,
		ttl:           cfg.TTL,
		log:           cfg.Logger,
		now:           cfg.Now,
	}
	if l.maxBytes <= 0 {
		l.maxBytes = defaultMaxBytes
	}
	if l.maxEntryBytes <= 0 {
		l.maxEntryBytes = DefaultMaxEntryBytes
	}
	l.maxEntryBytes = max(min(l.maxEntryBytes, l.maxBytes-overhead), 0)
	if l.ttl <= 0 {
		l.ttl = DefaultTTL
	}
	if l.log == nil {
		l.log = hclog.NewNullLogger()
	} else {
		l.log = l.log.Named("rest")
	}
	if l.now == nil {
		l.now = time.Now
	}
	return l
}

// EntryKey names the entry ref of scope: the hex sha256 of both, so that
// the same ref in another scope names nothing, and neither the scope nor
// the ref shows in a file name, a key or a log line. A ref has a fixed
// length and no NUL, so the input is unambiguous. Every store names its
// entries with it.
func EntryKey(scope, ref string) string {
	h := sha256.New()
	h.Write([]byte("toolcap/rest\x00"))
	h.Write([]byte(ref))
	h.Write([]byte{0})
	h.Write([]byte(scope))
	return hex.EncodeToString(h.Sum(nil))
}

// keyLen is the length of an entry key: 64 hex digits.
const keyLen = 2 * sha256.Size

// isKey reports whether name has the form of an entry key, so that a
// directory scan leaves alone what it did not write.
func isKey(name string) bool {
	if len(name) != keyLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// shortKey is the part of a key a log line names: enough to follow one
// entry through the log, nothing of its scope.
func shortKey(key string) string { return key[:min(len(key), 12)] }

// item is one committed entry in the quota's index.
type item[T any] struct {
	key  string
	size int64
	used time.Time // commit or last Open: its time to live runs from here
	elem *list.Element
	val  T
}

// quota is the index of a [Memory] store: the committed entries by last
// use, their bytes, and the bytes reserved by entries being written, all
// under one lock, so that the sum never passes the quota whatever the
// number of writers. The store gives it a drop func that releases an
// entry's data; it runs with the lock held, so that the bytes are gone
// before the room is handed out. (A [Dir] counts what its directory holds
// instead, for every store that shares it: dirshare.go.)
//
// An entry expires TTL after its last use, and its data is dropped then,
// not when a later use happens to meet it: kept output may hold secrets.
// Every change of the index (a commit, an Open, an eviction) first drops
// the expired entries, and a timer fires when the oldest one expires and
// drops it: a runtime timer, no goroutine while it waits, and none armed
// while the index is empty. close stops it.
type quota[T any] struct {
	lim  limits
	drop func(key string, val T)

	mu      sync.Mutex
	held    int64 // committed bytes
	pending int64 // bytes reserved by entries being written
	items   map[string]*item[T]
	lru     list.List // of *item[T]; front: the oldest by last use

	exp    expiry // sweeps at the oldest entry's expiry
	closed bool   // the store was closed: the timer is no longer armed
}

func newQuota[T any](lim limits, drop func(key string, val T)) *quota[T] {
	return &quota[T]{lim: lim, drop: drop, items: make(map[string]*item[T])}
}

// sweep drops the expired entries: a store's Create calls it.
func (q *quota[T]) sweep() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.lim.now()
	q.sweepLocked(now)
	q.armLocked(now)
}

// close drops the expired entries and stops the timer for good. The index
// still works: the uses of a store after its Close drop what they meet.
func (q *quota[T]) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sweepLocked(q.lim.now())
	q.closed = true
	q.exp.stop()
}

// expire is the timer's: it drops the entries expired by now and arms the
// timer for the next.
func (q *quota[T]) expire() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.exp.fired()
	if q.closed {
		return
	}
	now := q.lim.now()
	q.sweepLocked(now)
	q.armLocked(now)
}

// armLocked arms the expiry timer for the oldest entry's expiry, and stops
// it when there is none.
func (q *quota[T]) armLocked(now time.Time) {
	if q.closed {
		return
	}
	front := q.lru.Front()
	if front == nil {
		q.exp.stop()
		return
	}
	q.exp.arm(front.Value.(*item[T]).used.Add(q.lim.ttl), now, q.expire)
}

// reserve takes n bytes of the quota for an entry being written, evicting
// expired entries, then the oldest by last use, when it needs the room.
// When even an empty index leaves no room (entries being written hold the
// rest), it evicts nothing and fails with [ErrFull].
func (q *quota[T]) reserve(n int64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.held+q.pending+n <= q.lim.maxBytes {
		q.pending += n
		return nil
	}
	if q.pending+n > q.lim.maxBytes {
		return fmt.Errorf("%d more bytes do not fit the quota of %d bytes (%d reserved by entries being written): %w",
			n, q.lim.maxBytes, q.pending, ErrFull)
	}
	now := q.lim.now()
	q.sweepLocked(now)
	for q.held+q.pending+n > q.lim.maxBytes {
		q.evictLocked(q.lru.Front().Value.(*item[T]), "quota", now)
	}
	q.armLocked(now)
	q.pending += n
	return nil
}

// release gives back n reserved bytes: an entry aborted, or a failed write.
func (q *quota[T]) release(n int64) {
	q.mu.Lock()
	q.pending -= n
	q.mu.Unlock()
}

// commit turns the size bytes an entry reserved into a committed entry
// under key, last used at used. publish, when not nil, makes the entry's
// data visible (a rename) under the lock, so that the index and the data
// agree for every other caller; when it fails, nothing changes and the
// reservation is still the caller's to release.
func (q *quota[T]) commit(key string, size int64, used time.Time, val T, publish func() error) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if publish != nil {
		if err := publish(); err != nil {
			return err
		}
	}
	q.pending -= size
	if old, ok := q.items[key]; ok { // a ref is random: this does not happen, but keep the sums right
		q.removeLocked(old)
	}
	q.insertLocked(key, size, used, val)
	now := q.lim.now()
	q.sweepLocked(now)
	q.armLocked(now)
	return nil
}

// use returns the entry under key and renews its time to live (it becomes
// the youngest), removing the expired entries it meets first. ok is false
// for an unknown or expired key. now is the time it renewed the entry to.
func (q *quota[T]) use(key string) (val T, now time.Time, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now = q.lim.now()
	q.sweepLocked(now)
	defer q.armLocked(now)
	it, ok := q.items[key]
	if !ok {
		return val, now, false
	}
	if q.expired(it, now) { // out of LRU order when the clock went back
		q.evictLocked(it, "expired", now)
		return val, now, false
	}
	it.used = now
	q.lru.MoveToBack(it.elem)
	return it.val, now, true
}

// usage returns what the index holds.
func (q *quota[T]) usage() Usage {
	q.mu.Lock()
	defer q.mu.Unlock()
	return Usage{Entries: len(q.items), Bytes: q.held, Writing: q.pending, MaxBytes: q.lim.maxBytes}
}

func (q *quota[T]) expired(it *item[T], now time.Time) bool {
	return !now.Before(it.used.Add(q.lim.ttl))
}

// sweepLocked evicts the expired entries at the old end of the index. The
// index is in last-use order, so it stops at the first live one.
func (q *quota[T]) sweepLocked(now time.Time) {
	for e := q.lru.Front(); e != nil; e = q.lru.Front() {
		it := e.Value.(*item[T])
		if !q.expired(it, now) {
			return
		}
		q.evictLocked(it, "expired", now)
	}
}

func (q *quota[T]) insertLocked(key string, size int64, used time.Time, val T) {
	it := &item[T]{key: key, size: size, used: used, val: val}
	it.elem = q.lru.PushBack(it)
	q.items[key] = it
	q.held += size
}

func (q *quota[T]) removeLocked(it *item[T]) {
	q.lru.Remove(it.elem)
	delete(q.items, it.key)
	q.held -= it.size
}

// evictLocked removes it from the index and drops its data, with the one
// debug line every eviction gets.
func (q *quota[T]) evictLocked(it *item[T], reason string, now time.Time) {
	q.removeLocked(it)
	q.drop(it.key, it.val)
	q.lim.log.Debug("entry evicted", "entry", shortKey(it.key), "reason", reason,
		"bytes", it.size, "idle", now.Sub(it.used).Round(time.Millisecond))
}
