package wire_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// teeText is a JSON string of about n bytes as written, with an escape
// every few bytes and runs longer than the scanner hands on straight from
// its buffer.
func teeText(n int) (written, decoded string) {
	var w, d strings.Builder
	w.WriteByte('"')
	for i := 0; w.Len() < n; i++ {
		fmt.Fprintf(&w, `%06d \"q\" \u2713 \ud83d\ude00 é\n`, i)
		fmt.Fprintf(&d, "%06d \"q\" ✓ 😀 é\n", i)
		if i%100 == 0 {
			run := strings.Repeat("r", 5000)
			w.WriteString(run)
			d.WriteString(run)
		}
	}
	w.WriteByte('"')
	return w.String(), d.String()
}

// The copy holds every byte whose decoded form String has handed on, at
// each piece: a reader may decode the copy again up to any point of the
// string (issue 23: the relay holds a text as written while it may go out
// as it came, and decodes it from the copy only when it must).
func TestTeeHoldsWhatStringHandedOn(t *testing.T) {
	written, decoded := teeText(300_000)
	for _, size := range []int{16, 4096, 64 << 10} {
		sc := scanner(written, size)
		sc.Reset()
		sc.Tee(1 << 30)
		handed := 0
		_, err := sc.String(func(b []byte) {
			handed += len(b)
			parts, ok := sc.TeedParts()
			if !ok {
				t.Fatal("the copy was lost")
			}
			var again bytes.Buffer
			_, _ = scanner(string(bytes.Join(parts, nil)), 4096).String(func(p []byte) { again.Write(p) })
			if again.Len() < handed {
				t.Fatalf("size %d: the copy decodes to %d bytes, %d were handed on", size, again.Len(), handed)
			}
			if again.String()[:handed] != decoded[:handed] {
				t.Fatalf("size %d: the copy decodes to other bytes than were handed on", size)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		got, ok := sc.Teed()
		if diff := cmp.Diff(written, string(got)); !ok || diff != "" {
			t.Errorf("size %d: Teed ok %v (-want +got):\n%.300s", size, ok, diff)
		}
	}
}

// A copy over its bound is handed to OnTeeOver, once, as it was, then let
// go; TeeMax raises the bound of a copy being made.
func TestTeeBound(t *testing.T) {
	msg := `{"a":"` + strings.Repeat("x", 100_000) + `","b":1}`
	for _, tc := range []struct {
		name  string
		max   int
		raise int // TeeMax after the first member's key, when not 0
		lost  bool
	}{
		{name: "within", max: len(msg)},
		{name: "over", max: 50_000, lost: true},
		{name: "raised", max: 50_000, raise: len(msg)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := scanner(msg, 4096)
			sc.Reset()
			sc.Tee(tc.max)
			calls, lostLen := 0, -1
			sc.OnTeeOver(func(parts [][]byte) {
				calls++
				lostLen = len(bytes.Join(parts, nil))
			})
			err := sc.Object(func(key string) error {
				if tc.raise > 0 {
					sc.TeeMax(tc.raise)
				}
				return sc.Skip()
			})
			if err != nil {
				t.Fatal(err)
			}
			got, ok := sc.Teed()
			if ok == tc.lost || sc.Teeing() == tc.lost {
				t.Fatalf("Teed ok %v, Teeing %v; want the copy lost: %v", ok, sc.Teeing(), tc.lost)
			}
			if tc.lost {
				// Consumed a buffer (4096 bytes) at a time: the copy as it was
				// before the piece that took it over.
				if calls != 1 || lostLen > tc.max || lostLen <= tc.max-4096 {
					t.Errorf("OnTeeOver called %d times with %d bytes; want once with the last %d-byte piece under %d", calls, lostLen, 4096, tc.max)
				}
				return
			}
			if calls != 0 || string(got) != msg {
				t.Errorf("OnTeeOver called %d times; Teed %d bytes, want the message's %d", calls, len(got), len(msg))
			}
			parts, _ := sc.TeedParts()
			if len(parts) != 1 {
				t.Errorf("Teed left %d chunks, want the one it joined", len(parts))
			}
		})
	}
}
