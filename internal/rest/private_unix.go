//go:build unix

package rest

import (
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
