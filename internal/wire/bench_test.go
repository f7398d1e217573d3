package wire_test

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/fault"
	"github.com/toolcap/toolcap/internal/wire"
)

// BenchmarkScanResult times the scanner on the relay's largest case: a
// tools/call result of one text block of 100 MB (the fault server's text:
// escapes, \u escapes and multi-byte characters), read from a reader as
// the relay reads a line, the text decoded and counted, nothing held.
func BenchmarkScanResult(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` +
		mixedText(b, 100_000_000) + "}]},\"isError\":false}\n")
	r := bytes.NewReader(msg)
	br := bufio.NewReaderSize(r, 4<<20)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(msg)
		br.Reset(r)
		sc := wire.NewScanner(br)
		var n int64
		err := sc.Object(func(key string) error {
			if key != "result" {
				return sc.Skip()
			}
			return sc.Object(func(key string) error {
				if key != "content" {
					return sc.Skip()
				}
				return sc.Array(func(int) error {
					return sc.Object(func(key string) error {
						if key != "text" {
							return sc.Skip()
						}
						k, err := sc.String(func(p []byte) {})
						n += k
						return err
					})
				})
			})
		})
		if err == nil {
			err = sc.EndMessage()
		}
		if err != nil || n != 100_000_000 {
			b.Fatalf("decoded %d bytes, error %v", n, err)
		}
	}
}

// mixedText is the fault server's text of n bytes as a JSON string.
func mixedText(b *testing.B, n int64) string {
	var s strings.Builder
	s.WriteByte('"')
	if err := fault.WriteJSON(&s, n); err != nil {
		b.Fatal(err)
	}
	s.WriteByte('"')
	return s.String()
}
