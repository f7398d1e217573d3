//go:build !unix

package rest

import (
	"errors"
	"io/fs"
	"os"
)

// checkPrivate accepts every directory: outside unix, permission bits and
// owners are not what Go's file modes report (on Windows a directory's
// access is its ACL, which the user's profile directory already limits).
func checkPrivate(string, fs.FileInfo) error { return nil }

// fileID cannot tell one directory from another here: a store checks only
// that its directory is there.
func fileID(fs.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }

func removed(*os.File) bool { return false }

// Without advisory locks, stores that share a directory each hold its
// bounds as far as what they see on disk when they write; a temp file's
// writer is told alive by its age alone.

func lockFile(*os.File) error   { return nil }
func unlockFile(*os.File) error { return nil }

func tryLockFile(*os.File) (bool, error) { return false, errors.ErrUnsupported }
