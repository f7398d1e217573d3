//go:build !linux

package main_test

import (
	"testing"
	"time"
)

// waitReadingStdin gives process pid time to reach its read of standard
// input: without Linux's /proc/PID/task/*/syscall, nothing shows that it
// has, so this is a fixed pause, as generous as it can be without slowing
// the test down.
func waitReadingStdin(t *testing.T, pid int) {
	t.Helper()
	time.Sleep(300 * time.Millisecond)
}
