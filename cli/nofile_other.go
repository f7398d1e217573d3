//go:build !unix && !toolcap_nomcp

package cli

// openFileLimit returns 0, unknown, where there is no RLIMIT_NOFILE.
func openFileLimit() uint64 { return 0 }
