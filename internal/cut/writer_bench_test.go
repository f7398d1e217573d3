package cut_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/cut"
)

// jsonDoc is a JSON array of n objects of about 250 bytes each.
func jsonDoc(n int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item %d","tags":["a","b","c"],"text":%q}`, i, i, strings.Repeat("x", 200))
	}
	b.WriteByte(']')
	return b.Bytes()
}

// BenchmarkWriterJSON streams an 8 MB JSON document through a KeepJSON
// Writer in 64 KiB pieces, as `toolcap cap --keep json` reads a pipe, at a
// limit it fits (held whole and passed on) and one it is cut to; the
// baseline, io.ReadAll of the same pieces, holds the document once. What
// matters is B/op against the baseline's: the Writer holds one copy of the
// document, grown by doubling.
func BenchmarkWriterJSON(b *testing.B) {
	doc := jsonDoc(31000)
	const piece = 64 << 10
	b.Run("baseline=ReadAll", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if _, err := io.ReadAll(io.LimitReader(bytes.NewReader(doc), int64(len(doc)))); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, limit := range []int{8 << 20, 1 << 20} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				w := cut.NewWriter(limit, cut.Spec{Keep: cut.KeepJSON})
				for p := doc; len(p) > 0; p = p[min(piece, len(p)):] {
					_, _ = w.Write(p[:min(piece, len(p))])
				}
				if out, _ := w.Result(); len(out) > limit {
					b.Fatalf("%d bytes, over %d", len(out), limit)
				}
			}
		})
	}
}
