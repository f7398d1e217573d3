package mcpproxy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/mcpproxy"
)

// A session's read buffer starts small and moves to a large one for a
// message that does not fit, and back after it, carrying over whatever
// else was read with it: messages of every size around the moves, sent in
// one write (so that each move happens with bytes of the next message
// already buffered), all arrive as they came, in order.
func TestRelayAcrossReadBufferSizes(t *testing.T) {
	sizes := []int{
		100, 70 << 10, 10, // over the small buffer, between small ones
		64<<10 - 1, 64 << 10, 64<<10 + 1, // at its edge, newline included
		3 << 20, 50, // a large one relayed where it lies
		5 << 20, 60, // over the large buffer: relayed from the reader's copy
		200 << 10, 4<<20 - 1, 4 << 20, 70, // at the large buffer's edge
	}
	var frames []string
	for i, n := range sizes {
		head := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%d:`, i)
		tail := `"}}`
		frames = append(frames, head+strings.Repeat("x", max(n-len(head)-len(tail), 0))+tail)
	}
	for _, dir := range []struct {
		name string
		to   func(*rawSession, string)
		at   func(*rawSession) string
	}{
		{"from the server", (*rawSession).toClient, (*rawSession).atClient},
		{"from the client", (*rawSession).toServer, (*rawSession).atServer},
	} {
		t.Run(dir.name, func(t *testing.T) {
			s := newRawSession(t, mcpproxy.Options{MaxMessageBytes: 64 << 20})
			for round := range 2 { // the second with the large buffer kept from the first
				dir.to(s, strings.Join(frames, "\n"))
				for i, want := range frames {
					if got := dir.at(s); got != want {
						t.Fatalf("round %d, message %d (%d bytes): got %d bytes %.80q..., want it as sent", round, i, len(want), len(got), got)
					}
				}
			}
		})
	}
}
