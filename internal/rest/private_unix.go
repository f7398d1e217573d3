//go:build unix

package rest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkPrivate checks that the directory path, whose Lstat is fi, is the
// current user's and closed to everyone else: entries may hold anything a
// tool printed.
func checkPrivate(path string, fi fs.FileInfo) error {
	if perm := fi.Mode().Perm(); perm != 0o700 {
		return fmt.Errorf("rest: directory %s is mode %04o: want 0700 (no access for group or others)", path, perm)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("rest: directory %s: cannot tell its owner", path)
	}
	if uid := os.Getuid(); int64(st.Uid) != int64(uid) {
		return fmt.Errorf("rest: directory %s is owned by uid %d: want the current user (uid %d)", path, st.Uid, uid)
	}
	return nil
}

// fileID returns the device and inode of fi, which tell a directory from
// another put in its place.
func fileID(fi fs.FileInfo) (dev, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), true //nolint:unconvert // int32 on some systems
}

// removed reports whether the directory f is open on was removed: no link
// to it is left (a directory renamed elsewhere still has its links).
func removed(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 0
}

// flock applies how (syscall.LOCK_EX, LOCK_UN, with LOCK_NB) to f,
// again when a signal interrupts it.
func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// lockFile takes the exclusive advisory lock of f, waiting for it. It is
// held by the open file, so two opens of one file in a process exclude
// each other as two processes do, and the kernel releases it when the
// process ends, however it ends.
func lockFile(f *os.File) error { return flock(f, syscall.LOCK_EX) }

// unlockFile releases the lock of f.
func unlockFile(f *os.File) error { return flock(f, syscall.LOCK_UN) }

// tryLockFile takes the lock of f if nobody holds it, and reports whether
// it did.
func tryLockFile(f *os.File) (bool, error) {
	err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
