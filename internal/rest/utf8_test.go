package rest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
)

// putRaw writes body, as it is, to a committed entry of store in scope:
// an entry another program wrote through rest.Store.
func putRaw(t *testing.T, store rest.Store, scope, body string) string {
	t.Helper()
	e, err := store.Create(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	info, err := e.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return info.Ref
}

// Issue 39, item 11: a read that would split a character, or show none,
// is an error naming the offsets to read from instead.
func TestReadRefusesSplitCharacters(t *testing.T) {
	store := rest.NewMemory(rest.Config{})
	k, err := rest.NewKeeper(store)
	if err != nil {
		t.Fatal(err)
	}
	ctx := rest.WithScope(context.Background(), "s")
	// "a" at 0, "é" at 1-2, "€" at 3-5, "😀" at 6-9, stray continuation
	// bytes at 10-11, "b" at 12, then a lead byte with nothing after it.
	body := "aé€😀\x80\x80b\xe2"
	ref := putRaw(t, store, "s", strings.Repeat(body, 2000))
	p := shape.Policy{MaxBytes: 4096}
	for _, tc := range []struct {
		name string
		args rest.ReadArgs
		want string // the error; "" for a page
	}{
		{"in é", rest.ReadArgs{Offset: 2}, "toolcap_read: offset 2 is inside a UTF-8 character of 2 bytes, which starts at offset 1: read from offset 1, or 3 for the character after it"},
		{"in €", rest.ReadArgs{Offset: 5}, "toolcap_read: offset 5 is inside a UTF-8 character of 3 bytes, which starts at offset 3: read from offset 3, or 6 for the character after it"},
		{"in 😀", rest.ReadArgs{Offset: 7}, "toolcap_read: offset 7 is inside a UTF-8 character of 4 bytes, which starts at offset 6: read from offset 6, or 10 for the character after it"},
		{"in 😀 with a pattern", rest.ReadArgs{Offset: 9, Pattern: "b"}, "toolcap_read: offset 9 is inside a UTF-8 character of 4 bytes, which starts at offset 6: read from offset 6, or 10 for the character after it"},
		{"length under é", rest.ReadArgs{Offset: 1, Length: 1}, "toolcap_read: length 1 is shorter than the UTF-8 character at offset 1, of 2 bytes: ask for a length of at least 2"},
		{"length under 😀", rest.ReadArgs{Offset: 6, Length: 3}, "toolcap_read: length 3 is shorter than the UTF-8 character at offset 6, of 4 bytes: ask for a length of at least 4"},
		{"at a stray continuation byte", rest.ReadArgs{Offset: 11}, ""},
		{"after a lone lead byte", rest.ReadArgs{Offset: 14}, ""},
		{"length of one stray byte", rest.ReadArgs{Offset: 10, Length: 1}, ""},
		{"length of a whole 😀", rest.ReadArgs{Offset: 6, Length: 4}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args.Ref = ref
			raw, _ := json.Marshal(tc.args)
			page, err := k.Read(ctx, raw, p)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("Read(%s) error mismatch (-want +got):\n%s", raw, diff)
			}
			if err == nil && (!utf8.ValidString(page) || len(page) > p.MaxBytes) {
				t.Errorf("Read(%s): %d bytes, valid UTF-8 %v: want valid, at most %d", raw, len(page), utf8.ValidString(page), p.MaxBytes)
			}
		})
	}
}

// An entry that holds bytes that are not valid UTF-8 (written through
// rest.Store by another program) is read as a client decodes it: each
// such byte a U+FFFD, every page within the limit as decoded, the offsets
// the entry's.
func TestReadEntryOfInvalidBytes(t *testing.T) {
	for _, body := range []string{
		strings.Repeat("\x80", 60000),
		strings.Repeat("ab\xff\xfe€\n", 9000),
	} {
		store := rest.NewMemory(rest.Config{})
		k, err := rest.NewKeeper(store)
		if err != nil {
			t.Fatal(err)
		}
		ctx := rest.WithScope(context.Background(), "s")
		ref := putRaw(t, store, "s", body)
		want, _ := cut.ReplaceInvalid(body)
		for _, p := range []shape.Policy{{MaxBytes: 256}, {MaxBytes: 16384}} {
			var got strings.Builder
			args := rest.ReadArgs{Ref: ref}
			for pages := 0; ; pages++ {
				if pages > 10000 {
					t.Fatal("no end after 10000 pages")
				}
				raw, _ := json.Marshal(args)
				page, err := k.Read(ctx, raw, p)
				if err != nil {
					t.Fatalf("Read(%s): %v", raw, err)
				}
				if len(page) > p.MaxBytes || !utf8.ValidString(page) {
					t.Fatalf("Read(%s): %d bytes, valid UTF-8 %v: want valid, at most %d", raw, len(page), utf8.ValidString(page), p.MaxBytes)
				}
				ms := cut.FindMarkers(page)
				if len(ms) == 0 {
					got.WriteString(page)
					break
				}
				got.WriteString(page[:ms[len(ms)-1].Start])
				next, err := rest.ParseReadArgs(json.RawMessage(ms[len(ms)-1].Rest.Args))
				if err != nil || next.Offset <= args.Offset {
					t.Fatalf("page at %d names no further read: %v", args.Offset, err)
				}
				args.Offset = next.Offset
			}
			if got.String() != want {
				t.Errorf("%d-byte pages of %d bytes: got %d bytes back, want the %d decoded", p.MaxBytes, len(body), got.Len(), len(want))
			}
		}
		// A pattern's lines are shown decoded too.
		raw, _ := json.Marshal(rest.ReadArgs{Ref: ref, Pattern: "."})
		ans, err := k.Read(ctx, raw, shape.Policy{MaxBytes: 4096})
		if err != nil || !utf8.ValidString(ans) || len(ans) > 4096 {
			t.Errorf("Read(%s): %d bytes, valid UTF-8 %v, error %v", raw, len(ans), utf8.ValidString(ans), err)
		}
	}
}

// What a cut keeps is the text as a client decodes it, the text the
// marker's figures count: the marker's offset is one of the entry's, and
// reading on from it shows what the model has not seen, whether the
// output came whole (Text) or in pieces (Stream), its invalid bytes and
// its characters split across pieces alike.
func TestKeptTextIsDecoded(t *testing.T) {
	const limit = 16384
	for _, tc := range []struct {
		name    string
		content string
		pieces  int // the size of each Write to a Stream; 0 for Text
	}{
		{"invalid bytes, whole", strings.Repeat("\x80", 60000), 0},
		{"invalid bytes, streamed", strings.Repeat("\x80", 60000), 65536},
		{"mixed, streamed in 7-byte pieces", strings.Repeat("é\xffx€", 9000), 7},
		{"a character split where the limit is passed", strings.Repeat("a", limit-1) + strings.Repeat("€", 20000), limit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKeeper(t, rest.Config{})
			ctx := rest.WithScope(context.Background(), "s")
			p := shape.Policy{MaxBytes: limit, KeepRest: true}
			var (
				out, ref string
				resume   int
			)
			if tc.pieces == 0 {
				o, t2, _ := k.Text(ctx, tc.content, p)
				out, ref, resume = o, t2.Ref, t2.Resume
			} else {
				s := k.NewStream(ctx, p)
				for c := tc.content; len(c) > 0; {
					n := min(tc.pieces, len(c))
					s.Write([]byte(c[:n]))
					c = c[n:]
				}
				o, t2, _ := s.Result()
				out, ref, resume = o, t2.Ref, t2.Resume
			}
			if ref == "" {
				t.Fatalf("nothing kept: %q", clip(out))
			}
			decoded, _ := cut.ReplaceInvalid(tc.content)
			f, _ := readArgs(t, out)
			if out[:f.Start] != decoded[:resume] {
				t.Errorf("the cut shows %d bytes that are not the decoded output's first %d", f.Start, resume)
			}
			if got := readAll(t, ctx, k, ref, shape.Policy{MaxBytes: limit}); got != decoded {
				t.Errorf("pages give %d bytes back, want the %d decoded", len(got), len(decoded))
			}
		})
	}
}
