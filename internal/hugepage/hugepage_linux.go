package hugepage

import (
	"syscall"
	"unsafe"
)

// Advise asks the kernel to back b, a buffer just allocated and not
// yet written, with transparent huge pages where it can (the 2 MiB-aligned
// stretches b covers whole), where the system leaves that to the program
// (THP "madvise", a common default). Filling a buffer of tens of megabytes
// then takes a fault per 2 MiB rather than per 4 KiB: on a VM, where each
// fault is costly, the faults were most of the time a large result took
// to be copied and decoded (issue 23). It is advice: an error is ignored,
// and memory is what it would be but for the last huge page's unused part.
func Advise(b []byte) {
	if cap(b) < Size {
		return
	}
	b = b[:cap(b)]
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	from := (start+Size-1)&^(Size-1) - start
	to := (start+uintptr(len(b)))&^(Size-1) - start
	if to <= from {
		return
	}
	_ = syscall.Madvise(b[from:to], syscall.MADV_HUGEPAGE)
}
