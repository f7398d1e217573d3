//go:build unix && !toolcap_nomcp

package cli

import "syscall"

// openFileLimit returns the process's open-file limit (its soft
// RLIMIT_NOFILE, which Go raises to the hard limit at start), or 0 when it
// cannot be read.
func openFileLimit() uint64 {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return 0
	}
	return l.Cur
}
