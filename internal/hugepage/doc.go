// Package hugepage asks the kernel for transparent huge pages for the
// large buffers a result of tens of megabytes is copied, decoded and cut
// in: filling fresh memory 4 KiB page by page costs a fault each, which on
// a VM was most of the time such a result took to go through the proxy
// (issue 23).
package hugepage

// Size is the size of a transparent huge page on the platforms Go runs
// Linux on with them (x86-64, arm64 with 4 KiB pages): a buffer that
// starts on a multiple of it is backed by huge pages from its first byte.
const Size = 2 << 20
