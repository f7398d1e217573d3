//go:build linux

package mcpproxy

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// sysPidfdOpen is pidfd_open's system call number: 434 in the table that
// Linux 5.1 made common to its architectures for newer calls, which MIPS
// offsets by its ABI's base (4000 for o32, Go's mips and mipsle; 5000 for
// n64, Go's mips64 and mips64le), as golang.org/x/sys/unix lists it; every
// other Linux port of Go uses 434 itself. On a kernel without the call it
// fails with ENOSYS, and awaitExit leaves the waiting to Wait.
var sysPidfdOpen = pidfdOpenNumber(runtime.GOARCH)

// pidfdOpenNumber returns pidfd_open's system call number on arch.
func pidfdOpenNumber(arch string) uintptr {
	switch arch {
	case "mips", "mipsle":
		return 4000 + 434
	case "mips64", "mips64le":
		return 5000 + 434
	}
	return 434
}

// pPidfd is waitid's idtype for a pidfd (Linux 5.4).
const pPidfd = 3

// awaitExit returns once p has exited, without reaping it, having waited on
// the runtime's poller: os.Process.Wait blocks an OS thread in waitid for
// as long as the process runs, so a proxy with a server per session would
// hold a thread per idle session, and die of thread exhaustion under many.
// A pidfd becomes readable when its process exits. On a kernel without
// pollable pidfds (before Linux 5.10) it returns at once, and Wait blocks
// as before.
func awaitExit(p *os.Process) {
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(p.Pid), syscall.O_NONBLOCK, 0)
	if errno != 0 {
		return
	}
	f := os.NewFile(fd, "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		// WNOWAIT: the process is left for Wait to reap, with its status.
		var info struct {
			signo int32
			_     [124]byte // the rest of a siginfo_t
		}
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPidfd, fd, uintptr(unsafe.Pointer(&info)),
			syscall.WEXITED|syscall.WNOHANG|0x1000000 /* WNOWAIT */, 0, 0)
		// The kernel sets si_signo to SIGCHLD when it reports the process,
		// and to 0 when it has not exited yet. An error: Wait decides.
		return errno != 0 || info.signo == int32(syscall.SIGCHLD)
	})
}
