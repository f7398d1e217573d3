package hugepage_test

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/toolcap/toolcap/internal/hugepage"
)

// Advise marks the 2 MiB-aligned stretches of a large buffer for huge
// pages (VmFlags "hg" in /proc/self/smaps), and leaves its bytes as they
// are.
func TestAdviseMarksTheBuffer(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || bytes.Contains(mode, []byte("[never]")) {
		t.Skip("no transparent huge pages on this system")
	}
	b := make([]byte, 3, 16<<20)
	copy(b, "abc")
	hugepage.Advise(b)
	if string(b) != "abc" {
		t.Errorf("the buffer holds %q after Advise, want %q", b, "abc")
	}
	at := uintptr(unsafe.Pointer(unsafe.SliceData(b))) + 8<<20 // inside an aligned stretch
	flags, err := vmFlags(at)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the mapping at %#x has VmFlags %q, want hg among them", at, flags)
	}
	small := make([]byte, 0, 1<<20)
	hugepage.Advise(small) // too small for a huge page: nothing to do, no error
}

// vmFlags returns the VmFlags of the mapping of /proc/self/smaps that
// holds address at.
func vmFlags(at uintptr) (string, error) {
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	in := false
	for line := range strings.Lines(string(smaps)) {
		if lo, hi, ok := addressRange(line); ok {
			in = lo <= at && at < hi
			continue
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.TrimSpace(flags), nil
		}
	}
	return "", fmt.Errorf("no mapping holds %#x", at)
}

// addressRange parses the first field of a mapping's header line,
// "lo-hi".
func addressRange(line string) (lo, hi uintptr, ok bool) {
	field, _, _ := strings.Cut(line, " ")
	l, h, found := strings.Cut(field, "-")
	if !found {
		return 0, 0, false
	}
	a, err1 := strconv.ParseUint(l, 16, 64)
	b, err2 := strconv.ParseUint(h, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(a), uintptr(b), true
}
