package main_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitReadingStdin waits until a thread of process pid is blocked in a
// read(2) of its standard input, as /proc/PID/task/*/syscall shows it
// ("NR 0x0 ..." with NR read's number), failing the test when that has not
// happened within 10 s. Where the kernel does not show a thread's system
// call (no /proc/PID/task/*/syscall, or no access to it), it falls back to
// the fixed pause of other systems (see stdin_other_test.go).
func waitReadingStdin(t *testing.T, pid int) {
	t.Helper()
	if _, err := os.Stat("/proc/self/syscall"); err != nil {
		t.Logf("the kernel does not show a process's system calls (%v); pausing instead", err)
		time.Sleep(300 * time.Millisecond)
		return
	}
	reading := fmt.Sprintf("%d 0x0 ", syscall.SYS_READ)
	tasks := filepath.Join("/proc", fmt.Sprint(pid), "task", "*", "syscall")
	var last []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		paths, _ := filepath.Glob(tasks)
		if len(paths) == 0 {
			t.Fatalf("process %d has no threads in /proc: it exited before it read its standard input", pid)
		}
		last = last[:0]
		denied := false
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				// No access, or the thread ended meanwhile.
				denied = denied || errors.Is(err, fs.ErrPermission)
				continue
			}
			if strings.HasPrefix(string(b), reading) {
				return
			}
			last = append(last, strings.TrimSpace(string(b)))
		}
		if denied && len(last) == 0 {
			t.Logf("the kernel does not show process %d's system calls; pausing instead", pid)
			time.Sleep(300 * time.Millisecond)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d is not reading its standard input 10 s after its start; its threads' system calls:\n%s", pid, strings.Join(last, "\n"))
		}
	}
}
