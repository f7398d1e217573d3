package mcpproxy_test

import (
	"runtime"
	"testing"

	"github.com/toolcap/toolcap/mcpproxy"
)

// A session that goes idle after a large result holds none of it: the
// reader's copy of a message is the message's once read, not kept until
// the next message comes (which, for an idle session, it never does). 64
// idle --listen sessions after one 17 MiB call each held 2.1 GiB before.
func TestIdleSessionHoldsNoResult(t *testing.T) {
	const size = 24 << 20
	_, written := writtenText(size)
	frame := `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"` + written + `"}]}}`
	s := newRawSession(t, mcpproxy.Options{Manifest: limitFor(32 << 20), MaxMessageBytes: 64 << 20})
	s.toServer(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}}`)
	s.atServer()
	base := heapAlloc() // the session, its read buffers, the test's frame
	s.toClient(frame)
	if got := s.atClient(); len(got) != len(frame) {
		t.Fatalf("the client got %d bytes, want the %d the server sent", len(got), len(frame))
	}
	// A copy of the result held would add its 24 MiB (and its text
	// decoded for the chain, 24 more); the client's line is the test's.
	if grown := int64(heapAlloc()) - int64(base); grown > size/2 {
		t.Errorf("an idle session after a %d MiB result: the heap in use grew by %d MiB, want less than half the result", size>>20, grown>>20)
	}
	runtime.KeepAlive(frame) // counted in base: held until measured
	// The session goes on.
	s.toClient(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	if got := s.atClient(); got != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Errorf("after the result the client got %.200s", got)
	}
}

// heapAlloc returns the bytes of the heap in use after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
