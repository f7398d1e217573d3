package rest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
)

// FuzzKeep checks the keeper's rule for any content, limit and strategy:
// the output is within the limit with one marker whose N is the figures';
// when the rest was kept, the text before the marker is the content's
// start up to the resume offset (head and head_tail), and reading on from
// offset 0 gives back the content byte for byte.
func FuzzKeep(f *testing.F) {
	f.Add("hello world, a line\nanother line\n", 200, uint8(0), 150)
	f.Add(strings.Repeat("ab\n", 400), 300, uint8(1), 256)
	f.Add(`{"a":[1,2,3,4,5,6,7,8,9,10],"b":"`+strings.Repeat("x", 400)+`"}`, 250, uint8(2), 300)
	f.Add(strings.Repeat("日本語", 300), 333, uint8(0), 257)
	f.Add(strings.Repeat("\xff\xfe", 300), 290, uint8(1), 400)
	f.Fuzz(func(t *testing.T, content string, limit int, strategy uint8, page int) {
		limit = 128 + abs(limit)%4096
		page = 256 + abs(page)%4096
		spec := cut.Spec{Keep: []cut.Keep{cut.KeepHead, cut.KeepHeadTail, cut.KeepJSON}[strategy%3]}
		p := shape.Policy{MaxBytes: limit, Spec: spec, KeepRest: true}
		k, err := rest.NewKeeper(rest.NewMemory(rest.Config{}))
		if err != nil {
			t.Fatal(err)
		}
		ctx := rest.WithScope(context.Background(), "fuzz")
		out, tr, changed := k.Text(ctx, content, p)
		if len(out) > limit {
			t.Fatalf("%d bytes, over the limit %d", len(out), limit)
		}
		if !changed {
			if out != content {
				t.Fatal("unchanged, but not the content")
			}
			return
		}
		ms := cut.FindMarkers(out)
		if tr.Ref == "" {
			return // the plain cut: shape's own tests hold it
		}
		var m *cut.Found
		for i := range ms {
			if ms[i].Rest != nil {
				if m != nil {
					t.Fatalf("two markers name a read: %q", out)
				}
				m = &ms[i]
			}
		}
		if m == nil || m.N != tr.DroppedBytes {
			t.Fatalf("no marker naming the read with N %d in %q", tr.DroppedBytes, out)
		}
		// What is kept, and read back, is the content as a client decodes
		// it, each byte that is not valid UTF-8 a U+FFFD: the text the
		// cut measures and its offsets count.
		decoded, _ := cut.ReplaceInvalid(content)
		if tr.Resume > 0 && out[:m.Start] != decoded[:tr.Resume] {
			t.Fatalf("text before the marker is not the content up to %d", tr.Resume)
		}
		if got := readAll(t, ctx, k, tr.Ref, shape.Policy{MaxBytes: page}); got != decoded {
			t.Fatalf("pages give %d bytes back, want %d", len(got), len(decoded))
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n {
			return 0
		}
		return -n
	}
	return n
}
