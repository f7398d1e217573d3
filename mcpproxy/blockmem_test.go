package mcpproxy_test

import (
	"bufio"
	"encoding/json"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// tinyImage is a block of 13 bytes a model may read: its MIME type (9)
// and its data as sent (4).
const tinyImage = `{"type":"image","data":"AAAA","mimeType":"image/png"}`

// blocksAnswer is what the tests read of a capped tools/call answer with
// blocks.
type blocksAnswer struct {
	Content []struct {
		Type, Text, Data, MimeType string
	}
	Meta map[string]struct {
		Unit                           string
		Limit, Original, Kept, Dropped int
	} `json:"_meta"`
}

// callBlocks answers a tools/call with a text block and n tiny image
// blocks, written as the server streams them (the test never holds the
// frame), and returns the client's answer and the peak of the heap in
// use, sampled while the proxy read and capped it, above the heap in use
// before.
func callBlocks(t *testing.T, n int) (blocksAnswer, uint64) {
	t.Helper()
	s := newRawSession(t, mcpproxy.Options{})
	s.toServer(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shots"}}`)
	s.atServer()

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var (
		mu   sync.Mutex
		peak uint64
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapInuse)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	go func() {
		w := bufio.NewWriterSize(s.server, 64<<10)
		_, _ = w.WriteString(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"shots"}`)
		for range n {
			_ = w.WriteByte(',')
			_, _ = w.WriteString(tinyImage)
		}
		_, _ = w.WriteString("]}}\n")
		_ = w.Flush()
	}()
	// Longer than atClient waits: 2 M blocks are 90 MB to read on a
	// loaded machine.
	line := make(chan string, 1)
	go func() {
		l, _ := s.cr.ReadString('\n')
		line <- l
	}()
	var out string
	select {
	case out = <-line:
	case <-time.After(2 * time.Minute):
		t.Fatal("no answer within 2 minutes")
	}
	close(stop)
	<-done
	var got struct {
		ID     int
		Result blocksAnswer
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("the client's answer %.300q: %v", out, err)
	}
	if got.ID != 2 {
		t.Fatalf("answer to id %d, want 2", got.ID)
	}
	mu.Lock()
	defer mu.Unlock()
	return got.Result, peak - min(peak, base)
}

var droppedNoteRE = regexp.MustCompile(`dropped (\d+) blocks of (\d+) bytes`)

// TestRelayBlocksFigures: the figures in _meta count every block in one
// measure, what a model may read of it (issue 22, item 6: dropped blocks
// were counted by their JSON, kept ones by their content), and the note
// agrees with them.
func TestRelayBlocksFigures(t *testing.T) {
	for _, n := range []int{10, 2_000, 100_000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			got, _ := callBlocks(t, n)
			images := 0
			for _, c := range got.Content {
				if c.Type == "image" {
					images++
				}
			}
			const text = len("shots")
			want := struct {
				Unit                           string
				Limit, Original, Kept, Dropped int
			}{"bytes", manifest.DefaultMaxBytes, text + 13*n, text + 13*images, 13 * (n - images)}
			fig, ok := got.Meta["toolcap/truncation"]
			if images == n {
				if ok {
					t.Errorf("figures %+v for a result that fits", fig)
				}
				return
			}
			if diff := cmp.Diff(want, fig); diff != "" {
				t.Errorf("figures (-want +got):\n%s", diff)
			}
			note := got.Content[len(got.Content)-1].Text
			m := droppedNoteRE.FindStringSubmatch(note)
			if m == nil || m[1] != strconv.Itoa(n-images) || m[2] != strconv.Itoa(want.Dropped) {
				t.Errorf("note %q, want %d blocks of %d bytes dropped", note, n-images, want.Dropped)
			}
		})
	}
}

// TestRelayBlocksMemory: the proxy's memory does not grow with the number
// of blocks it drops (issue 22, item 6: 2 M tiny image blocks took
// 348 MiB, a record per dropped block).
func TestRelayBlocksMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 2 M blocks (90 MB)")
	}
	const bound = 24 << 20
	for _, n := range []int{200_000, 2_000_000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			got, peak := callBlocks(t, n)
			t.Logf("%d blocks: peak heap in use %.1f MiB above the start", n, float64(peak)/(1<<20))
			if peak > bound {
				t.Errorf("%d blocks: peak heap in use %d bytes above the start, over %d", n, peak, bound)
			}
			if fig := got.Meta["toolcap/truncation"]; fig.Original != len("shots")+13*n {
				t.Errorf("original %d, want %d", fig.Original, len("shots")+13*n)
			}
		})
	}
}
