package rest

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// header is the start of every entry file: magic, the entry's Original
// and Size, and the time to live and the quota it was written under,
// big-endian. ReadAt offsets are past it. Size lets Open tell a whole
// entry from a file cut short (by a crash of the machine between the
// rename and the write-back).
const headerLen = 40

// headerLenV1 is the length of the header of the first version, without
// the time to live and the quota: an entry of that version is read, and
// lives by the settings of the store that meets it.
const headerLenV1 = 24

var (
	magic   = [8]byte{'t', 'c', 'r', 'e', 's', 't', 0, 2}
	magicV1 = [8]byte{'t', 'c', 'r', 'e', 's', 't', 0, 1}
)

// DirOverhead is what the quota of a [Dir] counts of each entry past its
// bytes: its file's header (none in plain mode).
const DirOverhead = headerLen

// tmpDir is the subdirectory entries are written in until their Commit.
const tmpDir = "tmp"

// lockName is the file in the store's directory that the stores sharing
// it lock (flock) around each change, and whose content counts the
// changes, so that a store reads the directory again only when another
// changed it.
const lockName = "lock"

// tmpGrace is how long a temp file whose writer cannot be asked (a name
// of the first version, or no advisory locks on this system) may go
// unwritten before a store takes it for the leftover of a crashed process
// and removes it.
const tmpGrace = time.Hour

// grantBytes is the most an entry reserves past what its Write needs, so
// that a stream takes the directory's lock once a MiB at best, not once a
// write (see reserveLocked).
const grantBytes = 1 << 20

// Dir is a [Store] in a private directory, which outlives the process and
// which processes share (toolcap mcp, toolcap cap --keep-rest, toolcap
// read): each entry is one file, mode 0600, named by a hash of its scope
// and ref, in a directory mode 0700 owned by the current user. An entry is
// written in the tmp/ subdirectory and renamed into place on Commit, so a
// reader never sees half of one. The file's modification time is the
// entry's last use.
//
// # Shared bounds
//
// The bounds hold for the directory, whichever stores write to it: each
// change (a reservation, a Commit, an Open, a removal) is made under an
// advisory lock of the directory (flock of its file "lock", on unix), and
// counts what is on disk: every entry file, and every temp file, whose
// size is what its writer reserved (a writer reserves before it writes,
// by growing its temp file). A store keeps an index of the entry files,
// read again when another store changed the directory (the lock file
// counts the changes) and looked at again when it must evict.
//
// Each entry keeps the settings it was written under in its header (in
// plain mode, its meta file): its time to live and its quota (MaxBytes). Another store, whatever its own
// settings, lets it live that long and counts it against that quota, so
// that a process with a short TTL or a small quota cannot remove the
// entries that another wrote under its own before their time. The rule:
// walking the entries from the youngest by last use to the oldest, with
// S the bytes of the temp files and of the younger entries kept, an entry
// is evicted when S and its own bytes pass its quota, or when a younger
// entry with a quota no smaller was evicted. Under one quota this is the
// least recently used order, evicting the oldest until the directory
// holds its quota, as a store alone always did. Under several, an entry
// goes only when the directory, seen from its last use, holds more than
// it was promised room for: a store with a small quota evicts its own
// entries early, not the older entries of a store with a larger one, and
// the directory holds at most the largest quota among its entries (and
// its writers). A writer's own quota bounds what is being written: a
// Write that would take the temp files past it, even after every eviction,
// fails with [ErrFull]. So a lower MaxBytes takes effect on the entries
// written under a higher one only as they go by their own bounds (their
// TTL, or eviction under their quota); a higher one lets new entries
// evict the oldest that were written under a lower one.
//
// # Expiry
//
// An entry expires its own TTL after its Commit or its last Open, by any
// store sharing the directory, and its file is removed then, not when a
// later use happens to meet it: kept output may hold secrets. The bound:
// while the store is in use, from its first use (Create, Open, Usage)
// until [Dir.Close], the file of an entry it knows is removed when the
// entry expires, by a timer set to the earliest expiry, so within the
// timer's latency (milliseconds). The timer is a runtime timer: no
// goroutine while it waits, and none armed while the store knows no entry.
// Every Create, Commit and Open also first removes every expired entry the
// store knows. The store knows every entry of the directory as of its
// last use; before it removes one, it looks at the file: an entry another
// process renewed since lives on. Outside the bound is an entry that
// expires when no store that knows it is in use; the next store to use
// the directory removes it.
//
// # Temp files
//
// A temp file is named entry-<pid>-<random> and locked (flock) by its
// writer while it is written. Abort and [Dir.Close] remove it; a store
// removes at its first use, and when the temp files leave no room, every
// temp file whose writer is gone (nobody holds its lock: a process that
// crashed or was killed), whatever its age.
//
// # The directory
//
// Each use looks at the directory first (one lstat): a directory removed
// while the store runs is created again (mode 0700), and so is one
// created again by another store after it was removed; a directory
// replaced by another (its device and inode changed while the one the
// store opened still exists, renamed away) is refused: every use fails,
// reading and writing nothing through it, until a new store is opened on
// the path.
//
// On unix, a Reader keeps reading an entry evicted while it is open: the
// file is unlinked, the open descriptor reads on. Writes are not synced to
// the disk: after a crash of the machine an entry may be lost, never read
// wrong (Open checks the header against the file's size).
type Dir struct {
	path string
	tmp  string
	lim  limits
	// hdr is the header's length of the entries it writes: headerLen, or
	// 0 in plain mode.
	hdr int64
	// plain is set by [OpenPlainDir]: entries are header-less text files.
	plain bool
	pid   int

	// mu guards what follows, and is held around the directory's lock.
	mu    sync.Mutex
	ready bool     // the index is built (the store's first use is done)
	lockf *os.File // the lock file, open from the first use
	dirf  *os.File // the directory, open since the store opened it
	dev   uint64   // the directory's device and inode, when hasID
	ino   uint64
	hasID bool
	gen   uint64   // the lock file's count of changes the index is at
	idx   dirIndex // the directory's entry files
	seq   uint64   // orders entries of one last-use time
	// writing is this store's entries being written: Close aborts them.
	writing map[*dirEntry]struct{}
	exp     expiry // sweeps at the first entry's expiry
	closed  bool
}

// dirEnt is one entry file of the directory, as the index knows it.
type dirEnt struct {
	size  int64         // of the file, header included
	used  time.Time     // its last use: the file's modification time as last seen
	seq   uint64        // orders entries of one last-use time: the higher, the younger
	ttl   time.Duration // the time to live it was written with
	quota int64         // the MaxBytes it was written under
}

// MaxEntryBytes returns the most one entry keeps ([EntryBound]).
func (d *Dir) MaxEntryBytes() int64 { return d.lim.maxEntryBytes }

// OpenDir opens the store in directory path, creating it (mode 0700) when
// it is missing. The store's first use indexes the entries there: expired
// ones and temp files left by a crashed process are removed, and an error
// reading the directory is that use's. The quota defaults to
// [DefaultDirMaxBytes].
//
// An existing directory must be private: a real directory (not a
// symlink), owned by the current user, with no permission for group or
// others (on unix). Anything else is an error that names the path and what
// is wrong; OpenDir changes nothing there.
func OpenDir(path string, cfg Config) (*Dir, error) {
	return openDir(path, cfg, false)
}

// OpenPlainDir is [OpenDir] for a store in plain mode, whose entries a
// program that knows nothing of toolcap can read, such as Claude Code's
// own Read tool: each entry is the output's bytes alone, without a
// header, in a file <dir>/<hash of the scope>/<ref>.txt ([Dir.EntryPath]),
// mode 0600 in a directory per scope, mode 0700. The quota, the per-entry
// bound, the time to live and the atomic commits are those of OpenDir;
// the time to live and the quota an entry was written under are in a meta
// file beside it, <ref>.meta (24 bytes, not counted by the quota); what
// the rest of a header would hold is kept by the caller (the Info Commit
// returns): an entry read back has Original == Size.
//
// A directory is in one mode for good: OpenPlainDir indexes only plain
// entries, OpenDir only its own, so the two never share one.
func OpenPlainDir(path string, cfg Config) (*Dir, error) {
	return openDir(path, cfg, true)
}

func openDir(path string, cfg Config, plain bool) (*Dir, error) {
	if path == "" {
		return nil, errors.New("rest: store directory is empty")
	}
	path = filepath.Clean(path) // a trailing slash would make Lstat follow a symlink
	hdr := int64(headerLen)
	if plain {
		hdr = 0
	}
	d := &Dir{
		path: path, tmp: filepath.Join(path, tmpDir), lim: resolve(cfg, DefaultDirMaxBytes, hdr), hdr: hdr, plain: plain,
		pid: os.Getpid(), writing: make(map[*dirEntry]struct{}),
	}
	if err := ensureDir(path); err != nil {
		return nil, err
	}
	if err := ensureDir(d.tmp); err != nil {
		return nil, err
	}
	if err := d.recordDir(); err != nil {
		return nil, err
	}
	return d, nil
}

// ensureDir creates path (mode 0700) when it is missing and checks that it
// is a private directory.
func ensureDir(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(path, 0o700); err != nil {
			return fmt.Errorf("rest: create store directory: %w", err)
		}
		fi, err = os.Lstat(path)
	}
	if err != nil {
		return fmt.Errorf("rest: store directory: %w", err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("rest: directory %s is a symlink: want a real directory", path)
	case !fi.IsDir():
		return fmt.Errorf("rest: %s is not a directory", path)
	}
	return checkPrivate(path, fi)
}

// plainExt ends the name of a plain entry's file.
const plainExt = ".txt"

// key names the entry ref of scope: its file's path under d.path, with
// slashes. In plain mode it is the scope's directory, named by a hash of
// the scope so that the scope never shows in a path, and the ref.
func (d *Dir) key(scope, ref string) string {
	if !d.plain {
		return EntryKey(scope, ref)
	}
	return EntryKey(scope, "") + "/" + ref + plainExt
}

// file returns the path of the entry file of key.
func (d *Dir) file(key string) string { return filepath.Join(d.path, filepath.FromSlash(key)) }

// EntryPath returns the path of the file of the entry ref of scope, in
// plain mode ([OpenPlainDir]), for a reader that opens it without
// package rest; false in the default mode, whose files begin with a
// header, or for a malformed ref. The file exists from the entry's Commit
// until it expires or is evicted.
func (d *Dir) EntryPath(scope, ref string) (string, bool) {
	if !d.plain || !ValidRef(ref) {
		return "", false
	}
	return d.file(d.key(scope, ref)), true
}

// IsEntryPath reports whether path names the file of a plain entry of d,
// of any scope: <dir>/<hash>/<ref>.txt. It looks at the path alone.
func (d *Dir) IsEntryPath(path string) bool {
	if !d.plain || !filepath.IsAbs(path) {
		return false
	}
	path = filepath.Clean(path)
	ref, ok := strings.CutSuffix(filepath.Base(path), plainExt)
	scopeDir := filepath.Dir(path)
	return ok && ValidRef(ref) && isKey(filepath.Base(scopeDir)) && filepath.Dir(scopeDir) == d.path
}

// Close aborts the entries of this store still being written (their temp
// files are removed; their Write and Commit fail from then on), removes
// the expired entries and stops the timer that removes them as they
// expire (see [Dir]). The entries that live on stay in the directory, for
// the next process. The store stays usable: a use after Close still
// removes the expired entries it meets, but nothing removes them
// meanwhile. Close always returns nil.
func (d *Dir) Close() error {
	d.mu.Lock()
	ws := make([]*dirEntry, 0, len(d.writing))
	for e := range d.writing {
		ws = append(ws, e)
	}
	d.mu.Unlock()
	for _, e := range ws {
		_ = e.Abort()
	}
	if err := d.begin(); err == nil {
		d.sweepLocked(d.lim.now())
		d.end()
	}
	d.mu.Lock()
	d.closed = true
	d.exp.stop()
	if d.lockf != nil { // a later use opens it again
		_ = d.lockf.Close()
		d.lockf = nil
	}
	d.mu.Unlock()
	return nil
}

// Path returns the store's directory.
func (d *Dir) Path() string { return d.path }

// Usage returns what the directory holds, every store's entries and temp
// files, with this store's quota: empty when the directory cannot be used,
// an error Create and Open report. It builds the store's index when it is
// the first use (see [OpenDir]).
func (d *Dir) Usage() Usage {
	u := Usage{MaxBytes: d.lim.maxBytes}
	if err := d.begin(); err != nil {
		return u
	}
	defer d.end()
	u.Entries = len(d.idx.ents)
	u.Bytes = d.idx.held
	u.Writing, _ = d.writingLocked()
	return u
}

// Create starts a new entry in scope: a temp file in tmp/, which holds
// the room of the header until Commit writes it. It fails when ctx is
// done, when the directory cannot be used, when the temp files leave no
// room for a header, or when the file cannot be created.
func (d *Dir) Create(ctx context.Context, scope string) (Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("rest: create: %w", err)
	}
	if err := d.begin(); err != nil {
		return nil, err
	}
	defer d.end()
	now := d.lim.now()
	d.sweepLocked(now)
	defer d.armLocked(now)
	ref := NewRef()
	f, err := d.createTemp()
	if err != nil {
		d.lim.log.Error("cannot create an entry file", "dir", d.tmp, "error", err)
		return nil, fmt.Errorf("rest: create entry: %w", err)
	}
	e := &dirEntry{d: d, ref: ref, key: d.key(scope, ref), b: NewBounded(d.lim.maxEntryBytes), name: f.Name(), f: f}
	if d.hdr > 0 {
		if err := d.reserveLocked(e, d.hdr, d.hdr, now); err != nil {
			_ = e.removeTemp()
			return nil, fmt.Errorf("rest: entry %s: %w", ref, err)
		}
	}
	if _, err := f.Seek(d.hdr, io.SeekStart); err != nil { // the header is written on Commit
		_ = e.removeTemp()
		return nil, fmt.Errorf("rest: create entry: %w", err)
	}
	d.writing[e] = struct{}{}
	return e, nil
}

// createTemp creates a temp file named for this process and locks it, so
// that another store tells it from the leftover of a writer that is gone.
// It is called under the directory's lock, which a store holds when it
// removes the leftovers: a temp file is never seen unlocked by one while
// its writer lives. tmp/ missing (removed by hand) is created again.
func (d *Dir) createTemp() (*os.File, error) {
	pattern := "entry-" + strconv.Itoa(d.pid) + "-*"
	f, err := os.CreateTemp(d.tmp, pattern) // mode 0600
	if errors.Is(err, fs.ErrNotExist) {
		if err := ensureDir(d.tmp); err != nil {
			return nil, err
		}
		f, err = os.CreateTemp(d.tmp, pattern)
	}
	if err != nil {
		return nil, err
	}
	if ok, err := tryLockFile(f); !ok && !errors.Is(err, errors.ErrUnsupported) {
		_ = f.Close()
		_ = os.Remove(f.Name())
		if err == nil {
			err = errors.New("a new temp file is locked")
		}
		return nil, err
	}
	return f, nil
}

// Open returns the committed entry ref of scope and renews its time to
// live. Every ref it cannot read (unknown, expired, evicted, foreign,
// malformed, or a file found corrupt) is [ErrUnknown]; a malformed ref
// never reaches the file system. A directory that cannot be used (see
// [Dir]) is an error of its own.
func (d *Dir) Open(ctx context.Context, scope, ref string) (Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("rest: open: %w", err)
	}
	if !ValidRef(ref) {
		return nil, ErrUnknown
	}
	if err := d.begin(); err != nil {
		return nil, err
	}
	defer d.end()
	now := d.lim.now()
	d.sweepLocked(now)
	defer d.armLocked(now)
	key := d.key(scope, ref)
	p := d.file(key)
	ent := d.idx.ents[key]
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		if ent != nil {
			d.idx.drop(key)
		}
		return nil, ErrUnknown
	}
	if ent == nil { // a change the index missed (see logLocked)
		ent = d.newEnt(key, fi)
		d.idx.add(key, ent)
	}
	ent.used = fi.ModTime()
	if !now.Before(ent.used.Add(ent.ttl)) {
		d.removeLocked(key, ent, "expired", now)
		return nil, ErrUnknown
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		d.idx.drop(key)
		return nil, ErrUnknown
	}
	if err != nil {
		d.lim.log.Error("cannot open an entry file", "path", p, "error", err)
		return nil, fmt.Errorf("rest: open entry: %w", err)
	}
	info, hdr, err := d.readHeader(f)
	if err != nil {
		_ = f.Close()
		d.lim.log.Error("corrupt entry file removed", "path", p, "error", err)
		d.removeLocked(key, ent, "corrupt", now)
		return nil, ErrUnknown
	}
	if err := os.Chtimes(p, now, now); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.lim.log.Error("cannot renew an entry's time to live", "path", p, "error", err)
	}
	d.touchLocked(ent, now)
	// A renewed entry is the youngest: under several quotas, older ones
	// may be past theirs now.
	if least, most := d.idx.quotas(); least != most {
		if writing, err := d.writingLocked(); err == nil {
			d.evictLocked(writing, now)
		}
	}
	info.Ref = ref
	return &dirReader{f: f, info: info, hdr: hdr}, nil
}

// readHeader reads and checks the header of an entry file and returns its
// length; in plain mode, where there is none, the file's size is the
// entry's.
func (d *Dir) readHeader(f *os.File) (Info, int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return Info{}, 0, fmt.Errorf("stat: %w", err)
	}
	if d.plain {
		return Info{Size: fi.Size(), Original: fi.Size()}, 0, nil
	}
	var h [headerLen]byte
	n, err := f.ReadAt(h[:], 0)
	var hdr int64
	switch {
	case n >= headerLenV1 && [8]byte(h[:8]) == magicV1:
		hdr = headerLenV1
	case n == headerLen && [8]byte(h[:8]) == magic:
		hdr = headerLen
	case n < headerLenV1:
		return Info{}, 0, fmt.Errorf("read header: %w", err)
	default:
		return Info{}, 0, errors.New("not an entry file (bad magic)")
	}
	info := Info{
		Original: int64(binary.BigEndian.Uint64(h[8:16])),
		Size:     int64(binary.BigEndian.Uint64(h[16:24])),
	}
	if info.Size < 0 || info.Original < info.Size || fi.Size() != hdr+info.Size {
		return Info{}, 0, fmt.Errorf("file of %d bytes for a header of size %d, original %d", fi.Size(), info.Size, info.Original)
	}
	return info, hdr, nil
}

// settings returns the time to live and the quota the entry file of key
// was written under: from its header, or in plain mode from its meta file
// (see metaPath); those of d for a file that has neither (the first
// version, a corrupt file that Open removes).
func (d *Dir) settings(key string) (time.Duration, int64) {
	p, at, want := d.file(key), int64(24), magic
	if d.plain {
		p, at, want = d.metaPath(key), 8, metaMagic
	}
	if f, err := os.Open(p); err == nil {
		var h [headerLen]byte
		n, _ := f.ReadAt(h[:at+16], 0)
		_ = f.Close()
		if n == int(at+16) && [8]byte(h[:8]) == want {
			ttl := time.Duration(binary.BigEndian.Uint64(h[at : at+8]))
			quota := int64(binary.BigEndian.Uint64(h[at+8 : at+16]))
			if ttl > 0 && quota > 0 {
				return ttl, quota
			}
		}
	}
	return d.lim.ttl, d.lim.maxBytes
}

// metaMagic starts the meta file of a plain entry: what a header would say
// of its settings, which its own file cannot hold.
var metaMagic = [8]byte{'t', 'c', 'm', 'e', 't', 'a', 0, 1}

// metaExt ends the name of a plain entry's meta file, beside its file:
// <dir>/<hash>/<ref>.meta, 24 bytes (magic, time to live, quota) that the
// quota does not count.
const metaExt = ".meta"

// metaPath returns the path of the meta file of the plain entry of key.
func (d *Dir) metaPath(key string) string {
	return strings.TrimSuffix(d.file(key), plainExt) + metaExt
}

// writeMeta writes the meta file of the plain entry of key: the settings
// of d.
func (d *Dir) writeMeta(key string) error {
	var m [24]byte
	copy(m[:8], metaMagic[:])
	binary.BigEndian.PutUint64(m[8:16], uint64(d.lim.ttl))
	binary.BigEndian.PutUint64(m[16:24], uint64(d.lim.maxBytes))
	return os.WriteFile(d.metaPath(key), m[:], 0o600)
}

// dirBufSize is the buffer of an entry's small writes; a write at least
// this long goes to the file directly.
const dirBufSize = 64 << 10

// dirEntry is an entry being written to a temp file.
type dirEntry struct {
	d   *Dir
	ref string
	key string

	mu   sync.Mutex
	b    Bounded
	name string        // the temp file's path
	f    *os.File      // nil once closed
	w    *bufio.Writer // made on the first small write
	// reserved is the temp file's size: the header's room and the bytes
	// reserved, which every store counts.
	reserved int64
}

func (e *dirEntry) Ref() string { return e.ref }

// Write keeps p up to the store's MaxEntryBytes and counts the rest. The
// room is reserved (the temp file grown to hold it) before the bytes
// reach the file, so the files never hold more than the quota.
func (e *dirEntry) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.b.Write(p, e.keep)
}

// keep reserves the room of p when the reservation does not hold it yet
// and writes p to the temp file.
func (e *dirEntry) keep(p []byte) error {
	if need := e.d.hdr + e.b.Size() + int64(len(p)) - e.reserved; need > 0 {
		if err := e.d.reserve(e, need, int64(len(p))); err != nil {
			return fmt.Errorf("rest: entry %s: %w", e.ref, err)
		}
	}
	if err := e.write(p); err != nil {
		e.d.lim.log.Error("cannot write an entry file", "path", e.name, "error", err)
		return fmt.Errorf("rest: write entry %s: %w", e.ref, err)
	}
	return nil
}

func (e *dirEntry) write(p []byte) error {
	if e.w == nil {
		if len(p) >= dirBufSize {
			_, err := e.f.Write(p)
			return err
		}
		e.w = bufio.NewWriterSize(e.f, dirBufSize)
	}
	_, err := e.w.Write(p) // bufio writes a long p through when its buffer is empty
	return err
}

// Commit writes the header and renames the file into place.
func (e *dirEntry) Commit() (Info, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.b.Err(); err != nil {
		return Info{}, err
	}
	now := e.d.lim.now()
	err := e.finish(now)
	if err == nil {
		err = e.d.publish(e, now)
	}
	if err != nil {
		e.d.lim.log.Error("cannot commit an entry file", "path", e.name, "error", err)
		e.b.Finish()
		e.discard()
		return Info{}, fmt.Errorf("rest: commit entry %s: %w", e.ref, err)
	}
	e.b.Finish()
	return e.b.Info(e.ref), nil
}

// finish flushes the entry's bytes, gives back what it reserved and did
// not use, writes its header and sets its modification time, the entry's
// last use, to now. The file stays open, and locked, until it is renamed
// out of tmp/.
func (e *dirEntry) finish(now time.Time) error {
	if e.w != nil {
		if err := e.w.Flush(); err != nil {
			return err
		}
	}
	size := e.d.hdr + e.b.Size()
	if e.reserved != size {
		if err := e.f.Truncate(size); err != nil {
			return err
		}
		e.reserved = size
	}
	if !e.d.plain {
		var h [headerLen]byte
		copy(h[:8], magic[:])
		binary.BigEndian.PutUint64(h[8:16], uint64(e.b.Original()))
		binary.BigEndian.PutUint64(h[16:24], uint64(e.b.Size()))
		binary.BigEndian.PutUint64(h[24:32], uint64(e.d.lim.ttl))
		binary.BigEndian.PutUint64(h[32:40], uint64(e.d.lim.maxBytes))
		if _, err := e.f.WriteAt(h[:], 0); err != nil {
			return err
		}
	}
	if closeBeforeRename {
		err := e.f.Close()
		e.f = nil
		if err != nil {
			return err
		}
	}
	return os.Chtimes(e.name, now, now)
}

// closeBeforeRename: where an open file cannot be renamed, a temp file is
// closed before its Commit renames it (and no lock tells its writer lives).
const closeBeforeRename = runtime.GOOS == "windows"

func (e *dirEntry) Abort() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.b.Finish() {
		return nil
	}
	return e.discard()
}

// discard removes the temp file and forgets the entry.
func (e *dirEntry) discard() error {
	err := e.removeTemp()
	e.d.mu.Lock()
	delete(e.d.writing, e)
	e.d.mu.Unlock()
	return err
}

// removeTemp closes and removes the temp file, which gives its room back.
func (e *dirEntry) removeTemp() error {
	var err error
	if e.f != nil {
		_ = e.f.Close()
		e.f = nil
	}
	if rerr := os.Remove(e.name); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		e.d.lim.log.Error("cannot remove a temp file", "path", e.name, "error", rerr)
		err = fmt.Errorf("rest: abort entry %s: %w", e.ref, rerr)
	}
	e.reserved = 0
	return err
}

// dirReader reads a committed entry file.
type dirReader struct {
	f      *os.File
	info   Info
	hdr    int64 // the header's length: where the entry's bytes begin
	closed atomic.Bool
}

func (r *dirReader) Info() Info { return r.info }

func (r *dirReader) Close() error {
	r.closed.Store(true)
	return r.f.Close()
}

// ReadAt follows the io.ReaderAt contract: fewer bytes than len(p) come
// with an error, io.EOF at the end of what the entry holds.
func (r *dirReader) ReadAt(p []byte, off int64) (int, error) {
	if r.closed.Load() {
		return 0, errClosed
	}
	if off < 0 {
		return 0, fmt.Errorf("rest: read of entry %s at negative offset %d", r.info.Ref, off)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if off >= r.info.Size {
		return 0, io.EOF
	}
	q := p[:min(int64(len(p)), r.info.Size-off)]
	n, err := r.f.ReadAt(q, r.hdr+off)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}
