package rest

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"io"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Store keeps the whole output of a tool whose result was cut, so that the
// model can read on. An entry is written once (Create, Write, Commit),
// then read by range (Open, ReadAt) until it expires or is evicted. It is
// bound to the scope it was created in: Open with any other scope fails as
// for an unknown ref.
//
// Implementations are safe for concurrent use and bounded: a total quota,
// a per-entry bound and a time to live (see [Config]). A Store never
// fails a cut: a front end whose Create, Write or Commit fails cuts as if
// it had no store.
type Store interface {
	// Create starts a new entry in scope, with a fresh ref. Nothing of it
	// is readable until Commit.
	Create(ctx context.Context, scope string) (Entry, error)
	// Open returns the committed entry ref of scope, and renews its time
	// to live. An unknown, expired, evicted or foreign ref (one made in
	// another scope) is an error that wraps [ErrUnknown], the same for
	// each, so that a ref reveals nothing outside its scope.
	Open(ctx context.Context, scope, ref string) (Reader, error)
	// Close releases what the store holds in the process: its timer of the
	// next expiry (after removing what has expired), the entries being
	// written, its files and connections. Committed entries that outlive
	// the process (a directory's, Redis's) stay until their TTL. A use
	// after Close may fail or may work as before; Close is safe to call
	// more than once.
	Close() error
}

// Entry is an entry being written. Write keeps at most the store's
// MaxEntryBytes and counts the rest, so a stream of any length can be
// written to it; it fails only when the store does (a full quota that no
// eviction can free, a disk error). After an error, Abort it.
type Entry interface {
	io.Writer
	// Ref is the entry's ref, known from Create on, so that a marker can
	// name it before the output ends.
	Ref() string
	// Commit makes the entry readable under its ref, atomically: a reader
	// sees all of it or nothing. It returns what the entry holds.
	Commit() (Info, error)
	// Abort discards the entry. It is safe after Commit (a no-op) and
	// more than once.
	Abort() error
}

// EntryBound is implemented by a store that tells the most one entry
// keeps (its MaxEntryBytes, defaults applied), so that a front end sees
// before it commits an entry that it would keep nothing past the point a
// read would start from, and discards it instead of leaving it to the
// quota. Memory, Dir and the Redis store implement it.
type EntryBound interface {
	MaxEntryBytes() int64
}

// Reader reads a committed entry. Close it when done.
type Reader interface {
	io.ReaderAt
	// Info says what the entry holds.
	Info() Info
	Close() error
}

// Info describes an entry.
type Info struct {
	// Ref is the entry's ref.
	Ref string
	// Size is the number of bytes the entry holds: the first Size bytes
	// of the output.
	Size int64
	// Original is the length of the whole output written to the entry. It
	// is more than Size when the output passed the store's MaxEntryBytes:
	// the bytes past Size are gone.
	Original int64
}

// ErrUnknown is the error of a ref that names no readable entry in the
// scope asked: never made, expired, evicted, or made in another scope.
var ErrUnknown = errors.New("expired or unknown; run the tool again")

// ErrFull is the error of a Write that the store's quota cannot hold even
// after evicting every committed entry (other entries being written hold
// the rest).
var ErrFull = errors.New("store full")

// Defaults of a [Config].
const (
	// DefaultMemoryMaxBytes is the quota of a memory store: 64 MiB.
	DefaultMemoryMaxBytes = 64 << 20
	// DefaultDirMaxBytes is the quota of a directory store: 1 GiB.
	DefaultDirMaxBytes = 1 << 30
	// DefaultMaxEntryBytes is the most one entry keeps: 256 MiB.
	DefaultMaxEntryBytes = 256 << 20
	// DefaultTTL is how long an entry lives after it was written or last
	// read: 24 hours.
	DefaultTTL = 24 * time.Hour
)

// Config bounds a store. A zero field takes its default.
type Config struct {
	// MaxBytes is the quota: the most bytes all entries hold together,
	// entries being written included. The oldest entries (by last use)
	// are evicted to make room. 0 means the store's default
	// ([DefaultMemoryMaxBytes] or [DefaultDirMaxBytes]). Stores that
	// share a directory hold it for the directory, each entry by the
	// quota it was written under ([Dir] says how).
	MaxBytes int64
	// MaxEntryBytes is the most one entry keeps; 0 means
	// [DefaultMaxEntryBytes]. It is at most MaxBytes.
	MaxEntryBytes int64
	// TTL is how long an entry lives after its Commit or its last Open; 0
	// means [DefaultTTL]. An entry is removed when it expires, while its
	// store is in use ([Dir] says how), not when a use meets it later. An
	// entry of a [Dir] lives by the TTL it was written with, whichever
	// store meets it.
	TTL time.Duration
	// Logger receives evictions and errors; nil is silent.
	Logger hclog.Logger
	// Now is the clock; nil means time.Now. Tests set it.
	Now func() time.Time
}

// refBytes is the number of random bytes of a ref: 128 bits.
const refBytes = 16

// RefLen is the length of every ref: 128 random bits in lower-case base32
// without padding, 26 characters of [a-z2-7], safe in JSON, URLs and file
// names.
const RefLen = 26

var refEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewRef returns a new ref: [RefLen] characters holding 128 bits from
// crypto/rand, which cannot be guessed.
func NewRef() string {
	var b [refBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return refEncoding.EncodeToString(b[:])
}

// ValidRef reports whether s has the form of a ref ([RefLen] characters of
// [a-z2-7]); a store checks it before it looks anything up, so that a
// malformed ref never reaches a file name or a key.
func ValidRef(s string) bool {
	if len(s) != RefLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}
