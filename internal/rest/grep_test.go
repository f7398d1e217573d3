package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
)

// The layout of a read with a pattern (grep.go): a line longer than a
// window of 256 KiB is searched in windows overlapping by 64 KiB. The
// first ends at 256 KiB and hands the matches from 192 KiB on to the
// second, which starts a character (the context of its first position)
// before; and so on while no match moves the search. The tests place
// matches across these edges.
const (
	grepWindow    = 256 << 10
	grepOverlap   = 64 << 10
	grepStretch   = 1024 // the bytes shown around a match in a long line
	issueDocBytes = 1_388_890
	issueMatchAt  = 853_055 // where issue 39's pattern matched
)

// handOff returns where the search of window k+1 of a one-byte-character
// line starts: the matches from there on are not window k's.
func handOff(k int) int { return k*(grepWindow-grepOverlap) - (k - 1) }

// windowEnd returns where window k of a one-byte-character line ends.
func windowEnd(k int) int {
	if k == 1 {
		return grepWindow
	}
	return handOff(k-1) - 1 + grepWindow
}

// oneLineJSON returns a one-line JSON document of n bytes, an array of
// users with none of the words the tests look for, with each of splice
// written over it at its offset.
func oneLineJSON(n int, splice map[int]string) string {
	b := make([]byte, 0, n+100)
	b = append(b, `{"users":[`...)
	for i := 0; len(b) < n; i++ {
		b = fmt.Appendf(b, `{"id":%d,"name":"n%d","mail":"m%d@example.com","tags":["x","y"],"n":1},`, i, i*7, i)
	}
	b = append(b[:n-2], "]}"...)
	for at, s := range splice {
		copy(b[at:], s)
	}
	return string(b)
}

// grepFound is what an entry of an answer with a pattern shows: the offset
// of its first byte, and the offset of the match it shows.
type grepFound struct {
	At, Match int
}

// grepEntries returns the entries of an answer with a pattern, with where
// the first occurrence of token is in each, and the marker's next read.
func grepEntries(t *testing.T, ans, token string) ([]grepFound, *rest.ReadArgs) {
	t.Helper()
	var next *rest.ReadArgs
	if ms := cut.FindMarkers(ans); len(ms) > 0 {
		m := ms[len(ms)-1]
		if m.Rest == nil {
			t.Fatalf("the answer ends in a plain marker: %q", clip(ans))
		}
		a, err := rest.ParseReadArgs(json.RawMessage(m.Rest.Args))
		if err != nil {
			t.Fatal(err)
		}
		next, ans = &a, ans[:m.Start]
	}
	if strings.HasPrefix(ans, "no line matches ") {
		return nil, next
	}
	var got []grepFound
	for _, line := range strings.Split(strings.TrimSuffix(ans, "\n"), "\n") {
		at, text, ok := strings.Cut(line, ":")
		n, err := strconv.Atoi(at)
		if !ok || err != nil {
			t.Fatalf("entry %q: want OFFSET:text", clip(line))
		}
		text = strings.TrimPrefix(text, "…")
		i := strings.Index(text, token)
		if i < 0 {
			t.Fatalf("entry at %d does not show %q: %q", n, token, clip(text))
		}
		got = append(got, grepFound{n, n + i})
	}
	return got, next
}

// around returns the entry that shows a match of n bytes at at in a long
// line of ASCII: grepStretch bytes with the match in the middle.
func around(at, n int) grepFound {
	return grepFound{max(0, at-(grepStretch-n)/2), at}
}

// toolcap_read's pattern finds a match anywhere in a line of any length,
// and shows the line around it with the offset where that begins (issue
// 39: on 1,388,890 bytes of one-line JSON, "user12345" at byte 853,055 was
// reported missing, and a match found showed the line's first 1 KiB).
func TestReadPatternOneLongLine(t *testing.T) {
	n := issueDocBytes
	long := "<" + strings.Repeat("q", grepOverlap-2) + ">" // a match of grepOverlap bytes
	doc := oneLineJSON(n, map[int]string{
		issueMatchAt: "user12345",
		// ^ matches at the line's start only, $ at its end only: not
		// where a window's search starts or the window ends.
		handOff(2):       `{"users"`,
		handOff(3):       `{"users"`,
		windowEnd(3) - 2: "]}",
		// Across the end of the first window, across where it hands the
		// search to the second, across the end of the second.
		windowEnd(1) - 3: "EDGE-A",
		handOff(1) - 3:   "EDGE-B",
		windowEnd(2) - 3: "EDGE-C",
		// The longest match a window is sure to find, from the last byte
		// whose matches window 4 keeps to the last byte it holds.
		handOff(4) - 1: long,
		// Longer than a window: it runs to the window's end, and the
		// line itself settles it.
		1_000_000: "<" + strings.Repeat("z", 300_000),
	})
	k, ctx, ref := kept(t, doc, rest.Config{})
	tests := []struct {
		name    string
		pattern string
		token   string // what the entry shows of the match
		want    []grepFound
	}{
		{"at byte 0", `^\{"users"`, `{"users"`, []grepFound{{0, 0}}},
		{"at 853,055", `user12345`, "user12345", []grepFound{around(issueMatchAt, 9)}},
		{"at the very end", `\]\}$`, "]}", []grepFound{around(n-2, 2)}},
		{"across the first window's end", `EDGE-A`, "EDGE-A", []grepFound{around(windowEnd(1)-3, 6)}},
		{"across the first hand-off", `EDGE-B`, "EDGE-B", []grepFound{around(handOff(1)-3, 6)}},
		{"across the second window's end", `EDGE-C`, "EDGE-C", []grepFound{around(windowEnd(2)-3, 6)}},
		{"64 KiB long", `<q*>`, "<", []grepFound{{handOff(4) - 1, handOff(4) - 1}}},
		{"300 KiB long", `<z+`, "<", []grepFound{{1_000_000, 1_000_000}}},
		{"300 KiB long, not to the line's end", `<z+$`, "", nil},
		{"nowhere", `user12345x`, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, _ := json.Marshal(rest.ReadArgs{Ref: ref, Pattern: tt.pattern})
			ans, err := k.Read(ctx, raw, shape.Policy{MaxBytes: 16384})
			if err != nil {
				t.Fatal(err)
			}
			got, next := grepEntries(t, ans, tt.token)
			if next != nil {
				t.Errorf("the answer names a next read %+v; want all of them", *next)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("entries of %s (-want +got):\n%s", tt.pattern, diff)
			}
			if tt.want == nil {
				want := fmt.Sprintf("no line matches %q from offset 0 to the end (%d bytes); a line longer than 256 KiB was searched in parts, where a match longer than 64 KiB may be missed", tt.pattern, n)
				if diff := cmp.Diff(want, ans); diff != "" {
					t.Errorf("the answer of no match (-want +got):\n%s", diff)
				}
			}
		})
	}
	t.Run("a stretch", func(t *testing.T) {
		raw, _ := json.Marshal(rest.ReadArgs{Ref: ref, Pattern: "user12345"})
		ans, err := k.Read(ctx, raw, shape.Policy{MaxBytes: 16384})
		if err != nil {
			t.Fatal(err)
		}
		at := issueMatchAt - (grepStretch-9)/2
		want := strconv.Itoa(at) + ":…" + doc[at:at+grepStretch] + "…\n"
		if diff := cmp.Diff(want, ans); diff != "" {
			t.Errorf("answer (-want +got):\n%s", diff)
		}
	})
}

// Reading on from each answer's marker gives every match of a long line
// once, in order: the read from inside a line goes on where the last
// answer stopped.
func TestReadPatternPagesThroughALongLine(t *testing.T) {
	splice := map[int]string{}
	var want []grepFound
	for at := 5; at < issueDocBytes-100; at += 10_007 {
		splice[at] = ",NEEDLE"
		want = append(want, around(at+1, 6))
	}
	k, ctx, ref := kept(t, oneLineJSON(issueDocBytes, splice), rest.Config{})
	var got []grepFound
	args := rest.ReadArgs{Ref: ref, Pattern: `\bNEEDLE`}
	for reads := 0; ; reads++ {
		if reads > len(want) {
			t.Fatalf("no end after %d reads", reads)
		}
		raw, _ := json.Marshal(args)
		ans, err := k.Read(ctx, raw, shape.Policy{MaxBytes: 4096})
		if err != nil {
			t.Fatal(err)
		}
		if len(ans) > 4096 {
			t.Fatalf("answer of %d bytes, over 4096", len(ans))
		}
		page, next := grepEntries(t, ans, "NEEDLE")
		got = append(got, page...)
		if next == nil {
			break
		}
		args = *next
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("matches read page after page (-want +got):\n%s", diff)
	}
}

// A pattern search over 1 MiB in one line against the same bytes in lines
// of about 80: the windows of a long line against a line at a time.
func BenchmarkReadPattern(b *testing.B) {
	line := oneLineJSON(1<<20, map[int]string{1<<20 - 1000: ",user12345,"})
	lines := strings.ReplaceAll(line, "},", "}\n") // the same offsets, in lines of about 80
	for _, bc := range []struct {
		name, text, pattern string
	}{
		{"one line", line, "user12345"},
		{"lines", lines, "user12345"},
		{"one line, \\b", line, `\buser12345\b`},
		{"lines, \\b", lines, `\buser12345\b`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			k, err := rest.NewKeeper(rest.NewMemory(rest.Config{}))
			if err != nil {
				b.Fatal(err)
			}
			ctx := rest.WithScope(context.Background(), "bench")
			_, tr, _ := k.Text(ctx, bc.text, shape.Policy{MaxBytes: 200, KeepRest: true})
			raw, _ := json.Marshal(rest.ReadArgs{Ref: tr.Ref, Pattern: bc.pattern})
			p := shape.Policy{MaxBytes: 16384}
			if ans, err := k.Read(ctx, raw, p); err != nil || !strings.Contains(ans, ":") || strings.HasPrefix(ans, "no line matches") {
				b.Fatalf("Read = %q, %v; want the match", clip(ans), err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				if _, err := k.Read(ctx, raw, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The same from a directory store, whose reads are the file's.
func TestReadPatternOneLongLineDir(t *testing.T) {
	d := dirOpen(t, filepath.Join(t.TempDir(), "store"), rest.Config{})
	k, err := rest.NewKeeper(d)
	if err != nil {
		t.Fatal(err)
	}
	ctx := rest.WithScope(context.Background(), "s")
	_, tr, _ := k.Text(ctx, oneLineJSON(issueDocBytes, map[int]string{issueMatchAt: "user12345"}), shape.Policy{MaxBytes: 200, KeepRest: true})
	raw, _ := json.Marshal(rest.ReadArgs{Ref: tr.Ref, Pattern: "user12345"})
	ans, err := k.Read(ctx, raw, shape.Policy{MaxBytes: 16384})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := grepEntries(t, ans, "user12345")
	if diff := cmp.Diff([]grepFound{around(issueMatchAt, 9)}, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}
