//go:build !unix

package rest

import "io/fs"

// checkPrivate accepts every directory: outside unix, permission bits and
// owners are not what Go's file modes report (on Windows a directory's
// access is its ACL, which the user's profile directory already limits).
func checkPrivate(string, fs.FileInfo) error { return nil }
