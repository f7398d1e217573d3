//go:build !linux

package hugepage

// Advise is a no-op but on Linux, where it asks for transparent huge
// pages for a large buffer about to be filled.
func Advise(b []byte) {}
