package cli

import (
	"testing"
	"time"
)

// eventually polls cond every few milliseconds until it holds, failing the
// test with what (and, when given, what detail returns then) if it does not
// within timeout. It is how a test waits for something to happen in
// another goroutine or process, in place of a fixed pause.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool, detail ...func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			msg := what + ": not within " + timeout.String()
			for _, d := range detail {
				msg += "\n" + d()
			}
			t.Fatal(msg)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
