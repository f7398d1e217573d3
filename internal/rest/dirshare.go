package rest

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What the stores sharing a directory do under its lock (see [Dir]).

// errGone is the error of the timer's use of a directory that is not the
// one the store opened.
var errGone = errors.New("rest: store directory gone")

// begin makes the store's use of its directory one change among those of
// every store sharing it: it takes the store's mutex, looks at the
// directory (created again when missing, refused when replaced), takes
// the directory's lock, and reads the directory again when another store
// changed it since (at the first use: also removes the temp files whose
// writer is gone, the expired entries, and evicts what the bounds want
// gone). The caller calls end.
func (d *Dir) begin() error {
	d.mu.Lock()
	if err := d.beginLocked(true); err != nil {
		d.mu.Unlock()
		return err
	}
	return nil
}

// end releases what begin took.
func (d *Dir) end() {
	_ = unlockFile(d.lockf)
	d.mu.Unlock()
}

// beginLocked is begin with the mutex held; without create, a missing
// directory is an error (errGone), not created again.
func (d *Dir) beginLocked(create bool) error {
	if err := d.checkDirLocked(create); err != nil {
		return err
	}
	if d.lockf == nil {
		f, err := os.OpenFile(filepath.Join(d.path, lockName), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("rest: store directory: %w", err)
		}
		d.lockf = f
	}
	if err := lockFile(d.lockf); err != nil {
		return fmt.Errorf("rest: lock store directory: %w", err)
	}
	gen := d.readGen()
	if d.ready && (gen == d.gen || d.replayLocked(gen)) {
		d.gen = gen
		return nil
	}
	now := d.lim.now()
	if !d.ready {
		if _, err := d.cleanTmpLocked(now); err != nil {
			_ = unlockFile(d.lockf)
			return err
		}
	}
	if err := d.scanLocked(); err != nil {
		_ = unlockFile(d.lockf)
		return err
	}
	d.gen = gen
	if !d.ready {
		d.ready = true
		d.sweepLocked(now)
		if writing, err := d.writingLocked(); err == nil {
			d.evictLocked(writing, now)
		}
		d.armLocked(now)
	}
	return nil
}

// recordDir opens the directory and records its device and inode, which
// each use compares with the path's.
func (d *Dir) recordDir() error {
	f, err := os.Open(d.path)
	if err != nil {
		return fmt.Errorf("rest: store directory: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("rest: store directory: %w", err)
	}
	dev, ino, ok := fileID(fi)
	if ok {
		lfi, err := os.Lstat(d.path)
		if err != nil {
			_ = f.Close()
			return fmt.Errorf("rest: store directory: %w", err)
		}
		if ldev, lino, _ := fileID(lfi); ldev != dev || lino != ino {
			_ = f.Close()
			return fmt.Errorf("rest: directory %s changed while the store opened it", d.path)
		}
	}
	if d.dirf != nil {
		_ = d.dirf.Close()
	}
	d.dirf, d.dev, d.ino, d.hasID = f, dev, ino, ok
	return nil
}

// checkDirLocked looks at the directory before a use: the one the store
// opened goes on; a missing one is created again (mode 0700), as is one
// another store created again after it was removed (the one this store
// opened has no link left), once it is private; one put in the place of
// the directory the store opened, which still exists elsewhere, is
// refused. The cost is one lstat. Without create, a directory that is
// not the one the store opened is errGone.
func (d *Dir) checkDirLocked(create bool) error {
	fi, err := os.Lstat(d.path)
	if err == nil && fi.IsDir() {
		if !d.hasID {
			return nil
		}
		if dev, ino, ok := fileID(fi); ok && dev == d.dev && ino == d.ino {
			return nil
		}
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("rest: store directory: %w", err)
	}
	if !create {
		return errGone
	}
	if err == nil && (d.dirf == nil || !removed(d.dirf)) {
		d.lim.log.Error("store directory replaced since the store opened it: not used", "path", d.path)
		return fmt.Errorf("rest: directory %s was replaced since the store opened it: refusing to read or write through it", d.path)
	}
	if err := ensureDir(d.path); err != nil {
		return err
	}
	if err := ensureDir(d.tmp); err != nil {
		return err
	}
	if err := d.recordDir(); err != nil {
		return err
	}
	if d.lockf != nil {
		_ = d.lockf.Close()
		d.lockf = nil
	}
	d.ready = false
	d.idx.reset(nil)
	d.lim.log.Warn("store directory was removed: created again", "path", d.path)
	return nil
}

// The lock file is a header, magic and the count of changes, and a
// journal of the last journalLen changes, a record each: a store that
// knows the directory as of a count within journalLen of the current one
// reads the records since instead of the directory. A record is written
// before its change: a store that crashes between the two makes the
// others index an entry that is not there (a use looks at the file before
// it counts on one) or forget one that is (until a store next reads the
// directory whole, as its first use does).
const (
	lockHeaderLen = 16
	journalLen    = 256
	recordLen     = 144
	maxKeyLen     = 96 // a plain entry's key is 95 bytes
	opAdd         = 1
	opRemove      = 2
)

var lockMagic = [8]byte{'t', 'c', 'l', 'o', 'c', 'k', 0, 1}

// readGen returns the lock file's count of changes.
func (d *Dir) readGen() uint64 {
	var h [lockHeaderLen]byte
	if n, _ := d.lockf.ReadAt(h[:], 0); n < len(h) || [8]byte(h[:8]) != lockMagic {
		return 0
	}
	return binary.BigEndian.Uint64(h[8:])
}

// logLocked counts a change, the entry e of key added or removed, in the
// lock file, before the change.
func (d *Dir) logLocked(op byte, key string, e *dirEnt) {
	d.gen++
	var r [recordLen]byte
	r[0], r[1] = op, byte(len(key))
	copy(r[2:2+maxKeyLen], key)
	binary.BigEndian.PutUint64(r[98:], uint64(e.size))
	binary.BigEndian.PutUint64(r[106:], uint64(e.used.UnixNano()))
	binary.BigEndian.PutUint64(r[114:], uint64(e.ttl))
	binary.BigEndian.PutUint64(r[122:], uint64(e.quota))
	binary.BigEndian.PutUint64(r[130:], d.gen)
	var h [lockHeaderLen]byte
	copy(h[:], lockMagic[:])
	binary.BigEndian.PutUint64(h[8:], d.gen)
	_, err := d.lockf.WriteAt(r[:], lockHeaderLen+int64((d.gen-1)%journalLen)*recordLen)
	if err == nil {
		_, err = d.lockf.WriteAt(h[:], 0)
	}
	if err != nil {
		d.lim.log.Error("cannot count a change of the store directory", "path", d.lockf.Name(), "error", err)
	}
}

// replayLocked brings the index from the count d.gen to gen by the
// journal, and reports whether it could: false when the changes are more
// than the journal holds, or a record is not the one expected.
func (d *Dir) replayLocked(gen uint64) bool {
	if gen < d.gen || gen-d.gen > journalLen {
		return false
	}
	for g := d.gen + 1; g <= gen; g++ {
		var r [recordLen]byte
		if n, _ := d.lockf.ReadAt(r[:], lockHeaderLen+int64((g-1)%journalLen)*recordLen); n < len(r) {
			return false
		}
		key := string(r[2 : 2+min(int(r[1]), maxKeyLen)])
		if binary.BigEndian.Uint64(r[130:]) != g || !d.validKey(key) {
			return false
		}
		switch r[0] {
		case opAdd:
			e := &dirEnt{
				size:  int64(binary.BigEndian.Uint64(r[98:])),
				used:  time.Unix(0, int64(binary.BigEndian.Uint64(r[106:]))),
				ttl:   time.Duration(binary.BigEndian.Uint64(r[114:])),
				quota: int64(binary.BigEndian.Uint64(r[122:])),
			}
			if e.size < 0 || e.ttl <= 0 || e.quota <= 0 {
				return false
			}
			d.idx.add(key, e)
		case opRemove:
			d.idx.drop(key)
		default:
			return false
		}
	}
	return true
}

// validKey reports whether key has the form of an entry's key in d's
// mode, so that a record never names a path outside the directory.
func (d *Dir) validKey(key string) bool {
	if !d.plain {
		return isKey(key)
	}
	scope, name, ok := strings.Cut(key, "/")
	ref, isTxt := strings.CutSuffix(name, plainExt)
	return ok && isTxt && isKey(scope) && ValidRef(ref)
}

// scanLocked reads the directory's entry files into the index: sizes and
// last uses from the listing, settings from the headers of the files it
// did not know.
func (d *Dir) scanLocked() error {
	des, err := os.ReadDir(d.path)
	if err != nil {
		return fmt.Errorf("rest: read store directory: %w", err)
	}
	old := d.idx.ents
	ents := make(map[string]*dirEnt, len(des))
	add := func(key string, fi fs.FileInfo) {
		if e, ok := old[key]; ok && e.size == fi.Size() {
			e.used = fi.ModTime()
			ents[key] = e
			return
		}
		ents[key] = d.newEnt(key, fi)
	}
	for _, de := range des {
		if !isKey(de.Name()) {
			continue // not an entry: tmp/, the lock file, or a file someone else put there
		}
		if d.plain {
			// A scope's directory: its entries are <ref>.txt.
			if !de.IsDir() {
				continue
			}
			files, err := os.ReadDir(filepath.Join(d.path, de.Name()))
			if err != nil {
				continue
			}
			names := make(map[string]bool, len(files))
			for _, f := range files {
				names[f.Name()] = true
			}
			for _, f := range files {
				if ref, ok := strings.CutSuffix(f.Name(), metaExt); ok && ValidRef(ref) && !names[ref+plainExt] {
					// The meta file of an entry gone, or never committed.
					_ = os.Remove(filepath.Join(d.path, de.Name(), f.Name()))
					continue
				}
				ref, ok := strings.CutSuffix(f.Name(), plainExt)
				if !ok || !ValidRef(ref) {
					continue
				}
				if fi, err := f.Info(); err == nil && fi.Mode().IsRegular() {
					add(de.Name()+"/"+f.Name(), fi)
				}
			}
			continue
		}
		if !de.Type().IsRegular() {
			continue
		}
		if fi, err := de.Info(); err == nil {
			add(de.Name(), fi)
		}
	}
	d.idx.reset(ents)
	return nil
}

// newEnt indexes the entry file of key, whose Lstat is fi.
func (d *Dir) newEnt(key string, fi fs.FileInfo) *dirEnt {
	ttl, quota := d.settings(key)
	return &dirEnt{size: fi.Size(), used: fi.ModTime(), ttl: ttl, quota: quota}
}

// touchLocked makes e used at now: the youngest.
func (d *Dir) touchLocked(e *dirEnt, now time.Time) {
	d.seq++
	e.used, e.seq = now, d.seq
}

// writingLocked returns the bytes of the temp files: what the entries
// being written, by every store, reserved.
func (d *Dir) writingLocked() (int64, error) {
	des, err := os.ReadDir(d.tmp)
	if err != nil {
		return 0, fmt.Errorf("rest: read store directory: %w", err)
	}
	var n int64
	for _, de := range des {
		if !de.Type().IsRegular() {
			continue
		}
		if fi, err := de.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n, nil
}

// tempPID returns the process id in the name of a temp file,
// entry-<pid>-<random>; false for a name of the first version,
// entry-<random>.
func tempPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "entry-")
	if !ok {
		return 0, false
	}
	pid, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(pid)
	return n, err == nil && n > 0
}

// cleanTmpLocked removes the temp files whose writer is gone: nobody
// holds the lock its writer takes, or, for a file whose writer cannot be
// asked (a name of the first version, a system without advisory locks),
// nobody wrote it for tmpGrace. It returns how many it removed.
func (d *Dir) cleanTmpLocked(now time.Time) (int, error) {
	des, err := os.ReadDir(d.tmp)
	if err != nil {
		return 0, fmt.Errorf("rest: read store directory: %w", err)
	}
	removedN := 0
	for _, de := range des {
		if !de.Type().IsRegular() {
			continue
		}
		p := filepath.Join(d.tmp, de.Name())
		if !d.writerGone(p, de.Name(), now) {
			continue
		}
		fi, _ := de.Info()
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.lim.log.Error("cannot remove a leftover temp file", "path", p, "error", err)
			continue
		}
		removedN++
		if fi != nil {
			d.lim.log.Debug("leftover temp file removed", "path", p, "bytes", fi.Size())
		}
	}
	return removedN, nil
}

// writerGone reports whether the writer of the temp file p is gone.
func (d *Dir) writerGone(p, name string, now time.Time) bool {
	if _, ok := tempPID(name); ok {
		f, err := os.Open(p)
		if err != nil {
			return false
		}
		defer f.Close() // releases the lock it took
		locked, err := tryLockFile(f)
		if !errors.Is(err, errors.ErrUnsupported) {
			return locked
		}
	}
	fi, err := os.Lstat(p)
	return err == nil && !fi.ModTime().After(now.Add(-tmpGrace))
}

// sweepLocked removes the entries expired at now, each by its own time to
// live, looking at each file first: an entry another store renewed since
// lives on. Before the index's first expiry, it costs nothing.
func (d *Dir) sweepLocked(now time.Time) {
	if !d.idx.due(now) {
		return
	}
	var next time.Time
	for key, e := range d.idx.ents {
		if now.Before(e.used.Add(e.ttl)) {
			next = earliest(next, e.used.Add(e.ttl))
			continue
		}
		fi, err := os.Lstat(d.file(key))
		if err != nil || !fi.Mode().IsRegular() {
			d.idx.drop(key) // removed by another store
			continue
		}
		if e.used = fi.ModTime(); now.Before(e.used.Add(e.ttl)) {
			next = earliest(next, e.used.Add(e.ttl))
			continue
		}
		d.removeLocked(key, e, "expired", now)
	}
	d.idx.nextExp = next
}

// evictLocked evicts what the bounds want gone (see [Dir]) while writing
// bytes are being written. When the directory holds no more than the
// least quota of its entries, nothing is; otherwise it looks at every
// entry file for its last use first.
func (d *Dir) evictLocked(writing int64, now time.Time) {
	if least, _ := d.idx.quotas(); writing+d.idx.held <= least {
		return
	}
	type kv struct {
		key string
		e   *dirEnt
	}
	all := make([]kv, 0, len(d.idx.ents))
	for key, e := range d.idx.ents {
		fi, err := os.Lstat(d.file(key))
		if err != nil || !fi.Mode().IsRegular() {
			d.idx.drop(key)
			continue
		}
		if t := fi.ModTime(); !t.Equal(e.used) {
			e.used, e.seq = t, 0
		}
		all = append(all, kv{key, e})
	}
	slices.SortFunc(all, func(a, b kv) int { // the youngest first
		if c := b.e.used.Compare(a.e.used); c != 0 {
			return c
		}
		if c := cmp.Compare(b.e.seq, a.e.seq); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	sum, failed := writing, int64(-1)
	for _, it := range all {
		if sum+it.e.size > it.e.quota || it.e.quota <= failed {
			failed = max(failed, it.e.quota)
			d.removeLocked(it.key, it.e, "quota", now)
			continue
		}
		sum += it.e.size
	}
}

// removeLocked removes the entry file of key, with the one debug line
// every removal gets.
func (d *Dir) removeLocked(key string, e *dirEnt, reason string, now time.Time) {
	d.logLocked(opRemove, key, e)
	p := d.file(key)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.lim.log.Error("cannot remove an entry file", "path", p, "error", err)
	}
	if d.plain {
		_ = os.Remove(d.metaPath(key))
	}
	d.idx.drop(key)
	d.lim.log.Debug("entry evicted", "entry", shortKey(key), "reason", reason,
		"bytes", e.size, "idle", now.Sub(e.used).Round(time.Millisecond))
}

// reserve grows the temp file of e by need bytes for a write of ask
// bytes, and more when that needs no eviction (see reserveLocked), under
// the directory's lock.
func (d *Dir) reserve(e *dirEntry, need, ask int64) error {
	if err := d.begin(); err != nil {
		return err
	}
	defer d.end()
	return d.reserveLocked(e, need, ask, d.lim.now())
}

// reserveLocked grows the temp file of e by need bytes, counted by every
// store from then on, once the temp files leave room for them under this
// store's quota (the temp files of writers gone are removed when they do
// not), evicting the entries that the bounds want gone with them. It
// reserves more than need when that needs no eviction, up to grantBytes,
// a 64th of the quota and half the room left (so that what writers hold
// ahead of their bytes stays small beside the quota): an entry of a few
// KiB takes the directory's lock at its Create and its Commit alone. ask
// is what the caller asked for, which an ErrFull names.
func (d *Dir) reserveLocked(e *dirEntry, need, ask int64, now time.Time) error {
	d.sweepLocked(now)
	defer d.armLocked(now)
	writing, err := d.writingLocked()
	if err != nil {
		return err
	}
	n := need
	least, _ := d.idx.quotas()
	free := min(d.lim.maxBytes-writing, least-writing-d.idx.held)
	if want := min(grantBytes, d.lim.maxBytes/64, d.hdr+d.lim.maxEntryBytes-e.reserved, free/2); want > need {
		n = want
	}
	if writing+n > d.lim.maxBytes {
		if k, _ := d.cleanTmpLocked(now); k > 0 {
			if writing, err = d.writingLocked(); err != nil {
				return err
			}
		}
		if writing+n > d.lim.maxBytes {
			return fmt.Errorf("%d more bytes do not fit the quota of %d bytes (%d reserved by entries being written): %w",
				ask, d.lim.maxBytes, writing, ErrFull)
		}
	}
	d.evictLocked(writing+n, now)
	if err := e.f.Truncate(e.reserved + n); err != nil {
		d.lim.log.Error("cannot grow an entry file", "path", e.name, "error", err)
		return err
	}
	e.reserved += n
	return nil
}

// publish renames the finished temp file of e into place and indexes it,
// under the directory's lock, so that the index and the directory agree
// for every store.
func (d *Dir) publish(e *dirEntry, now time.Time) error {
	if err := d.begin(); err != nil {
		return err
	}
	defer d.end()
	final := d.file(e.key)
	if d.plain { // the scope's directory, private as the store's, and the meta file
		if err := ensureDir(filepath.Dir(final)); err != nil {
			return err
		}
		if err := d.writeMeta(e.key); err != nil {
			return err
		}
	}
	ent := &dirEnt{size: e.reserved, ttl: d.lim.ttl, quota: d.lim.maxBytes}
	d.touchLocked(ent, now)
	d.logLocked(opAdd, e.key, ent)
	if err := os.Rename(e.name, final); err != nil {
		return err
	}
	if e.f != nil {
		_ = e.f.Close() // out of tmp/: its lock has nothing left to tell
		e.f = nil
	}
	delete(d.writing, e)
	d.idx.add(e.key, ent)
	d.sweepLocked(now)
	// A Commit adds nothing to what the directory holds (the bytes move
	// from tmp/), and under one quota the reservations kept it: only
	// under several may the new entry, or one older, be past its own.
	if least, most := d.idx.quotas(); least != most {
		if writing, err := d.writingLocked(); err == nil {
			d.evictLocked(writing, now)
		}
	}
	d.armLocked(now)
	return nil
}

// armLocked arms the expiry timer for the first entry's expiry (the
// index's bound of it), and stops it when there is none.
func (d *Dir) armLocked(now time.Time) {
	if d.closed {
		return
	}
	at := d.idx.nextExp
	if at.IsZero() {
		d.exp.stop()
		return
	}
	d.exp.arm(at, now, d.expire)
}

// expire is the timer's: it removes the entries expired by now and arms
// the timer for the next.
//
// A directory gone or replaced is left as it is: the timer neither
// creates one again nor reads another; the next use says what happens.
func (d *Dir) expire() {
	d.mu.Lock()
	if err := d.beginLocked(false); err != nil {
		d.exp.fired()
		if errors.Is(err, errGone) {
			d.idx.reset(nil)
		}
		d.mu.Unlock()
		return
	}
	defer d.end()
	d.exp.fired()
	if d.closed {
		return
	}
	now := d.lim.now()
	d.sweepLocked(now)
	d.armLocked(now)
}
