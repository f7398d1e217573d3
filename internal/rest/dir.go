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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// header is the start of every entry file: magic, the entry's Original
// and its Size, big-endian. ReadAt offsets are past it. Size lets Open
// tell a whole entry from a file cut short (by a crash of the machine
// between the rename and the write-back).
const headerLen = 24

var magic = [8]byte{'t', 'c', 'r', 'e', 's', 't', 0, 1}

// tmpDir is the subdirectory entries are written in until their Commit.
const tmpDir = "tmp"

// tmpGrace is how long a temp file may go unwritten before an OpenDir
// takes it for the leftover of a crashed process and removes it. Other
// processes (toolcap cap, toolcap read) open the same directory while one
// writes: a temp file a live writer is filling is younger than this.
const tmpGrace = time.Hour

// Dir is a [Store] in a private directory, which outlives the process:
// each entry is one file, mode 0600, named by a hash of its scope and ref,
// in a directory mode 0700 owned by the current user. An entry is written
// in the tmp/ subdirectory and renamed into place on Commit, so a reader
// never sees half of one. The file's modification time is the entry's
// last use.
//
// An entry expires TTL after its Commit or its last Open, by any process
// sharing the directory, and its file is removed then, not when a later
// use happens to meet it: kept output may hold secrets. The bound: while
// the store is in use, from its first use (Create, Open, Usage) until
// [Dir.Close], the file of an entry it knows is removed when the entry
// expires, by a timer set to the earliest expiry, so within the timer's
// latency (milliseconds). The timer is a runtime timer: no goroutine while
// it waits, and none armed while the store knows no entry. Every Create,
// Commit and Open also first removes every expired entry the store knows,
// and Open the expired file of the ref it is asked for. The store knows
// the entries it wrote, those in the directory at its first use, and
// those of other processes that an Open of it met; before it removes one,
// it looks at the file: an entry another process renewed since lives on.
// Outside the bound is an entry no running store knows: one whose store
// was closed, or whose process exited, before it expired, or one another
// process wrote that this store never met, once that process has exited.
// Nothing removes it until a store next opens the directory: its first
// use indexes the directory and removes every expired entry, as each
// toolcap command that keeps or reads does.
//
// The quota counts whole files, headers included, and entries being
// written. It is kept by an index of the directory built at the store's
// first use (Create, Open, Usage), not at [OpenDir]: a process that opens
// the store and keeps nothing in it never reads the directory. Entries
// other processes write into the same directory are indexed when Open
// first meets them, so the quota holds across processes only as far as
// each one's index knows (short-lived processes such as the CLI index the
// directory whenever they use it).
//
// On unix, a Reader keeps reading an entry evicted while it is open: the
// file is unlinked, the open descriptor reads on. Writes are not synced to
// the disk: after a crash of the machine an entry may be lost, never read
// wrong (Open checks the header against the file's size).
type Dir struct {
	path string
	tmp  string
	lim  limits
	q    *quota[struct{}]
	// hdr is the header's length: headerLen, or 0 in plain mode.
	hdr int64
	// plain is set by [OpenPlainDir]: entries are header-less text files.
	plain bool

	// indexed is set once the index is built (see index), which indexMu
	// guards the building of.
	indexed atomic.Bool
	indexMu sync.Mutex
}

// MaxEntryBytes returns the most one entry keeps ([EntryBound]).
func (d *Dir) MaxEntryBytes() int64 { return d.lim.maxEntryBytes }

// OpenDir opens the store in directory path, creating it (mode 0700) when
// it is missing. The store's first use indexes the entries there: expired
// ones and temp files left by a crashed process are removed, the oldest
// are evicted if they pass the quota, and an error reading the directory
// is that use's. The quota defaults to [DefaultDirMaxBytes].
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
// what a header would hold is kept by the caller (the Info Commit
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
	d := &Dir{path: path, tmp: filepath.Join(path, tmpDir), lim: resolve(cfg, DefaultDirMaxBytes, hdr), hdr: hdr, plain: plain}
	d.q = newQuota(d.lim, d.drop, d.lastUse)
	if err := ensureDir(path); err != nil {
		return nil, err
	}
	if err := ensureDir(d.tmp); err != nil {
		return nil, err
	}
	return d, nil
}

// index builds the quota's index of the directory at the store's first
// use, once: temp files left by a crashed process are removed, the entries
// indexed, the expired ones removed and the oldest evicted over the quota.
// It is not built at open, which a process that keeps nothing (a hook
// whose output fit, toolcap mcp until a cut) would pay for at its start:
// reading every entry's metadata. Its error goes to the use that asked;
// the next use tries again (nothing was indexed: both steps fail only at
// reading a directory, before they change anything).
func (d *Dir) index() error {
	if d.indexed.Load() {
		return nil
	}
	d.indexMu.Lock()
	defer d.indexMu.Unlock()
	if d.indexed.Load() {
		return nil
	}
	if err := d.cleanTmp(); err != nil {
		return err
	}
	if err := d.scan(); err != nil {
		return err
	}
	d.indexed.Store(true)
	return nil
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

// cleanTmp removes the temp files nobody has written for tmpGrace.
func (d *Dir) cleanTmp() error {
	des, err := os.ReadDir(d.tmp)
	if err != nil {
		return fmt.Errorf("rest: read store directory: %w", err)
	}
	stale := d.lim.now().Add(-tmpGrace)
	for _, de := range des {
		fi, err := de.Info()
		if err != nil || !fi.Mode().IsRegular() || fi.ModTime().After(stale) {
			continue
		}
		p := filepath.Join(d.tmp, de.Name())
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.lim.log.Error("cannot remove a leftover temp file", "path", p, "error", err)
			continue
		}
		d.lim.log.Debug("leftover temp file removed", "path", p, "bytes", fi.Size())
	}
	return nil
}

// scan indexes the entry files of the directory, oldest first, then
// removes the expired ones and evicts the oldest while they pass the quota.
func (d *Dir) scan() error {
	des, err := os.ReadDir(d.path)
	if err != nil {
		return fmt.Errorf("rest: read store directory: %w", err)
	}
	type found struct {
		key  string
		size int64
		used time.Time
	}
	var all []found
	for _, de := range des {
		if !isKey(de.Name()) {
			continue // not ours: tmp/, or a file someone else put there
		}
		fi, err := de.Info()
		if err != nil {
			continue
		}
		if d.plain {
			// A scope's directory: its entries are <ref>.txt.
			if !fi.IsDir() {
				continue
			}
			files, err := os.ReadDir(filepath.Join(d.path, de.Name()))
			if err != nil {
				continue
			}
			for _, f := range files {
				ref, ok := strings.CutSuffix(f.Name(), plainExt)
				if !ok || !ValidRef(ref) {
					continue
				}
				if fi, err := f.Info(); err == nil && fi.Mode().IsRegular() {
					all = append(all, found{de.Name() + "/" + f.Name(), fi.Size(), fi.ModTime()})
				}
			}
			continue
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		all = append(all, found{de.Name(), fi.Size(), fi.ModTime()})
	}
	slices.SortFunc(all, func(a, b found) int { return a.used.Compare(b.used) })
	for _, f := range all {
		d.q.load(f.key, f.size, f.used, struct{}{})
	}
	d.q.trim()
	return nil
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

// EntryPath returns the path of the file of the entry ref of scope, in
// plain mode ([OpenPlainDir]), for a reader that opens it without
// package rest; false in the default mode, whose files begin with a
// header, or for a malformed ref. The file exists from the entry's Commit
// until it expires or is evicted.
func (d *Dir) EntryPath(scope, ref string) (string, bool) {
	if !d.plain || !ValidRef(ref) {
		return "", false
	}
	return filepath.Join(d.path, filepath.FromSlash(d.key(scope, ref))), true
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

// drop removes an entry's file: the quota's drop func.
func (d *Dir) drop(key string, _ struct{}) {
	p := filepath.Join(d.path, filepath.FromSlash(key))
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.lim.log.Error("cannot remove an entry file", "path", p, "error", err)
	}
}

// lastUse returns the modification time of an entry's file, its last use
// by any process that shares the directory: the quota's lastUse.
func (d *Dir) lastUse(key string) (time.Time, bool) {
	fi, err := os.Lstat(filepath.Join(d.path, filepath.FromSlash(key)))
	if err != nil || !fi.Mode().IsRegular() {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}

// Close removes the expired entries and stops the timer that removes them
// as they expire (see [Dir]). The entries that live on stay in the
// directory, for the next process. The store stays usable: a use after
// Close still removes the expired entries it meets, but nothing removes
// them meanwhile. Close always returns nil.
func (d *Dir) Close() error {
	d.q.close()
	return nil
}

// Path returns the store's directory.
func (d *Dir) Path() string { return d.path }

// Usage returns what d's index holds, building it first (see [OpenDir]):
// empty when the directory cannot be read, an error Create and Open
// report.
func (d *Dir) Usage() Usage {
	_ = d.index()
	return d.q.usage()
}

// Create starts a new entry in scope: a temp file in tmp/. It fails when
// ctx is done, when the quota cannot hold even a header, or when the file
// cannot be created.
func (d *Dir) Create(ctx context.Context, scope string) (Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("rest: create: %w", err)
	}
	if err := d.index(); err != nil {
		return nil, err
	}
	d.q.sweep()
	ref := NewRef()
	if err := d.q.reserve(d.hdr); err != nil {
		return nil, fmt.Errorf("rest: entry %s: %w", ref, err)
	}
	f, err := os.CreateTemp(d.tmp, "entry-*") // mode 0600
	if err == nil {
		// The header is written on Commit, when its figures are known.
		if _, err = f.Seek(d.hdr, io.SeekStart); err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}
	if err != nil {
		d.q.release(d.hdr)
		d.lim.log.Error("cannot create an entry file", "dir", d.tmp, "error", err)
		return nil, fmt.Errorf("rest: create entry: %w", err)
	}
	return &dirEntry{d: d, ref: ref, key: d.key(scope, ref), name: f.Name(), f: f, reserved: d.hdr}, nil
}

// Open returns the committed entry ref of scope and renews its time to
// live. Every ref it cannot read (unknown, expired, evicted, foreign,
// malformed, or a file found corrupt) is [ErrUnknown]; a malformed ref
// never reaches the file system.
func (d *Dir) Open(ctx context.Context, scope, ref string) (Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("rest: open: %w", err)
	}
	if !ValidRef(ref) {
		return nil, ErrUnknown
	}
	if err := d.index(); err != nil {
		return nil, err
	}
	key := d.key(scope, ref)
	p := filepath.Join(d.path, filepath.FromSlash(key))
	_, now, ok := d.q.use(key)
	if !ok {
		// Another process sharing the directory may have written it.
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			return nil, ErrUnknown
		}
		if !now.Before(fi.ModTime().Add(d.lim.ttl)) {
			d.drop(key, struct{}{})
			return nil, ErrUnknown
		}
		if now, ok = d.q.adopt(key, fi.Size(), struct{}{}); !ok {
			return nil, ErrUnknown
		}
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) { // evicted since, here or by another process
		d.q.forget(key, "missing")
		return nil, ErrUnknown
	}
	if err != nil {
		d.lim.log.Error("cannot open an entry file", "path", p, "error", err)
		return nil, fmt.Errorf("rest: open entry: %w", err)
	}
	info, err := d.readHeader(f)
	if err != nil {
		_ = f.Close()
		d.lim.log.Error("corrupt entry file removed", "path", p, "error", err)
		d.q.forget(key, "corrupt")
		return nil, ErrUnknown
	}
	if err := os.Chtimes(p, now, now); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.lim.log.Error("cannot renew an entry's time to live", "path", p, "error", err)
	}
	info.Ref = ref
	return &dirReader{f: f, info: info, hdr: d.hdr}, nil
}

// readHeader reads and checks the header of an entry file; in plain mode,
// where there is none, the file's size is the entry's.
func (d *Dir) readHeader(f *os.File) (Info, error) {
	if d.plain {
		fi, err := f.Stat()
		if err != nil {
			return Info{}, fmt.Errorf("stat: %w", err)
		}
		return Info{Size: fi.Size(), Original: fi.Size()}, nil
	}
	var h [headerLen]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return Info{}, fmt.Errorf("read header: %w", err)
	}
	if [8]byte(h[:8]) != magic {
		return Info{}, errors.New("not an entry file (bad magic)")
	}
	info := Info{
		Original: int64(binary.BigEndian.Uint64(h[8:16])),
		Size:     int64(binary.BigEndian.Uint64(h[16:24])),
	}
	fi, err := f.Stat()
	if err != nil {
		return Info{}, fmt.Errorf("stat: %w", err)
	}
	if info.Size < 0 || info.Original < info.Size || fi.Size() != headerLen+info.Size {
		return Info{}, fmt.Errorf("file of %d bytes for a header of size %d, original %d", fi.Size(), info.Size, info.Original)
	}
	return info, nil
}

// dirBufSize is the buffer of an entry's small writes; a write at least
// this long goes to the file directly.
const dirBufSize = 64 << 10

// dirEntry is an entry being written to a temp file.
type dirEntry struct {
	d   *Dir
	ref string
	key string

	mu       sync.Mutex
	name     string        // the temp file's path
	f        *os.File      // nil once closed by Commit
	w        *bufio.Writer // made on the first small write
	size     int64         // bytes kept
	original int64         // bytes written
	reserved int64         // what the quota holds for it: the header + size
	err      error         // sticky: the first failed Write
	done     bool
}

func (e *dirEntry) Ref() string { return e.ref }

// Write keeps p up to the store's MaxEntryBytes and counts the rest. The
// quota is reserved before the bytes reach the file, so the files never
// hold more than it.
func (e *dirEntry) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return 0, errDone
	}
	if e.err != nil {
		return 0, e.err
	}
	keep := min(int64(len(p)), e.d.lim.maxEntryBytes-e.size)
	if keep > 0 {
		if err := e.d.q.reserve(keep); err != nil {
			e.err = fmt.Errorf("rest: entry %s: %w", e.ref, err)
			return 0, e.err
		}
		e.reserved += keep
		if err := e.write(p[:keep]); err != nil {
			e.d.lim.log.Error("cannot write an entry file", "path", e.name, "error", err)
			e.err = fmt.Errorf("rest: write entry %s: %w", e.ref, err)
			return 0, e.err
		}
		e.size += keep
	}
	e.original += int64(len(p))
	return len(p), nil
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
	if e.done {
		return Info{}, errDone
	}
	if e.err != nil {
		return Info{}, e.err
	}
	tmp := e.name
	final := filepath.Join(e.d.path, filepath.FromSlash(e.key))
	now := e.d.lim.now()
	err := e.finish(now)
	if err == nil && e.d.plain {
		// The scope's directory, private as the store's.
		err = ensureDir(filepath.Dir(final))
	}
	if err == nil {
		err = e.d.q.commit(e.key, e.reserved, now, struct{}{}, func() error { return os.Rename(tmp, final) })
	}
	if err != nil {
		e.d.lim.log.Error("cannot commit an entry file", "path", tmp, "error", err)
		e.abortLocked()
		return Info{}, fmt.Errorf("rest: commit entry %s: %w", e.ref, err)
	}
	e.done = true
	return Info{Ref: e.ref, Size: e.size, Original: e.original}, nil
}

// finish flushes the entry's bytes, writes its header, closes it and sets
// its modification time, the entry's last use, to now.
func (e *dirEntry) finish(now time.Time) error {
	if e.w != nil {
		if err := e.w.Flush(); err != nil {
			return err
		}
	}
	if e.d.plain {
		err := e.f.Close()
		e.f = nil
		if err != nil {
			return err
		}
		return os.Chtimes(e.name, now, now)
	}
	var h [headerLen]byte
	copy(h[:8], magic[:])
	binary.BigEndian.PutUint64(h[8:16], uint64(e.original))
	binary.BigEndian.PutUint64(h[16:24], uint64(e.size))
	if _, err := e.f.WriteAt(h[:], 0); err != nil {
		return err
	}
	err := e.f.Close()
	e.f = nil
	if err != nil {
		return err
	}
	return os.Chtimes(e.name, now, now)
}

func (e *dirEntry) Abort() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return nil
	}
	return e.abortLocked()
}

// abortLocked closes and removes the temp file and gives back the
// reservation.
func (e *dirEntry) abortLocked() error {
	e.done = true
	var err error
	if e.f != nil {
		_ = e.f.Close()
		e.f = nil
	}
	if rerr := os.Remove(e.name); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		e.d.lim.log.Error("cannot remove a temp file", "path", e.name, "error", rerr)
		err = fmt.Errorf("rest: abort entry %s: %w", e.ref, rerr)
	}
	e.d.q.release(e.reserved)
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
