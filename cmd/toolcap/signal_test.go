package main_test

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestSignalEndsQuickCommands: a SIGTERM ends toolcap hook at once, while it
// still waits for its payload (Claude Code stops a hook it has given up
// on, and the tool's output then goes on as it was), where toolcap cap, a
// command that stops cleanly, treats the same signal as the end of its
// work and exits on its own.
func TestSignalEndsQuickCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds toolcap")
	}
	bin := goBuild(t, t.TempDir(), "toolcap", nil)
	for _, tt := range []struct {
		args     []string
		bySignal bool // ended by the signal, not by an exit of its own
	}{
		{[]string{"hook", "claude-code"}, true},
		{[]string{"version"}, false}, // ends before the signal: a control
		{[]string{"cap", "--tool", "Bash"}, false},
	} {
		t.Run(tt.args[0], func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			stdin, err := cmd.StdinPipe() // never closed before the signal
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			if tt.args[0] == "version" {
				if err := <-done; err != nil {
					t.Fatalf("toolcap version: %v", err)
				}
				return
			}
			// Signal only once the process is in its read of standard
			// input: it has set up its signal handling by then, and it is
			// waiting for its payload.
			waitReadingStdin(t, cmd.Process.Pid)
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				var ee *exec.ExitError
				signaled := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled()
				if signaled != tt.bySignal {
					t.Errorf("toolcap %v after SIGTERM: %v; ended by the signal = %v, want %v", tt.args, err, signaled, tt.bySignal)
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("toolcap %v still runs 10 s after SIGTERM", tt.args)
			}
		})
	}
}
