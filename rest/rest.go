// Package rest keeps what a cut drops, so that the model can read on
// instead of running the tool again.
//
// When a tool's result is cut and the front end has a [Store], the whole
// output is written to an entry of the store and the marker names the next
// read, inside the same limit:
//
//	[truncated: N bytes dropped, refine your query or read the rest: toolcap_read {"ref":"…","offset":K}]
//
// The read tool, toolcap_read, answers with a page of the output from that
// offset, itself held to its limit, whose marker names the next offset;
// reading page after page from offset 0 gives back the output byte for
// byte. A worker given a store (worker.WithRest) registers the read tool
// and answers it; package history ages old results into stubs that name
// the same read.
//
// Entries are bounded (a quota, a per-entry bound, a time to live, oldest
// evicted first; see [Config]) and bound to a scope ([WithScope]): a ref
// made in one scope is refused in every other, with the same error as an
// unknown ref ([ErrUnknown]). [NewMemory] and [OpenDir] make the two
// stores here; the Redis store is the module
// github.com/toolcap/toolcap/adapters/redisrest. A store that fails never
// fails a cut: the marker falls back to its plain form.
package rest

import (
	"context"

	"github.com/toolcap/toolcap/internal/rest"
)

// Store keeps the whole output of a tool whose result was cut. An entry is
// written once (Create, then the [Entry]'s Write and Commit) and read by
// range (Open, then the [Reader]'s ReadAt) until it expires or is evicted.
// It is bound to the scope it was created in: Open with any other scope
// fails as for an unknown ref, with an error that wraps [ErrUnknown].
// Implementations are safe for concurrent use and bounded.
type Store = rest.Store

// Entry is an entry being written: Write keeps at most the store's
// per-entry bound and counts the rest; Ref names it from its creation on;
// Commit makes it readable atomically; Abort discards it.
type Entry = rest.Entry

// EntryBound is implemented by a store that tells the most one entry
// keeps, so that a front end discards an entry that would keep nothing
// past the point a read would start from. The stores here and the Redis
// store implement it.
type EntryBound = rest.EntryBound

// Reader reads a committed entry: ReadAt, its Info, Close.
type Reader = rest.Reader

// Info describes an entry: its ref, the bytes it holds (Size) and the
// length of the whole output written to it (Original).
type Info = rest.Info

// Definition is the read tool as a model is told of it: its name,
// description, title, the JSON schema of its arguments and its MCP
// annotations. (*worker.Worker).ReadTool returns it, for a program to
// advertise beside its own tools.
type Definition = rest.Definition

// Config bounds a store: its quota (MaxBytes), the most one entry keeps
// (MaxEntryBytes), the time to live of an entry after its last use (TTL),
// a logger and a clock. A zero field takes its default.
type Config = rest.Config

// ErrUnknown is the error of a ref that names no readable entry in the
// scope asked: never made, expired, evicted, or made in another scope.
var ErrUnknown = rest.ErrUnknown

// ErrFull is the error of a Write that the store's quota cannot hold even
// after evicting every committed entry.
var ErrFull = rest.ErrFull

// Defaults of a [Config].
const (
	// DefaultMemoryMaxBytes is the quota of a memory store: 64 MiB.
	DefaultMemoryMaxBytes = rest.DefaultMemoryMaxBytes
	// DefaultDirMaxBytes is the quota of a directory store: 1 GiB.
	DefaultDirMaxBytes = rest.DefaultDirMaxBytes
	// DefaultMaxEntryBytes is the most one entry keeps: 256 MiB.
	DefaultMaxEntryBytes = rest.DefaultMaxEntryBytes
	// DefaultTTL is how long an entry lives after it was written or last
	// read: 24 hours.
	DefaultTTL = rest.DefaultTTL
)

// NewMemory returns an empty store in memory, bounded by cfg (its quota
// defaults to [DefaultMemoryMaxBytes]), for the life of the process. Close
// it when done with it, to stop the timer that releases its entries as
// they expire.
func NewMemory(cfg Config) Store { return rest.NewMemory(cfg) }

// OpenDir opens the store in directory path, creating it (mode 0700) when
// it is missing, bounded by cfg (its quota defaults to
// [DefaultDirMaxBytes]). Processes that open the same directory share its
// entries and its bounds: each entry keeps the TTL and quota it was
// written under, and a store with a smaller quota or a shorter TTL never
// removes another's entries before their time. The store's first use
// indexes the entries there: expired ones and the temp files of writers
// that are gone (a crashed process) are removed; an expired entry is
// deleted within moments of its expiry while a store uses the directory.
//
// Close the store when done with it: it stops the timer that removes the
// entries as they expire (the next store to use the directory removes
// them then) and releases the directory's lock file.
//
// An existing directory must be private: a real directory (not a symlink),
// owned by the current user, with no permission for group or others (on
// unix). Anything else is an error that names the path and what is wrong.
func OpenDir(path string, cfg Config) (Store, error) {
	d, err := rest.OpenDir(path, cfg)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// WithScope returns ctx carrying scope: the refs made under ctx are
// readable only under a context of the same scope. A front end sets it per
// client session; a program, per conversation.
func WithScope(ctx context.Context, scope string) context.Context {
	return rest.WithScope(ctx, scope)
}
