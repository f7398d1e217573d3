package rest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/tokens"
)

// kept keeps in in a fresh keeper and returns the keeper, a context of its
// scope and the ref.
func kept(t *testing.T, in string, cfg rest.Config) (*rest.Keeper, context.Context, string) {
	t.Helper()
	k := newKeeper(t, cfg)
	ctx := rest.WithScope(context.Background(), "s")
	_, tr, _ := k.Text(ctx, in, shape.Policy{MaxBytes: 200, KeepRest: true})
	if tr.Ref == "" {
		t.Fatal("nothing kept")
	}
	return k, ctx, tr.Ref
}

func TestReadPages(t *testing.T) {
	in := numbered(300000, 5)
	k, ctx, ref := kept(t, in, rest.Config{})
	for _, p := range []shape.Policy{
		{MaxBytes: 256},
		{MaxBytes: 16384},
		{MaxBytes: 16384, MaxTokens: 700, Counter: tokens.NewCalibrated()},
		{MaxBytes: 1 << 20},
	} {
		if got := readAll(t, ctx, k, ref, p); got != in {
			t.Errorf("%d-byte pages: got %d bytes back, want %d", p.MaxBytes, len(got), len(in))
		}
	}
}

func TestReadPagesSplitOnCharacters(t *testing.T) {
	in := strings.Repeat("ü€😀", 20000)
	k, ctx, ref := kept(t, in, rest.Config{})
	p := shape.Policy{MaxBytes: 1001}
	args := rest.ReadArgs{Ref: ref}
	for args.Offset < int64(len(in)) {
		raw, _ := json.Marshal(args)
		page, err := k.Read(ctx, raw, p)
		if err != nil {
			t.Fatal(err)
		}
		ms := cut.FindMarkers(page)
		if len(ms) == 0 {
			break
		}
		shown := page[:ms[0].Start]
		if !strings.HasPrefix(in[args.Offset:], shown) || !validUTF8(shown) {
			t.Fatalf("page at %d is not whole characters of the output", args.Offset)
		}
		args.Offset += int64(len(shown))
	}
}

func validUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestReadLimitTooSmall(t *testing.T) {
	in := numbered(10000, 2)
	k, ctx, ref := kept(t, in, rest.Config{})
	_, err := k.Read(ctx, json.RawMessage(fmt.Sprintf(`{"ref":%q}`, ref)), shape.Policy{MaxBytes: 128})
	want := "toolcap_read: its limit of 128 bytes cannot hold a page and the marker naming the next read; raise its max_bytes"
	if err == nil || err.Error() != want {
		t.Errorf("Read at a 128-byte limit: %v, want %q", err, want)
	}
}

func TestReadLength(t *testing.T) {
	in := numbered(10000, 2)
	k, ctx, ref := kept(t, in, rest.Config{})
	page, err := k.Read(ctx, json.RawMessage(fmt.Sprintf(`{"ref":%q,"offset":100,"length":50}`, ref)), shape.Policy{MaxBytes: 16384})
	if err != nil {
		t.Fatal(err)
	}
	// The next page is asked for with the same length.
	want := in[100:150] + cut.RestMarker(len(in)-150, cut.UnitBytes, cut.Rest{Tool: rest.DefaultTool, Args: fmt.Sprintf(`{"ref":%q,"offset":150,"length":50}`, ref)})
	if diff := cmp.Diff(want, page); diff != "" {
		t.Errorf("page (-want +got):\n%s", diff)
	}
}

func TestReadErrors(t *testing.T) {
	in := numbered(10000, 2)
	k, ctx, ref := kept(t, in, rest.Config{})
	p := shape.Policy{MaxBytes: 16384}
	tests := []struct {
		args string
		want string
	}{
		{`{}`, "toolcap_read: ref: missing: call with the arguments a truncation marker names"},
		{``, "toolcap_read: arguments: missing: want an object with ref"},
		{`[1]`, "toolcap_read: arguments: want a JSON object with ref, offset, length, pattern"},
		{`{"ref":1}`, "toolcap_read: ref 1: want a string"},
		{fmt.Sprintf(`{"ref":%q,"offset":-1}`, ref), "toolcap_read: offset -1: want a whole number >= 0"},
		{fmt.Sprintf(`{"ref":%q,"offset":1.5}`, ref), "toolcap_read: offset 1.5: want a whole number >= 0"},
		{fmt.Sprintf(`{"ref":%q,"length":0}`, ref), "toolcap_read: length 0: want a whole number >= 1"},
		{fmt.Sprintf(`{"ref":%q,"offset":"10"}`, ref), `toolcap_read: offset "10": a string, not a number: want a whole number >= 0`},
		{fmt.Sprintf(`{"ref":%q,"length":"50"}`, ref), `toolcap_read: length "50": a string, not a number: want a whole number >= 1`},
		{fmt.Sprintf(`{"ref":%q,"limit":10}`, ref), `toolcap_read: unknown argument "limit": want ref, offset, length or pattern`},
		{fmt.Sprintf(`{"ref":%q,"pattern":"("}`, ref), "toolcap_read: pattern: error parsing regexp: missing closing ): `(`"},
		{fmt.Sprintf(`{"ref":%q,"offset":%d}`, ref, len(in)), fmt.Sprintf("toolcap_read: offset %d is the end of the output (%d bytes): nothing left to read", len(in), len(in))},
		{fmt.Sprintf(`{"ref":%q,"offset":%d}`, ref, len(in)+1), fmt.Sprintf("toolcap_read: offset %d is past the end of the output (%d bytes)", len(in)+1, len(in))},
		{`{"ref":"../../etc/passwd"}`, `toolcap_read: ref "../../etc/passwd": expired or unknown; run the tool again`},
	}
	for _, tt := range tests {
		_, err := k.Read(ctx, json.RawMessage(tt.args), p)
		if err == nil {
			t.Errorf("Read(%s): no error, want %q", tt.args, tt.want)
			continue
		}
		if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
			t.Errorf("Read(%s) error (-want +got):\n%s", tt.args, diff)
		}
	}
}

func TestReadEntryBound(t *testing.T) {
	in := numbered(10000, 2)
	k, ctx, ref := kept(t, in, rest.Config{MaxEntryBytes: 4000})
	p := shape.Policy{MaxBytes: 16384}
	page, err := k.Read(ctx, json.RawMessage(fmt.Sprintf(`{"ref":%q,"offset":3000}`, ref)), p)
	if err != nil {
		t.Fatal(err)
	}
	want := in[3000:4000] + cut.Marker(len(in)-4000)
	if diff := cmp.Diff(want, page); diff != "" {
		t.Errorf("last kept page (-want +got):\n%s", diff)
	}
	_, err = k.Read(ctx, json.RawMessage(fmt.Sprintf(`{"ref":%q,"offset":4000}`, ref)), p)
	if err == nil || !strings.Contains(err.Error(), "max_entry_bytes") {
		t.Errorf("read past the kept bytes: %v, want an error naming max_entry_bytes", err)
	}
}

func TestReadPattern(t *testing.T) {
	var b strings.Builder
	var want []string
	for i := 0; i < 5000; i++ {
		line := fmt.Sprintf("ok %d", i)
		if i%97 == 0 {
			line = fmt.Sprintf("FAIL case %d", i)
			want = append(want, strconv.Itoa(b.Len())+":"+line)
		}
		b.WriteString(line + "\n")
	}
	in := b.String()
	k, ctx, ref := kept(t, in, rest.Config{})
	// Page through the matches with small answers: every match once, in
	// order, each with its byte offset.
	p := shape.Policy{MaxBytes: 300}
	var got []string
	args := rest.ReadArgs{Ref: ref, Pattern: "^FAIL"}
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatal("no end")
		}
		raw, _ := json.Marshal(args)
		ans, err := k.Read(ctx, raw, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(ans) > p.MaxBytes {
			t.Fatalf("answer of %d bytes, over %d", len(ans), p.MaxBytes)
		}
		ms := cut.FindMarkers(ans)
		body := ans
		if len(ms) > 0 {
			body = ans[:ms[0].Start]
		}
		for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
			if l != "" {
				got = append(got, l)
			}
		}
		if len(ms) == 0 {
			break
		}
		next, err := rest.ParseReadArgs(json.RawMessage(ms[0].Rest.Args))
		if err != nil {
			t.Fatal(err)
		}
		if next.Pattern != args.Pattern || next.Offset <= args.Offset {
			t.Fatalf("next read %+v after %+v", next, args)
		}
		args = next
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("matches (-want +got):\n%s", diff)
	}
	ans, err := k.Read(ctx, json.RawMessage(fmt.Sprintf(`{"ref":%q,"pattern":"nothing here"}`, ref)), p)
	if err != nil || !strings.HasPrefix(ans, `no line matches "nothing here"`) {
		t.Errorf("no match: %q, %v", ans, err)
	}
}

func TestDefinition(t *testing.T) {
	k := newKeeper(t, rest.Config{}, rest.WithTool("read_more"))
	d := k.Definition()
	if d.Name != "read_more" || d.Description == "" {
		t.Errorf("definition %+v", d)
	}
	var schema map[string]any
	if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
		t.Fatalf("schema: %v", err)
	}
	if schema["type"] != "object" {
		t.Errorf("schema type %v", schema["type"])
	}
	if _, err := rest.NewKeeper(rest.NewMemory(rest.Config{}), rest.WithTool("bad name")); err == nil {
		t.Error("a tool name with a space: no error")
	}
	if _, err := rest.NewKeeper(nil); err == nil {
		t.Error("a nil store: no error")
	}
	if !errors.Is(rest.ErrUnknown, rest.ErrUnknown) {
		t.Fatal("unreachable")
	}
}

// TestPagesHoldTheToolLimit: a tool held below the read tool's limit is
// read back in pages no larger than its own limit, when its policy says so
// (PageBytes, which manifest.Policies sets): the marker of the cut and of
// every page names a read with a length that keeps the next page, marker
// included, within it, and the pages read in order give the output back
// (issue 38, item 4: a tool held to 2 KiB was read back in 16 KiB pages).
func TestPagesHoldTheToolLimit(t *testing.T) {
	in := numbered(60000, 7)
	readPolicy := shape.Policy{MaxBytes: 16384}
	for _, tc := range []struct {
		name   string
		limit  int
		stream bool
	}{
		{"text at 2048", 2048, false},
		{"stream at 2048", 2048, true},
		{"text at 300", 300, false},
		{"stream at 9000", 9000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKeeper(t, rest.Config{})
			ctx := rest.WithScope(context.Background(), "s")
			p := shape.Policy{MaxBytes: tc.limit, KeepRest: true, PageBytes: tc.limit}
			var out string
			if tc.stream {
				s := k.NewStream(ctx, p)
				if _, err := s.Write([]byte(in)); err != nil {
					t.Fatal(err)
				}
				out, _, _ = s.Result()
			} else {
				out, _, _ = k.Text(ctx, in, p)
			}
			got, pages := "", 0
			for {
				if len(out) > tc.limit {
					t.Fatalf("page %d is %d bytes; want at most the tool's limit %d", pages, len(out), tc.limit)
				}
				ms := cut.FindMarkers(out)
				if len(ms) == 0 {
					got += out
					break
				}
				m := ms[len(ms)-1]
				if m.Rest == nil {
					t.Fatalf("page %d: its marker names no read: %q", pages, out[m.Start:])
				}
				got += out[:m.Start]
				var err error
				if out, err = k.Read(ctx, json.RawMessage(m.Rest.Args), readPolicy); err != nil {
					t.Fatalf("read %s: %v", m.Rest.Args, err)
				}
				pages++
			}
			if got != in {
				t.Errorf("the pages give back %d bytes; want the output's %d, byte for byte", len(got), len(in))
			}
			t.Logf("%d pages", pages)
		})
	}
}

// A tool limit too small to hold a useful page beside a marker that names
// a length (here about 150 bytes for a 40 KB output) asks for none: the
// read tool's own limit holds its pages, rather than pages of a few bytes.
func TestPagesOfATinyLimit(t *testing.T) {
	in := numbered(40000, 9)
	k := newKeeper(t, rest.Config{})
	ctx := rest.WithScope(context.Background(), "s")
	out, tr, _ := k.Text(ctx, in, shape.Policy{MaxBytes: 200, KeepRest: true, PageBytes: 200})
	if tr.Ref == "" {
		t.Fatal("nothing kept")
	}
	ms := cut.FindMarkers(out)
	if len(ms) == 0 || ms[len(ms)-1].Rest == nil || strings.Contains(ms[len(ms)-1].Rest.Args, "length") {
		t.Fatalf("the cut's marker: %q; want a read without a length", out[max(0, len(out)-160):])
	}
	if got := readAll(t, ctx, k, tr.Ref, shape.Policy{MaxBytes: 16384}); got != in {
		t.Errorf("the pages give back %d bytes, want %d", len(got), len(in))
	}
}
