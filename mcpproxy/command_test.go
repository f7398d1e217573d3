//go:build linux

package mcpproxy_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/mcpproxy"
)

// commandGrace is the grace the stop-sequence tests give each step: short,
// so that a server that ignores everything is killed within a second.
const commandGrace = 200 * time.Millisecond

// TestCommandStopSequence: Close closes the server's stdin, then sends its
// process group SIGTERM after the grace, then SIGKILL after another, and
// says how the server ended; whatever the server started in its group is
// gone once Close returns. Each server prints the pid of a grandchild
// (sleep) it leaves in its group before it waits.
func TestCommandStopSequence(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	tests := []struct {
		name   string
		script string
		// want is the error Close returns, "" for nil; exited whether it
		// wraps ErrServerExited.
		want   string
		exited bool
		// took bounds the time Close may take, in graces, and least the
		// time it must take.
		least, most time.Duration
	}{
		{
			name:   "exits when its stdin closes",
			script: `cat >/dev/null`,
			most:   commandGrace,
		},
		{
			name:   "fails when its stdin closes",
			script: `cat >/dev/null; exit 3`,
			want:   "the MCP server exited: exit status 3",
			exited: true,
			most:   commandGrace,
		},
		{
			name:   "exits on SIGTERM only",
			script: `trap 'exit 0' TERM; while :; do sleep 0.05; done`,
			want:   "it did not exit when its input was closed and was sent SIGTERM (exit status 0)",
			least:  commandGrace,
			most:   2 * commandGrace,
		},
		{
			name:   "ignores SIGTERM",
			script: `trap '' TERM; while :; do sleep 0.05; done`,
			want:   "it ignored SIGTERM and was killed (signal: killed)",
			least:  2 * commandGrace,
			most:   3 * commandGrace,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The grandchild ignores SIGTERM: only the group's SIGKILL ends it.
			script := `(trap '' TERM; exec sleep 60) & echo $!; ` + tt.script
			conn, err := mcpproxy.Command(exec.Command("sh", "-c", script), commandGrace)
			if err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(conn).ReadString('\n')
			if err != nil {
				t.Fatalf("reading the grandchild's pid: %v", err)
			}
			grandchild, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatalf("the grandchild's pid %q: %v", line, err)
			}
			if !alive(grandchild) {
				t.Fatalf("the grandchild %d is not running before Close", grandchild)
			}

			start := time.Now()
			err = conn.Close()
			took := time.Since(start)

			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Close() error (-want +got):\n%s", diff)
			}
			if errors.Is(err, mcpproxy.ErrServerExited) != tt.exited {
				t.Errorf("Close() = %v: wraps ErrServerExited %v, want %v", err, !tt.exited, tt.exited)
			}
			// A second Close gives the same answer and stops nothing more.
			if again := conn.Close(); fmt.Sprint(again) != fmt.Sprint(err) {
				t.Errorf("second Close() = %v, want %v", again, err)
			}
			if took < tt.least || took > tt.most+time.Second {
				t.Errorf("Close took %v, want between %v and %v (+1s of slack)", took, tt.least, tt.most)
			}
			if waitGone(grandchild, 2*time.Second) {
				t.Errorf("the grandchild %d outlived Close", grandchild)
			}
		})
	}
}

// TestCommandServerExitsAlone: a server that exits by itself leaves its
// output to be read to the end, and what it left in its group is stopped
// after the grace, without a Close.
func TestCommandServerExitsAlone(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	conn, err := mcpproxy.Command(exec.Command("sh", "-c", `(trap '' TERM; exec sleep 60) & echo $!; echo bye`), commandGrace)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := out.ReadFrom(conn)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("reading the output: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the output did not end after the server exited")
	}
	lines := strings.Fields(out.String())
	if len(lines) != 2 || lines[1] != "bye" {
		t.Fatalf("output %q, want a pid and bye", out.String())
	}
	grandchild, _ := strconv.Atoi(lines[0])
	if waitGone(grandchild, 2*time.Second) {
		t.Errorf("the grandchild %d outlived its server", grandchild)
	}
	if err := conn.Close(); err != nil {
		t.Errorf("Close() = %v, want nil (exit status 0)", err)
	}
}

func TestCommandRefusesSetStreams(t *testing.T) {
	cmd := exec.Command("true")
	cmd.Stdout = &bytes.Buffer{}
	if _, err := mcpproxy.Command(cmd, commandGrace); err == nil || !strings.Contains(err.Error(), "must be unset") {
		t.Errorf("Command with Stdout set: %v, want an error that it must be unset", err)
	}
}

// waitGone waits up to d for pid to exit and reports whether it is still
// running.
func waitGone(pid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			return false
		}
	}
	return alive(pid)
}

// alive reports whether pid is a process that has not exited (a zombie
// counts as exited).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X')
}
