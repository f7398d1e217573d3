package mcpproxy_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/toolcap/toolcap/internal/policytest"
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
	s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, limitFor(32<<20)), MaxMessageBytes: 64 << 20})
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

// A session holds a small read buffer per side while its messages fit in
// one, and again soon after a message that needed a large one: 64 idle
// --listen sessions held two 4 MiB buffers each (512 MiB) once large
// results had filled them, and every session allocated both at start.
func TestIdleSessionHoldsSmallReadBuffers(t *testing.T) {
	const size = 3 << 20 // within the 4 MiB buffer: relayed where it lies
	_, written := writtenText(size)
	request := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","arguments":{"q":"` + written + `"}}}`
	result := `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"` + written + `"}]}}`
	const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`

	base := heapAlloc() // the test's frames, before the session
	s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, limitFor(32<<20)), MaxMessageBytes: 64 << 20})
	for _, step := range []struct {
		what  string
		frame string
		to    func(string)
		at    func() string
	}{
		{"request", request, s.toServer, s.atServer},
		{"result", result, s.toClient, s.atClient},
	} {
		step.to(step.frame)
		if got := step.at(); len(got) != len(step.frame) {
			t.Fatalf("the %s arrived with %d bytes, want the %d sent", step.what, len(got), len(step.frame))
		}
		// The next message is read once the large one is done with.
		step.to(note)
		if got := step.at(); got != note {
			t.Fatalf("after the %s, got %.200s", step.what, got)
		}
	}
	// What the session holds once idle for a while (a reader keeps its
	// large buffer for a second in case the next message needs it): its
	// state, a small buffer per side, and the test's own 1 MiB readers of
	// each side; not a 4 MiB buffer.
	const want = 3 << 20
	var grown int64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if grown = int64(heapAlloc()) - int64(base); grown <= want {
			break
		}
	}
	if grown > want {
		t.Errorf("a session idle after a %d MiB request and result: the heap in use grew by %.1f MiB, want at most %d MiB", size>>20, float64(grown)/(1<<20), want>>20)
	}
	runtime.KeepAlive(request)
	runtime.KeepAlive(result)
}
