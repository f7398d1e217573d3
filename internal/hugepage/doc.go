// Package hugepage asks the kernel for transparent huge pages for the
// large buffers a result of tens of megabytes is copied, decoded and cut
// in: filling fresh memory 4 KiB page by page costs a fault each, which on
// a VM was most of the time such a result took to go through the proxy
// (issue 23).
package hugepage
